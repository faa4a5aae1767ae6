package io.twinlog.server;

import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.controller.zk.BrokerUnregistration;
import io.twinlog.controller.zk.MetadataStore;
import io.twinlog.protocol.AdminExecutor;
import io.twinlog.protocol.ApiRegistry;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.server.dynamic.DynamicBrokerConfigs;
import io.twinlog.server.handlers.AclsHandler;
import io.twinlog.server.handlers.AlterConfigsHandler;
import io.twinlog.server.handlers.AlterPartitionHandler;
import io.twinlog.server.handlers.ApiVersionsHandler;
import io.twinlog.server.handlers.BrokerContext;
import io.twinlog.server.handlers.ClientQuotasHandler;
import io.twinlog.server.handlers.ClusterAuthorized;
import io.twinlog.server.handlers.CreatePartitionsHandler;
import io.twinlog.server.handlers.CreateTopicsHandler;
import io.twinlog.server.handlers.DeleteRecordsHandler;
import io.twinlog.server.handlers.DeleteTopicsHandler;
import io.twinlog.server.handlers.DescribeClusterHandler;
import io.twinlog.server.handlers.DescribeConfigsHandler;
import io.twinlog.server.handlers.DescribeLogDirsHandler;
import io.twinlog.server.handlers.DescribeProducersHandler;
import io.twinlog.server.handlers.DescribeTopicPartitionsHandler;
import io.twinlog.server.handlers.ElectLeadersHandler;
import io.twinlog.server.handlers.FetchHandler;
import io.twinlog.server.handlers.InitProducerIdHandler;
import io.twinlog.server.handlers.ListConfigResourcesHandler;
import io.twinlog.server.handlers.ListOffsetsHandler;
import io.twinlog.server.handlers.MetadataHandler;
import io.twinlog.server.handlers.OffsetsForLeaderEpochHandler;
import io.twinlog.server.handlers.ProduceHandler;
import io.twinlog.server.handlers.ReassignmentsHandler;
import io.twinlog.server.handlers.SaslHandlers;
import io.twinlog.server.handlers.ScramCredentialsHandlers;
import io.twinlog.server.handlers.UnregisterBrokerHandler;
import io.twinlog.server.handlers.WriteTxnMarkersHandler;
import io.twinlog.server.quota.ClientQuotaStore;
import io.twinlog.server.security.BrokerAuthorization;
import io.twinlog.server.security.ScramUsers;
import org.apache.curator.framework.CuratorFramework;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.protocol.ApiKeys;

import java.util.function.Supplier;

/**
 * Which handler serves each API key, behind which authorization, on which threads: the broker's API registry. Topic
 * and config changes and everything that waits for ZooKeeper, the image or the controller run on the admin request
 * threads ({@link AdminExecutor}), never on a request handler thread. The admin threads are this component's to
 * close.
 */
final class BrokerApis implements AutoCloseable {
    /** Admin requests (topic and config changes, forwarded elections) that may wait at once; others queue. */
    private static final int ADMIN_THREADS = 2;

    // volatile: the broker's close() may run on another thread while build() runs; null until built
    private volatile AdminExecutor adminExecutor;

