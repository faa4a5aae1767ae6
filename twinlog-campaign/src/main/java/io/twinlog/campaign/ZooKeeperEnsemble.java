package io.twinlog.campaign;

import io.twinlog.testkit.Waits;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A ZooKeeper ensemble of three {@code QuorumPeerMain} processes (Apache ZooKeeper's own server, as
 * {@code bin/twinlog-zookeeper-start.sh} runs it), each with its data dir, {@code myid} and the same
 * {@code server.N} lines. Both clusters share it, each under its own chroot. A node's role (leader, follower) is
 * read with the {@code srvr} four-letter command.
 */
final class ZooKeeperEnsemble implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ZooKeeperEnsemble.class);
    static final int SIZE = 3;

    /** A node's role as {@code srvr} reports it. */
    enum Mode { LEADER, FOLLOWER, NOT_SERVING }

    private final List<Node> nodes = new ArrayList<>();

    private record Node(int id, String address, int clientPort, ChildProcess process) {
    }

    /** The name of node {@code id} (1-3) in {@link Hosts}. */
    static String hostName(int id) {
        return "zk" + id;
    }

    ZooKeeperEnsemble(File baseDir, Hosts hosts) throws IOException {
        List<int[]> ports = new ArrayList<>();
        for (int i = 0; i < SIZE; i++) {
            ports.add(new int[] {Ports.free(), Ports.free(), Ports.free()});
        }
        for (int i = 0; i < SIZE; i++) {
            int id = i + 1;
            File dir = new File(baseDir, "zookeeper-" + id);
            File data = new File(dir, "data");
            Files.createDirectories(data.toPath());
            Files.writeString(new File(data, "myid").toPath(), id + "\n");
            StringBuilder cfg = new StringBuilder()
                    .append("dataDir=").append(data.getAbsolutePath()).append('\n')
                    .append("clientPort=").append(ports.get(i)[0]).append('\n')
                    .append("clientPortAddress=").append(hosts.address(hostName(id))).append('\n')
                    // a short tick: elections and session expiry in seconds, as the campaign's rounds need
                    .append("tickTime=500\ninitLimit=20\nsyncLimit=10\nmaxClientCnxns=0\n")
                    .append("admin.enableServer=false\n4lw.commands.whitelist=srvr,ruok\n");
            for (int j = 0; j < SIZE; j++) {
                cfg.append("server.").append(j + 1).append('=').append(hosts.address(hostName(j + 1))).append(':')
                        .append(ports.get(j)[1]).append(':')
                        .append(ports.get(j)[2]).append('\n');
            }
            File config = new File(dir, "zoo.cfg");
            Files.writeString(config.toPath(), cfg.toString());
            ChildProcess process = new ChildProcess("zookeeper-" + id,
                    "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                    List.of("-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"),
                    List.of(config.getAbsolutePath()), new File(dir, "zookeeper.log"), Map.of(),
                    hosts.launcher(hostName(id)));
            nodes.add(new Node(id, hosts.address(hostName(id)), ports.get(i)[0], process));
        }
    }

    void start() throws IOException {
        for (Node n : nodes) {
            n.process.start();
        }
        awaitQuorum();
    }

    /** Waits until one node leads and every other follows. */
    void awaitQuorum() {
        Waits.waitFor("the ZooKeeper ensemble to have a leader and " + (SIZE - 1) + " followers", this::modes,
                modes -> modes.stream().filter(m -> m == Mode.LEADER).count() == 1
                        && modes.stream().filter(m -> m == Mode.FOLLOWER).count() == SIZE - 1,
                Duration.ofSeconds(90));
    }

    List<Mode> modes() {
        List<Mode> out = new ArrayList<>();
        for (Node n : nodes) {
            out.add(mode(n));
        }
        return out;
    }

    /** The id (1-3) of the node in {@code mode}, if any. */
    Optional<Integer> nodeIn(Mode mode) {
        for (Node n : nodes) {
            if (mode(n) == mode) {
                return Optional.of(n.id);
            }
        }
        return Optional.empty();
    }

    List<Integer> followers() {
        List<Integer> out = new ArrayList<>();
        for (Node n : nodes) {
            if (mode(n) == Mode.FOLLOWER) {
                out.add(n.id);
            }
        }
        return out;
    }

    void kill(int id) throws InterruptedException {
        log.info("[Campaign] ZooKeeper node {} killed (SIGKILL)", id);
        node(id).process.kill();
    }

    void restart(int id) throws IOException {
        log.info("[Campaign] ZooKeeper node {} started again", id);
        node(id).process.start();
    }

    /** Starts every node that is not running. */
    void startStopped() throws IOException {
        for (Node n : nodes) {
            if (!n.process.isAlive()) {
                restart(n.id);
            }
        }
    }

    int clientPort(int id) {
        return node(id).clientPort;
    }

    String address(int id) {
        return node(id).address;
    }

    List<Integer> ids() {
        return nodes.stream().map(Node::id).toList();
    }

    /** The direct connect string (no proxy), for the campaign's own ZooKeeper client. */
    String connectString() {
        return String.join(",", nodes.stream().map(n -> n.address + ":" + n.clientPort).toList());
    }

    private Node node(int id) {
        return nodes.get(id - 1);
    }

    private static Mode mode(Node n) {
        if (!n.process.isAlive()) {
            return Mode.NOT_SERVING;
        }
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(n.address, n.clientPort), 1000);
            s.setSoTimeout(2000);
            OutputStream out = s.getOutputStream();
            out.write("srvr".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
            String line;
            while ((line = in.readLine()) != null) {
                if (line.startsWith("Mode: ")) {
                    String mode = line.substring("Mode: ".length()).trim();
                    return mode.equals("leader") ? Mode.LEADER : mode.equals("follower") ? Mode.FOLLOWER
                            : Mode.NOT_SERVING;
                }
            }
            return Mode.NOT_SERVING; // "This ZooKeeper instance is not currently serving requests"
        } catch (IOException e) {
            return Mode.NOT_SERVING;
        }
    }

    @Override
    public void close() throws InterruptedException {
        for (Node n : nodes) {
            n.process.kill();
        }
    }
}
