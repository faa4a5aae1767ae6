package io.twinlog.server.handlers.group;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a client using a transactional id is told while Twinlog has no transaction coordinator: one message, shown
 * by {@code KafkaProducer.initTransactions()}, that says what to do instead, and one INFO line on the broker.
 */
public final class TransactionsRefused {
    private static final Logger log = LoggerFactory.getLogger(TransactionsRefused.class);

    static final String MESSAGE = "Twinlog does not support transactions yet: remove transactional.id from the "
            + "producer configuration (an idempotent producer, enable.idempotence=true, still writes each record "
            + "exactly once per partition); see docs/status.md";

    private TransactionsRefused() {
    }

    public static String message(String transactionalId) {
        return MESSAGE + " (transactional.id '" + transactionalId + "')";
    }

    public static void log(String api, String transactionalId) {
        log.info("Refused {} for transactional.id '{}': transactions are not supported yet (answered "
                + "UNSUPPORTED_VERSION)", api, transactionalId);
    }
}
