package io.twinlog.replication;

import io.twinlog.common.BrokerConfig;
import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.protocol.ApiRegistry;
import io.twinlog.protocol.ListenerChannels;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestChannel;
import io.twinlog.protocol.RequestHandlerPool;
import io.twinlog.protocol.RequestMetrics;
import io.twinlog.protocol.ResponseThrottling;
import io.twinlog.protocol.SocketServer;
import io.twinlog.storage.LogStore;
import io.twinlog.storage.LogStoreConfig;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.network.PlaintextChannelBuilder;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.FetchMetadata;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code num.replica.fetchers} changed while a follower copies a leader: two real brokers' logs and replica
 * managers, the leader serving Fetch over the network, the follower's fetchers moving partitions from one to two
 * threads and back while acks=all produces run (each waits for the follower to have the records).
 */
@Timeout(120)
class ReplicaFetcherResizeTest {
    private static final int FOLLOWER = 1;
    private static final int LEADER = 2;
    private static final int OTHER_LEADER = 3;
    private static final String TOPIC = "orders";
    private static final Uuid TOPIC_ID = Uuid.randomUuid();
    private static final int PARTITIONS = 8;
    private static final String FETCHER_THREAD_PREFIX = "twinlog-replica-fetcher-" + FOLLOWER + "-from-";

    @TempDir
    File dir;
    private final BrokerMetrics metrics = BrokerMetrics.unreported(LEADER, Time.SYSTEM);
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private ReplicaManager leader;
    private ReplicaManager follower;
    private ReplicaFetcherManager fetchers;
    private SocketServer server;

