package io.twinlog.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP proxy (on loopback unless told otherwise) that a test can cut and heal: between two brokers (replication, controller requests) or
 * between a broker and ZooKeeper (session loss). Cutting closes every open connection and refuses new ones until
 * {@link #heal()}; a peer sees exactly what a network partition followed by resets looks like. {@link #blackhole()}
 * is the other kind of partition: connections stay open (and new ones are accepted) but no byte crosses in either
 * direction, so a peer sees a timeout, never a refusal, as behind a firewall that drops packets. It can also
 * {@link #throttle} the bandwidth, as a slow link between two data centres would (a mirror falls behind its source).
 *
 * <p>Threads: one acceptor, two pump threads per connection (blocking I/O keeps it simple and it is test-only).
 */
public final class FaultProxy implements AutoCloseable {
    private final String name;
    private volatile InetSocketAddress target;
    private final ServerSocket server;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final Thread acceptor;
    private volatile boolean cut;
    private volatile boolean blackholed;
    /** Bytes per second in each direction of each connection; 0: unlimited. */
    private volatile long bytesPerSecond;
    private volatile boolean closed;

    public FaultProxy(String name, String targetHost, int targetPort) throws IOException {
        this(name, InetAddress.getLoopbackAddress().getHostAddress(), targetHost, targetPort);
    }

    /**
     * @param bindHost where it listens: loopback, or an address the peers reach it at (the fault campaign's
     *                 network namespaces reach the host at its bridge address)
     */
    public FaultProxy(String name, String bindHost, String targetHost, int targetPort) throws IOException {
        this.name = name;
        this.target = new InetSocketAddress(targetHost, targetPort);
        this.server = new ServerSocket(0, 50, InetAddress.getByName(bindHost));
        this.acceptor = new Thread(this::acceptLoop, "fault-proxy-" + name);
        this.acceptor.setDaemon(true);
        this.acceptor.start();
    }

    public int port() {
        return server.getLocalPort();
    }

    public String address() {
        return server.getInetAddress().getHostAddress() + ":" + port();
    }

    /** Drops every connection through this proxy and refuses new ones. */
    public void cut() {
        cut = true;
        for (Socket s : open) {
            closeQuietly(s);
        }
        open.clear();
    }

    /**
     * Silently drops every byte, in both directions, on open connections and on new ones, which are accepted and then
     * held: a peer's requests time out instead of failing at once. {@link #heal()} ends it; bytes dropped meanwhile
     * stay dropped, so connections opened before usually fail afterwards (their protocol is out of step).
     */
    public void blackhole() {
        blackholed = true;
    }

    /** Ends a {@link #cut()} or a {@link #blackhole()}. */
    public void heal() {
        cut = false;
        blackholed = false;
    }

    /** Points new connections at another address and drops the open ones (a DNS change, a rebuilt peer). */
    public void retarget(String host, int port) {
        target = new InetSocketAddress(host, port);
        for (Socket s : open) {
            closeQuietly(s);
        }
        open.clear();
    }

    /** Limits each direction of each connection to {@code bytesPerSecond} (0: unlimited again), open ones too. */
    public void throttle(long bytesPerSecond) {
        if (bytesPerSecond < 0) {
            throw new IllegalArgumentException("bytesPerSecond must be at least 0, not " + bytesPerSecond);
        }
        this.bytesPerSecond = bytesPerSecond;
    }

    public boolean isCut() {
        return cut;
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return;
            }
            if (cut) {
                closeQuietly(client);
                continue;
            }
            if (blackholed) {
                open.add(client);
                drain(client);
                continue;
            }
            try {
                Socket upstream = new Socket();
                upstream.connect(target, 5_000);
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                open.add(client);
                open.add(upstream);
                pump(client, upstream);
                pump(upstream, client);
            } catch (IOException e) {
                closeQuietly(client);
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[64 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    if (cut) {
                        break;
                    }
                    if (blackholed) {
                        continue; // dropped on the wire
                    }
                    out.write(buf, 0, n);
                    out.flush();
                    long rate = bytesPerSecond;
                    if (rate > 0) {
                        // the link's speed, simulated: the pump is the wire, not a test waiting for a state
                        Thread.sleep(n * 1000L / rate);
                    }
                }
            } catch (IOException ignored) {
                // the other side closed, or the proxy was cut
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                open.remove(from);
                open.remove(to);
            }
        }, "fault-proxy-" + name + "-pump");
        t.setDaemon(true);
        t.start();
    }

    /** A connection accepted while blackholed: read and dropped until it is closed (by the peer, cut or close). */
    private void drain(Socket client) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[64 * 1024];
            try (InputStream in = client.getInputStream()) {
                while (in.read(buf) >= 0 && !cut) {
                    // dropped on the wire
                }
            } catch (IOException ignored) {
                // the peer closed, or the proxy was cut
            } finally {
                closeQuietly(client);
                open.remove(client);
            }
        }, "fault-proxy-" + name + "-blackhole");
        t.setDaemon(true);
        t.start();
    }

    public boolean isBlackholed() {
        return blackholed;
    }

    @Override
    public void close() {
        closed = true;
        cut();
        try {
            server.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override
    public String toString() {
        return "FaultProxy(" + name + " -> " + target + (cut ? ", CUT" : "") + (blackholed ? ", BLACKHOLED" : "") + ")";
    }
}
