package io.twinlog.server.controller;

import io.twinlog.common.BrokerConfig;
import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.controller.metadata.FeatureLevels;
import io.twinlog.protocol.AdminDeadline;
import io.twinlog.protocol.ApiRegistry;
import io.twinlog.protocol.ListenerChannels;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestChannel;
import io.twinlog.protocol.RequestHandlerPool;
import io.twinlog.protocol.RequestMetrics;
import io.twinlog.protocol.ResponseThrottling;
import io.twinlog.protocol.SocketServer;
import io.twinlog.server.handlers.ApiVersionsHandler;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.message.AlterPartitionRequestData;
import org.apache.kafka.common.message.AlterPartitionResponseData;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.ElectLeadersResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.AlterPartitionRequest;
import org.apache.kafka.common.requests.AlterPartitionResponse;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.ElectLeadersRequest;
import org.apache.kafka.common.requests.ElectLeadersResponse;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A broker's two channels to the controller over real sockets (issue 25, points 4 and 7; decisions 60 and 77). The
 * "controller" is a socket server of Twinlog's own that holds every ElectLeaders until the test answers it, as a
 * controller holds a forwarded election until its leaders are visible, and answers AlterPartition at once. A held
 * election keeps the forwarding channel busy; an ISR change, which acks=all produce waits for, still goes through
 * on its own channel. A forwarded request carries the time its client has left, and is not sent at all once that
 * time passed while it waited for the channel.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ControllerChannelsTest {
    private static final int CONTROLLER = 1;
    private static final TopicPartition TP = new TopicPartition("orders", 0);

    private final BrokerMetrics metrics = BrokerMetrics.unreported(CONTROLLER, Time.SYSTEM);
    /** The elections the controller holds, unanswered. */
    private final BlockingQueue<Request> heldElections = new LinkedBlockingQueue<>();
    /** The admin threads that forward (a send blocks its thread until the answer). */
    private final ExecutorService adminThreads = Executors.newCachedThreadPool();
    private SocketServer server;
    private RequestHandlerPool handlers;
    private ControllerChannel forwarding;
    private ControllerChannel alterPartition;

    @BeforeEach
    void start() throws IOException {
        AtomicReference<ApiRegistry> registry = new AtomicReference<>();
        registry.set(ApiRegistry.builder()
                .add(ApiKeys.API_VERSIONS, new ApiVersionsHandler(registry::get, () -> FeatureLevels.DEFAULT))
                .add(ApiKeys.ELECT_LEADERS, heldElections::add)
                .add(ApiKeys.ALTER_PARTITION, request -> request.respond(new AlterPartitionResponse(
                        new AlterPartitionResponseData())))
                .build());
        RequestChannel channel = new RequestChannel(16);
        handlers = new RequestHandlerPool(CONTROLLER, 2, channel, registry.get(), metrics);
        BrokerConfig config = new BrokerConfig(Map.of(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0"));
        ListenerChannels channels = new ListenerChannels(config, ListenerChannels.newCredentialCache(),
                v -> new ApiVersionsResponse(new ApiVersionsResponseData()), Time.SYSTEM);
        server = new SocketServer(CONTROLLER, config.listeners().get(0), 1, 1 << 20, 600_000,
                SocketServer.SocketBuffers.OS_DEFAULT, channel, Time.SYSTEM,
                registry.get()::isCustomApi, channels, metrics, new RequestMetrics(metrics), ResponseThrottling.NONE);
        server.bind();
        handlers.start();
        server.startProcessing();
        Node controller = new Node(CONTROLLER, "127.0.0.1", server.boundPort());
        forwarding = new ControllerChannel(ControllerChannel.FORWARDING, 0, () -> CONTROLLER,
                id -> Optional.of(controller), 30_000, channels::interBroker, Time.SYSTEM);
        alterPartition = new ControllerChannel(ControllerChannel.ALTER_PARTITION, 0, () -> CONTROLLER,
                id -> Optional.of(controller), 30_000, channels::interBroker, Time.SYSTEM);
    }

    @AfterEach
    void stop() throws Exception {
        heldElections.forEach(ControllerChannelsTest::answer);
        adminThreads.shutdownNow();
        forwarding.close();
        alterPartition.close();
        server.close();
        handlers.close();
        metrics.close();
    }

    @Test
    void anIsrChangeGoesThroughWhileAForwardedElectionHoldsTheForwardingChannel() throws Exception {
        CompletableFuture<ElectLeadersResponse> election = forward(AdminDeadline.DEFAULT_TIMEOUT_MS);
        Request held = heldElections.poll(30, TimeUnit.SECONDS);
        assertNotNull(held, "the controller holds the forwarded election");

        long began = System.nanoTime();
        AlterPartitionResponse isrChange = alterPartition.send(new AlterPartitionRequest.Builder(
                new AlterPartitionRequestData().setBrokerId(0).setBrokerEpoch(1)));
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began);
        assertNotNull(isrChange);
        assertTrue(tookMs < 2_000, "the ISR change took " + tookMs + " ms beside a held election");
        assertFalse(election.isDone(), "the election is still held");

        answer(held);
        assertNotNull(election.get(30, TimeUnit.SECONDS));
    }

    @Test
    void aForwardedRequestCarriesItsClientsTimeLeftAndIsNotSentOnceItHasPassed() throws Exception {
        CompletableFuture<ElectLeadersResponse> first = forward(20_000);
        Request held = heldElections.poll(30, TimeUnit.SECONDS);
        assertNotNull(held);
        int carried = ((ElectLeadersRequest) held.body()).data().timeoutMs();
        assertTrue(carried > 15_000 && carried <= 20_000, "the time left, not the default: " + carried);

        // a second request whose client gives up after 1 s waits behind the first for the channel
        CompletableFuture<ElectLeadersResponse> late = forward(1_000);
        assertNull(heldElections.poll(1_500, TimeUnit.MILLISECONDS), "not sent while the channel is held");
        answer(held);
        assertNotNull(first.get(30, TimeUnit.SECONDS));
        ExecutionException expired = assertThrows(ExecutionException.class,
                () -> late.get(30, TimeUnit.SECONDS));
        assertInstanceOf(TimeoutException.class, expired.getCause(), "answered REQUEST_TIMED_OUT");
        assertNull(heldElections.poll(500, TimeUnit.MILLISECONDS), "and never sent to the controller");
    }

    /** Forwards an ElectLeaders whose client allows {@code timeoutMs}, from a thread of its own (it blocks). */
    private CompletableFuture<ElectLeadersResponse> forward(int timeoutMs) {
        AdminDeadline deadline = new AdminDeadline(System.nanoTime(), timeoutMs);
        return CompletableFuture.supplyAsync(() -> {
            try {
                return forwarding.send(deadline, left -> new ElectLeadersRequest.Builder(ElectionType.PREFERRED,
                        Set.of(TP), left));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }, adminThreads);
    }

    private static void answer(Request election) {
        election.respond(new ElectLeadersResponse(new ElectLeadersResponseData()));
    }
}
