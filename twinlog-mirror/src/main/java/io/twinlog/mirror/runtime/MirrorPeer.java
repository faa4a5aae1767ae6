package io.twinlog.mirror.runtime;

import io.twinlog.mirror.LastMirroredTruncation.LastMirrored;
import io.twinlog.mirror.store.MirrorDefinition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * The calls a worker makes to its mirror's peer (the source) and to the quarantine, each run on the mirror's call
 * threads ({@link MirrorCalls}), never on the manager's. In a broker: {@link PeerLastMirrored}, {@link PeerComparison}
 * and {@link MirrorQuarantine} ({@link #of}); an interface so that the workers are tested without a peer cluster.
 */
interface MirrorPeer {
    /**
     * The peer's last mirrored records of these partitions of {@code topic} (its name there; {@code topicId} its ID,
     * the same on both sides); an I/O failure is a doubt.
     */
    Map<Integer, LastMirrored> lastMirrored(MirrorDefinition def, String localClusterId, String topic, Uuid topicId,
                                            List<Integer> partitions) throws IOException;

    /**
     * Where this log first differs from the peer's below {@code upTo}, if it does; on {@code calls}' thread, whose
     * own connection it uses.
     */
    OptionalLong firstDifference(MirrorCalls calls, MirrorDefinition def, TopicPartition tp,
                                 MirrorLocalPartition partition, long upTo) throws IOException;

    /** Copies the log of {@code tp} from {@code from} to its end into the quarantine, acknowledged. */
    MirrorQuarantine.Copied copyToQuarantine(String mirror, TopicPartition tp, MirrorLocalPartition partition,
                                             long from, String reason) throws IOException;

    static MirrorPeer of(MirrorQuarantine quarantine) {
        return new MirrorPeer() {
            @Override
            public Map<Integer, LastMirrored> lastMirrored(MirrorDefinition def, String localClusterId, String topic,
                                                           Uuid topicId, List<Integer> partitions)
                    throws IOException {
                return PeerLastMirrored.lookup(def, localClusterId, topic, topicId, partitions);
            }

            @Override
            public OptionalLong firstDifference(MirrorCalls calls, MirrorDefinition def, TopicPartition tp,
                                                MirrorLocalPartition partition, long upTo) throws IOException {
                return calls.comparison().firstDifference(def, tp, partition, upTo);
            }

            @Override
            public MirrorQuarantine.Copied copyToQuarantine(String mirror, TopicPartition tp,
                                                            MirrorLocalPartition partition, long from,
                                                            String reason) throws IOException {
                return quarantine.copy(mirror, tp, partition, from, reason);
            }
        };
    }
}
