package io.twinlog.launcher;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.common.BrokerConfig;
import io.twinlog.controller.zk.EmbeddedZooKeeper;
import io.twinlog.launcher.demo.DemoLogs;
import io.twinlog.launcher.demo.QuickstartDemo;
import io.twinlog.server.BrokerServer;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.File;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * {@code bin/twinlog-quickstart.sh}: whole clusters on one machine in one JVM — each an embedded ZooKeeper and N
 * brokers on consecutive loopback ports, data under one directory. With {@code --mirror NAME}, two clusters: a
 * source and a destination (ports 100 higher) with a cluster mirror from the first to the second. For trying
 * Twinlog out and for demos; production clusters run one broker per process ({@code bin/twinlog-server-start.sh})
 * against a ZooKeeper ensemble.
 */
@Command(name = "twinlog-local-cluster", mixinStandardHelpOptions = true,
        description = "Runs embedded ZooKeepers and Twinlog brokers in one process.")
public final class LocalClusterMain implements Callable<Integer> {
    private static final Logger log = LoggerFactory.getLogger(LocalClusterMain.class);

    @Option(names = "--brokers", defaultValue = "3", description = "Brokers per cluster (default ${DEFAULT-VALUE})")
    private int brokers;

    @Option(names = "--first-port", defaultValue = "9092", description = "Port of the first broker; the others follow")
    private int firstPort;

    @Option(names = "--zookeeper-port", defaultValue = "2181", description = "Embedded ZooKeeper port")
    private int zookeeperPort;

    @Option(names = "--data", defaultValue = "data", description = "Data directory (default ./${DEFAULT-VALUE})")
    private File data;

    @Option(names = "--mirror", description = "Also run a destination cluster (ports +100) mirroring the first")
    private String mirror;

    @Option(names = "--dashboard-port", defaultValue = "0", description = "Serve the mirror dashboard on this port "
            + "from the first broker of the destination (of the only cluster without --mirror), and on the next port "
            + "from the source's first broker; 0: no dashboard")
    private int dashboardPort;

    @Option(names = "--dashboard-actions", description = "Enable the dashboards' failover, pause and resume buttons")
    private boolean dashboardActions;

    @Option(names = "--metrics-port", defaultValue = "0", description = "Serve each broker's metrics for Prometheus "
            + "from this port on (the broker's offset from --first-port added: 9404-9406 and 9504-9506 for the "
            + "quickstart); 0: none")
    private int metricsPort;

    @Option(names = "--demo", description = "Walk through mirroring, failover and failback on a new topic, printing "
            + "each step and its checks, then stop the clusters; exit status 0 only if every check held (implies "
            + "--mirror quickstart unless given; the brokers' log goes to DATA/demo.log)")
    private boolean demo;

    @Option(names = "--keep", description = "With --demo: keep the clusters running after the demo (Ctrl-C stops them)")
    private boolean keep;

    @Option(names = "--override", paramLabel = "KEY=VALUE", description = "Broker property for every broker")
    private Map<String, String> overrides = Map.of();

    public static void main(String[] args) {
        System.exit(new CommandLine(new LocalClusterMain()).execute(args));
    }

    /** One local cluster: its ZooKeeper and brokers. */
    private record LocalCluster(String name, EmbeddedZooKeeper zooKeeper, List<BrokerServer> brokers) {
        String bootstrap() {
            StringBuilder b = new StringBuilder();
            brokers.forEach(s -> b.append(b.length() == 0 ? "" : ",").append(s.bootstrapServers()));
            return b.toString();
        }

        void close() {
            // reverse order: controlled shutdowns move leadership to brokers still running
            for (int i = brokers.size() - 1; i >= 0; i--) {
                brokers.get(i).close();
            }
            zooKeeper.close();
        }
    }

