package io.twinlog.controller.store;

/** Thrown when a record changed since the controller read it; the controller re-reads and decides again. */
public final class StaleStateException extends Exception {
    public StaleStateException(String message) {
        super(message);
    }
}
