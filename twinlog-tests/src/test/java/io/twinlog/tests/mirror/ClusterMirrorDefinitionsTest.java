package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.clients.mirror.MirrorException;
import io.twinlog.testkit.TestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Cluster mirror definitions on a destination cluster: create, list, describe, delete, and their errors. */
@Timeout(300)
class ClusterMirrorDefinitionsTest {
    private static TestCluster source;
    private static TestCluster destination;
    private static String sourceClusterId;

    @BeforeAll
    static void start() throws Exception {
        source = TestCluster.builder().brokers(1).build().start();
        destination = TestCluster.builder().brokers(1).build().start();
        try (Admin admin = source.admin()) {
            sourceClusterId = admin.describeCluster().clusterId().get();
        }
    }

    @AfterAll
    static void stop() {
        destination.close();
        source.close();
    }

    private static MirrorAdmin admin() {
        return MirrorAdmin.create(destination.bootstrapServers(), Duration.ofSeconds(30));
    }

    @Test
    void createListDescribeDelete() throws Exception {
        try (MirrorAdmin admin = admin()) {
            admin.createClusterMirror("dr", Map.of("bootstrap.servers", source.bootstrapServers(),
                    "mirror.topic.include", "orders.*,payments", "mirror.topic.exclude", ".*-internal",
                    "sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required "
                            + "username=\"u\" password=\"secret\";"));
            List<MirrorAdmin.MirrorListing> listing = admin.listClusterMirrors(true);
            MirrorAdmin.MirrorListing dr = listing.stream().filter(m -> m.name().equals("dr")).findFirst().orElseThrow();
            assertEquals(source.bootstrapServers(), dr.sourceBootstrap());
            assertEquals(sourceClusterId, dr.sourceClusterId(), "the source's cluster ID is recorded at creation");

            MirrorAdmin.MirrorDescription d = admin.describeClusterMirrors(List.of("dr")).get("dr");
            assertEquals(List.of("orders.*", "payments"), d.includePatterns());
            assertEquals(List.of(".*-internal"), d.excludePatterns());
            assertTrue(d.configs().containsKey("sasl.jaas.config"));
            assertNull(d.configs().get("sasl.jaas.config"), "credentials are never echoed back");
            assertEquals(List.of("sasl.jaas.config"), d.sensitiveConfigs());

            admin.alterClusterMirror("dr", Collections.singletonMap("mirror.topic.exclude", null));
            admin.alterClusterMirror("dr", Map.of("mirror.topic.include", "orders.*"));
            MirrorAdmin.MirrorDescription altered = admin.describeClusterMirrors(List.of("dr")).get("dr");
            assertEquals(List.of("orders.*"), altered.includePatterns());
            assertEquals(List.of(), altered.excludePatterns());
            assertCode(Errors.INVALID_REGULAR_EXPRESSION.code(), () ->
                    admin.alterClusterMirror("dr", Map.of("mirror.topic.include", "(")));
            assertCode(MirrorErrors.UNKNOWN_CLUSTER_MIRROR.code, () ->
                    admin.alterClusterMirror("nope", Map.of("mirror.topic.include", "x")));

            admin.deleteClusterMirror("dr");
            assertTrue(admin.listClusterMirrors(false).stream().noneMatch(m -> m.name().equals("dr")));
        }
    }

    @Test
    void definitionsSurviveABrokerRestart() throws Exception {
        try (MirrorAdmin admin = admin()) {
            admin.createClusterMirror("durable", Map.of("bootstrap.servers", source.bootstrapServers()));
        }
        destination.stopBroker(0);
        destination.startBroker(0);
        try (MirrorAdmin admin = admin()) {
            assertEquals(sourceClusterId, admin.describeClusterMirrors(List.of("durable")).get("durable")
                    .sourceClusterId());
            admin.deleteClusterMirror("durable");
        }
    }

    @Test
    void badInputGetsDistinctErrors() throws Exception {
        try (MirrorAdmin admin = admin()) {
            admin.createClusterMirror("twice", Map.of("bootstrap.servers", source.bootstrapServers()));
            assertCode(MirrorErrors.CLUSTER_MIRROR_ALREADY_EXISTS.code, () ->
                    admin.createClusterMirror("twice", Map.of("bootstrap.servers", source.bootstrapServers())));
            assertCode(MirrorErrors.INVALID_CLUSTER_MIRROR_NAME.code, () ->
                    admin.createClusterMirror("bad name/!", Map.of("bootstrap.servers", source.bootstrapServers())));
            assertCode(Errors.INVALID_REGULAR_EXPRESSION.code(), () ->
                    admin.createClusterMirror("bad-regex", Map.of("bootstrap.servers", source.bootstrapServers(),
                            "mirror.topic.include", "orders[")));
            assertCode(Errors.INVALID_CONFIG.code(), () -> admin.createClusterMirror("no-bootstrap", Map.of()));
            assertCode(MirrorErrors.UNKNOWN_CLUSTER_MIRROR.code, () -> admin.describeClusterMirrors(List.of("nope")));
            assertCode(MirrorErrors.UNKNOWN_CLUSTER_MIRROR.code, () -> admin.deleteClusterMirror("nope"));
            admin.deleteClusterMirror("twice");
        }
    }

    @Test
    void aMirrorMayBeCreatedBeforeItsSourceIsReachable() throws Exception {
        try (MirrorAdmin admin = admin()) {
            admin.createClusterMirror("later", Map.of("bootstrap.servers", "127.0.0.1:1",
                    "request.timeout.ms", "2000"));
            MirrorAdmin.MirrorDescription d = admin.describeClusterMirrors(List.of("later")).get("later");
            assertNull(d.sourceClusterId());
            assertTrue(d.stateReason().startsWith("Source not reachable yet"), d.stateReason());
            admin.deleteClusterMirror("later");
        }
    }

    private static void assertCode(short code, Executable call) {
        MirrorException e = assertThrows(MirrorException.class, call);
        assertEquals(code, e.errorCode(), e.getMessage());
    }
}
