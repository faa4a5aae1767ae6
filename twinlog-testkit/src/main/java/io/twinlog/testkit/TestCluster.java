package io.twinlog.testkit;

import io.twinlog.common.BrokerConfig;
import io.twinlog.controller.zk.EmbeddedZooKeeper;
import io.twinlog.server.BrokerServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Time;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.stream.Collectors;

/**
 * An in-process Twinlog cluster for tests: one embedded ZooKeeper and N brokers on loopback with ephemeral ports
 * and temporary log dirs (one per broker, or several: {@link Builder#logDirs}). Verbs stop and restart brokers with
 * their data kept, and break a log dir for real ({@link #failLogDir}).
 *
 * <pre>
 * try (TestCluster cluster = TestCluster.builder().brokers(1).brokerProperty("num.partitions", "3").build()) {
 *     cluster.start();
 *     try (Admin admin = cluster.admin()) { ... }
 * }
 * </pre>
 */
public final class TestCluster implements AutoCloseable {
    private final int numBrokers;
    private final Map<String, String> brokerProperties;
    private final Map<String, Object> clientProperties;
    private final Map<Integer, Integer> logDirCounts;
    private final File baseDir;
    private EmbeddedZooKeeper zooKeeper;
    private final Map<Integer, BrokerServer> brokers = new HashMap<>();
    private final Map<Integer, Integer> ports = new HashMap<>();
    private final boolean faultProxies;
    // (from, to) -> proxy that broker 'from' uses to reach broker 'to'
    private final Map<List<Integer>, FaultProxy> brokerProxies = new HashMap<>();
    private final Map<Integer, FaultProxy> zooKeeperProxies = new HashMap<>();

    private TestCluster(Builder b) {
        this.numBrokers = b.numBrokers;
        this.brokerProperties = Map.copyOf(b.brokerProperties);
        this.clientProperties = Map.copyOf(b.clientProperties);
        this.logDirCounts = Map.copyOf(b.logDirCounts);
        this.faultProxies = b.faultProxies;
        this.baseDir = TestDirectories.create("cluster");
    }

    public static Builder builder() {
        return new Builder();
    }

    public TestCluster start() throws Exception {
        zooKeeper = EmbeddedZooKeeper.start(new File(baseDir, "zookeeper"), 0);
        if (faultProxies) {
            // the brokers' ports stay reserved while the proxies take ephemeral ports of their own: released
            // first, a port could be handed to a proxy and the broker then fail to bind it (seen in CI)
            List<ServerSocket> reserved = new ArrayList<>();
            for (int id = 0; id < numBrokers; id++) {
                ServerSocket socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
                reserved.add(socket);
                ports.put(id, socket.getLocalPort());
            }
            try {
                startProxies();
            } finally {
                for (ServerSocket socket : reserved) {
                    socket.close();
                }
            }
        }
        for (int id = 0; id < numBrokers; id++) {
            startBroker(id);
        }
        // every broker's image (the controller's too) lists every broker before a test names them in an assignment:
        // a CreateTopics naming a broker whose registration the controller has not applied yet is refused, as on
        // Kafka (seen in CI: "Unknown broker 2 in the replica assignment ...; live brokers are [0, 1]")
        Waits.waitUntil("every broker sees all " + numBrokers + " brokers", () -> brokers.values().stream()
                .allMatch(b -> b.metadata().image().brokers().size() >= numBrokers));
        return this;
    }

    /** Cuts all traffic between two brokers, both ways (needs {@link Builder#withFaultProxies()}). */
    public void cutNetwork(int a, int b) {
        proxy(a, b).cut();
        proxy(b, a).cut();
    }

    /**
     * Blackholes all traffic between two brokers, both ways: connections stay open and requests go unanswered until
     * they time out (needs {@link Builder#withFaultProxies()}); {@link #healNetwork} ends it.
     */
    public void blackholeNetwork(int a, int b) {
        proxy(a, b).blackhole();
        proxy(b, a).blackhole();
    }

    /** Ends a {@link #cutNetwork} or a {@link #blackholeNetwork}. */
    public void healNetwork(int a, int b) {
        proxy(a, b).heal();
        proxy(b, a).heal();
    }

    /** Cuts a broker off ZooKeeper: its session expires after the session timeout, as in a network partition. */
    public void cutZooKeeper(int id) {
        requireProxies();
        zooKeeperProxies.get(id).cut();
    }

    /**
     * Blackholes a broker's ZooKeeper connection: its requests are held unanswered (until the client's read timeout,
     * two thirds of the session timeout) instead of failing at once as after {@link #cutZooKeeper}.
     */
    public void blackholeZooKeeper(int id) {
        requireProxies();
        zooKeeperProxies.get(id).blackhole();
    }

    /** Ends a {@link #cutZooKeeper} or a {@link #blackholeZooKeeper}. */
    public void healZooKeeper(int id) {
        requireProxies();
        zooKeeperProxies.get(id).heal();
    }

