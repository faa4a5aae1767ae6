package io.twinlog.clients.mirror;

import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.protocol.Errors;

import java.util.Optional;

/** A cluster-mirror API answered with an error: the code, its name, and the broker's message. */
public class MirrorException extends KafkaException {
    private final short errorCode;

    public MirrorException(short errorCode, String message) {
        super(errorName(errorCode) + ": " + (message == null ? defaultMessage(errorCode) : message));
        this.errorCode = errorCode;
    }

    public short errorCode() {
        return errorCode;
    }

    /** The mirror-specific error, if the code is one. */
    public Optional<MirrorErrors> mirrorError() {
        return MirrorErrors.forCode(errorCode);
    }

    public static String errorName(short code) {
        return MirrorErrors.forCode(code).map(Enum::name).orElseGet(() -> Errors.forCode(code).name());
    }

    private static String defaultMessage(short code) {
        return MirrorErrors.forCode(code).map(e -> e.defaultMessage).orElseGet(() -> Errors.forCode(code).message());
    }
}
