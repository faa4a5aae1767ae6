package io.twinlog.server.metadata;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.replication.Partition;
import io.twinlog.replication.ReplicaManager;
import io.twinlog.storage.LogStore;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Turns metadata image changes into local actions, on the metadata thread: host the partitions assigned to this
 * broker with their current leadership, stop hosting (and delete) the ones removed, apply topic config changes to
 * the logs, and on the first image delete stray logs left on disk by topics deleted while this broker was down.
 */
public final class PartitionApplier {
    private static final Logger log = LoggerFactory.getLogger(PartitionApplier.class);

    private final int brokerId;
    private final ReplicaManager replicaManager;
    private final LogStore logStore;
    private final TopicConfigs topicConfigs;
    private boolean strayLogsChecked;

    public PartitionApplier(int brokerId, ReplicaManager replicaManager, LogStore logStore, TopicConfigs topicConfigs) {
        this.brokerId = brokerId;
        this.replicaManager = replicaManager;
        this.logStore = logStore;
        this.topicConfigs = topicConfigs;
    }

    public void onImage(MetadataImage previous, MetadataImage next) {
        Set<TopicPartition> wanted = new HashSet<>();
        for (TopicImage topic : next.topics().values()) {
            for (PartitionImage p : topic.partitions().values()) {
                if (!p.replicas().contains(brokerId) || p.state() == null) {
                    continue;
                }
                TopicPartition tp = new TopicPartition(topic.name(), p.partition());
                wanted.add(tp);
                try {
                    replicaManager.applyPartition(tp, topic.topicId(), p.leader(), p.leaderEpoch(),
                            p.state().partitionEpoch(), p.replicas(), p.isr());
                } catch (Exception e) {
                    log.error("Could not host {}; it stays unavailable on broker {}", tp, brokerId, e);
                }
            }
            Map<String, String> before = previous.topicConfig(topic.name());
            Map<String, String> after = next.topicConfig(topic.name());
            if (!Objects.equals(before, after) && previous.topic(topic.name()).isPresent()) {
                logStore.topicConfigUpdated(topic.name(), topicConfigs.asProperties(after));
                log.info("Applied config overrides {} to topic {}", after, topic.name());
            }
        }
        for (Partition p : new ArrayList<>(replicaManager.partitions())) {
            if (!wanted.contains(p.topicPartition())) {
                boolean topicGone = next.topic(p.topicPartition().topic())
                        .map(t -> !t.topicId().equals(p.topicId())).orElse(true);
                replicaManager.removePartition(p.topicPartition(), true);
                log.info("{} removed from broker {} ({})", p.topicPartition(), brokerId,
                        topicGone ? "topic deleted" : "replica reassigned");
            }
        }
        for (TopicPartition tp : replicaManager.offlinePartitions().keySet()) {
            if (!wanted.contains(tp)) {
                replicaManager.removePartition(tp, false); // its data is in a failed dir: nothing to delete
            }
        }
        if (!strayLogsChecked) {
            strayLogsChecked = true;
            for (UnifiedLog l : logStore.allLogs()) {
                if (!wanted.contains(l.topicPartition())) {
                    log.info("Deleting stray log {}: its topic was deleted or moved while this broker was down",
                            l.topicPartition());
                    logStore.deleteLog(l.topicPartition());
                }
            }
        }
    }
}
