package io.twinlog.common;

/** Helpers for turning an exception into what an operator reads. */
public final class Failures {
    private Failures() {
    }

    /**
     * The message of the innermost cause: an admin call's failure arrives wrapped (ExecutionException, a Kafka
     * exception) and the wrapper's message only repeats the cause's class name.
     */
    public static String rootMessage(Throwable t) {
        Throwable c = t;
        while (c.getCause() != null) {
            c = c.getCause();
        }
        return c.getMessage() == null || c.getMessage().isBlank() ? c.toString() : c.getMessage();
    }
}
