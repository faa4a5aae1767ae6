package io.twinlog.dashboard;

/**
 * An answer other than 200 with its one-line message, thrown anywhere below {@link DashboardServer}'s handler, which
 * sends it as {@code {"error": message}}. No stack trace: it is an operating error, not a bug.
 */
final class HttpError extends RuntimeException {
    final int status;
    /** For a 405: the method the path takes ({@code Allow}). */
    final String allow;

    HttpError(int status, String message) {
        this(status, message, "");
    }

    private HttpError(int status, String message, String allow) {
        super(message, null, false, false);
        this.status = status;
        this.allow = allow;
    }

    static HttpError methodNotAllowed(String method, String allowed) {
        return new HttpError(405, "Method " + method + " not allowed here; use " + allowed, allowed);
    }
}
