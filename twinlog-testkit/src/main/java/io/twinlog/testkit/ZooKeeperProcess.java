package io.twinlog.testkit;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * A standalone ZooKeeper server in its own JVM (Apache ZooKeeper's {@code ZooKeeperServerMain}, what
 * {@code bin/twinlog-zookeeper-start.sh} runs for one server), on a fixed port and data directory, so a test can
 * {@link #kill()} it and {@link #start()} it again on its data: brokers ({@link BrokerProcess} with
 * {@code zookeeper.connect} set to {@link #connectString()}) see ZooKeeper vanish and come back as in an outage.
 *
 * <p>Sessions are restored from the data on restart, as a real server does; {@code tickTime} is 500 ms, so
 * session timeouts from 1 s to 30 s are accepted. Output goes to {@code zookeeper.log} in the directory.
 */
public final class ZooKeeperProcess implements AutoCloseable {
    private final File dir;
    private final int port;
    private Process process;

    public ZooKeeperProcess(File dir) throws IOException {
        this.dir = dir;
        try (ServerSocket s = new ServerSocket(0)) {
            this.port = s.getLocalPort();
        }
    }

    public String connectString() {
        return "127.0.0.1:" + port;
    }

    /** Starts the server (again, on the same port and data) and waits until it answers {@code ruok}. */
    public void start() throws IOException {
        Files.createDirectories(dir.toPath());
        Properties p = new Properties();
        p.put("tickTime", "500");
        p.put("maxSessionTimeout", "30000");
        p.put("dataDir", new File(dir, "data").getAbsolutePath());
        p.put("clientPort", Integer.toString(port));
        p.put("clientPortAddress", "127.0.0.1");
        p.put("admin.enableServer", "false");
        p.put("4lw.commands.whitelist", "ruok");
        File config = new File(dir, "zookeeper.properties");
        try (OutputStream out = new FileOutputStream(config)) {
            p.store(out, "written by ZooKeeperProcess");
        }
        List<String> cmd = List.of(new File(System.getProperty("java.home"), "bin/java").getAbsolutePath(),
                "-Xmx128m", "-cp", System.getProperty("java.class.path"),
                "org.apache.zookeeper.server.ZooKeeperServerMain", config.getAbsolutePath());
        File logFile = new File(dir, "zookeeper.log");
        process = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile)).start();
        Waits.waitUntil("ZooKeeper to answer ruok on " + connectString() + " (see " + logFile + ")", () -> {
            if (!process.isAlive()) {
                throw new IllegalStateException("ZooKeeper exited with " + process.exitValue() + "; see " + logFile);
            }
            return answersRuok();
        }, Duration.ofSeconds(30));
    }

    private boolean answersRuok() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 500);
            s.setSoTimeout(1_000);
            s.getOutputStream().write("ruok".getBytes(StandardCharsets.US_ASCII));
            InputStream in = s.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.US_ASCII).equals("imok");
        } catch (IOException e) {
            return false;
        }
    }

    /** SIGKILL: ZooKeeper vanishes at once; its data (transaction log and snapshots) stays for {@link #start()}. */
    public void kill() throws InterruptedException {
        if (process != null) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
    }

    public boolean isAlive() {
        return process != null && process.isAlive();
    }

    @Override
    public void close() throws InterruptedException {
        kill();
    }
}
