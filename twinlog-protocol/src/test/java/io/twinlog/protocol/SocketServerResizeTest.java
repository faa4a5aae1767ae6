package io.twinlog.protocol;

import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@code num.network.threads} changed live on a listener: new connections spread over the new network threads;
 * a shrink closes the connections of the threads it removes (as Kafka does) and leaves the others working; a
 * response due on a removed thread is dropped quietly. The handler tells which network thread served a connection:
 * the connection id carries it.
 */
@Timeout(120)
class SocketServerResizeTest {
    private static final int BROKER_ID = 12;
    private static final String NETWORK_THREADS = "twinlog-network-" + BROKER_ID + "-PLAINTEXT-";
    private static final short VERSION = 3;
    private static final String BLOCKING_CLIENT = "blocking";

    /** The network thread (processor id) of each connection, by the client's local port. */
    private final Map<Integer, Integer> processorOfClientPort = new ConcurrentHashMap<>();
    private final AtomicInteger blockedInside = new AtomicInteger();
    private final CountDownLatch release = new CountDownLatch(1);
    private final CountDownLatch blockedAnswered = new CountDownLatch(1);
    private final AtomicReference<Throwable> respondFailure = new AtomicReference<>();
    private final List<Socket> sockets = new ArrayList<>();
    private LoopbackServer broker;

    @BeforeEach
    void start() throws IOException {
        broker = LoopbackServer.plaintext(BROKER_ID, 2, 2,
                ApiRegistry.builder().add(ApiKeys.API_VERSIONS, this::answer).build());
    }

    @AfterEach
    void stop() throws Exception {
        release.countDown();
        for (Socket s : sockets) {
            s.close();
        }
        broker.close();
    }

    private void answer(Request request) throws InterruptedException {
        // "127.0.0.1:port-127.0.0.1:clientPort-processor-index"
        String[] parts = request.connectionId().split("-");
        int clientPort = Integer.parseInt(parts[1].substring(parts[1].lastIndexOf(':') + 1));
        processorOfClientPort.put(clientPort, Integer.parseInt(parts[2]));
        if (!request.clientId().equals(BLOCKING_CLIENT)) {
            request.respond(new ApiVersionsResponse(new ApiVersionsResponseData()));
            return;
        }
        blockedInside.incrementAndGet();
        release.await();
        try {
            request.respond(new ApiVersionsResponse(new ApiVersionsResponseData()));
        } catch (Throwable t) {
            respondFailure.set(t);
        } finally {
            blockedAnswered.countDown();
        }
    }

    @Test
    void connectionsFollowTheNumberOfNetworkThreads() throws Exception {
        List<Socket> firstTwo = connectAndAsk(2);
        assertEquals(Set.of(0, 1), processorsOf(firstTwo));
        assertNetworkThreads(Set.of(0, 1));

        broker.server.resizeProcessors(4);
        assertEquals(4, broker.server.processorCount());
        assertNetworkThreads(Set.of(0, 1, 2, 3));
        List<Socket> nextFour = connectAndAsk(4);
        assertEquals(Set.of(0, 1, 2, 3), processorsOf(nextFour), "new connections go to every network thread");
        List<Socket> all = new ArrayList<>(firstTwo);
        all.addAll(nextFour);
        for (Socket s : all) {
            ask(s);
        }

        broker.server.resizeProcessors(1);
        assertEquals(1, broker.server.processorCount());
        assertNetworkThreads(Set.of(0));
        for (Socket s : all) {
            if (processorOf(s) == 0) {
                ask(s); // on the thread that stays: still served
            } else {
                Frames.assertClosedByBroker(s);
            }
        }
        assertEquals(Set.of(0), processorsOf(connectAndAsk(2)), "new connections go to the one thread left");

        broker.server.resizeProcessors(2);
        assertNetworkThreads(Set.of(0, 4));
        assertEquals(Set.of(0, 4), processorsOf(connectAndAsk(2)), "ids of removed threads are not reused");
    }

    @Test
    void aResponseDueOnARemovedNetworkThreadIsDropped() throws Exception {
        List<Socket> two = connectAndAsk(2);
        Socket onRemoved = two.stream().filter(s -> processorOf(s) == 1).findFirst().orElseThrow();
        Socket onKept = two.stream().filter(s -> processorOf(s) == 0).findFirst().orElseThrow();
        Frames.send(onRemoved, new ApiVersionsRequest.Builder().build(VERSION), BLOCKING_CLIENT, 7);
        Poll.until("the request inside its handler", 1, blockedInside::get);

        broker.server.resizeProcessors(1);
        release.countDown();
        blockedAnswered.await();

        assertNull(respondFailure.get(), "answering on a removed network thread must not throw");
        Frames.assertClosedByBroker(onRemoved);
        ask(onKept);
    }

    @Test
    void resizeRefusesNoNetworkThreadAndAClosedListener() {
        assertThrows(IllegalArgumentException.class, () -> broker.server.resizeProcessors(0));
        assertEquals(2, broker.server.processorCount());
        broker.server.close();
        assertThrows(IllegalStateException.class, () -> broker.server.resizeProcessors(3));
    }

    private List<Socket> connectAndAsk(int count) throws IOException {
        List<Socket> opened = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Socket s = broker.connect();
            sockets.add(s);
            opened.add(s);
            ask(s);
        }
        return opened;
    }

    private static void ask(Socket socket) throws IOException {
        Frames.send(socket, new ApiVersionsRequest.Builder().build(VERSION), "resize-test", 1);
        assertEquals(1, Frames.receive(socket, ApiKeys.API_VERSIONS, VERSION).correlationId());
    }

    private int processorOf(Socket socket) {
        return processorOfClientPort.get(socket.getLocalPort());
    }

    private Set<Integer> processorsOf(List<Socket> connections) {
        Set<Integer> ids = new TreeSet<>();
        connections.forEach(s -> ids.add(processorOf(s)));
        return ids;
    }

    /** The live network threads of the listener and their selector metrics (tag networkProcessor) are these. */
    private void assertNetworkThreads(Set<Integer> ids) {
        Set<String> names = new TreeSet<>();
        Set<String> tags = new TreeSet<>();
        ids.forEach(id -> {
            names.add(NETWORK_THREADS + id);
            tags.add(Integer.toString(id));
        });
        Poll.until("network threads", names, () -> Poll.threadsNamed(NETWORK_THREADS));
        assertEquals(tags, selectorMetricTags());
    }

    private Set<String> selectorMetricTags() {
        Set<String> tags = new TreeSet<>();
        for (KafkaMetric m : broker.metrics.kafkaMetrics().metrics().values()) {
            if (m.metricName().group().equals("socket-server-metrics")
                    && "PLAINTEXT".equals(m.metricName().tags().get("listener"))) {
                tags.add(m.metricName().tags().get("networkProcessor"));
            }
        }
        return tags;
    }
}
