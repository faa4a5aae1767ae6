package io.twinlog.controller.store;

/** Thrown when this broker is no longer the controller: another one claimed a newer epoch. */
public final class ControllerMovedException extends Exception {
    public ControllerMovedException(String message) {
        super(message);
    }
}
