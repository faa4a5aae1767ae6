package io.twinlog.server;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One step of the broker's shutdown: a part that fails to close is logged, and the next step runs anyway. */
final class QuietClose {
    private static final Logger log = LoggerFactory.getLogger(QuietClose.class);

    private QuietClose() {
    }

    /** Closes {@code part} (nothing when it was never built), logging a failure with its stack trace. */
    static void close(String what, AutoCloseable part) {
        if (part == null) {
            return;
        }
        try {
            part.close();
        } catch (Exception e) { // broad: any part's failure must not keep the parts after it open; logged with trace
            log.error("Error closing the {}", what, e);
        }
    }
}
