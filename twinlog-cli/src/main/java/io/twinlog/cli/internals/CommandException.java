package io.twinlog.cli.internals;

/**
 * An operating error found by the command itself (not by a broker), reported as one line on stderr and exit code 1.
 * {@link #isUsageError()} adds a hint to run {@code --help}.
 */
public class CommandException extends RuntimeException {
    private final boolean usageError;

    private CommandException(String message, boolean usageError) {
        super(message);
        this.usageError = usageError;
    }

    /** The command line is wrong: a missing or misplaced option, a malformed value. */
    public static CommandException usage(String message) {
        return new CommandException(message, true);
    }

    /** The command line is right but the command cannot do what it asks. */
    public static CommandException failed(String message) {
        return new CommandException(message, false);
    }

    public boolean isUsageError() {
        return usageError;
    }
}