    private FaultProxy proxy(int from, int to) {
        requireProxies();
        return brokerProxies.get(List.of(from, to));
    }

    private void requireProxies() {
        if (!faultProxies) {
            throw new IllegalStateException("Build the cluster withFaultProxies() to cut traffic");
        }
    }


    private void startProxies() throws IOException {
        for (int from = 0; from < numBrokers; from++) {
            zooKeeperProxies.put(from, new FaultProxy("zk-of-" + from, "127.0.0.1", zooKeeper.port()));
            for (int to = 0; to < numBrokers; to++) {
                if (from != to) {
                    brokerProxies.put(List.of(from, to), new FaultProxy(from + "-to-" + to, "127.0.0.1",
                            ports.get(to)));
                }
            }
        }
    }

    /** Starts (or restarts, with its data) broker {@code id}; a restarted broker keeps its port. */
    public BrokerServer startBroker(int id) throws Exception {
        return startBroker(id, Map.of());
    }

    /**
     * Starts broker {@code id} with these properties over the cluster's ({@code zookeeper.connect} of another
     * ensemble, another {@code broker.id} on the same log dirs, ...). A broker that fails to start is closed and the
     * failure thrown.
     */
    public BrokerServer startBroker(int id, Map<String, String> properties) throws Exception {
        Properties p = new Properties();
        p.put(BrokerConfig.BROKER_ID, Integer.toString(id));
        p.put(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:" + ports.getOrDefault(id, 0));
        p.put(BrokerConfig.LOG_DIRS, logDirs(id).stream().map(File::getAbsolutePath).collect(Collectors.joining(",")));
        p.put(BrokerConfig.ZOOKEEPER_CONNECT, faultProxies ? zooKeeperProxies.get(id).address()
                : zooKeeper.connectString());
        if (faultProxies) {
            StringBuilder overrides = new StringBuilder();
            for (int to = 0; to < numBrokers; to++) {
                if (to != id) {
                    overrides.append(overrides.length() == 0 ? "" : ",").append(to).append('=')
                            .append(brokerProxies.get(List.of(id, to)).address());
                }
            }
            p.put(BrokerConfig.INTER_BROKER_ENDPOINT_OVERRIDES, overrides.toString());
        }
        p.put(BrokerConfig.ZOOKEEPER_SESSION_TIMEOUT_MS, "6000");
        p.put(BrokerConfig.NUM_IO_THREADS, "4");
        p.put(BrokerConfig.NUM_NETWORK_THREADS, "2");
        // brokers sharing a JVM cannot share JMX names; a test that reads JMX sets metric.reporters back
        p.put(BrokerConfig.METRIC_REPORTERS, "");
        // groups: as a Kafka test cluster sets them (a small cluster cannot have 3 offsets-topic replicas; tests
        // should not wait the 3 s initial rebalance delay); a test can override any of them
        p.put("offsets.topic.replication.factor", Integer.toString(Math.min(3, numBrokers)));
        p.put("offsets.topic.num.partitions", "5");
        p.put("group.initial.rebalance.delay.ms", "0");
        // transactions: the same for __transaction_state (Kafka's test clusters set these too)
        p.put("transaction.state.log.replication.factor", Integer.toString(Math.min(3, numBrokers)));
        p.put("transaction.state.log.min.isr", Integer.toString(Math.min(2, numBrokers)));
        p.put("transaction.state.log.num.partitions", "5");
        p.putAll(brokerProperties);
        p.putAll(properties);
        BrokerServer broker = new BrokerServer(new BrokerConfig(p), Time.SYSTEM);
        try {
            broker.start();
        } catch (Exception e) {
            // broad: whatever failed, the broker is closed before it goes on
            broker.close();
            throw e;
        }
        brokers.put(id, broker);
        ports.put(id, broker.boundPort(broker.config().listeners().get(0).listenerName()));
        return broker;
    }

    /** Clean shutdown of one broker (logs flushed and checkpointed); its data stays for a restart. */
    public void stopBroker(int id) {
        BrokerServer b = brokers.remove(id);
        if (b != null) {
            b.close();
        }
    }

    /**
     * Crash of one broker: no controlled shutdown; its ZooKeeper session ends at once (as if it had already
     * expired: failover here does not include the session-timeout detection delay); data stays on disk.
     */
    public void killBroker(int id) {
        BrokerServer b = brokers.remove(id);
        if (b != null) {
            b.abort();
        }
    }

    /** Disk loss: deletes a stopped broker's log directory. */
    public void wipeBroker(int id) {
        if (brokers.containsKey(id)) {
            throw new IllegalStateException("Stop broker " + id + " before wiping its disk");
        }
        logDirs(id).forEach(TestDirectories::delete);
    }

    /**
     * A log dir failure, for real: the directory of a running broker is deleted and a regular file put at its path,
     * so the broker's next file operation there (a segment roll, a checkpoint) fails with an I/O error. Open files
     * stay writable until then, as on a disk that fails under a running process.
     */
    public void failLogDir(File dir) throws IOException {
        TestDirectories.delete(dir);
        Files.writeString(dir.toPath(), "not a log dir: broken by TestCluster.failLogDir\n");
    }

    public BrokerServer broker(int id) {
        BrokerServer b = brokers.get(id);
        if (b == null) {
            throw new IllegalArgumentException("Broker " + id + " is not running");
        }
        return b;
    }

    /** The first (or only) log dir of a broker. */
    public File logDir(int id) {
        return new File(baseDir, "broker-" + id + "/logs");
    }

    /** Every log dir of a broker: {@code logs}, then {@code logs-1}, {@code logs-2}, ... */
    public List<File> logDirs(int id) {
        List<File> out = new ArrayList<>(List.of(logDir(id)));
        for (int i = 1; i < logDirCounts.getOrDefault(id, 1); i++) {
            out.add(new File(baseDir, "broker-" + id + "/logs-" + i));
        }
        return out;
    }

    public String zookeeperConnect() {
        return zooKeeper.connectString();
    }

    public String bootstrapServers() {
        return brokers.values().stream().map(BrokerServer::bootstrapServers).collect(Collectors.joining(","));
    }

    public Admin admin() {
        Properties p = new Properties();
        p.putAll(clientProperties);
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        return Admin.create(p);
    }

    /** The security configs the cluster's clients use (empty for a PLAINTEXT first listener). */
    public Map<String, Object> clientProperties() {
        return clientProperties;
    }

    public KafkaProducer<byte[], byte[]> producer(Map<String, Object> overrides) {
        Map<String, Object> p = new HashMap<>(clientProperties);
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 20_000);
        p.putAll(overrides);
        return new KafkaProducer<>(p);
    }

