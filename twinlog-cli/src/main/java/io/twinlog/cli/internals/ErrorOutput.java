package io.twinlog.cli.internals;

import io.twinlog.clients.mirror.MirrorException;

import java.io.IOException;
import java.io.PrintWriter;

/**
 * How {@code twinlog-mirrors.sh} reports an error on stderr: one line {@code Error: ...} (a broker error as
 * {@code Error: CODE_NAME: message}), a second line pointing at {@code --help} when the command line is wrong, and
 * the stack trace only with {@code --verbose}. Every error of the command goes through here, so all read alike.
 */
public final class ErrorOutput {
    public static final String USAGE_HINT = "Run 'twinlog-mirrors.sh --help' for usage.";

    private final PrintWriter err;
    private final boolean verbose;

    public ErrorOutput(PrintWriter err, boolean verbose) {
        this.err = err;
        this.verbose = verbose;
    }

    /** A command line picocli could not parse (unknown option, option without its value): always a usage error. */
    public static void parseError(PrintWriter err, String message) {
        err.println("Error: " + Table.oneLine(String.valueOf(message)));
        err.println(USAGE_HINT);
        err.flush();
    }

    /** An error the command ran into: the command's own, the broker's, the network's, or a bug. */
    public void report(Exception e) {
        err.println("Error: " + Table.oneLine(message(e, verbose)));
        if (verbose) {
            e.printStackTrace(err);
        }
        if (e instanceof CommandException c && c.isUsageError()) {
            err.println(USAGE_HINT);
        }
    }

    /** The error line's text (after {@code Error: }) for {@code e}. */
    static String message(Exception e, boolean verbose) {
        if (e instanceof CommandException || e instanceof MirrorException) {
            return e.getMessage(); // a MirrorException's is already "CODE_NAME: message"
        }
        if (e instanceof IOException) {
            return e.getMessage() == null ? e.toString() : e.getMessage();
        }
        // a bug here or an answer the client could not read: still one line, the trace with --verbose
        return "Unexpected " + e + (verbose ? "" : " (--verbose prints the stack trace)");
    }
}
