package io.twinlog.campaign;

import io.twinlog.common.BrokerConfig;
import io.twinlog.testkit.FaultProxy;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
 * Clients of the campaign (producer, consumers, admin) connect directly. Where each process listens, and where the
 * proxies do, is {@link Hosts}'s: loopback, or a network namespace per process.
 */
final class ProcessCluster implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ProcessCluster.class);
    static final int BROKERS = 3;
    /** The broker whose second log dir is on a {@link SmallDisk}, when the campaign fills disks. */
    static final int SMALL_DISK_BROKER = 1;
    /**
     * The broker with a {@link BrokerClock}, when the campaign steps clocks. One per cluster: libfaketime makes every
     * clock read of a JVM ten times dearer, and a broker with it used about seven times the CPU of one without.
     */
    static final int CLOCK_BROKER = 2;

    private final String name;
    private final List<BrokerNode> brokers = new ArrayList<>();
    private final Map<List<Integer>, FaultProxy> interBroker = new HashMap<>();
    private final Map<Integer, List<FaultProxy>> toZooKeeper = new HashMap<>();
    private final Map<Integer, FaultProxy> mirrorIn = new HashMap<>();

    /**
     * @param smallDisk whether broker {@link #SMALL_DISK_BROKER} gets a second log dir on a {@link SmallDisk}
     * @param steppableClock whether broker {@link #CLOCK_BROKER} runs with a {@link BrokerClock}
     */
    ProcessCluster(String name, File baseDir, ZooKeeperEnsemble zooKeeper, Map<String, String> brokerProperties,
                   boolean smallDisk, boolean steppableClock, Hosts hosts) throws IOException, InterruptedException {
        this.name = name;
        String proxy = hosts.proxyAddress();
        int[] clientPorts = new int[BROKERS];
        int[] mirrorPorts = new int[BROKERS];
        for (int id = 0; id < BROKERS; id++) {
            clientPorts[id] = Ports.free();
            mirrorPorts[id] = Ports.free();
        }
        for (int from = 0; from < BROKERS; from++) {
            mirrorIn.put(from, new FaultProxy(name + from + "-mirror-in", proxy,
                    hosts.address(BrokerNode.hostName(name, from)), mirrorPorts[from]));
            List<FaultProxy> zk = new ArrayList<>();
            for (int node : zooKeeper.ids()) {
                zk.add(new FaultProxy(name + from + "-to-zk" + node, proxy, zooKeeper.address(node),
                        zooKeeper.clientPort(node)));
            }
            toZooKeeper.put(from, zk);
            for (int to = 0; to < BROKERS; to++) {
                if (from != to) {
                    interBroker.put(List.of(from, to), new FaultProxy(name + from + "-to-" + name + to, proxy,
                            hosts.address(BrokerNode.hostName(name, to)), clientPorts[to]));
                }
            }
        }
        for (int id = 0; id < BROKERS; id++) {
            File dir = new File(baseDir, "cluster-" + name + "/broker-" + id);
            Optional<SmallDisk> disk = Optional.empty();
            if (smallDisk && id == SMALL_DISK_BROKER) {
                SmallDisk d = new SmallDisk(dir);
                d.mount();
                disk = Optional.of(d);
            }
            Files.createDirectories(dir.toPath());
            Optional<BrokerClock> clock = steppableClock && id == CLOCK_BROKER ? Optional.of(new BrokerClock(dir))
                    : Optional.empty();
            brokers.add(new BrokerNode(name, id, dir, clientPorts[id], mirrorPorts[id],
                    config(id, hosts.address(BrokerNode.hostName(name, id)), BrokerNode.logDirs(dir, disk),
                            clientPorts, mirrorPorts, brokerProperties), disk, clock, hosts));
        }
    }

    private Properties config(int id, String address, List<File> logDirs, int[] clientPorts, int[] mirrorPorts,
                              Map<String, String> extra) {
        Properties p = new Properties();
        p.put(BrokerConfig.BROKER_ID, Integer.toString(id));
        p.put(BrokerConfig.LISTENERS, "PLAINTEXT://" + address + ":" + clientPorts[id] + ",MIRROR://" + address + ":"
                + mirrorPorts[id]);
        p.put(BrokerConfig.ADVERTISED_LISTENERS, "PLAINTEXT://" + address + ":" + clientPorts[id] + ",MIRROR://"
                + mirrorIn.get(id).address());
        p.put(BrokerConfig.LISTENER_SECURITY_PROTOCOL_MAP, "PLAINTEXT:PLAINTEXT,MIRROR:PLAINTEXT");
        p.put(BrokerConfig.INTER_BROKER_LISTENER_NAME, "PLAINTEXT");
        p.put(BrokerConfig.LOG_DIRS, logDirs.stream().map(File::getAbsolutePath).collect(Collectors.joining(",")));
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

    /** The broker whose wall clock can be stepped. */
    BrokerNode clockBroker() {
        BrokerNode b = brokers.get(CLOCK_BROKER);
        if (b.clock().isEmpty()) {
            throw new IllegalStateException(this + " was started without a steppable clock (CLOCK_STEP not drawn "
                    + "from)");
        }
        return b;
    }

    /** The broker with a second log dir on a small disk. */
    BrokerNode smallDiskBroker() {
        BrokerNode b = brokers.get(SMALL_DISK_BROKER);
        if (b.smallDisk().isEmpty()) {
            throw new IllegalStateException(this + " was started without a small disk (DISK_FULL not drawn from)");
        }
        return b;
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
        return brokers.stream().map(b -> b.address() + ":" + b.clientPort()).collect(Collectors.joining(","));
    }

    Admin admin() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        return Admin.create(p);
    }

    @Override
    public void close() throws InterruptedException, IOException {
        for (BrokerNode b : brokers) {
            b.kill();
        }
        interBroker.values().forEach(FaultProxy::close);
        toZooKeeper.values().forEach(list -> list.forEach(FaultProxy::close));
        mirrorIn.values().forEach(FaultProxy::close);
        for (BrokerNode b : brokers) {
            if (b.smallDisk().isPresent()) {
                b.smallDisk().get().close();
            }
        }
    }

    @Override
    public String toString() {
        return "cluster " + name;
    }
}
