package io.twinlog.bench;

import io.twinlog.common.BrokerConfig;
import io.twinlog.server.BrokerServer;
import org.apache.kafka.common.utils.Time;

import java.nio.file.Path;
import java.util.Properties;

/**
 * One Twinlog broker with an embedded ZooKeeper ({@code zookeeper.connect} absent), everything under
 * {@code baseDirectory}. Broker settings are Twinlog's defaults apart from the ones needed to run on loopback and
 * on one broker, and the same group settings as {@link KafkaCluster}: {@code __consumer_offsets} with one replica
 * (consumer groups, e.g. MirrorMaker 2's Connect workers, need it) and no initial rebalance delay.
 */
public final class TwinlogCluster implements ClusterUnderTest {
    private final Path baseDirectory;
    private BrokerServer broker;

    public TwinlogCluster(Path baseDirectory) {
        this.baseDirectory = baseDirectory;
    }

    @Override
    public String name() {
        return "twinlog";
    }

    @Override
    public void start() throws Exception {
        Properties props = new Properties();
        props.setProperty("broker.id", "0");
        props.setProperty("listeners", "PLAINTEXT://127.0.0.1:0");
        props.setProperty("log.dirs", baseDirectory.resolve("logs").toString());
        props.setProperty("zookeeper.embedded.port", "0");
        props.setProperty("zookeeper.embedded.data.dir", baseDirectory.resolve("zk").toString());
        props.setProperty("num.partitions", "1");
        props.setProperty("offsets.topic.replication.factor", "1");
        props.setProperty("group.initial.rebalance.delay.ms", "0");
        broker = new BrokerServer(new BrokerConfig(props), Time.SYSTEM);
        broker.start();
    }

    @Override
    public String bootstrapServers() {
        return broker.bootstrapServers();
    }

    @Override
    public void close() {
        if (broker != null) {
            broker.close();
        }
        TempDirectories.deleteRecursively(baseDirectory);
    }
}