    @Override
    public Integer call() throws Exception {
        if (brokers < 1) {
            System.err.println("twinlog-local-cluster: --brokers must be at least 1");
            return 1;
        }
        List<LocalCluster> clusters = new ArrayList<>();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            closeAll(clusters);
            stopped.countDown();
        }, "twinlog-local-cluster-shutdown"));
        File base = data.getAbsoluteFile();
        if (demo) {
            mirror = mirror == null ? "quickstart" : mirror;
            File demoLog = new File(base, "demo.log");
            Files.createDirectories(base.toPath());
            DemoLogs.toFile(demoLog);
            System.out.println("Starting the two clusters for the demo (about 10 s); their log goes to " + demoLog);
        }
        boolean twoClusters = mirror != null;
        clusters.add(startCluster(twoClusters ? "source" : "cluster", new File(base, twoClusters ? "source" : ""),
                firstPort, zookeeperPort, dashboardPort == 0 ? 0 : twoClusters ? dashboardPort + 1 : dashboardPort));
        if (twoClusters) {
            clusters.add(startCluster("destination", new File(base, "destination"), firstPort + 100, zookeeperPort + 1,
                    dashboardPort));
            try (MirrorAdmin admin = MirrorAdmin.create(clusters.get(1).bootstrap(), Duration.ofSeconds(60))) {
                if (admin.listClusterMirrors(false).stream().noneMatch(m -> m.name().equals(mirror))) {
                    // groups synced every 5 s (default 30 s) so a demo failover finds them up to date
                    admin.createClusterMirror(mirror, Map.of("bootstrap.servers", clusters.get(0).bootstrap(),
                            "mirror.groups.sync.interval.ms", "5000"));
                }
            }
            log.info("Cluster mirror {} on the destination pulls from the source", mirror);
        }
        for (LocalCluster c : clusters) {
            System.out.println("READY " + c.name() + " bootstrap.servers=" + c.bootstrap());
        }
        for (LocalCluster c : clusters) {
            List<String> urls = c.brokers().stream().flatMap(b -> b.prometheusUrl().stream()).toList();
            if (!urls.isEmpty()) {
                System.out.println("METRICS " + c.name() + " " + String.join(" ", urls));
            }
        }
        for (LocalCluster c : clusters) {
            c.brokers().get(0).dashboardUrl().ifPresent(url -> System.out.println("DASHBOARD " + c.name() + " " + url));
        }
        int status = 0;
        if (demo) {
            boolean held = QuickstartDemo.run(clusters.get(0).bootstrap(), clusters.get(1).bootstrap(), mirror,
                    Math.min(3, brokers), System.out);
            if (!keep) {
                System.out.println("Stopping the two clusters (--demo --keep leaves them running); their data stays in "
                        + base);
                closeAll(clusters);
                return held ? 0 : 1;
            }
            System.out.println("The clusters keep running (--keep); Ctrl-C stops them.");
            status = held ? 0 : 1;
        }
        stopped.await();
        return status;
    }

    /** Closes the clusters, the last started first; once (the demo's end and the shutdown hook both call it). */
    private static void closeAll(List<LocalCluster> clusters) {
        synchronized (clusters) {
            while (!clusters.isEmpty()) {
                clusters.remove(clusters.size() - 1).close();
            }
        }
    }

    /** {@code dashboard}: the port of the first broker's mirror dashboard, 0 for none. */
    private LocalCluster startCluster(String name, File dir, int port, int zkPort, int dashboard) throws Exception {
        EmbeddedZooKeeper zooKeeper = EmbeddedZooKeeper.start(new File(dir, "zookeeper"), zkPort);
        List<BrokerServer> running = new ArrayList<>();
        LocalCluster cluster = new LocalCluster(name, zooKeeper, running);
        for (int i = 1; i <= brokers; i++) {
            Properties p = new Properties();
            p.put(BrokerConfig.BROKER_ID, Integer.toString(i));
            p.put(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:" + (port + i - 1));
            p.put(BrokerConfig.LOG_DIRS, new File(dir, "broker-" + i).getPath());
            p.put(BrokerConfig.ZOOKEEPER_CONNECT, zooKeeper.connectString());
            p.put(BrokerConfig.DEFAULT_REPLICATION_FACTOR, Integer.toString(Math.min(3, brokers)));
            p.put(BrokerConfig.NUM_NETWORK_THREADS, "2");
            p.put(BrokerConfig.NUM_IO_THREADS, "4");
            // brokers sharing a JVM cannot share JMX names: each serves its metrics over Prometheus instead
            p.put(BrokerConfig.METRIC_REPORTERS, "");
            if (metricsPort > 0) {
                p.put(BrokerConfig.METRICS_PROMETHEUS_LISTENER, "http://127.0.0.1:" + (metricsPort + port - firstPort
                        + i - 1));
            }
            if (i == 1 && dashboard > 0) {
                p.put(BrokerConfig.DASHBOARD_LISTENER, "http://127.0.0.1:" + dashboard);
                p.put(BrokerConfig.DASHBOARD_ACTIONS_ENABLE, Boolean.toString(dashboardActions));
            }
            p.putAll(overrides);
            BrokerServer broker = new BrokerServer(new BrokerConfig(p), Time.SYSTEM);
            broker.start();
            running.add(broker);
        }
        log.info("Local {} cluster of {} brokers is up: bootstrap servers {}, ZooKeeper {}", name, brokers,
                cluster.bootstrap(), zooKeeper.connectString());
        return cluster;
    }
}
