package io.twinlog.dashboard;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.twinlog.clients.mirror.MirrorAdmin.GroupSyncDescription;
import io.twinlog.clients.mirror.MirrorAdmin.MirrorDescription;
import io.twinlog.clients.mirror.MirrorAdmin.PartitionDescription;
import io.twinlog.clients.mirror.MirrorAdmin.TopicDescription;
import io.twinlog.common.Endpoint;
import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.mirror.store.MirrorDefinition;
import org.apache.kafka.common.TopicPartition;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.TreeMap;

/**
 * The document {@code GET /api/v1/mirrors} answers (docs/operations.md, "Dashboard"): this cluster and its brokers,
 * and each mirror as DescribeClusterMirrors reports it, with the lag gauges this broker publishes, each group's
 * sync status and the failover and failback commands. Pure: a metadata image, descriptions and gauge readings in,
 * JSON out; the page and scripts read the same document.
 */
final class DashboardView {
    /** A group whose last sync is older than this many sync intervals is reported STALE. */
    static final int STALE_SYNC_INTERVALS = 3;
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    private DashboardView() {
    }

    /** One broker of this cluster: its client address (the first advertised listener) and rack. */
    record Broker(int id, String address, String rack) {
    }

    /** This cluster as the dashboard's broker sees it in its metadata image. */
    record Cluster(String clusterId, int brokerId, int controllerId, List<Broker> brokers, String bootstrapServers,
                   Map<TopicPartition, Integer> leaders) {
    }

    /**
     * This cluster from the broker's metadata image: each broker's address on {@code clientListener} (empty when it
     * has none; an IPv6 host in brackets), the bootstrap list of those addresses, and each partition's leader.
     */
    static Cluster cluster(MetadataImage image, int brokerId, String clientListener) {
        List<Broker> brokers = new ArrayList<>();
        List<String> bootstrap = new ArrayList<>();
        for (BrokerRegistration b : image.brokers().values()) {
            Optional<Endpoint> ep = b.endpoint(clientListener);
            String address = ep.map(e -> (e.host().contains(":") ? "[" + e.host() + "]" : e.host()) + ":" + e.port())
                    .orElse("");
            ep.ifPresent(e -> bootstrap.add(address));
            brokers.add(new Broker(b.id(), address, b.rack().orElse(null)));
        }
        Map<TopicPartition, Integer> leaders = new HashMap<>();
        for (TopicImage t : image.topics().values()) {
            for (PartitionImage p : t.partitions().values()) {
                leaders.put(new TopicPartition(t.name(), p.partition()), p.leader());
            }
        }
        return new Cluster(image.clusterId(), brokerId, image.controllerId(), brokers, String.join(",", bootstrap),
                leaders);
    }

    /** Reads a lag gauge ({@link LagGauges#LAG_SECONDS}, ...) of a partition: empty where this broker has none. */
    interface Gauges {
        OptionalDouble value(String name, String mirror, TopicPartition tp);
    }

    static ObjectNode build(Cluster cluster, Map<String, MirrorDescription> mirrors, Gauges gauges,
                            MirrorCommands commands, boolean actionsEnabled, long nowMs) {
        ObjectNode root = JSON.objectNode();
        root.put("timeMs", nowMs);
        root.put("actionsEnabled", actionsEnabled);
        ObjectNode c = root.putObject("cluster");
        c.put("clusterId", cluster.clusterId());
        c.put("brokerId", cluster.brokerId());
        c.put("controllerId", cluster.controllerId());
        c.put("bootstrapServers", cluster.bootstrapServers());
        ArrayNode brokers = c.putArray("brokers");
        for (Broker b : cluster.brokers()) {
            ObjectNode bn = brokers.addObject();
            bn.put("id", b.id());
            bn.put("address", b.address());
            bn.put("rack", b.rack());
        }
        ArrayNode ms = root.putArray("mirrors");
        for (MirrorDescription m : mirrors.values()) {
            ms.add(mirror(m, cluster, gauges, commands, nowMs));
        }
        return root;
    }

