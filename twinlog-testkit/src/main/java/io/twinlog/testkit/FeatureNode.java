package io.twinlog.testkit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.FinalizedVersionRange;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * A cluster's finalized feature levels, as an operator sets them today: ZooKeeper's {@code /feature} node (Kafka's
 * ZooKeeper-mode node; Twinlog has no UpdateFeatures yet). Clients keep the APIs a broker advertised when their
 * connection opened, so a test opens the clients that need a new level's APIs after {@link #finalize} returns.
 */
public final class FeatureNode {
    private FeatureNode() {
    }

    /**
     * Writes {@code levels} as the cluster's whole {@code /feature} node (a feature left out falls back to its
     * default) and waits until the cluster advertises them.
     */
    public static void finalize(TestCluster cluster, Map<String, Integer> levels, Duration timeout) throws Exception {
        String features = new TreeMap<>(levels).entrySet().stream()
                .map(e -> "\"" + e.getKey() + "\":" + e.getValue()).collect(Collectors.joining(","));
        byte[] node = ("{\"version\":1,\"features\":{" + features + "}}").getBytes(StandardCharsets.UTF_8);
        try (CuratorFramework zk = CuratorFrameworkFactory.newClient(cluster.zookeeperConnect(),
                new RetryOneTime(100))) {
            zk.start();
            if (zk.checkExists().forPath("/feature") == null) {
                zk.create().forPath("/feature", node);
            } else {
                zk.setData().forPath("/feature", node);
            }
        }
        Waits.waitUntil("feature levels " + levels + " finalized", () -> {
            try (Admin admin = cluster.admin()) {
                Map<String, FinalizedVersionRange> finalized = admin.describeFeatures().featureMetadata().get()
                        .finalizedFeatures();
                // a level 0 may not be listed at all (Twinlog lists share.version only from 1)
                return levels.entrySet().stream().allMatch(e -> finalized.containsKey(e.getKey())
                        ? finalized.get(e.getKey()).maxVersionLevel() == e.getValue() : e.getValue() == 0);
            }
        }, timeout);
    }
}
