package io.twinlog.server.handlers.group;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.group.GroupCoordinatorHost;
import io.twinlog.protocol.ApiRegistry;
import io.twinlog.server.handlers.CoordinatorFinder;
import io.twinlog.server.handlers.InternalTopicCreator;
import io.twinlog.server.handlers.share.ShareFeature;
import io.twinlog.server.metadata.TopicAdmin;
import io.twinlog.server.security.BrokerAuthorization;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.group.GroupCoordinatorConfig;

import java.util.function.Supplier;

/** Registers the consumer- and share-group APIs, all served by the hosted group coordinator. */
public final class GroupApis implements AutoCloseable {
    private final GroupRequests groups;
    private final InternalTopicCreator offsetsTopic;
    private final CoordinatorFinder transactions;
    private final CoordinatorFinder shares;
    private final Supplier<MetadataImage> image;

    /**
     * @param transactions finds transactional ids' coordinators, for FindCoordinator's other key types
     * @param shares       finds share-group state coordinators ({@code group:topicId:partition} keys)
     */
    public GroupApis(GroupCoordinatorHost host, TopicAdmin topicAdmin, Supplier<MetadataImage> image,
                     BrokerAuthorization authorization, CoordinatorFinder transactions, CoordinatorFinder shares,
                     Time time) {
        this.groups = new GroupRequests(host, authorization);
        this.offsetsTopic = new InternalTopicCreator(GroupCoordinatorHost.OFFSETS_TOPIC,
                GroupCoordinatorConfig.OFFSETS_TOPIC_REPLICATION_FACTOR_CONFIG,
                () -> new InternalTopicCreator.Spec(host.config().offsetsTopicPartitions(),
                        host.config().offsetsTopicReplicationFactor(), host.offsetsTopicConfigs()),
                topicAdmin, image, time);
        this.transactions = transactions;
        this.shares = shares;
        this.image = image;
    }

    public void register(ApiRegistry.Builder registry) {
        MembershipHandlers membership = new MembershipHandlers(groups);
        OffsetHandlers offsets = new OffsetHandlers(groups, image);
        GroupAdminHandlers admin = new GroupAdminHandlers(groups);
        ShareGroupHandlers shareGroups = new ShareGroupHandlers(groups);
        ShareOffsetHandlers shareOffsets = new ShareOffsetHandlers(groups);
        registry.add(ApiKeys.FIND_COORDINATOR, new FindCoordinatorHandler(groups, offsetsTopic, transactions, shares,
                        image))
                .add(ApiKeys.JOIN_GROUP, membership.joinGroup())
                .add(ApiKeys.SYNC_GROUP, membership.syncGroup())
                .add(ApiKeys.HEARTBEAT, membership.heartbeat())
                .add(ApiKeys.LEAVE_GROUP, membership.leaveGroup())
                .add(ApiKeys.CONSUMER_GROUP_HEARTBEAT, membership.consumerGroupHeartbeat())
                .add(ApiKeys.OFFSET_COMMIT, offsets.commit())
                // up to v4: v5 and later are KIP-890's (transaction version 2), not finalized yet (decision 87)
                .add(ApiKeys.TXN_OFFSET_COMMIT, offsets.txnCommit())
                .add(ApiKeys.OFFSET_FETCH, offsets.fetch())
                .add(ApiKeys.OFFSET_DELETE, offsets.delete())
                .add(ApiKeys.LIST_GROUPS, admin.listGroups())
                .add(ApiKeys.DESCRIBE_GROUPS, admin.describeGroups())
                .add(ApiKeys.DELETE_GROUPS, admin.deleteGroups())
                .add(ApiKeys.CONSUMER_GROUP_DESCRIBE, admin.consumerGroupDescribe())
                // share groups (KIP-932): only while share.version is 1 or more (decision 102)
                .add(ApiKeys.SHARE_GROUP_HEARTBEAT, ShareFeature.gate(image, shareGroups.heartbeat()))
                .add(ApiKeys.SHARE_GROUP_DESCRIBE, ShareFeature.gate(image, shareGroups.describe()))
                .add(ApiKeys.DESCRIBE_SHARE_GROUP_OFFSETS, ShareFeature.gate(image, shareOffsets.describe()))
                .add(ApiKeys.ALTER_SHARE_GROUP_OFFSETS, ShareFeature.gate(image, shareOffsets.alter()))
                .add(ApiKeys.DELETE_SHARE_GROUP_OFFSETS, ShareFeature.gate(image, shareOffsets.delete()));
    }

    @Override
    public void close() {
        offsetsTopic.close();
    }
}