    private static ObjectNode mirror(MirrorDescription m, Cluster cluster, Gauges gauges, MirrorCommands commands,
                                     long nowMs) {
        ObjectNode mn = JSON.objectNode();
        mn.put("name", m.name());
        mn.put("state", m.state());
        mn.put("stateReason", m.stateReason());
        mn.put("sourceBootstrap", m.sourceBootstrap());
        mn.put("sourceClusterId", m.sourceClusterId());
        Map<String, Integer> states = new TreeMap<>();
        long lagRecords = 0;
        long maxRpoMs = -1;
        long oldestUpToMs = -1;
        ArrayNode topics = mn.putArray("topics");
        for (TopicDescription t : m.topics().values()) {
            ObjectNode tn = topics.addObject();
            tn.put("name", t.name());
            tn.put("desiredState", t.desiredState());
            ArrayNode parts = tn.putArray("partitions");
            for (PartitionDescription p : t.partitions()) {
                TopicPartition tp = new TopicPartition(t.name(), p.partition());
                parts.add(partition(m.name(), tp, p, cluster, gauges));
                states.merge(p.state(), 1, Integer::sum);
                lagRecords += Math.max(0, p.lag());
                if (p.rpoMs() >= 0 && p.rpoMs() > maxRpoMs) {
                    maxRpoMs = p.rpoMs();
                    oldestUpToMs = p.mirroredUpToMs();
                }
            }
            tn.set("commands", topicCommands(commands, m, t.name()));
        }
        ObjectNode summary = mn.putObject("summary");
        states.forEach(summary.putObject("partitionStates")::put);
        summary.put("lagRecords", lagRecords);
        // the mirror's RPO: its partitions' highest (decision 122), and the oldest mirrored-up-to time it comes from
        putKnown(summary, "maxRpoSeconds", maxRpoMs);
        summary.put("oldestMirroredUpToMs", oldestUpToMs);
        long intervalMs = syncIntervalMs(m);
        ArrayNode groups = mn.putArray("groups");
        for (GroupSyncDescription g : m.groups().values()) {
            ObjectNode gn = groups.addObject();
            gn.put("groupId", g.groupId());
            gn.put("groupType", g.groupType());
            gn.put("lastSyncTimeMs", g.lastSyncTimeMs());
            gn.put("offsetsSynced", g.offsetsSynced());
            gn.put("offsetsClamped", g.offsetsClamped());
            gn.put("status", g.lastSyncTimeMs() <= 0 ? "NEVER"
                    : nowMs - g.lastSyncTimeMs() > STALE_SYNC_INTERVALS * intervalMs ? "STALE" : "OK");
        }
        mn.put("groupsSyncIntervalMs", intervalMs);
        mn.set("commands", topicCommands(commands, m, MirrorCommands.ALL_TOPICS));
        return mn;
    }

    private static ObjectNode partition(String mirror, TopicPartition tp, PartitionDescription p, Cluster cluster,
                                        Gauges gauges) {
        ObjectNode pn = JSON.objectNode();
        pn.put("partition", p.partition());
        pn.put("state", p.state());
        Integer leader = cluster.leaders().get(tp);
        pn.put("leader", leader == null ? -1 : leader);
        pn.put("sourceLogEndOffset", p.sourceLogEndOffset());
        pn.put("destinationLogEndOffset", p.destinationLogEndOffset());
        pn.put("lagRecords", p.lag());
        // a partition recorded as caught up costs nothing to fail over, whichever broker leads it; otherwise the
        // seconds and bytes come from the leader's gauges (null when another broker leads it)
        boolean caughtUp = p.lag() == 0 && "MIRRORING".equals(p.state());
        putGauge(pn, "lagSeconds", caughtUp ? OptionalDouble.of(0) : gauges.value(LagGauges.LAG_SECONDS, mirror, tp));
        putGauge(pn, "lagBytes", caughtUp ? OptionalDouble.of(0) : gauges.value(LagGauges.LAG_BYTES, mirror, tp));
        pn.put("newestMirroredTimestampMs", p.newestMirroredTimestamp());
        pn.put("mirroredUpToMs", p.mirroredUpToMs());
        putKnown(pn, "rpoSeconds", p.rpoMs()); // from describe: known whichever broker leads the partition
        pn.put("retryAttempt", p.retryAttempt());
        pn.put("lastError", p.lastError());
        pn.put("lastMirroredEpoch", p.lastMirroredEpoch());
        pn.put("lastMirroredOffset", p.lastMirroredOffset());
        ArrayNode outOfSync = pn.putArray("outOfSyncReplicas");
        p.outOfSyncReplicas().forEach(outOfSync::add);
        pn.put("truncationOffset", p.truncationOffset());
        return pn;
    }

    /** Milliseconds as seconds, null when unknown (negative). */
    private static void putKnown(ObjectNode node, String field, long millis) {
        putGauge(node, field, millis < 0 ? OptionalDouble.empty() : OptionalDouble.of(millis / 1000.0));
    }

    private static void putGauge(ObjectNode node, String field, OptionalDouble value) {
        if (value.isPresent()) {
            node.put(field, value.getAsDouble());
        } else {
            node.putNull(field);
        }
    }

    private static ObjectNode topicCommands(MirrorCommands commands, MirrorDescription m, String topic) {
        ObjectNode cn = JSON.objectNode();
        cn.put("failover", commands.failover(m.name(), topic));
        cn.put("pause", commands.pause(m.name(), topic));
        cn.put("resume", commands.resume(m.name(), topic));
        ArrayNode failback = cn.putArray("failback");
        commands.failback(m.name(), m.sourceBootstrap(), topic).forEach(failback::add);
        return cn;
    }

    private static long syncIntervalMs(MirrorDescription m) {
        String v = m.configs().get(MirrorDefinition.GROUPS_SYNC_INTERVAL_MS);
        try {
            return v == null ? MirrorDefinition.DEFAULT_GROUPS_SYNC_INTERVAL_MS : Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            // validated at creation; an unreadable value reports with the default rather than failing the page
            return MirrorDefinition.DEFAULT_GROUPS_SYNC_INTERVAL_MS;
        }
    }
}
