package io.twinlog.mirror.partition;

import org.apache.kafka.common.record.internal.RecordBatch;

import java.util.OptionalLong;

/**
 * Where a failover to the point in time {@code atMs} cuts a partition's log (issue 30 points 2 and 4): at the base
 * offset of the first batch, in offset order and control batches included, whose max timestamp is after
 * {@code atMs}; everything from there to the log end goes to the quarantine and off every replica. The one cut rule
 * of the real failover and of its dry run: both take it from {@link Scan} over the leader's log.
 *
 * @param atMs          the time asked for
 * @param offset        the cut: the first offset not kept ({@code logEnd} when every batch is at or before the time)
 * @param keptTimestamp the max timestamp of the last batch kept (-1: none kept, or not known)
 * @param logEnd        the log end the cut was decided on; the quarantine receives offsets [offset, logEnd). Their
 *                      records are not counted here: this is read at every pass of a waiting partition and by the
 *                      dry run, and counting them would read every batch header of the tail, however long
 */
public record TimeCut(long atMs, long offset, long keptTimestamp, long logEnd) {
    /** Whether records mirrored after the time are in the log (the partition reached the time). */
    public boolean cuts() {
        return offset < logEnd;
    }

    /**
     * Where the search for the cut starts, from the time index's answer for the first record after the time:
     * {@code indexed}, the offset it found; empty with {@code answered}, a genuine "no record after the time" (only the
     * last batch is read, for the newest kept timestamp); not {@code answered} (an error, or a result still pending),
     * the log start: a full scan, never a guess that could miss batches after the time and cut nothing.
     */
    public static long searchStart(boolean answered, OptionalLong indexed, long logStart, long logEnd) {
        if (!answered) {
            return logStart;
        }
        return indexed.isPresent() ? Math.max(logStart, indexed.getAsLong()) : Math.max(logStart, logEnd - 1);
    }

    /** Feeds a log's batches in offset order, from where the search starts, until the cut ({@link #pastCut}). */
    public static final class Scan {
        private final long atMs;
        private long cut = -1L;
        private long keptTimestamp = -1L;
        private boolean keptAny;

        public Scan(long atMs) {
            this.atMs = atMs;
        }

        /** Whether the cut is found: the batches from here on are all quarantined, and need not be read. */
        public boolean pastCut() {
            return cut >= 0;
        }

        public void accept(RecordBatch batch) {
            if (cut >= 0) {
                return;
            }
            if (batch.maxTimestamp() > atMs) {
                cut = batch.baseOffset();
            } else {
                keptAny = true;
                keptTimestamp = batch.maxTimestamp();
            }
        }

        /**
         * The cut over the batches fed, for a log ending at {@code logEnd}; {@code before}: the max timestamp of the
         * batch just before the first one fed (-1 if none or not read).
         */
        public TimeCut result(long logEnd, long before) {
            return new TimeCut(atMs, cut < 0 ? logEnd : cut, keptAny ? keptTimestamp : before, logEnd);
        }

        /** Whether a batch was kept among those fed (else the newest kept one is before them). */
        public boolean keptAny() {
            return keptAny;
        }
    }
}
