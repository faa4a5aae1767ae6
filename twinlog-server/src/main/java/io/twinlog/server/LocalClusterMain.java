package io.twinlog.server;

import io.twinlog.common.BrokerConfig;
import io.twinlog.controller.zk.EmbeddedZooKeeper;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * {@code bin/twinlog-quickstart.sh}: a whole cluster on one machine in one JVM — an embedded ZooKeeper and N brokers
 * on consecutive loopback ports, data under one directory. For trying Twinlog out and for demos; production
 * clusters run one broker per process ({@code bin/twinlog-server-start.sh}) against a ZooKeeper ensemble.
 */
@Command(name = "twinlog-local-cluster", mixinStandardHelpOptions = true,
        description = "Runs an embedded ZooKeeper and N Twinlog brokers in one process.")
public final class LocalClusterMain implements Callable<Integer> {
    private static final Logger log = LoggerFactory.getLogger(LocalClusterMain.class);

    @Option(names = "--brokers", defaultValue = "3", description = "Number of brokers (default ${DEFAULT-VALUE})")
    private int brokers;

    @Option(names = "--first-port", defaultValue = "9092", description = "Port of broker 1; the others follow")
    private int firstPort;

    @Option(names = "--zookeeper-port", defaultValue = "2181", description = "Embedded ZooKeeper port")
    private int zookeeperPort;

    @Option(names = "--data", defaultValue = "data", description = "Data directory (default ./${DEFAULT-VALUE})")
    private File data;

    @Option(names = "--override", paramLabel = "KEY=VALUE", description = "Broker property for every broker")
    private java.util.Map<String, String> overrides = java.util.Map.of();

    public static void main(String[] args) {
        System.exit(new CommandLine(new LocalClusterMain()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        if (brokers < 1) {
            System.err.println("twinlog-local-cluster: --brokers must be at least 1");
            return 1;
        }
        File base = data.getAbsoluteFile();
        EmbeddedZooKeeper zooKeeper = EmbeddedZooKeeper.start(new File(base, "zookeeper"), zookeeperPort);
        List<BrokerServer> running = new ArrayList<>();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            // reverse order: controlled shutdowns move leadership to brokers still running
            for (int i = running.size() - 1; i >= 0; i--) {
                running.get(i).close();
            }
            zooKeeper.close();
            stopped.countDown();
        }, "twinlog-local-cluster-shutdown"));
        for (int i = 1; i <= brokers; i++) {
            Properties p = new Properties();
            p.put(BrokerConfig.BROKER_ID, Integer.toString(i));
            p.put(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:" + (firstPort + i - 1));
            p.put(BrokerConfig.LOG_DIRS, new File(base, "broker-" + i).getPath());
            p.put(BrokerConfig.ZOOKEEPER_CONNECT, zooKeeper.connectString());
            p.put(BrokerConfig.DEFAULT_REPLICATION_FACTOR, Integer.toString(Math.min(3, brokers)));
            p.put(BrokerConfig.NUM_NETWORK_THREADS, "2");
            p.put(BrokerConfig.NUM_IO_THREADS, "4");
            p.putAll(overrides);
            BrokerServer broker = new BrokerServer(new BrokerConfig(p), Time.SYSTEM);
            broker.start();
            running.add(broker);
        }
        StringBuilder bootstrap = new StringBuilder();
        for (BrokerServer b : running) {
            bootstrap.append(bootstrap.length() == 0 ? "" : ",").append(b.bootstrapServers());
        }
        log.info("Local cluster of {} brokers is up: bootstrap servers {}, ZooKeeper {}", brokers, bootstrap,
                zooKeeper.connectString());
        System.out.println("READY bootstrap.servers=" + bootstrap);
        stopped.await();
        return 0;
    }
}
