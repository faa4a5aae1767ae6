package io.twinlog.server.handlers;

import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MirrorImage;
import org.apache.kafka.common.TopicPartition;

import java.util.Optional;

/**
 * A mirror topic is read-only until its partition has failed over (STOPPED): what produce, DeleteRecords and
 * transaction markers refuse with POLICY_VIOLATION, with the reason and the command that makes it writable.
 */
final class MirrorReadOnly {
    private MirrorReadOnly() {
    }

    /** Why {@code tp} may not be written by a client now, or empty when it may. */
    static Optional<String> reason(MetadataImage image, TopicPartition tp) {
        MirrorImage.MirrorTopic mt = image.mirrors().topics().get(tp.topic());
        if (mt == null) {
            return Optional.empty();
        }
        MirrorImage.MirrorPartition mp = image.mirrors().partitions().get(tp);
        MirrorPartitionState state = mp == null ? MirrorPartitionState.UNKNOWN : mp.state();
        if (state == MirrorPartitionState.STOPPED) {
            return Optional.empty();
        }
        return Optional.of("Topic '" + tp.topic() + "' is a mirror topic of cluster mirror '" + mt.mirror()
                + "' (partition " + tp.partition() + " is " + state + ") and is read-only; fail it over with "
                + "twinlog-mirrors --stop --mirror " + mt.mirror() + " --topic " + tp.topic() + " to write to it");
    }
}
