package io.twinlog.mirror;

import io.twinlog.mirror.LastMirroredTruncation.LastMirrored;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Optional;
import java.util.OptionalLong;

import static io.twinlog.mirror.LastMirroredTruncation.truncationOffset;
import static org.junit.jupiter.api.Assertions.assertEquals;

@Timeout(60)
class LastMirroredTruncationTest {
    @Test
    void noRecordFromThePeerMeansEverythingIsMirroredAgain() {
        assertEquals(0L, truncationOffset(500, Optional.empty(), OptionalLong.of(300)));
        assertEquals(0L, truncationOffset(500, Optional.of(new LastMirrored(3, 300)), OptionalLong.empty()));
    }

    @Test
    void writesAfterThePeersLastFetchAreCut() {
        // the peer mirrored up to 300 in epoch 3; this cluster went on writing in epoch 3 up to 350, then epoch 4
        assertEquals(300L, truncationOffset(500, Optional.of(new LastMirrored(3, 300)), OptionalLong.of(350)));
    }

    @Test
    void aLaterLocalEpochStartingBeforeTheLmoIsCutAtItsStart() {
        // locally epoch 3 ended at 280 (an unclean election here started epoch 4 there): the peer's 280..300 came
        // from an epoch-3 history this cluster no longer has
        assertEquals(280L, truncationOffset(500, Optional.of(new LastMirrored(3, 300)), OptionalLong.of(280)));
    }

    @Test
    void neverBeyondTheLocalLog() {
        assertEquals(120L, truncationOffset(120, Optional.of(new LastMirrored(3, 300)), OptionalLong.of(300)));
    }
}
