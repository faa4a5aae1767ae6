package io.twinlog.mirror.partition;

import org.apache.kafka.common.record.internal.RecordBatch;

/**
 * Where a failover to the point in time {@code atMs} cuts a partition's log (issue 30 points 2 and 4): at the base
 * offset of the first batch, in offset order and control batches included, whose max timestamp is after
 * {@code atMs}; everything from there to the log end goes to the quarantine and off every replica. The one cut rule
 * of the real failover and of its dry run: both take it from {@link Scan} over the leader's log.
 *
 * @param atMs          the time asked for
 * @param offset        the cut: the first offset not kept ({@code logEnd} when every batch is at or before the time)
 * @param keptTimestamp the max timestamp of the last batch kept (-1: none kept, or not known)
 * @param logEnd        the log end the cut was decided on
 * @param records       data records at and after the cut (what the quarantine receives; control batches not)
 */
public record TimeCut(long atMs, long offset, long keptTimestamp, long logEnd, long records) {
    /** Whether records mirrored after the time are in the log (the partition reached the time). */
    public boolean cuts() {
        return offset < logEnd;
    }

    /** Feeds a log's batches in offset order, from where the search starts, to its end. */
    public static final class Scan {
        private final long atMs;
        private long cut = -1L;
        private long keptTimestamp = -1L;
        private long records;
        private boolean keptAny;

        public Scan(long atMs) {
            this.atMs = atMs;
        }

        /** Whether the batches from here on are past the cut (only counted). */
        public boolean pastCut() {
            return cut >= 0;
        }

        public void accept(RecordBatch batch) {
            if (cut < 0 && batch.maxTimestamp() > atMs) {
                cut = batch.baseOffset();
            }
            if (cut < 0) {
                keptAny = true;
                keptTimestamp = batch.maxTimestamp();
            } else if (!batch.isControlBatch()) {
                Integer count = batch.countOrNull();
                records += count != null ? count : batch.lastOffset() - batch.baseOffset() + 1;
            }
        }

        /**
         * The cut over the batches fed, for a log ending at {@code logEnd}; {@code before}: the max timestamp of the
         * batch just before the first one fed (-1 if none or not read).
         */
        public TimeCut result(long logEnd, long before) {
            return new TimeCut(atMs, cut < 0 ? logEnd : cut, keptAny ? keptTimestamp : before, logEnd, records);
        }

        /** Whether a batch was kept among those fed (else the newest kept one is before them). */
        public boolean keptAny() {
            return keptAny;
        }
    }
}
