package io.twinlog.tests.kafka.protocol;

import io.twinlog.testkit.RawKafkaConnection;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.AlterConfigsOptions;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.ListConfigResourcesOptions;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.AlterConfigsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AlterConfigsRequest;
import org.apache.kafka.common.requests.AlterConfigsResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Group configs ({@code ConfigResource.Type.GROUP}, KIP-848/KIP-932) of Twinlog against Apache Kafka 4.4's, side by
 * side: the same alters (incremental and legacy) get the same answer, error class and message included; the same
 * describes list the same keys with the same values, sources, types and synonyms; ListConfigResources lists the same
 * groups. The keys Twinlog refuses on purpose (decision 105) are checked to be refused, and only they.
 */
@Timeout(180)
class GroupConfigsParityTest {
    private static SideBySideClusters clusters;

    @BeforeAll
    static void start() throws Exception {
        clusters = SideBySideClusters.start();
    }

    @AfterAll
    static void stop() throws Exception {
        clusters.close();
    }

    @Test
    void altersAreAnsweredAsKafkaAnswersThem() throws Exception {
        List<String> kafka = alters(clusters.kafka());
        List<String> twinlog = alters(clusters.twinlog());
        assertEquals(String.join("\n", kafka), String.join("\n", twinlog));
    }

