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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * One Twinlog broker process ({@code io.twinlog.server.Main} with a properties file, as
 * {@code bin/twinlog-server-start.sh} runs it). It keeps its ports and its data dir across restarts.
 *
 * <p>Two listeners: {@code PLAINTEXT} for clients and other brokers (which reach it through their own proxies, named
 * in their {@code inter.broker.endpoint.overrides}) and {@code MIRROR}, advertised at the address of a proxy in front
 * of it, which the other cluster's mirror bootstraps from: Metadata answers with the endpoints of the listener asked,
 * so every byte between the clusters crosses a proxy the campaign can cut.
 *
 * <p>Its log dir is {@code <dir>/logs}; a broker with a {@link SmallDisk} has a second one on it (Kafka's JBOD: each
 * partition in one of them), and one with a {@link BrokerClock} runs with a wall clock the campaign can step.
 */
final class BrokerNode {
    private final String clusterName;
    private final int id;
    private final File dir;
    private final String address;
    private final int clientPort;
    private final int mirrorPort;
    private final ChildProcess process;
    private final Optional<SmallDisk> smallDisk;
    private final Optional<BrokerClock> clock;

    /** @param hosts where it runs: its address and the launcher of its JVM ({@link Hosts}) */
    BrokerNode(String clusterName, int id, File dir, int clientPort, int mirrorPort, Properties config,
               Optional<SmallDisk> smallDisk, Optional<BrokerClock> clock, Hosts hosts) throws IOException {
        this.address = hosts.address(hostName(clusterName, id));
        this.smallDisk = smallDisk;
        this.clock = clock;
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
                new File(dir, "broker.log"), clock.map(BrokerClock::environment).orElse(Map.of()),
                hosts.launcher(hostName(clusterName, id)));
    }

    /** The name of broker {@code id} of cluster {@code clusterName} in {@link Hosts}: "a0". */
    static String hostName(String clusterName, int id) {
        return clusterName + id;
    }

    /** The address it listens at. */
    String address() {
        return address;
    }

    /** Where the broker keeps its logs: {@code <dir>/logs}, then the small disk's, if it has one. */
    static List<File> logDirs(File dir, Optional<SmallDisk> smallDisk) {
        List<File> out = new ArrayList<>();
        out.add(new File(dir, "logs"));
        smallDisk.ifPresent(d -> out.add(d.logDir()));
        return out;
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

    List<File> logDirs() {
        return logDirs(dir, smallDisk);
    }

    Optional<SmallDisk> smallDisk() {
        return smallDisk;
    }

    Optional<BrokerClock> clock() {
        return clock;
    }

    long pid() {
        return process.pid();
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

    /** The disks are lost: the stopped broker's log dirs are deleted. */
    void wipe() {
        if (isAlive()) {
            throw new IllegalStateException("Stop " + name() + " before wiping its disk");
        }
        logDirs().forEach(TestDirectories::delete);
    }

    String logTail(int lines) {
        return process.logTail(lines);
    }

    private boolean accepts() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(address, clientPort), 500);
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