    /** A consumer without a group (assign() only), reading from the earliest offset by default. */
    public KafkaConsumer<byte[], byte[]> consumer(Map<String, Object> overrides) {
        Map<String, Object> p = new HashMap<>(clientProperties);
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.putAll(overrides);
        return new KafkaConsumer<>(p);
    }

    /**
     * Writes {@code count} records with values {@code valuePrefix + i} (no key) to one partition and waits for every
     * acknowledgement, so a failed send fails the test. One producer, {@code linger.ms=5}: batches of several records.
     */
    public List<RecordMetadata> produce(String topic, int partition, int count, String valuePrefix) throws Exception {
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> p = producer(Map.of(ProducerConfig.LINGER_MS_CONFIG, 5))) {
            for (int i = 0; i < count; i++) {
                sent.add(p.send(new ProducerRecord<>(topic, partition, null,
                        (valuePrefix + i).getBytes(StandardCharsets.UTF_8))));
            }
        }
        List<RecordMetadata> acknowledged = new ArrayList<>();
        for (Future<RecordMetadata> f : sent) {
            acknowledged.add(f.get());
        }
        return acknowledged;
    }

    /**
     * The log end offset of {@code tp} on the first running broker that holds a replica of it, read from its log
     * (the cluster's clients see only the high watermark); -1 while no running broker holds one.
     */
    public long logEndOffset(TopicPartition tp) {
        return brokers.values().stream().map(b -> b.logStore().log(tp)).filter(Optional::isPresent)
                .mapToLong(log -> log.get().logEndOffset()).findFirst().orElse(-1L);
    }

    public List<Integer> runningBrokerIds() {
        return new ArrayList<>(brokers.keySet());
    }

    @Override
    public void close() {
        for (Integer id : new ArrayList<>(brokers.keySet())) {
            stopBroker(id);
        }
        brokerProxies.values().forEach(FaultProxy::close);
        zooKeeperProxies.values().forEach(FaultProxy::close);
        if (zooKeeper != null) {
            zooKeeper.close();
        }
        TestDirectories.delete(baseDir);
    }

    public static final class Builder {
        private int numBrokers = 1;
        private boolean faultProxies;
        private final Map<String, String> brokerProperties = new HashMap<>();
        private final Map<String, Object> clientProperties = new HashMap<>();
        private final Map<Integer, Integer> logDirCounts = new HashMap<>();

        public Builder brokers(int n) {
            this.numBrokers = n;
            return this;
        }

        /** Puts a cuttable proxy between every pair of brokers and between each broker and ZooKeeper. */
        public Builder withFaultProxies() {
            this.faultProxies = true;
            return this;
        }

        /** Gives broker {@code id} {@code count} log dirs (default one). */
        public Builder logDirs(int id, int count) {
            if (count < 1) {
                throw new IllegalArgumentException("A broker needs at least one log dir, not " + count);
            }
            logDirCounts.put(id, count);
            return this;
        }

        public Builder brokerProperty(String key, String value) {
            brokerProperties.put(key, value);
            return this;
        }

        /**
         * A config of the cluster's own clients ({@link #admin()}, {@link #producer}, {@link #consumer}): the
         * security of a cluster whose first listener is secured.
         */
        public Builder clientProperty(String key, Object value) {
            clientProperties.put(key, value);
            return this;
        }

        public TestCluster build() {
            return new TestCluster(this);
        }
    }
}
