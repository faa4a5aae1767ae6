package io.twinlog.tests.kafka.legacy;

import io.twinlog.testkit.TestDirectories;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Node;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

/**
 * An Apache Kafka cluster of an older release in ZooKeeper mode ("3.9" is 3.9.2, "2.8" is 2.8.2), each broker in a
 * JVM of its own ({@code kafka.Kafka server.properties}) on the jars that the pom-only module
 * {@code classpaths/kafka-VERSION} lists in its {@code target/classpath.txt}: never the 4.4 jars of the test's class
 * path. Brokers are numbered 0..N-1 ({@code broker.id} too) and keep their port and log directory across restarts,
 * so {@link #terminate}/{@link #kill} then {@link #start(int)} is a broker restart as an operator does one.
 *
 * <p>ZooKeeper is the caller's (a {@code ZooKeeperProcess}); each cluster gets a chroot of its own, so a 2.8 and a
 * 3.9 cluster can share one server without sharing {@code /brokers}. Each broker's log4j output, and anything its
 * JVM prints, goes to {@link #logFile(int)}; a failed wait carries its tail.
 */
public final class LegacyKafkaCluster implements AutoCloseable {
    /** Time for every started broker to register; a cold 2.8 or 3.9 JVM starts in 2-6 s on 2 busy cores. */
    public static final Duration READY_TIMEOUT = Duration.ofSeconds(90);
    private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(60);
    private static final int LOG_TAIL_LINES = 60;

    private final String version;
    private final String zooKeeperConnect;
    private final File dir;
    private final List<Broker> brokers = new ArrayList<>();
    private final Thread killOnExit = new Thread(this::killAll, "legacy-kafka-kill-on-exit");

    /**
     * Prepares (does not start) {@code brokerCount} brokers of Kafka {@code version} registering in ZooKeeper at
     * {@code zooKeeperConnect} ({@code host:port}, as {@code ZooKeeperProcess.connectString()} gives it), with
     * {@code brokerProperties} on top of the defaults of {@link #brokerProperties}.
     */
    public LegacyKafkaCluster(String version, String zooKeeperConnect, int brokerCount,
                              Map<String, String> brokerProperties) throws IOException {
        this.version = version;
        String classPath = Files.readString(classPathFile(version)).trim();
        this.dir = TestDirectories.create("kafka-" + version);
        // a chroot per cluster, named after its (unique) directory; ZooKeeper 3.5's client on Java 17 is reported to
        // mishandle numeric addresses (docs/design-connect-old-sources-grafana.md, 7.2), so the brokers connect by
        // host name
        this.zooKeeperConnect = zooKeeperConnect.replace("127.0.0.1:", "localhost:") + "/" + dir.getName();
        File log4jConfig = writeLog4jConfig(dir);
        for (int id = 0; id < brokerCount; id++) {
            brokers.add(new Broker(id, freePort(), new File(dir, "broker-" + id), classPath, log4jConfig,
                    brokerProperties, brokerCount));
        }
        Runtime.getRuntime().addShutdownHook(killOnExit);
    }

    /** As the four-argument constructor, with the default broker properties only. */
    public LegacyKafkaCluster(String version, String zooKeeperConnect, int brokerCount) throws IOException {
        this(version, zooKeeperConnect, brokerCount, Map.of());
    }

    /** Starts every broker and waits until all are in the cluster's metadata. */
    public LegacyKafkaCluster start() throws IOException {
        for (int id = 0; id < brokers.size(); id++) {
            start(id);
        }
        waitUntilReady();
        return this;
    }

    /**
     * Starts broker {@code id}'s JVM (again) and returns at once: {@link #waitUntilReady()} waits for it, and fails
     * if the JVM has exited by then.
     */
    public void start(int id) throws IOException {
        brokers.get(id).start();
    }

    /**
     * SIGTERM to broker {@code id} and waits for its JVM to exit: a controlled shutdown, so the controller moves its
     * leaderships to the other replicas (a leader epoch bump) before it goes. Returns the exit code.
     */
    public int terminate(int id) throws InterruptedException {
        return brokers.get(id).terminate();
    }

    /** SIGKILL to broker {@code id}: no shutdown at all; the controller notices when its ZooKeeper session expires. */
    public void kill(int id) throws InterruptedException {
        brokers.get(id).kill();
    }

    /** Started and not stopped by {@link #terminate}/{@link #kill}; its JVM may have died since (a failed start). */
    public boolean isStarted(int id) {
        return brokers.get(id).started;
    }

