package io.twinlog.tests.transactions;

import io.twinlog.controller.metadata.FeatureLevels;
import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.admin.SupportedVersionRange;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Feature levels in ApiVersions, as Kafka 4.4's brokers advertise them: every broker lists transaction.version
 * (which decides the transaction protocol a 4.4 producer speaks) with the levels it supports and the cluster's
 * finalized level; an operator's level in ZooKeeper's {@code /feature} node reaches every broker with a higher epoch
 * (clients keep only a newer epoch's levels), and a level above what the broker supports is not applied.
 * share.version (KIP-932) is supported up to 1 and finalized at 1 without the node, as share groups are on by
 * default.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class FeatureLevelsTest {
    private static final String TV = "transaction.version";
    private static final String SV = "share.version";

    @Test
    void everyBrokerAdvertisesTheFinalizedLevelsOfTheFeatureNode() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3).build().start();
             CuratorFramework zk = CuratorFrameworkFactory.newClient(cluster.zookeeperConnect(),
                     new RetryOneTime(100));
             Admin admin = cluster.admin()) {
            zk.start();
            assertTrue(zk.blockUntilConnected(30, TimeUnit.SECONDS));

            // without the node: the build's default level, epoch 0, on every broker
            for (int id : List.of(0, 1, 2)) {
                ApiVersionsResponseData answer = apiVersions(cluster, id, (short) 3);
                assertEquals(0, answer.finalizedFeaturesEpoch(), "broker " + id);
                assertEquals(FeatureLevels.DEFAULTS.get(TV), answer.finalizedFeatures().find(TV).maxVersionLevel());
                assertEquals(0, answer.supportedFeatures().find(TV).minVersion());
                assertEquals(FeatureLevels.SUPPORTED.get(TV).max(), answer.supportedFeatures().find(TV).maxVersion());
                // share groups: supported up to 1 (no dead-letter queue), on by default
                assertEquals(0, answer.supportedFeatures().find(SV).minVersion());
                assertEquals(1, answer.supportedFeatures().find(SV).maxVersion());
                assertEquals(1, answer.finalizedFeatures().find(SV).maxVersionLevel(), "broker " + id);
            }
            FeatureMetadata described = admin.describeFeatures().featureMetadata().get();
            assertEquals(new SupportedVersionRange((short) 0, FeatureLevels.SUPPORTED.get(TV).max()),
                    described.supportedFeatures().get(TV));
            short defaultLevel = FeatureLevels.DEFAULTS.get(TV);
            assertEquals(new FinalizedVersionRange(defaultLevel, defaultLevel), described.finalizedFeatures().get(TV));

            // an operator finalizes level 0: every broker advertises it with a newer epoch
            zk.create().forPath("/feature", "{\"version\":1,\"features\":{\"transaction.version\":0}}"
                    .getBytes(StandardCharsets.UTF_8));
            for (int id : List.of(0, 1, 2)) {
                int broker = id;
                Waits.waitUntil("broker " + id + " advertises transaction.version 0", () -> {
                    ApiVersionsResponseData answer = apiVersions(cluster, broker,
                            ApiVersionsRequestData.HIGHEST_SUPPORTED_VERSION);
                    return answer.finalizedFeaturesEpoch() == 1
                            && answer.finalizedFeatures().find(TV).maxVersionLevel() == 0;
                });
            }

            // a level this build cannot run at is bounded to what it supports, with a newer epoch again: Kafka 4.4's
            // share.version 2 (dead-letter queue) runs at 1
            zk.setData().forPath("/feature", ("{\"version\":1,\"features\":{\"transaction.version\":99,"
                    + "\"share.version\":2}}").getBytes(StandardCharsets.UTF_8));
            Waits.waitUntil("the levels are bounded to the supported maximum", () -> {
                ApiVersionsResponseData answer = apiVersions(cluster, 2, (short) 3);
                return answer.finalizedFeaturesEpoch() == 2 && answer.finalizedFeatures().find(TV)
                        .maxVersionLevel() == FeatureLevels.SUPPORTED.get(TV).max()
                        && answer.finalizedFeatures().find(SV) != null
                        && answer.finalizedFeatures().find(SV).maxVersionLevel() == 1;
            });

            // ApiVersions v2 and older has no feature fields: the answer still parses and lists the APIs
            ApiVersionsResponseData old = apiVersions(cluster, 0, (short) 2);
            assertTrue(old.apiKeys().size() > 40);
            assertTrue(old.finalizedFeatures().isEmpty());
        }
    }

    private static ApiVersionsResponseData apiVersions(TestCluster cluster, int id, short version) throws Exception {
        try (RawKafkaConnection connection = RawKafkaConnection.to(cluster.broker(id).bootstrapServers())) {
            ApiVersionsResponse response = connection.send(new ApiVersionsRequest.Builder(
                    new ApiVersionsRequestData().setClientSoftwareName("test").setClientSoftwareVersion("1"),
                    version, version).build(version));
            return response.data();
        }
    }
}
