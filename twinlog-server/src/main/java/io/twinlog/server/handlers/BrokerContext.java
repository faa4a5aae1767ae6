package io.twinlog.server.handlers;

import io.twinlog.common.BrokerConfig;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.zk.MetadataWatcher;
import io.twinlog.replication.ReplicaManager;
import io.twinlog.server.ProducerIdManager;
import io.twinlog.server.metadata.TopicAdmin;
import io.twinlog.server.metadata.TopicConfigs;
import io.twinlog.server.metrics.BrokerTopicMetrics;
import io.twinlog.server.quota.BrokerQuotas;
import io.twinlog.server.security.BrokerAuthorization;
import io.twinlog.storage.LogStore;
import io.twinlog.transaction.verification.TransactionVerification;
import org.apache.kafka.common.utils.Time;

/**
 * What request handlers share: configuration, the metadata view, the partitions and their log dirs, the admin
 * write path, the authorizer, the verification of transactional writes with their coordinators (KIP-890), and the
 * client quotas that Produce and Fetch apply themselves.
 */
public record BrokerContext(BrokerConfig config, MetadataWatcher metadata, ReplicaManager replicaManager, LogStore logStore,
                            TopicAdmin topicAdmin, TopicConfigs topicConfigs, ProducerIdManager producerIds,
                            BrokerAuthorization authorization, BrokerTopicMetrics topicMetrics,
                            TransactionVerification transactionVerification, BrokerQuotas quotas, Time time) {

    public int brokerId() {
        return config.brokerId();
    }

    public MetadataImage image() {
        return metadata.image();
    }
}