    /** Every broker's listener, whether it runs or not (a client finds the ones that do). */
    public String bootstrapServers() {
        return brokers.stream().map(b -> "127.0.0.1:" + b.port).collect(Collectors.joining(","));
    }

    public String bootstrapServers(int id) {
        return "127.0.0.1:" + brokers.get(id).port;
    }

    /** Where the brokers register, chroot included. */
    public String zooKeeperConnect() {
        return zooKeeperConnect;
    }

    public String version() {
        return version;
    }

    public int size() {
        return brokers.size();
    }

    public File logFile(int id) {
        return brokers.get(id).logFile;
    }

    /** The last lines of broker {@code id}'s log, for failure messages. */
    public String logTail(int id) {
        return brokers.get(id).logTail();
    }

    /** {@link #waitUntilReady(Duration)} with {@link #READY_TIMEOUT}. */
    public void waitUntilReady() {
        waitUntilReady(READY_TIMEOUT);
    }

    /**
     * Waits until every started broker is in the cluster's metadata (DescribeCluster through a 4.4 Admin: registered
     * in ZooKeeper and in the metadata the brokers serve). Fails at once if a started broker's JVM has exited; on a
     * timeout, the message carries the log tail of each started broker not seen.
     */
    public void waitUntilReady(Duration timeout) {
        Set<Integer> started = brokers.stream().filter(b -> b.started).map(b -> b.id)
                .collect(Collectors.toCollection(TreeSet::new));
        AtomicReference<Set<Integer>> seen = new AtomicReference<>(Set.of());
        long startNanos = System.nanoTime();
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(),
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000",
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "5000"))) {
            Waits.waitFor("brokers " + started + " of Kafka " + version + " in the cluster's metadata", () -> {
                for (int id : started) {
                    brokers.get(id).failIfExited();
                }
                seen.set(admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).stream().map(Node::id)
                        .collect(Collectors.toCollection(TreeSet::new)));
                return seen.get();
            }, ids -> ids.containsAll(started), timeout);
            // how long an old broker takes to come up here, for a test that runs slow on a busy machine
            System.out.printf("Kafka %s brokers %s ready after %d ms%n", version, started,
                    Duration.ofNanos(System.nanoTime() - startNanos).toMillis());
        } catch (BrokerExited e) {
            throw e;
        } catch (AssertionError e) {
            StringBuilder message = new StringBuilder(e.getMessage());
            for (int id : started) {
                if (!seen.get().contains(id)) {
                    message.append("\n---- broker ").append(id).append(" (").append(logFile(id)).append(") ----\n")
                            .append(logTail(id));
                }
            }
            throw new AssertionError(message.toString(), e);
        }
    }

    /** Kills every broker that still runs (a test ends with the data thrown away) and deletes the directory. */
    @Override
    public void close() {
        killAll();
        try {
            Runtime.getRuntime().removeShutdownHook(killOnExit);
        } catch (IllegalStateException e) {
            // the JVM is already exiting: the hook runs anyway
        }
        TestDirectories.delete(dir);
    }

    private void killAll() {
        for (Broker b : brokers) {
            b.process().ifPresent(Process::destroyForcibly);
        }
        for (Broker b : brokers) {
            b.process().ifPresent(p -> {
                try {
                    p.waitFor(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }
    }

    /**
     * The defaults: the design's settings for a small test cluster (docs/design-connect-old-sources-grafana.md,
     * 7.2). Internal topics are replicated as far as the cluster allows, up to 2.
     */
    private static Properties brokerProperties(int id, int port, File dataDir, String zooKeeperConnect,
                                               int brokerCount, Map<String, String> overrides) {
        String internalReplicas = Integer.toString(Math.min(2, brokerCount));
        Properties p = new Properties();
        p.put("broker.id", Integer.toString(id));
        p.put("zookeeper.connect", zooKeeperConnect);
        // a kill -9 is noticed when the session expires: 6 s rather than the default 18 s
        p.put("zookeeper.session.timeout.ms", "6000");
        p.put("listeners", "PLAINTEXT://127.0.0.1:" + port);
        p.put("log.dirs", new File(dataDir, "data").getAbsolutePath());
        p.put("offsets.topic.replication.factor", internalReplicas);
        p.put("transaction.state.log.replication.factor", internalReplicas);
        p.put("transaction.state.log.min.isr", "1");
        p.put("group.initial.rebalance.delay.ms", "0");
        p.put("num.io.threads", "2");
        p.put("num.network.threads", "1");
        // the log cleaner allocates its whole dedupe buffer on the heap at start (128 MB by default): half of -Xmx
        p.put("log.cleaner.dedupe.buffer.size", Integer.toString(16 * 1024 * 1024));
        p.putAll(overrides);
        return p;
    }

    /** Console output only: the JVM's stdout and stderr both go to the broker's log file (see {@link Broker}). */
    private static File writeLog4jConfig(File dir) throws IOException {
        File config = new File(dir, "log4j.properties");
        Files.writeString(config.toPath(), String.join("\n",
                "log4j.rootLogger=INFO, stdout",
                "log4j.appender.stdout=org.apache.log4j.ConsoleAppender",
                "log4j.appender.stdout.layout=org.apache.log4j.PatternLayout",
                "log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n",
                // a line per connection and per session event otherwise
                "log4j.logger.org.apache.zookeeper=WARN",
                "log4j.logger.kafka.request.logger=WARN",
                ""), StandardCharsets.UTF_8);
        return config;
    }

    /**
     * {@code classpaths/kafka-VERSION/target/classpath.txt} of this module, which the reactor writes before this
     * module's tests run (its generate-resources phase).
     */
    private static Path classPathFile(String version) {
        Path file = Path.of(System.getProperty("basedir", "."), "classpaths", "kafka-" + version, "target",
                "classpath.txt");
        if (!Files.isRegularFile(file)) {
            throw new IllegalStateException("no class path for Kafka " + version + " at " + file.toAbsolutePath()
                    + ": build it with `mvn -B generate-resources -f twinlog-tests-kafka/classpaths/kafka-" + version
                    + "/pom.xml` (or a reactor build)");
        }
        return file;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** An {@link AssertionError}, not an exception: {@link Waits} retries on exceptions but not on errors. */
    private static final class BrokerExited extends AssertionError {
        BrokerExited(String message) {
            super(message);
        }
    }

    private final class Broker {
        final int id;
        final int port;
        final File logFile;
        final List<String> command;
        private Process process;
        private boolean started;

        Broker(int id, int port, File brokerDir, String classPath, File log4jConfig, Map<String, String> overrides,
               int brokerCount) throws IOException {
            this.id = id;
            this.port = port;
            this.logFile = new File(brokerDir, "broker.log");
            Files.createDirectories(brokerDir.toPath());
            File config = new File(brokerDir, "server.properties");
            try (OutputStream out = new FileOutputStream(config)) {
                brokerProperties(id, port, brokerDir, zooKeeperConnect, brokerCount, overrides)
                        .store(out, "written by LegacyKafkaCluster");
            }
            // a small heap, the serial collector and the C1 compiler only: these JVMs share 2 cores with the test's
            // own brokers, and a test cluster's load never pays back C2's compile time
            this.command = List.of(new File(System.getProperty("java.home"), "bin/java").getAbsolutePath(),
                    "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
                    "-Dlog4j.configuration=" + log4jConfig.toURI(),
                    "-cp", classPath, "kafka.Kafka", config.getAbsolutePath());
        }

        void start() throws IOException {
            if (process != null && process.isAlive()) {
                throw new IllegalStateException("broker " + id + " of Kafka " + version + " already runs");
            }
            process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile)).start();
            started = true;
        }

        int terminate() throws InterruptedException {
            Process p = running();
            started = false;
            p.destroy();
            if (!p.waitFor(EXIT_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(30, TimeUnit.SECONDS);
                throw new AssertionError("broker " + id + " of Kafka " + version + " did not exit within "
                        + EXIT_TIMEOUT.toSeconds() + " s of SIGTERM; killed. Log tail:\n" + logTail());
            }
            return p.exitValue();
        }

        void kill() throws InterruptedException {
            Process p = running();
            started = false;
            p.destroyForcibly();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                throw new AssertionError("broker " + id + " of Kafka " + version + " still runs 30 s after SIGKILL");
            }
        }

        Optional<Process> process() {
            return Optional.ofNullable(process);
        }

        void failIfExited() {
            if (process != null && !process.isAlive()) {
                throw new BrokerExited("broker " + id + " of Kafka " + version + " exited with "
                        + process.exitValue() + " (" + logFile + "):\n" + logTail());
            }
        }

        private Process running() {
            if (process == null || !process.isAlive()) {
                throw new IllegalStateException("broker " + id + " of Kafka " + version + " does not run");
            }
            return process;
        }

        String logTail() {
            try {
                List<String> lines = Files.readAllLines(logFile.toPath(), StandardCharsets.UTF_8);
                return String.join("\n", lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size()));
            } catch (IOException | UncheckedIOException e) {
                return "(no log: " + e + ")";
            }
        }
    }
}