    /**
     * Builds every handler and the registry; the mirror runtime and the coordinators' APIs are built here too, in
     * the registry's order.
     *
     * @param registry the registry once built, for ApiVersions (which answers with it)
     */
    ApiRegistry build(BrokerContext ctx, Supplier<ApiRegistry> registry, DynamicBrokerConfigs dynamicConfigs,
                      ControllerLink controllerLink, Coordinators coordinators, Mirrors mirrors,
                      ScramUsers scramUsers, ClientQuotaStore clientQuotas, CuratorFramework zk, MetadataStore store,
                      BrokerMetrics metrics) {
        BrokerAuthorization authorization = ctx.authorization();
        AdminExecutor admin = new AdminExecutor("twinlog-admin-" + ctx.brokerId(), ADMIN_THREADS,
                ctx.config().adminQueuedMaxRequests());
        adminExecutor = admin;
        AlterConfigsHandler alterConfigs = new AlterConfigsHandler(ctx, dynamicConfigs,
                coordinators.groupConfigStore());
        ReassignmentsHandler reassignments = new ReassignmentsHandler(ctx, controllerLink.controller(),
                controllerLink.forwardingChannel());
        ApiRegistry.Builder builder = ApiRegistry.builder();
        ScramCredentialsHandlers scram = new ScramCredentialsHandlers(scramUsers);
        ClientQuotasHandler clientQuotasHandler = new ClientQuotasHandler(clientQuotas);
        AclsHandler acls = new AclsHandler(authorization);
        mirrors.registerApis(builder, ctx.config(), zk, ctx.metadata(), ctx.replicaManager(), ctx.topicAdmin(),
                controllerLink.controller(), authorization, metrics, ctx.time());
        coordinators.registerApis(builder, ctx.config(), ctx.metadata(), ctx.topicAdmin(), authorization,
                ctx.quotas(), ctx.time());
        return builder
                .add(ApiKeys.API_VERSIONS, new ApiVersionsHandler(registry, () -> ctx.image().features()))
                .add(ApiKeys.METADATA, new MetadataHandler(ctx, admin::execute))
                // from v0 as Kafka advertises it (KAFKA-18659); v0-2 close the connection on arrival (Processor)
                .add(ApiKeys.PRODUCE, ApiKeys.PRODUCE_API_VERSIONS_RESPONSE_MIN_VERSION, ApiKeys.PRODUCE.latestVersion(false),
                        new ProduceHandler(ctx))
                .add(ApiKeys.FETCH, new FetchHandler(ctx))
                .add(ApiKeys.LIST_OFFSETS, new ListOffsetsHandler(ctx))
                .add(ApiKeys.OFFSET_FOR_LEADER_EPOCH, new OffsetsForLeaderEpochHandler(ctx))
                .add(ApiKeys.INIT_PRODUCER_ID, new InitProducerIdHandler(ctx,
                        coordinators.transactionApis().initProducerId()))
                .add(ApiKeys.DESCRIBE_PRODUCERS, new DescribeProducersHandler(ctx))
                .add(ApiKeys.WRITE_TXN_MARKERS, ClusterAuthorized.requireAlterOrClusterAction(authorization,
                        new WriteTxnMarkersHandler(ctx, coordinators.groupCoordinator())))
                // topic and config changes wait for ZooKeeper and the image: never on a request thread
                .add(ApiKeys.CREATE_TOPICS, admin.offRequestThreads(new CreateTopicsHandler(ctx)))
                .add(ApiKeys.DELETE_TOPICS, admin.offRequestThreads(new DeleteTopicsHandler(ctx)))
                .add(ApiKeys.CREATE_PARTITIONS, admin.offRequestThreads(new CreatePartitionsHandler(ctx)))
                .add(ApiKeys.DESCRIBE_CONFIGS, new DescribeConfigsHandler(ctx, dynamicConfigs,
                        coordinators.groupConfigStore()))
                .add(ApiKeys.DELETE_RECORDS, new DeleteRecordsHandler(ctx))
                .add(ApiKeys.DESCRIBE_LOG_DIRS, cluster(authorization, AclOperation.DESCRIBE,
                        new DescribeLogDirsHandler(ctx)))
                .add(ApiKeys.INCREMENTAL_ALTER_CONFIGS, admin.offRequestThreads(alterConfigs.incremental()))
                .add(ApiKeys.ALTER_CONFIGS, admin.offRequestThreads(alterConfigs.legacy()))
                .add(ApiKeys.DESCRIBE_CLUSTER, new DescribeClusterHandler(ctx))
                .add(ApiKeys.LIST_CONFIG_RESOURCES, cluster(authorization, AclOperation.DESCRIBE_CONFIGS,
                        new ListConfigResourcesHandler(ctx, coordinators.groupConfigStore())))
                .add(ApiKeys.DESCRIBE_TOPIC_PARTITIONS, new DescribeTopicPartitionsHandler(ctx))
                .add(ApiKeys.ALTER_PARTITION, cluster(authorization, AclOperation.CLUSTER_ACTION,
                        new AlterPartitionHandler(ctx, controllerLink.controller())))
                // on a broker that is not the controller these forward to it, and wait for its answer
                .add(ApiKeys.ELECT_LEADERS, cluster(authorization, AclOperation.ALTER, admin.offRequestThreads(
                        new ElectLeadersHandler(ctx, controllerLink.controller(), controllerLink.forwardingChannel()))))
                .add(ApiKeys.ALTER_PARTITION_REASSIGNMENTS, cluster(authorization, AclOperation.ALTER,
                        admin.offRequestThreads(reassignments.alter())))
                .add(ApiKeys.LIST_PARTITION_REASSIGNMENTS, cluster(authorization, AclOperation.DESCRIBE,
                        reassignments.list()))
                .add(ApiKeys.DESCRIBE_ACLS, acls.describe())
                .add(ApiKeys.CREATE_ACLS, admin.offRequestThreads(acls.create()))
                .add(ApiKeys.DELETE_ACLS, admin.offRequestThreads(acls.delete()))
                .add(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, cluster(authorization, AclOperation.DESCRIBE,
                        scram.describe()))
                .add(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, cluster(authorization, AclOperation.ALTER,
                        admin.offRequestThreads(scram.alter())))
                .add(ApiKeys.UNREGISTER_BROKER, cluster(authorization, AclOperation.ALTER, admin.offRequestThreads(
                        new UnregisterBrokerHandler(new BrokerUnregistration(store.client()), ctx::image))))
                .add(ApiKeys.DESCRIBE_CLIENT_QUOTAS, cluster(authorization, AclOperation.DESCRIBE_CONFIGS,
                        clientQuotasHandler.describe()))
                .add(ApiKeys.ALTER_CLIENT_QUOTAS, cluster(authorization, AclOperation.ALTER_CONFIGS,
                        admin.offRequestThreads(clientQuotasHandler.alter())))
                .add(ApiKeys.SASL_HANDSHAKE, SaslHandlers.handshake())
                .add(ApiKeys.SASL_AUTHENTICATE, SaslHandlers.authenticate())
                .build();
    }

    /** Kafka's rule for a cluster-wide API: {@code operation} on the cluster first. */
    private static RequestHandler cluster(BrokerAuthorization authorization, AclOperation operation,
                                          RequestHandler handler) {
        return ClusterAuthorized.require(authorization, operation, handler);
    }

    @Override
    public void close() {
        QuietClose.close("admin request threads", adminExecutor);
    }
}
