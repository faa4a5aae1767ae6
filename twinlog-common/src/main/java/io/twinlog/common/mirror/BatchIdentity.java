package io.twinlog.common.mirror;

import java.util.OptionalLong;
import java.util.function.LongPredicate;

/**
 * What identifies a record batch across two clusters (issue 12): its base and last offsets, partition leader epoch
 * and CRC. Mirroring copies batches as they are, so two logs of one partition agree exactly up to the first batch
 * whose identity differs, and agreeing at an offset means agreeing everywhere below it (a fork never heals).
 */
public record BatchIdentity(long baseOffset, long lastOffset, int epoch, long crc) {

    /**
     * The first offset in [{@code lo}, {@code hi}) where the two logs differ, by binary search over {@code same}
     * (whether the batches holding an offset are identical on both sides): O(log n) probes. Empty when they agree
     * on the whole range.
     */
    public static OptionalLong firstDifference(long lo, long hi, LongPredicate same) {
        if (hi <= lo || same.test(hi - 1)) {
            return OptionalLong.empty();
        }
        if (!same.test(lo)) {
            return OptionalLong.of(lo);
        }
        long good = lo;
        long bad = hi - 1;
        while (bad - good > 1) {
            long mid = good + (bad - good) / 2;
            if (same.test(mid)) {
                good = mid;
            } else {
                bad = mid;
            }
        }
        return OptionalLong.of(bad);
    }
}
