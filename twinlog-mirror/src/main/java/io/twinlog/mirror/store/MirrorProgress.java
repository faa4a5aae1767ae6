package io.twinlog.mirror.store;

/**
 * How far a mirror partition had got when its destination leader last recorded it: the source high watermark its
 * fetcher last saw and the leader's own log end. Kept in the durable record so every destination broker reports
 * the same offsets and lag, whichever of them is asked (-1 where not known yet).
 */
public record MirrorProgress(long sourceHighWatermark, long destinationLogEndOffset) {
    public static final MirrorProgress UNKNOWN = new MirrorProgress(-1L, -1L);

    /** How far the destination is behind the source, or -1 if either end is unknown. */
    public long lag() {
        return sourceHighWatermark >= 0 && destinationLogEndOffset >= 0
                ? Math.max(0, sourceHighWatermark - destinationLogEndOffset) : -1L;
    }
}
