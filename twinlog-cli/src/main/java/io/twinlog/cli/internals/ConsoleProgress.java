package io.twinlog.cli.internals;

import org.apache.kafka.common.utils.Time;

import java.io.PrintWriter;
import java.util.function.LongSupplier;

/**
 * A command's progress on the operator's screen, on stderr so stdout stays the command's result for scripts. On a
 * terminal ({@code System.console() != null}) one line is redrawn in place with {@code \r} at most every
 * {@value #REDRAW_MS} ms; otherwise (a pipe, a file, a CI log) a plain line is written at most every
 * {@value #PLAIN_INTERVAL_MS} ms, so a log of a long run shows it moving without a line per batch. The closing line
 * ({@link #done}) is always written.
 *
 * <p>Threading: the command's thread only.
 */
public final class ConsoleProgress {
    static final long REDRAW_MS = 250;
    static final long PLAIN_INTERVAL_MS = 10_000;

    private final PrintWriter err;
    private final boolean inPlace;
    private final LongSupplier clockMs;
    private final long plainIntervalMs;
    /** When a line was last shown, -1 before the first. */
    private long lastShownMs = -1;
    private long firstCallMs = -1;
    /** Characters of the line drawn in place now, 0 when none is. */
    private int drawnWidth;

    ConsoleProgress(PrintWriter err, boolean inPlace, LongSupplier clockMs, long plainIntervalMs) {
        this.err = err;
        this.inPlace = inPlace;
        this.clockMs = clockMs;
        this.plainIntervalMs = plainIntervalMs;
    }

    /** Progress on {@code err}, redrawn in place when the command runs on a terminal. */
    public static ConsoleProgress on(PrintWriter err) {
        return new ConsoleProgress(err, System.console() != null, Time.SYSTEM::milliseconds,
                PLAIN_INTERVAL_MS);
    }

    /** Shows {@code line} if enough time passed since the last one (plain lines: not before the first interval). */
    public void show(String line) {
        long now = clockMs.getAsLong();
        if (firstCallMs < 0) {
            firstCallMs = now;
        }
        if (inPlace) {
            if (lastShownMs < 0 || now - lastShownMs >= REDRAW_MS) {
                lastShownMs = now;
                draw(line);
            }
        } else if (now - Math.max(firstCallMs, lastShownMs) >= plainIntervalMs) {
            lastShownMs = now;
            err.println(line);
            err.flush();
        }
    }

    /** Erases the line drawn in place, so a result line printed next starts clean. */
    public void clear() {
        if (drawnWidth > 0) {
            err.print("\r" + " ".repeat(drawnWidth) + "\r");
            err.flush();
            drawnWidth = 0;
        }
    }

    /** The closing line, always written (replacing the line drawn in place). */
    public void done(String line) {
        if (inPlace) {
            draw(line);
            err.println();
            drawnWidth = 0;
        } else {
            err.println(line);
        }
        err.flush();
    }

    private void draw(String line) {
        int pad = Math.max(0, drawnWidth - line.length());
        err.print("\r" + line + " ".repeat(pad));
        err.flush();
        drawnWidth = line.length();
    }
}