    @BeforeEach
    void start() throws Exception {
        leader = replicaManager(LEADER, noFetchers(LEADER));
        RequestChannel channel = new RequestChannel(64);
        ApiRegistry registry = ApiRegistry.builder()
                .add(ApiKeys.API_VERSIONS, request -> request.respond(new ApiVersionsResponse(
                        new ApiVersionsResponseData().setApiKeys(ApiVersionsResponse.collectApis(
                                ApiMessageType.ListenerType.BROKER, Set.of(ApiKeys.API_VERSIONS, ApiKeys.FETCH),
                                false)))))
                .add(ApiKeys.FETCH, this::serveFetch)
                .build();
        RequestHandlerPool handlers = new RequestHandlerPool(LEADER, 2, channel, registry, metrics);
        BrokerConfig config = new BrokerConfig(Map.of(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0"));
        server = new SocketServer(LEADER, config.listeners().get(0), 1, 16 << 20, 600_000,
                SocketServer.SocketBuffers.OS_DEFAULT, channel, Time.SYSTEM, registry::isCustomApi,
                new ListenerChannels(config, ListenerChannels.newCredentialCache(),
                        v -> new ApiVersionsResponse(new ApiVersionsResponseData()), Time.SYSTEM),
                metrics, new RequestMetrics(metrics), ResponseThrottling.NONE);
        server.bind();
        handlers.start();
        server.startProcessing();
        closeables.add(handlers);
        closeables.add(server);
        Node leaderNode = new Node(LEADER, "127.0.0.1", server.boundPort());
        fetchers = new ReplicaFetcherManager(FOLLOWER, id -> id == LEADER ? Optional.of(leaderNode) : Optional.empty(),
                () -> 1L, 1, 100, 1, 1 << 20, 64 << 10, 10_000, clientId -> plaintext(), Time.SYSTEM);
        follower = replicaManager(FOLLOWER, fetchers);
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        metrics.close();
    }

    private ReplicaManager replicaManager(int brokerId, ReplicaFetcherManager fetcherManager) throws Exception {
        LogStore store = new LogStore(new LogStoreConfig(brokerId, List.of(new File(dir, "broker-" + brokerId)),
                Map.of(), 300_000L, 60_000L, 5_000L, false, new LogStoreConfig.CleanerSettings(1, 16L << 20, 0.9,
                512 * 1024, Double.MAX_VALUE, 15_000L, 1_048_588), 86_400_000, 600_000, 900_000, false, 1, 10_000L),
                (ConfigResource resource) -> new Properties(), Time.SYSTEM);
        store.startup();
        closeables.add(store);
        // no ISR change is proposed: the follower starts in the ISR and stays (the lag limit is never reached)
        ReplicaManager manager = new ReplicaManager(brokerId, store, fetcherManager,
                (partition, leaderEpoch, partitionEpoch, newIsr) -> { }, 600_000L, Time.SYSTEM);
        closeables.add(manager);
        return manager;
    }

    private static ReplicaFetcherManager noFetchers(int brokerId) {
        return new ReplicaFetcherManager(brokerId, id -> Optional.empty(), () -> 1L, 1, 100, 1, 1 << 20, 1 << 20,
                10_000, clientId -> plaintext(), Time.SYSTEM);
    }

    private static ChannelBuilder plaintext() {
        ChannelBuilder builder = new PlaintextChannelBuilder(ListenerName.normalised("PLAINTEXT"));
        builder.configure(Map.of());
        return builder;
    }

    /** The leader's Fetch, without a fetch session: the follower sends every partition each time. */
    private void serveFetch(Request request) {
        FetchRequest body = request.body();
        LinkedHashMap<TopicIdPartition, FetchRequest.PartitionData> wanted =
                new LinkedHashMap<>(body.fetchData(Map.of(TOPIC_ID, TOPIC)));
        FetchParams params = new FetchParams(body.replicaId(), body.replicaEpoch(), body.maxWait(), body.minBytes(),
                body.maxBytes(), FetchIsolation.LOG_END);
        leader.fetchMessages(params, wanted, results -> request.respond(FetchResponse.of(Errors.NONE, 0,
                FetchMetadata.INVALID_SESSION_ID, results, List.of())));
    }

    private static TopicPartition tp(int partition) {
        return new TopicPartition(TOPIC, partition);
    }

    private void followAll() throws IOException {
        List<Integer> replicas = List.of(LEADER, FOLLOWER);
        for (int p = 0; p < PARTITIONS; p++) {
            leader.applyPartition(tp(p), TOPIC_ID, LEADER, 1, 1, replicas, replicas);
            follower.applyPartition(tp(p), TOPIC_ID, LEADER, 1, 1, replicas, replicas);
        }
    }

    /** One batch to every partition with acks=all: done once the follower has them all. */
    private void produceRound(int round) throws Exception {
        Map<TopicIdPartition, MemoryRecords> batches = new LinkedHashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            batches.put(new TopicIdPartition(TOPIC_ID, tp(p)), MemoryRecords.withRecords(Compression.NONE,
                    new SimpleRecord(("p" + p + "-r" + round + "-a").getBytes(StandardCharsets.UTF_8)),
                    new SimpleRecord(("p" + p + "-r" + round + "-b").getBytes(StandardCharsets.UTF_8))));
        }
        CompletableFuture<Map<TopicIdPartition, AppendResult>> done = new CompletableFuture<>();
        leader.appendRecords(20_000L, (short) -1, batches, done::complete);
        Map<TopicIdPartition, AppendResult> results = done.get(30, TimeUnit.SECONDS);
        results.forEach((tip, r) -> assertEquals(Errors.NONE, r.error(), "round " + round + " to " + tip + ": "
                + r.errorMessage()));
    }

    /** Every batch of a log: offsets, leader epoch, CRC and values. */
    private static List<String> batches(UnifiedLog log) throws IOException {
        List<String> out = new ArrayList<>();
        for (RecordBatch b : log.read(0, Integer.MAX_VALUE, FetchIsolation.LOG_END, true).records.batches()) {
            StringBuilder s = new StringBuilder(b.baseOffset() + ".." + b.lastOffset() + " epoch "
                    + b.partitionLeaderEpoch() + " crc " + b.checksum());
            for (Record r : b) {
                s.append(' ').append(Utils.utf8(r.value()));
            }
            out.add(s.toString());
        }
        return out;
    }

    /** The follower's running fetcher threads, by name. */
    private static Set<String> fetcherThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(n -> n.startsWith(FETCHER_THREAD_PREFIX)).collect(Collectors.toSet());
    }

    private static Set<String> threadsFromLeader(int leaderId, int count) {
        return IntStream.range(0, count).mapToObj(i -> FETCHER_THREAD_PREFIX + leaderId + "-" + i)
                .collect(Collectors.toSet());
    }