    /** Each alter with its outcome, one line each: the same sequence, so later ones see what earlier ones stored. */
    private static List<String> alters(SideBySideClusters.Target target) throws Exception {
        List<String> out = new ArrayList<>();
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", target.bootstrap()))) {
            out.add(outcome("set", () -> alter(admin, "p1", false, set("share.auto.offset.reset", "earliest"),
                    set("consumer.heartbeat.interval.ms", "6000"), set("share.session.timeout.ms", "50000"))));
            out.add(outcome("unknown key", () -> alter(admin, "p1", false, set("no.such.key", "1"))));
            out.add(outcome("unknown key, validate only", () -> alter(admin, "p1", true, set("no.such.key", "1"))));
            out.add(outcome("broker key", () -> alter(admin, "p1", false,
                    set("group.share.heartbeat.interval.ms", "6000"))));
            out.add(outcome("bad enum", () -> alter(admin, "p1", false, set("share.auto.offset.reset", "bogus"))));
            out.add(outcome("not a number", () -> alter(admin, "p1", false,
                    set("share.heartbeat.interval.ms", "abc"))));
            out.add(outcome("below the broker's min", () -> alter(admin, "p1", false,
                    set("share.heartbeat.interval.ms", "1"))));
            out.add(outcome("above the broker's max", () -> alter(admin, "p1", false,
                    set("consumer.session.timeout.ms", "100000"))));
            out.add(outcome("below the definition's min", () -> alter(admin, "p1", false,
                    set("share.record.lock.duration.ms", "10"))));
            out.add(outcome("delivery count above max", () -> alter(admin, "p1", false,
                    set("share.delivery.count.limit", "100"))));
            out.add(outcome("isolation level", () -> alter(admin, "p1", false,
                    set("share.isolation.level", "read_committed"))));
            out.add(outcome("append", () -> alter(admin, "p1", false, new AlterConfigOp(
                    new ConfigEntry("share.auto.offset.reset", "latest"), AlterConfigOp.OpType.APPEND))));
            out.add(outcome("subtract", () -> alter(admin, "p1", false, new AlterConfigOp(
                    new ConfigEntry("share.isolation.level", "x"), AlterConfigOp.OpType.SUBTRACT))));
            out.add(outcome("delete of a key not set", () -> alter(admin, "p1", false, new AlterConfigOp(
                    new ConfigEntry("no.such.key", null), AlterConfigOp.OpType.DELETE))));
            out.add(outcome("delete", () -> alter(admin, "p1", false, new AlterConfigOp(
                    new ConfigEntry("share.isolation.level", null), AlterConfigOp.OpType.DELETE))));
            out.add(outcome("empty group name", () -> alter(admin, "", false,
                    set("share.auto.offset.reset", "earliest"))));
            out.add(outcome("validate only", () -> alter(admin, "p2", true, set("share.auto.offset.reset",
                    "earliest"))));
            out.add(outcome("legacy replace", () -> legacy(target, "p3", Map.of("share.auto.offset.reset",
                    "earliest", "share.delivery.count.limit", "3"))));
            out.add(outcome("legacy unknown key", () -> legacy(target, "p3", Map.of("no.such.key", "1"))));
            // in name order (Kafka lists them in its map's order), this test's groups only (the others run alongside)
            out.add(outcome("list", () -> new TreeSet<>(admin.listConfigResources(Set.of(ConfigResource.Type.GROUP),
                    new ListConfigResourcesOptions()).all().get().stream().map(ConfigResource::name)
                    .filter(name -> name.matches("p[1-3]")).toList())));
            out.add(outcome("describe empty name", () -> describe(admin, "", false).size()));
        }
        return out;
    }

    @Test
    void describeListsWhatKafkaLists() throws Exception {
        for (SideBySideClusters.Target target : List.of(clusters.kafka(), clusters.twinlog())) {
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", target.bootstrap()))) {
                alter(admin, "d1", false, set("share.auto.offset.reset", "earliest"),
                        set("consumer.heartbeat.interval.ms", "6000"));
            }
        }
        for (String group : List.of("d1", "never-configured")) {
            Map<String, String> kafka = described(clusters.kafka(), group);
            Map<String, String> twinlog = described(clusters.twinlog(), group);
            assertEquals(kafka.keySet(), twinlog.keySet(), "keys of " + group);
            for (String key : kafka.keySet()) {
                String expected = kafka.get(key);
                if (twinlogRefuses(key)) {
                    // read-only on Twinlog, which refuses to set it; value, source and synonyms as Kafka's
                    expected = expected.replace("readOnly=false", "readOnly=true");
                }
                assertEquals(expected, twinlog.get(key), key + " of " + group);
            }
        }
    }

    @Test
    void keysOfFeaturesTwinlogLacksAreRefusedOnlyByTwinlog() throws Exception {
        for (ConfigEntry entry : List.of(new ConfigEntry("errors.deadletterqueue.topic.name", "dlq.p4"),
                new ConfigEntry("errors.deadletterqueue.copy.record.enable", "true"),
                new ConfigEntry("streams.num.standby.replicas", "1"))) {
            AlterConfigOp op = new AlterConfigOp(entry, AlterConfigOp.OpType.SET);
            String kafka;
            String twinlog;
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", clusters.kafka().bootstrap()))) {
                kafka = outcome(entry.name(), () -> alter(admin, "p4", false, op));
            }
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", clusters.twinlog().bootstrap()))) {
                twinlog = outcome(entry.name(), () -> alter(admin, "p4", false, op));
            }
            assertEquals(entry.name() + ": OK done", kafka);
            assertTrue(twinlog.startsWith(entry.name() + ": InvalidConfigurationException: Group config "
                    + entry.name() + " is not supported: Twinlog has no "), twinlog);
        }
    }

    private static boolean twinlogRefuses(String key) {
        return key.startsWith("errors.deadletterqueue.") || key.startsWith("streams.");
    }

    private static Map<String, String> described(SideBySideClusters.Target target, String group) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", target.bootstrap()))) {
            Map<String, String> out = new TreeMap<>();
            for (ConfigEntry e : describe(admin, group, true)) {
                out.put(e.name(), "value=" + e.value() + " source=" + e.source() + " type=" + e.type()
                        + " readOnly=" + e.isReadOnly() + " sensitive=" + e.isSensitive() + " synonyms="
                        + e.synonyms() + " documented=" + (e.documentation() != null));
            }
            return out;
        }
    }

    private static Collection<ConfigEntry> describe(Admin admin, String group, boolean full) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
        Config config = admin.describeConfigs(List.of(resource), new DescribeConfigsOptions().includeSynonyms(full)
                .includeDocumentation(full)).all().get().get(resource);
        return config.entries();
    }

    private static AlterConfigOp set(String key, String value) {
        return new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET);
    }

    private static String alter(Admin admin, String group, boolean validateOnly, AlterConfigOp... ops)
            throws Exception {
        admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), List.of(ops)),
                new AlterConfigsOptions().validateOnly(validateOnly)).all().get();
        return "done";
    }

    /** The legacy AlterConfigs (the admin client no longer sends it; kafka-configs of Kafka 3 did). */
    private static String legacy(SideBySideClusters.Target target, String group, Map<String, String> configs)
            throws Exception {
        List<AlterConfigsRequest.ConfigEntry> entries = new ArrayList<>();
        configs.forEach((k, v) -> entries.add(new AlterConfigsRequest.ConfigEntry(k, v)));
        try (RawKafkaConnection connection = RawKafkaConnection.to(target.bootstrap())) {
            AlterConfigsResponse response = connection.send(new AlterConfigsRequest.Builder(Map.of(
                    new ConfigResource(ConfigResource.Type.GROUP, group), new AlterConfigsRequest.Config(entries)),
                    false).build());
            AlterConfigsResponseData.AlterConfigsResourceResponse r = response.data().responses().get(0);
            return Errors.forCode(r.errorCode()) + " " + r.errorMessage();
        }
    }

    private static String outcome(String what, Callable<Object> call) {
        try {
            return what + ": OK " + call.call();
        } catch (ExecutionException e) {
            return what + ": " + e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage();
        } catch (Exception e) {
            return what + ": " + e.getClass().getSimpleName() + ": " + e.getMessage();
        }
    }
}
