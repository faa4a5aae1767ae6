package io.twinlog.clients.network;

import io.twinlog.clients.network.TransportException.Kind;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.network.PlaintextChannelBuilder;
import org.apache.kafka.common.network.Selectable;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The one client transport over loopback sockets: an exchange gets the connection's answer, a silent broker times
 * the request out and closes the connection, a closing one is a disconnection, a refused attempt backs off the next
 * until the connection is forgotten, a throttle longer than the request may wait sends nothing, and an abort ends an
 * exchange in flight at once.
 */
@Timeout(60)
class BrokerTransportTest {
    private static final long BACKOFF_MS = 60_000;

    private final BrokerTransport transport = new BrokerTransport("test", plaintext(), new BrokerTransport.Settings(
            60_000, 10_000, 10_000, BACKOFF_MS, BACKOFF_MS, Selectable.USE_DEFAULT_BUFFER_SIZE,
            Selectable.USE_DEFAULT_BUFFER_SIZE, 0), Time.SYSTEM, new LogContext());
    private final ServerSocket server = newServer();

    @AfterEach
    void tearDown() throws IOException {
        transport.close();
        server.close();
    }

    @Test
    void anExchangeGetsTheAnswerOnAReusedConnection() throws Exception {
        Thread broker = serve(socket -> {
            DataInputStream in = new DataInputStream(socket.getInputStream());
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            for (int i = 0; i < 2; i++) {
                byte[] request = new byte[in.readInt()];
                in.readFully(request);
                byte[] answer = ("re:" + new String(request, StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8);
                out.writeInt(answer.length);
                out.write(answer);
                out.flush();
            }
        });
        assertTrue(transport.connect("1", address(), 10_000), "a new connection");
        assertEquals("re:one", text(transport.exchange("1", bytes("one"), 10_000)));
        assertFalse(transport.connect("1", address(), 10_000), "the same connection");
        assertEquals("re:two", text(transport.exchange("1", bytes("two"), 10_000)));
        broker.join(10_000);
    }

    @Test
    void aSilentBrokerTimesTheRequestOutAndTheConnectionIsClosed() throws Exception {
        CountDownLatch done = new CountDownLatch(1);
        serve(socket -> done.await(30, TimeUnit.SECONDS));
        transport.connect("1", address(), 10_000);
        TransportException e = assertThrows(TransportException.class,
                () -> transport.exchange("1", bytes("hello"), 200));
        assertEquals(Kind.TIMED_OUT, e.kind());
        assertFalse(transport.isReady("1"), "a late answer must not be read as the next request's");
        done.countDown();
    }

    /**
     * A broker holding its answer (a fetch parked up to its max wait, a silent broker up to the request timeout):
     * an abort from another thread ends the exchange at once, and nothing is read or sent after it.
     */
    @Test
    void anAbortEndsAnExchangeInFlightWithoutWaitingForItsAnswer() throws Exception {
        CountDownLatch received = new CountDownLatch(1);
        CountDownLatch answer = new CountDownLatch(1);
        serve(socket -> {
            DataInputStream in = new DataInputStream(socket.getInputStream());
            in.readFully(new byte[in.readInt()]);
            received.countDown();
            answer.await(30, TimeUnit.SECONDS);
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            out.writeInt(4);
            out.write(bytes("late").array());
            out.flush();
        });
        transport.connect("1", address(), 10_000);
        CompletableFuture<Object> exchange = CompletableFuture.supplyAsync(() -> {
            try {
                return transport.exchange("1", bytes("fetch"), 60_000);
            } catch (IOException e) {
                return e;
            }
        });
        assertTrue(received.await(10, TimeUnit.SECONDS), "the broker got the request");
        long start = System.nanoTime();
        transport.abort();
        Object outcome = exchange.get(10, TimeUnit.SECONDS);
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        answer.countDown();
        assertTrue(outcome instanceof TransportException t && t.kind() == Kind.ABORTED, String.valueOf(outcome));
        assertTrue(tookMs < 2_000, "the abort took " + tookMs + " ms");
        assertFalse(transport.isReady("1"), "the connection is closed: its late answer is never read");
        assertEquals(Kind.ABORTED, assertThrows(TransportException.class,
                () -> transport.connect("1", address(), 10_000)).kind(), "nothing more after an abort");
    }

    @Test
    void aBrokerThatClosesIsADisconnection() throws Exception {
        serve(socket -> new DataInputStream(socket.getInputStream()).readInt());
        transport.connect("1", address(), 10_000);
        TransportException e = assertThrows(TransportException.class,
                () -> transport.exchange("1", bytes("hello"), 10_000));
        assertEquals(Kind.DISCONNECTED, e.kind());
    }

    @Test
    void aRefusedAttemptBacksOffTheNextUntilTheConnectionIsForgotten() throws Exception {
        InetSocketAddress closed = address();
        server.close();
        assertEquals(Kind.CONNECT_FAILED, assertThrows(TransportException.class,
                () -> transport.connect("1", closed, 10_000)).kind());
        assertEquals(Kind.BACKING_OFF, assertThrows(TransportException.class,
                () -> transport.connect("1", closed, 10_000)).kind());
        transport.disconnect("1"); // as NetworkClient.close: the backoff goes with the connection's state
        assertEquals(Kind.CONNECT_FAILED, assertThrows(TransportException.class,
                () -> transport.connect("1", closed, 10_000)).kind());
    }

    @Test
    void aThrottleLongerThanTheRequestMayWaitSendsNothing() throws Exception {
        CountDownLatch done = new CountDownLatch(1);
        serve(socket -> done.await(30, TimeUnit.SECONDS));
        transport.connect("1", address(), 10_000);
        transport.throttle("1", 60_000);
        assertEquals(Kind.THROTTLED, assertThrows(TransportException.class,
                () -> transport.exchange("1", bytes("hello"), 100)).kind());
        assertTrue(transport.isReady("1"), "nothing was sent: the connection stays");
        done.countDown();
    }

    @Test
    void correlationIdsAvoidTheRangeSaslReserves() {
        int first = transport.nextCorrelationId();
        assertEquals(first + 1, transport.nextCorrelationId());
    }

    /** What a fake broker does with its one accepted connection. */
    @FunctionalInterface
    private interface Session {
        void run(Socket socket) throws Exception;
    }

    private Thread serve(Session session) {
        Thread t = new Thread(() -> {
            try (Socket socket = server.accept()) {
                session.run(socket);
            } catch (Exception e) { // broad: the test's fake broker; a failure shows as the client's error
                throw new IllegalStateException(e);
            }
        }, "fake-broker");
        t.setDaemon(true);
        t.start();
        return t;
    }

    private InetSocketAddress address() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort());
    }

    private static ServerSocket newServer() {
        try {
            return new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static ChannelBuilder plaintext() {
        ChannelBuilder builder = new PlaintextChannelBuilder(ListenerName.normalised("PLAINTEXT"));
        builder.configure(Map.of());
        return builder;
    }

    private static ByteBuffer bytes(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
    }

    private static String text(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return new String(out, StandardCharsets.UTF_8);
    }
}
