package io.twinlog.group;

import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.TopicImage;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metadata.FeatureLevelRecord;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.RegisterBrokerRecord;
import org.apache.kafka.common.metadata.RemoveTopicRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.common.metadata.UnregisterBrokerRecord;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.image.MetadataProvenance;
import org.apache.kafka.server.common.ShareVersion;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Translates Twinlog's metadata image (from ZooKeeper) into the KRaft image type Kafka's coordinators take:
 * the brokers with their racks and the topics with their IDs and partition counts — what consumer-protocol
 * assignment and the clean-up of offsets of deleted topics need. Leadership is not translated (the coordinator does
 * not use it). Each update replays only the differences, so the delta tells the coordinator which topics went.
 * Of the feature levels, those Kafka's coordinators read from the image ({@link #BRIDGED_FEATURES}): the share
 * coordinator runs its periodic jobs only while share.version is 1 or more.
 *
 * <p>Not thread-safe: one per hosted coordinator, used from its host's event thread.
 */
final class KafkaImageBridge {
    /** Feature levels Kafka's hosted coordinators read from the image. */
    static final List<String> BRIDGED_FEATURES = List.of(ShareVersion.FEATURE_NAME);

    private org.apache.kafka.image.MetadataImage current = org.apache.kafka.image.MetadataImage.EMPTY;
    private long version;

    record Update(MetadataDelta delta, org.apache.kafka.image.MetadataImage image) {
    }

    /** The change since the last call, or empty when nothing the coordinator cares about changed. */
    Optional<Update> update(MetadataImage ours, long nowMs) {
        MetadataDelta delta = new MetadataDelta.Builder().setImage(current).build();
        boolean changed = false;
        for (String feature : BRIDGED_FEATURES) {
            short level = ours.features().level(feature);
            if (current.features().finalizedVersions().getOrDefault(feature, (short) 0) != level) {
                // level 0 removes the feature from Kafka's image, as a KRaft controller's record does
                delta.replay(new FeatureLevelRecord().setName(feature).setFeatureLevel(level));
                changed = true;
            }
        }
        for (BrokerRegistration b : ours.brokers().values()) {
            org.apache.kafka.metadata.BrokerRegistration known = current.cluster().broker(b.id());
            if (known == null || !Objects.equals(known.rack(), b.rack()) || known.epoch() != b.brokerEpoch()) {
                delta.replay(new RegisterBrokerRecord().setBrokerId(b.id()).setBrokerEpoch(b.brokerEpoch())
                        .setIncarnationId(new Uuid(0L, b.id() + 1L)).setRack(b.rack().orElse(null)).setFenced(false));
                changed = true;
            }
        }
        for (org.apache.kafka.metadata.BrokerRegistration known : current.cluster().brokers().values()) {
            if (!ours.brokers().containsKey(known.id())) {
                delta.replay(new UnregisterBrokerRecord().setBrokerId(known.id()).setBrokerEpoch(known.epoch()));
                changed = true;
            }
        }
        for (org.apache.kafka.image.TopicImage known : current.topics().topicsById().values()) {
            if (ours.topic(known.id()).isEmpty()) {
                delta.replay(new RemoveTopicRecord().setTopicId(known.id()));
                changed = true;
            }
        }
        for (TopicImage topic : ours.topics().values()) {
            org.apache.kafka.image.TopicImage known = current.topics().getTopic(topic.topicId());
            if (known == null) {
                delta.replay(new TopicRecord().setName(topic.name()).setTopicId(topic.topicId()));
                changed = true;
            }
            for (PartitionImage p : topic.partitions().values()) {
                if (known == null || !known.partitions().containsKey(p.partition())) {
                    delta.replay(new PartitionRecord().setTopicId(topic.topicId()).setPartitionId(p.partition())
                            .setReplicas(p.replicas()).setIsr(p.isr().isEmpty() ? p.replicas() : p.isr())
                            .setLeader(p.leader()).setLeaderEpoch(Math.max(0, p.leaderEpoch()))
                            .setPartitionEpoch(0));
                    changed = true;
                }
            }
        }
        if (!changed) {
            return Optional.empty();
        }
        version++;
        current = delta.apply(new MetadataProvenance(version, 0, nowMs, true));
        return Optional.of(new Update(delta, current));
    }
}
