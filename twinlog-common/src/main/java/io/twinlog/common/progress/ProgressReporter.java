package io.twinlog.common.progress;

import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;

import java.util.Locale;
import java.util.OptionalLong;

/**
 * Reports how far one long operation is (a mirror or a replica catching up, a full verification): its owner calls
 * {@link #update} with where the work is ({@code position}) and where it has to get ({@code target}), as often as
 * it likes; at most once per interval ({@value #LOG_INTERVAL_MS} ms by default) a line goes to the owner's logger at
 * INFO with the percentage, the rate and the time left, and {@link #finish} says once that it is done. An operation
 * that ends within the first interval logs nothing, so short work stays quiet.
 *
 * <p>Percentages count from the first position seen: a mirror re-copying from offset 1,000,000 after a truncation
 * is at 0% there. The target may move (a source still written to): the rate is what was done per second, the time
 * left is the work left divided by how fast the work left shrinks, both averaged since the start, and unknown while
 * it does not shrink.
 *
 * <p>Threading: not thread-safe; one owner thread updates it. Reads only the clock it is given.
 */
public final class ProgressReporter {
    /** The default interval between two log lines of one operation (issue 14: at most every 30 s). */
    public static final long LOG_INTERVAL_MS = 30_000;

    private final Logger log;
    private final String what;
    private final String unit;
    private final Time time;
    private final long intervalMs;
    private long startMs = -1;
    private long basePosition;
    private long startRemaining;
    private long position;
    private long target;
    private long lastLogMs;
    private boolean logged;
    private boolean finished;

    /**
     * @param log        the owner's logger, so the lines carry its name
     * @param what       the operation with its context prefix: {@code "[Mirror m1 orders-0] catching up"}
     * @param unit       what is counted, plural: {@code "records"}, {@code "offsets"}
     * @param intervalMs the least time between two log lines
     */
    public ProgressReporter(Logger log, String what, String unit, Time time, long intervalMs) {
        this.log = log;
        this.what = what;
        this.unit = unit;
        this.time = time;
        this.intervalMs = intervalMs;
    }

    public ProgressReporter(Logger log, String what, String unit, Time time) {
        this(log, what, unit, time, LOG_INTERVAL_MS);
    }

    /**
     * Where the work is now; logs the progress if the interval has passed since the start or the last line.
     *
     * @return whether a line was logged
     */
    public boolean update(long position, long target) {
        long now = time.milliseconds();
        if (startMs < 0) {
            startMs = now;
            lastLogMs = now;
            basePosition = position;
            startRemaining = Math.max(0, target - position);
        }
        this.position = position;
        this.target = Math.max(target, position);
        if (!finished && now - lastLogMs >= intervalMs) {
            lastLogMs = now;
            logged = true;
            log.info("{}: {}", what, snapshot().format());
            return true;
        }
        return false;
    }

    /** The progress as of the last update (zeros before the first). */
    public Progress snapshot() {
        long now = time.milliseconds();
        long elapsed = startMs < 0 ? 0 : now - startMs;
        long done = Math.max(0, position - basePosition);
        long total = Math.max(done, target - basePosition);
        double perSecond = elapsed < 1_000 ? 0 : done * 1_000.0 / elapsed;
        long remaining = Math.max(0, target - position);
        long shrunk = startRemaining - remaining;
        OptionalLong remainingMs = remaining == 0 ? OptionalLong.of(0)
                : shrunk > 0 && elapsed >= 1_000 ? OptionalLong.of((long) (remaining * (double) elapsed / shrunk))
                : OptionalLong.empty();
        return new Progress(unit, done, total, perSecond, remainingMs, elapsed);
    }

    /** Whether a progress line was logged: the operation was long enough to be reported. */
    public boolean reported() {
        return logged;
    }

    /**
     * The operation ended: one closing line at INFO with {@code outcome} if progress was reported (nothing for
     * short work). Later updates log nothing.
     */
    public Progress finish(String outcome) {
        Progress p = snapshot();
        if (logged && !finished) {
            log.info("{}: {} ({} {} in {})", what, outcome, String.format(Locale.ROOT, "%,d", p.done()),
                    unit, Progress.formatDuration(p.elapsedMs()));
        }
        finished = true;
        return p;
    }
}
