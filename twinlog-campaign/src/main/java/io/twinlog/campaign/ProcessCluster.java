package io.twinlog.campaign;

import io.twinlog.common.BrokerConfig;
import io.twinlog.testkit.FaultProxy;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;

/**
 * One Twinlog cluster of broker processes under its own chroot of the shared ZooKeeper ensemble, with a
 * {@link FaultProxy} on every seam the campaign cuts:
 * <pre>
 *   broker i --(i-to-j)--> broker j            inter-broker: replica fetches, controller requests, AlterPartition
 *   broker i --(i-to-zk1..3)--> ZooKeeper      its session (cut all three: the session expires)
 *   other cluster --(mirror-in-i)--> broker i  the MIRROR listener, advertised at the proxy
 * </pre>
 * Clients of the campaign (producer, consumers, admin) connect directly.
 */
final class ProcessCluster implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ProcessCluster.class);
    static final int BROKERS = 3;

    private final String name;
    private final List<BrokerNode> brokers = new ArrayList<>();
    private final Map<List<Integer>, FaultProxy> interBroker = new HashMap<>();
    private final Map<Integer, List<FaultProxy>> toZooKeeper = new HashMap<>();
    private final Map<Integer, FaultProxy> mirrorIn = new HashMap<>();

    ProcessCluster(String name, File baseDir, ZooKeeperEnsemble zooKeeper, Map<String, String> brokerProperties)
            throws IOException {
        this.name = name;
        int[] clientPorts = new int[BROKERS];
        int[] mirrorPorts = new int[BROKERS];
        for (int id = 0; id < BROKERS; id++) {
            clientPorts[id] = Ports.free();
            mirrorPorts[id] = Ports.free();
        }
        for (int from = 0; from < BROKERS; from++) {
            mirrorIn.put(from, new FaultProxy(name + from + "-mirror-in", "127.0.0.1", mirrorPorts[from]));
            List<FaultProxy> zk = new ArrayList<>();
            for (int node : zooKeeper.ids()) {
                zk.add(new FaultProxy(name + from + "-to-zk" + node, "127.0.0.1", zooKeeper.clientPort(node)));
            }
            toZooKeeper.put(from, zk);
            for (int to = 0; to < BROKERS; to++) {
                if (from != to) {
                    interBroker.put(List.of(from, to), new FaultProxy(name + from + "-to-" + name + to, "127.0.0.1",
                            clientPorts[to]));
                }
            }
        }
        for (int id = 0; id < BROKERS; id++) {
            File dir = new File(baseDir, "cluster-" + name + "/broker-" + id);
            brokers.add(new BrokerNode(name, id, dir, clientPorts[id], mirrorPorts[id],
                    config(id, dir, clientPorts, mirrorPorts, brokerProperties)));
        }
    }

    private Properties config(int id, File dir, int[] clientPorts, int[] mirrorPorts, Map<String, String> extra) {
        Properties p = new Properties();
        p.put(BrokerConfig.BROKER_ID, Integer.toString(id));
        p.put(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:" + clientPorts[id] + ",MIRROR://127.0.0.1:"
                + mirrorPorts[id]);
        p.put(BrokerConfig.ADVERTISED_LISTENERS, "PLAINTEXT://127.0.0.1:" + clientPorts[id] + ",MIRROR://"
                + mirrorIn.get(id).address());
        p.put(BrokerConfig.LISTENER_SECURITY_PROTOCOL_MAP, "PLAINTEXT:PLAINTEXT,MIRROR:PLAINTEXT");
        p.put(BrokerConfig.INTER_BROKER_LISTENER_NAME, "PLAINTEXT");
        p.put(BrokerConfig.LOG_DIRS, new File(dir, "logs").getAbsolutePath());
        p.put(BrokerConfig.ZOOKEEPER_CONNECT, toZooKeeper.get(id).stream().map(FaultProxy::address)
                .collect(Collectors.joining(",")) + "/" + name);
        List<String> overrides = new ArrayList<>();
        for (int to = 0; to < BROKERS; to++) {
            if (to != id) {
                overrides.add(to + "=" + interBroker.get(List.of(id, to)).address());
            }
        }
        p.put(BrokerConfig.INTER_BROKER_ENDPOINT_OVERRIDES, String.join(",", overrides));
        p.putAll(extra);
        return p;
    }

    String name() {
        return name;
    }

    BrokerNode broker(int id) {
        return brokers.get(id);
    }

    List<BrokerNode> brokers() {
        return brokers;
    }

    void start() throws IOException {
        for (BrokerNode b : brokers) {
            b.start();
        }
    }

    /** Starts every broker that is not running (after a round's faults). */
    void startStopped() throws IOException {
        for (BrokerNode b : brokers) {
            if (!b.isAlive()) {
                log.info("[Campaign] {} started again", b.name());
                b.start();
            }
        }
    }

    /** Cuts both directions between two brokers: replica fetches and controller requests between them fail. */
    void cutBetween(int a, int b) {
        interBroker.get(List.of(a, b)).cut();
        interBroker.get(List.of(b, a)).cut();
    }

    /** Cuts broker {@code id} off every ZooKeeper node: its session expires after its timeout. */
    void cutFromZooKeeper(int id) {
        toZooKeeper.get(id).forEach(FaultProxy::cut);
    }

    /** Every connection from the other cluster's mirrors into this one: refused ({@code blackhole}: held, silent). */
    void cutMirrorLinks(boolean blackhole) {
        for (FaultProxy p : mirrorIn.values()) {
            if (blackhole) {
                p.blackhole();
            } else {
                p.cut();
            }
        }
    }

    /** Heals every proxy of this cluster. */
    void healNetwork() {
        interBroker.values().forEach(FaultProxy::heal);
        toZooKeeper.values().forEach(list -> list.forEach(FaultProxy::heal));
        mirrorIn.values().forEach(FaultProxy::heal);
    }

    /** What the other cluster's mirror bootstraps from: this cluster's MIRROR listeners, through their proxies. */
    String mirrorBootstrap() {
        return mirrorIn.values().stream().map(FaultProxy::address).collect(Collectors.joining(","));
    }

    /** The campaign's own clients connect here, with no proxy. */
    String bootstrapServers() {
        return brokers.stream().map(b -> "127.0.0.1:" + b.clientPort()).collect(Collectors.joining(","));
    }

    Admin admin() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        return Admin.create(p);
    }

    @Override
    public void close() throws InterruptedException {
        for (BrokerNode b : brokers) {
            b.kill();
        }
        interBroker.values().forEach(FaultProxy::close);
        toZooKeeper.values().forEach(list -> list.forEach(FaultProxy::close));
        mirrorIn.values().forEach(FaultProxy::close);
    }

    @Override
    public String toString() {
        return "cluster " + name;
    }
}
