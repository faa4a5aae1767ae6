package io.twinlog.server.handlers;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.replication.FetchParams;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.resource.Resource;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.FetchContext;
import org.apache.kafka.server.FetchManager;
import org.apache.kafka.server.FetchSession;
import org.apache.kafka.server.FetchSessionCacheShard;
import org.apache.kafka.server.storage.log.FetchIsolation;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Fetch for consumers and followers: long poll ({@code max.wait.ms}, {@code min.bytes}), request and partition byte
 * limits, read_uncommitted (up to the high watermark) and read_committed (up to the last stable offset, with the
 * aborted transactions of the range). Records go to the socket straight from the log segment files (zero-copy).
 *
 * <p>Fetch sessions (KIP-227) with Kafka's own {@link FetchManager} and session cache: a client that asks for a
 * session names, after its first full request, only the partitions whose fetch position changed, and the answer
 * carries only the partitions with something new (records, a moved high watermark or log start, an error), which on
 * a busy follower of many partitions is most of the work saved. {@code max.incremental.fetch.session.cache.slots}
 * bounds the sessions, split over 8 shards with Kafka's eviction rules (a follower's session is privileged).
 */
public final class FetchHandler implements RequestHandler {
    /** Kafka's {@code KafkaBroker}: the cache's shards, and how long a session is safe from eviction. */
    private static final int SESSION_CACHE_SHARDS = 8;
    private static final long MIN_SESSION_EVICTION_MS = 120_000;

    private final BrokerContext ctx;
    private final FetchManager sessions;

    public FetchHandler(BrokerContext ctx) {
        this.ctx = ctx;
        this.sessions = newFetchManager(ctx.config().maxIncrementalFetchSessionCacheSlots(), ctx.time());
    }

    static FetchManager newFetchManager(int maxSessions, Time time) {
        int sessionIdRange = Integer.MAX_VALUE / SESSION_CACHE_SHARDS;
        List<FetchSessionCacheShard> shards = new ArrayList<>();
        for (int shard = 0; shard < SESSION_CACHE_SHARDS; shard++) {
            shards.add(new FetchSessionCacheShard(maxSessions / SESSION_CACHE_SHARDS, MIN_SESSION_EVICTION_MS,
                    sessionIdRange, shard));
        }
        return new FetchManager(time, new FetchSession.FetchSessionCache(shards));
    }

    @Override
    public void handle(Request request) {
        FetchRequest body = request.body();
        byte isolationLevel = body.data().isolationLevel();
        if (isolationLevel != IsolationLevel.READ_UNCOMMITTED.id() && isolationLevel != IsolationLevel.READ_COMMITTED.id()) {
            // Bad client input, not a broker failure: IsolationLevel.forId would throw IllegalArgumentException and
            // reach the dispatcher as an unexpected error (Kafka answers UNKNOWN_SERVER_ERROR there).
            request.respond(request.errorResponse(new InvalidRequestException("Unknown isolation level "
                    + isolationLevel)));
            return;
        }
        MetadataImage image = ctx.image();
        Map<Uuid, String> topicNames = image.topicNames();
        boolean follower = body.replicaId() >= 0;
        // the session (or none) decides which partitions this request is about: an incremental request names only
        // those whose position changed, the session holds the rest
        FetchContext session = sessions.newContext(request.apiVersion(), body.metadata(), body.isFromFollower(),
                body.fetchData(topicNames), body.forgottenTopics(topicNames), topicNames);
        // the answer is keyed as the session knows each partition; the log is read by the topic's ID
        Map<TopicIdPartition, TopicIdPartition> asRequested = new HashMap<>();
        LinkedHashMap<TopicIdPartition, FetchRequest.PartitionData> valid = new LinkedHashMap<>();
        LinkedHashMap<TopicIdPartition, FetchResponseData.PartitionData> errors = new LinkedHashMap<>();
        boolean usesTopicIds = request.apiVersion() >= 13;
        // Kafka's rule: a follower needs CLUSTER_ACTION on the cluster, a consumer READ on each topic
        boolean followerAllowed = !follower || ctx.authorization().allowed(request.context(),
                AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, Resource.CLUSTER_NAME);
        Map<String, Boolean> readable = new HashMap<>(); // one check per topic, not per partition
        session.foreachPartition((tip, data) -> {
            if (!followerAllowed || !follower && tip.topic() != null && !readable.computeIfAbsent(tip.topic(),
                    topic -> ctx.authorization().allowed(request.context(), AclOperation.READ, ResourceType.TOPIC,
                            topic))) {
                errors.put(tip, errorData(tip.partition(), Errors.TOPIC_AUTHORIZATION_FAILED));
                return;
            }
            if (tip.topic() == null) {
                errors.put(tip, errorData(tip.partition(), Errors.UNKNOWN_TOPIC_ID));
                return;
            }
            TopicImage t = image.topic(tip.topic()).orElse(null);
            if (t == null || !t.partitions().containsKey(tip.partition())) {
                errors.put(tip, errorData(tip.partition(), usesTopicIds && t == null ? Errors.UNKNOWN_TOPIC_ID
                        : Errors.UNKNOWN_TOPIC_OR_PARTITION));
                return;
            }
            TopicIdPartition resolved = tip;
            if (!t.topicId().equals(tip.topicId())) {
                // a request before topic IDs: read by the ID, answer under the key the session holds
                resolved = new TopicIdPartition(t.topicId(), tip.topicPartition());
                asRequested.put(resolved, tip);
            }
            valid.put(resolved, data);
        });
        FetchIsolation isolation = FetchIsolation.of(body);
        // as Kafka: no answer over the broker's fetch.max.bytes, and a consumer never gets more in one answer than
        // its byte-rate quota allows over the quota window
        int requested = Math.min(body.maxBytes(), ctx.config().fetchMaxBytes());
        int maxBytes = follower ? requested : ctx.quotas().maxConsumerFetchBytes(request, requested);
        FetchParams params = new FetchParams(body.replicaId(), body.replicaEpoch(), body.maxWait(),
                Math.min(body.minBytes(), maxBytes), maxBytes, isolation);
        ctx.replicaManager().fetchMessages(params, valid, results -> {
            LinkedHashMap<TopicIdPartition, FetchResponseData.PartitionData> all = new LinkedHashMap<>();
            results.forEach((tip, data) -> all.put(asRequested.getOrDefault(tip, tip), data));
            all.putAll(errors);
            // Kafka's broker topic metrics count the partitions read from a log (topics that exist), not the
            // ones refused before it: a client's unknown topic must not create meters
            results.forEach((tip, data) -> ctx.topicMetrics().fetched(tip.topic(), follower,
                    Errors.forCode(data.errorCode()), data.records() == null ? 0 : data.records().sizeInBytes()));
            int throttleMs = follower ? 0 : ctx.quotas().onConsumerFetchReady(request,
                    session.getResponseSize(all, request.apiVersion()));
            if (throttleMs > 0) {
                // over its quota: an empty answer carrying the throttle, the session left where it was (Kafka's way)
                request.respond(session.getThrottledResponse(throttleMs, List.of()));
                return;
            }
            request.respond(session.updateAndGenerateResponseData(all, List.of()));
        });
    }

    private static FetchResponseData.PartitionData errorData(int partition, Errors error) {
        return new FetchResponseData.PartitionData().setPartitionIndex(partition).setErrorCode(error.code())
                .setHighWatermark(-1).setLastStableOffset(-1).setLogStartOffset(-1).setRecords(MemoryRecords.EMPTY);
    }
}