    @Test
    void resizingWhileFollowingLosesAndDuplicatesNothing() throws Exception {
        followAll();
        assertEquals(threadsFromLeader(LEADER, 1), fetcherThreads());
        Semaphore rounds = new Semaphore(0);
        AtomicBoolean producing = new AtomicBoolean(true);
        ExecutorService producer = Executors.newSingleThreadExecutor();
        try {
            Future<Integer> produced = producer.submit(() -> {
                int round = 0;
                while (producing.get()) {
                    produceRound(round++);
                    rounds.release();
                }
                return round;
            });
            assertTrue(rounds.tryAcquire(10, 60, TimeUnit.SECONDS), "10 rounds replicated by one fetcher");

            fetchers.resize(2);
            assertEquals(2, fetchers.fetchersPerLeader());
            assertEquals(2, fetchers.fetcherCount());
            assertEquals(threadsFromLeader(LEADER, 2), fetcherThreads());
            assertTrue(rounds.tryAcquire(10, 60, TimeUnit.SECONDS), "10 rounds replicated by two fetchers");

            fetchers.resize(1);
            assertEquals(1, fetchers.fetchersPerLeader());
            assertEquals(1, fetchers.fetcherCount());
            assertEquals(threadsFromLeader(LEADER, 1), fetcherThreads(), "the emptied fetcher stopped");
            assertTrue(rounds.tryAcquire(10, 60, TimeUnit.SECONDS), "10 rounds replicated by one fetcher again");

            producing.set(false);
            int total = produced.get(60, TimeUnit.SECONDS);
            assertTrue(total >= 30, "rounds: " + total);
            for (int p = 0; p < PARTITIONS; p++) {
                UnifiedLog leaderLog = leader.partitionOrThrow(tp(p)).log();
                UnifiedLog followerLog = follower.partitionOrThrow(tp(p)).log();
                assertEquals(2L * total, leaderLog.logEndOffset(), tp(p).toString());
                assertEquals(batches(leaderLog), batches(followerLog), tp(p).toString());
                assertEquals(new ReplicaFetcherManager.Assignment(LEADER, fetchers.fetcherId(tp(p)), 1),
                        fetchers.assignment(tp(p)).orElseThrow());
            }
        } finally {
            producing.set(false);
            producer.shutdownNow();
        }
    }

    /**
     * The metadata thread moves every partition to a new leader in a new epoch while the reconfigure thread resizes:
     * each partition ends on the new leader's fetcher that the final count picks, in the new epoch, and no fetcher
     * of the old leader is left.
     */
    @Test
    void aLeaderChangeDuringResizesEndsOnTheNewLeadersFetcher() throws Exception {
        int partitions = 32;
        for (int p = 0; p < partitions; p++) {
            fetchers.addPartition(tp(p), TOPIC_ID, LEADER, 1);
        }
        CyclicBarrier start = new CyclicBarrier(2);
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            Future<?> reconfigure = threads.submit(() -> {
                start.await();
                for (int n : List.of(2, 4, 3, 1, 2, 3)) {
                    fetchers.resize(n);
                }
                return null;
            });
            Future<?> metadata = threads.submit(() -> {
                start.await();
                for (int p = 0; p < partitions; p++) {
                    fetchers.addPartition(tp(p), TOPIC_ID, OTHER_LEADER, 2);
                }
                return null;
            });
            reconfigure.get(60, TimeUnit.SECONDS);
            metadata.get(60, TimeUnit.SECONDS);
        } finally {
            threads.shutdownNow();
        }
        assertEquals(3, fetchers.fetchersPerLeader());
        Set<Integer> used = IntStream.range(0, partitions).map(p -> fetchers.fetcherId(tp(p))).boxed()
                .collect(Collectors.toSet());
        for (int p = 0; p < partitions; p++) {
            assertEquals(new ReplicaFetcherManager.Assignment(OTHER_LEADER, fetchers.fetcherId(tp(p)), 2),
                    fetchers.assignment(tp(p)).orElseThrow(), tp(p).toString());
        }
        assertEquals(used.size(), fetchers.fetcherCount());
        assertEquals(used.stream().map(i -> FETCHER_THREAD_PREFIX + OTHER_LEADER + "-" + i).collect(Collectors.toSet()),
                fetcherThreads(), "no fetcher of the old leader, and none idle");
    }
}
