package io.twinlog.bench;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.data.Stat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Counts the writes a ZooKeeper server committed, from outside the brokers: every committed write (a create,
 * setData, delete or one multi-op transaction) takes the next zxid, so the difference of two zxids read with the
 * {@code srvr} four-letter command is the number of write transactions between them (the lower 32 bits; a new
 * leader epoch would reset them, which a single embedded server never sees). Where the writes went is read from the
 * nodes' data versions: the sum of the versions under a subtree grows by one per setData there.
 */
final class ZooKeeperWrites {
    /** The subtrees a Twinlog cluster writes while mirroring, each counted on its own. */
    static final List<String> SUBTREES = List.of("/brokers/topics", "/mirror_states", "/mirror_progress", "/mirrors",
            "/config");
    private static final Pattern ZXID = Pattern.compile("Zxid: 0x([0-9a-fA-F]+)");

    /** The zxid and, per subtree of {@link #SUBTREES}, the sum of its nodes' data versions. */
    record Snapshot(long zxid, Map<String, Long> versionSums, long nanoTime) {
        long writesSince(Snapshot earlier) {
            return (zxid & 0xffffffffL) - (earlier.zxid & 0xffffffffL);
        }

        Map<String, Long> setDataSince(Snapshot earlier) {
            Map<String, Long> out = new LinkedHashMap<>();
            versionSums.forEach((path, sum) -> out.put(path, sum - earlier.versionSums.getOrDefault(path, 0L)));
            return out;
        }

        double secondsSince(Snapshot earlier) {
            return (nanoTime - earlier.nanoTime) / 1e9;
        }
    }

    private final int port;

    ZooKeeperWrites(int port) {
        this.port = port;
    }

    /**
     * The zxid alone, without the per-subtree versions (which take a read per node: minutes at 10,000 partitions).
     */
    Snapshot zxidOnly() throws IOException {
        return new Snapshot(zxid(), Map.of(), System.nanoTime());
    }

    /** The zxid first, then the versions: a write between the two shows in the versions but not the zxid. */
    Snapshot snapshot() throws Exception {
        long zxid = zxid();
        long now = System.nanoTime();
        Map<String, Long> sums = new LinkedHashMap<>();
        try (CuratorFramework zk = CuratorFrameworkFactory.newClient("127.0.0.1:" + port, 30_000, 10_000,
                new RetryOneTime(100))) {
            zk.start();
            zk.blockUntilConnected();
            for (String subtree : SUBTREES) {
                sums.put(subtree, versionSum(zk, subtree));
            }
        }
        return new Snapshot(zxid, sums, now);
    }

    private static long versionSum(CuratorFramework zk, String path) throws Exception {
        Stat stat = zk.checkExists().forPath(path);
        if (stat == null) {
            return 0;
        }
        long sum = stat.getVersion();
        for (String child : zk.getChildren().forPath(path)) {
            sum += versionSum(zk, path + "/" + child);
        }
        return sum;
    }

    long zxid() throws IOException {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write("srvr".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            String answer = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
            Matcher m = ZXID.matcher(answer);
            if (!m.find()) {
                throw new IOException("No Zxid in ZooKeeper's srvr answer: " + answer);
            }
            return Long.parseLong(m.group(1), 16);
        }
    }
}
