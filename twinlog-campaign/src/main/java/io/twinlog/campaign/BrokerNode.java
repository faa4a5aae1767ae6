package io.twinlog.campaign;

import io.twinlog.testkit.TestDirectories;
import io.twinlog.testkit.Waits;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Properties;

/**
 * One Twinlog broker process ({@code io.twinlog.server.Main} with a properties file, as
 * {@code bin/twinlog-server-start.sh} runs it). It keeps its ports and its data dir across restarts.
 *
 * <p>Two listeners: {@code PLAINTEXT} for clients and other brokers (which reach it through their own proxies, named
 * in their {@code inter.broker.endpoint.overrides}) and {@code MIRROR}, advertised at the address of a proxy in front
 * of it, which the other cluster's mirror bootstraps from: Metadata answers with the endpoints of the listener asked,
 * so every byte between the clusters crosses a proxy the campaign can cut.
 */
final class BrokerNode {
    private final String clusterName;
    private final int id;
    private final File dir;
    private final int clientPort;
    private final int mirrorPort;
    private final ChildProcess process;

    BrokerNode(String clusterName, int id, File dir, int clientPort, int mirrorPort, Properties config)
            throws IOException {
        this.clusterName = clusterName;
        this.id = id;
        this.dir = dir;
        this.clientPort = clientPort;
        this.mirrorPort = mirrorPort;
        Files.createDirectories(dir.toPath());
        File file = new File(dir, "server.properties");
        try (OutputStream out = new FileOutputStream(file)) {
            config.store(out, "written by the fault campaign");
        }
        this.process = new ChildProcess(name(), "io.twinlog.server.Main",
                List.of("-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"), List.of(file.getAbsolutePath()),
                new File(dir, "broker.log"));
    }

    String name() {
        return "broker " + clusterName + id;
    }

    int id() {
        return id;
    }

    int clientPort() {
        return clientPort;
    }

    int mirrorPort() {
        return mirrorPort;
    }

    File logDir() {
        return new File(dir, "logs");
    }

    File logFile() {
        return process.logFile();
    }

    /** Starts the JVM and waits until it accepts connections. */
    void start() throws IOException {
        process.start();
        // a process that exits (bad configuration, a refused start) ends the wait at once, not at its deadline
        Waits.waitUntil(name() + " to accept connections on port " + clientPort + ", or to exit (log: " + logFile()
                + ")", () -> !process.isAlive() || accepts(), Duration.ofSeconds(120));
        if (!process.isAlive()) {
            throw new IllegalStateException(name() + " " + process.exitDescription() + ":\n" + process.logTail(40));
        }
    }

    void kill() throws InterruptedException {
        process.kill();
    }

    /** SIGTERM: controlled shutdown (leaderships moved away first). */
    void terminate() throws InterruptedException {
        process.terminate(90);
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** The disk is lost: the stopped broker's log dir is deleted. */
    void wipe() {
        if (isAlive()) {
            throw new IllegalStateException("Stop " + name() + " before wiping its disk");
        }
        TestDirectories.delete(logDir());
    }

    String logTail(int lines) {
        return process.logTail(lines);
    }

    private boolean accepts() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", clientPort), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    public String toString() {
        return process.toString();
    }
}
