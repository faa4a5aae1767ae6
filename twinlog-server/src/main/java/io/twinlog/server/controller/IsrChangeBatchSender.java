package io.twinlog.server.controller;

import io.twinlog.controller.Controller;
import io.twinlog.controller.decisions.IsrChange;
import io.twinlog.controller.decisions.IsrChangeResult;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.TopicImage;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.AlterPartitionRequestData;
import org.apache.kafka.common.message.AlterPartitionResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AlterPartitionRequest;
import org.apache.kafka.common.requests.AlterPartitionResponse;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Sends one batch of ISR changes to the controller as one AlterPartition: straight to the controller's event
 * queue when this broker is the controller, else one request over the {@link ControllerChannel}. Blocking; called
 * only from the {@link AlterPartitionManager}'s thread.
 */
final class IsrChangeBatchSender implements AlterPartitionManager.BatchSender {
    private static final long LOCAL_TIMEOUT_MS = 30_000;

    private final int brokerId;
    private final LongSupplier brokerEpoch;
    private final Supplier<MetadataImage> image;
    private final Controller localController;
    private final ControllerChannel channel;

    IsrChangeBatchSender(int brokerId, LongSupplier brokerEpoch, Supplier<MetadataImage> image,
                         Controller localController, ControllerChannel channel) {
        this.brokerId = brokerId;
        this.brokerEpoch = brokerEpoch;
        this.image = image;
        this.localController = localController;
        this.channel = channel;
    }

    @Override
    public Map<TopicPartition, Errors> send(List<IsrChange> batch) throws Exception {
        Map<TopicPartition, Errors> out = new HashMap<>();
        if (localController.isActive()) {
            Map<TopicPartition, IsrChangeResult> results = localController.alterPartition(brokerId,
                    brokerEpoch.getAsLong(), batch).get(LOCAL_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            results.forEach((tp, r) -> out.put(tp, r.error()));
            return out;
        }
        MetadataImage current = image.get();
        Map<Uuid, AlterPartitionRequestData.TopicData> topics = new LinkedHashMap<>();
        Map<Uuid, String> names = new HashMap<>();
        for (IsrChange c : batch) {
            Optional<TopicImage> topic = current.topic(c.partition().topic());
            if (topic.isEmpty()) {
                out.put(c.partition(), Errors.UNKNOWN_TOPIC_OR_PARTITION); // deleted meanwhile: nothing to send
                continue;
            }
            names.put(topic.get().topicId(), topic.get().name());
            AlterPartitionRequestData.PartitionData p = new AlterPartitionRequestData.PartitionData()
                    .setPartitionIndex(c.partition().partition()).setLeaderEpoch(c.leaderEpoch())
                    .setPartitionEpoch(c.partitionEpoch());
            c.newIsr().forEach(r -> p.newIsrWithEpochs().add(new AlterPartitionRequestData.BrokerState()
                    .setBrokerId(r)));
            topics.computeIfAbsent(topic.get().topicId(), id -> new AlterPartitionRequestData.TopicData()
                    .setTopicId(id)).partitions().add(p);
        }
        if (topics.isEmpty()) {
            return out;
        }
        AlterPartitionRequestData data = new AlterPartitionRequestData().setBrokerId(brokerId)
                .setBrokerEpoch(brokerEpoch.getAsLong()).setTopics(List.copyOf(topics.values()));
        AlterPartitionResponse response = channel.send(new AlterPartitionRequest.Builder(data));
        Errors topLevel = Errors.forCode(response.data().errorCode());
        if (topLevel != Errors.NONE) {
            topics.forEach((id, t) -> t.partitions().forEach(p -> out.put(
                    new TopicPartition(names.get(id), p.partitionIndex()), topLevel)));
            return out;
        }
        for (AlterPartitionResponseData.TopicData t : response.data().topics()) {
            String name = names.get(t.topicId());
            if (name == null) {
                continue; // not one we asked about
            }
            for (AlterPartitionResponseData.PartitionData pd : t.partitions()) {
                out.put(new TopicPartition(name, pd.partitionIndex()), Errors.forCode(pd.errorCode()));
            }
        }
        return out;
    }
}
