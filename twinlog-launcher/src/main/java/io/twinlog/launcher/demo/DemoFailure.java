package io.twinlog.launcher.demo;

/**
 * A step of the demo that cannot go on: a wait ran out, a cluster refused a call, a client failed. The message says
 * what the step waited for or asked, and what it saw; the demo prints it as {@code FAILED: ...} and stops.
 */
final class DemoFailure extends Exception {
    DemoFailure(String message) {
        super(message);
    }

    DemoFailure(String message, Throwable cause) {
        super(message, cause);
    }
}
