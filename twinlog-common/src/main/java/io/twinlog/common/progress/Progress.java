package io.twinlog.common.progress;

import java.util.Locale;
import java.util.OptionalLong;

/**
 * How far a long operation is at one moment: {@code done} of {@code total} units of this run, the rate they are
 * done at and, when the work left shrinks, the time left. The formatting is pure so log lines and terminal lines
 * read the same and are unit tested without a clock:
 * <pre>
 * 45.2% (4,520 of 10,000 records), 1,203 records/s, about 5 s left
 * 12.0% (1,200 of 10,000 records), 300 records/s, time left unknown (the target grows as fast)
 * </pre>
 *
 * @param done        units done since the operation started (never negative)
 * @param total       units this run has to do, as known now (a mirror's target moves with the source)
 * @param perSecond   units done per second since the start (0 before a second has passed)
 * @param remainingMs the time left at the rate the work left shrinks, empty while it does not shrink
 * @param elapsedMs   since the operation started
 */
public record Progress(String unit, long done, long total, double perSecond, OptionalLong remainingMs,
                       long elapsedMs) {

    /** Done, as a percentage of the total (100 for an empty total). */
    public double percent() {
        if (total <= 0) {
            return 100.0;
        }
        return Math.min(100.0, 100.0 * done / total);
    }

    /** The progress line, without any context prefix. */
    public String format() {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "%.1f%% (%,d of %,d %s), %s %s/s", percent(), done, total, unit,
                formatRate(perSecond), unit));
        if (done >= total) {
            b.append(", done in ").append(formatDuration(elapsedMs));
        } else if (remainingMs.isPresent()) {
            b.append(", about ").append(formatDuration(remainingMs.getAsLong())).append(" left");
        } else {
            b.append(", time left unknown (the work left is not shrinking)");
        }
        return b.toString();
    }

    static String formatRate(double perSecond) {
        if (perSecond >= 100 || perSecond == 0) {
            return String.format(Locale.ROOT, "%,d", Math.round(perSecond));
        }
        return String.format(Locale.ROOT, "%.1f", perSecond);
    }

    /** "850 ms", "42 s", "3 min 20 s", "2 h 05 min": precise enough to plan by, short enough to read. */
    public static String formatDuration(long ms) {
        if (ms < 1_000) {
            return ms + " ms";
        }
        long s = ms / 1_000;
        if (s < 60) {
            return s + " s";
        }
        if (s < 3_600) {
            return String.format(Locale.ROOT, "%d min %02d s", s / 60, s % 60);
        }
        return String.format(Locale.ROOT, "%d h %02d min", s / 3_600, (s % 3_600) / 60);
    }

    /** A size in bytes for people: "512 B", "3.4 MB" (powers of 1,024, as Kafka's tools print). */
    public static String formatBytes(long bytes) {
        if (bytes < 1_024) {
            return bytes + " B";
        }
        String[] units = {"KB", "MB", "GB", "TB"};
        double v = bytes;
        int i = -1;
        while (v >= 1_024 && i < units.length - 1) {
            v /= 1_024;
            i++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[i]);
    }
}
