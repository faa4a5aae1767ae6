package io.twinlog.testkit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * A Twinlog broker in its own JVM ({@code io.twinlog.server.Main}, as {@code bin/twinlog-server-start.sh} runs it),
 * so a test can {@link #kill()} it with SIGKILL: no shutdown hook, no flush, no checkpoint. The broker uses its own
 * embedded ZooKeeper in the same data directory, so a restart finds its topics again.
 *
 * <p>The broker's output goes to {@code broker.log} in the data directory; {@link #logTail()} helps failing tests.
 */
public final class BrokerProcess implements AutoCloseable {
    private final File dataDir;
    private final Map<String, String> extraProperties;
    private final int port;
    private final int zooKeeperPort;
    private final List<String> jvmOptions = new ArrayList<>();
    private final Map<String, String> environment = new HashMap<>();
    private Process process;

    public BrokerProcess(File dataDir, Map<String, String> extraProperties) throws IOException {
        this.dataDir = dataDir;
        this.extraProperties = Map.copyOf(extraProperties);
        this.port = freePort();
        this.zooKeeperPort = freePort();
    }

    /**
     * Starts the JVM with these options too ({@code -Dlog4j2.configurationFile=...}) and these environment variables
     * ({@code TWINLOG_LOG_FORMAT}); call before {@link #start()}.
     */
    public BrokerProcess withJvm(List<String> options, Map<String, String> variables) {
        jvmOptions.addAll(options);
        environment.putAll(variables);
        return this;
    }

    /** What the broker wrote to stdout and stderr. */
    public File logFile() {
        return new File(dataDir, "broker.log");
    }

    public File logDir() {
        return new File(dataDir, "logs");
    }

    public String bootstrapServers() {
        return "127.0.0.1:" + port;
    }

    /** An admin client of this broker (30 s API timeout); the caller closes it. */
    public Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(),
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000));
    }

    /** Starts the JVM and waits until the broker accepts connections. */
    public void start() throws IOException {
        Properties p = new Properties();
        p.put("broker.id", "0");
        p.put("listeners", "PLAINTEXT://127.0.0.1:" + port);
        p.put("log.dirs", logDir().getAbsolutePath());
        p.put("zookeeper.embedded.port", Integer.toString(zooKeeperPort));
        p.put("zookeeper.embedded.data.dir", new File(dataDir, "zookeeper").getAbsolutePath());
        p.put("zookeeper.session.timeout.ms", "4000");
        p.put("num.io.threads", "2");
        p.put("num.network.threads", "1");
        p.putAll(extraProperties);
        File config = new File(dataDir, "server.properties");
        Files.createDirectories(dataDir.toPath());
        try (OutputStream out = new FileOutputStream(config)) {
            p.store(out, "written by BrokerProcess");
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(new File(System.getProperty("java.home"), "bin/java").getAbsolutePath());
        cmd.add("-Xmx384m");
        cmd.addAll(jvmOptions);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add("io.twinlog.server.Main");
        cmd.add(config.getAbsolutePath());
        ProcessBuilder builder = new ProcessBuilder(cmd);
        builder.environment().putAll(environment);
        process = builder.redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(new File(dataDir, "broker.log"))).start();
        Waits.waitUntil("broker process to accept connections on " + bootstrapServers() + "; log tail:\n"
                + "(see " + new File(dataDir, "broker.log") + ")", () -> {
                    if (!process.isAlive()) {
                        throw new IllegalStateException("broker process exited with " + process.exitValue()
                                + ":\n" + logTail());
                    }
                    return accepts();
                }, Duration.ofSeconds(60));
    }

    private boolean accepts() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** SIGKILL: the JVM dies at once, as in a power cut of the process (the OS page cache survives). */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /** SIGTERM: the broker's clean shutdown path. Returns the exit code. */
    public int terminate() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("broker did not exit within 60 s of SIGTERM:\n" + logTail());
        }
        return process.exitValue();
    }

    public boolean isAlive() {
        return process != null && process.isAlive();
    }

    public String logTail() {
        try {
            List<String> lines = Files.readAllLines(new File(dataDir, "broker.log").toPath());
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
        } catch (IOException e) {
            return "(no broker log: " + e + ")";
        }
    }

    @Override
    public void close() throws InterruptedException {
        if (process != null && process.isAlive()) {
            kill();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
