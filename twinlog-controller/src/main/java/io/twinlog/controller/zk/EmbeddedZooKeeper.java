package io.twinlog.controller.zk;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.server.embedded.ExitHandler;
import org.apache.zookeeper.server.embedded.ZooKeeperServerEmbedded;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * A single ZooKeeper server run inside the broker's JVM: the default on one machine, so a new user needs nothing
 * else installed. Clusters spanning machines use a real ensemble ({@code bin/twinlog-zookeeper-start.sh}).
 */
public final class EmbeddedZooKeeper implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EmbeddedZooKeeper.class);

    private final ZooKeeperServerEmbedded server;
    private final int port;

    private EmbeddedZooKeeper(ZooKeeperServerEmbedded server, int port) {
        this.server = server;
        this.port = port;
    }

    /** Starts a server on 127.0.0.1:port (0 picks a free port) with its data in dataDir. */
    public static EmbeddedZooKeeper start(File dataDir, int port) throws IOException {
        int actualPort = port == 0 ? freePort() : port;
        Files.createDirectories(dataDir.toPath());
        Properties p = new Properties();
        p.put("clientPort", Integer.toString(actualPort));
        p.put("clientPortAddress", "127.0.0.1");
        p.put("tickTime", "500");
        p.put("initLimit", "10");
        p.put("syncLimit", "5");
        p.put("maxSessionTimeout", "60000");
        p.put("admin.enableServer", "false");
        p.put("4lw.commands.whitelist", "ruok,stat,srvr,mntr");
        ZooKeeperServerEmbedded server;
        try {
            server = ZooKeeperServerEmbedded.builder().baseDir(dataDir.toPath())
                    .configuration(p).exitHandler(ExitHandler.LOG_ONLY).build();
            server.start(30_000); // waits until serving, so a port already in use fails here
        } catch (Exception e) {
            // broad: ZooKeeper's start-up throws Exception; rethrown with the port
            throw new IOException("Could not start the embedded ZooKeeper on 127.0.0.1:" + actualPort
                    + " (is the port in use?): " + e.getMessage(), e);
        }
        log.info("Embedded ZooKeeper started on 127.0.0.1:{} with data in {}", actualPort, dataDir);
        return new EmbeddedZooKeeper(server, actualPort);
    }

    public String connectString() {
        return "127.0.0.1:" + port;
    }

    public int port() {
        return port;
    }

    /**
     * A Curator client of this server, started and connected (30 s session, one retry after 100 ms): for the tests
     * that drive the metadata and mirror stores on a real ZooKeeper. The caller closes it.
     */
    public CuratorFramework connectedClient() throws InterruptedException {
        CuratorFramework zk = CuratorFrameworkFactory.newClient(connectString(), 30_000, 5_000, new RetryOneTime(100));
        zk.start();
        if (!zk.blockUntilConnected(30, TimeUnit.SECONDS)) {
            zk.close();
            throw new IllegalStateException("Could not connect to the embedded ZooKeeper at " + connectString());
        }
        return zk;
    }

    @Override
    public void close() {
        server.close();
        log.info("Embedded ZooKeeper on port {} stopped", port);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        }
    }
}
