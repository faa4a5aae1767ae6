package io.twinlog.server.handlers;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.group.GroupCoordinatorHost;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.replication.AppendResult;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.WriteTxnMarkersRequestData;
import org.apache.kafka.common.message.WriteTxnMarkersResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.requests.TransactionResult;
import org.apache.kafka.common.requests.WriteTxnMarkersRequest;
import org.apache.kafka.common.requests.WriteTxnMarkersResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * WriteTxnMarkers (inter-broker, from a transaction coordinator; also {@code kafka-transactions.sh abort}): writes
 * each marker's COMMIT or ABORT control batch into every partition it names that this broker leads, as Kafka does
 * (a partition this broker has no online replica of is UNKNOWN_TOPIC_OR_PARTITION, one it follows
 * NOT_LEADER_OR_FOLLOWER; one result per producer id):
 * with acks=all, origin COORDINATOR and the marker's transaction version, so the log refuses a stale coordinator
 * epoch (TRANSACTION_COORDINATOR_FENCED) or producer epoch (INVALID_PRODUCER_EPOCH); a {@code __consumer_offsets}
 * partition completes the transaction's offsets in the group coordinator instead. ALTER or CLUSTER_ACTION on the
 * cluster is checked by the registration ({@link ClusterAuthorized#requireAlterOrClusterAction}). Beyond Kafka: a partition of a mirror topic that has not failed over is read-only to markers too
 * (POLICY_VIOLATION), since its transactions are its source's and arrive with its batches. Answered from callbacks:
 * no request thread waits for the ISR or the coordinator.
 */
public final class WriteTxnMarkersHandler implements RequestHandler {
    private static final Logger log = LoggerFactory.getLogger(WriteTxnMarkersHandler.class);
    /** How long a marker's append waits for the ISR: Kafka's broker waits its {@code request.timeout.ms}, 30 s. */
    private static final long APPEND_TIMEOUT_MS = 30_000;
    private final BrokerContext ctx;
    private final GroupCoordinatorHost groups;

    public WriteTxnMarkersHandler(BrokerContext ctx, GroupCoordinatorHost groups) {
        this.ctx = ctx;
        this.groups = groups;
    }

    @Override
    public void handle(Request request) {
        WriteTxnMarkersRequest body = request.body();
        MetadataImage image = ctx.image();
        // one result per producer id, as Kafka answers: two markers of one producer merge
        Map<Long, Map<TopicPartition, CompletableFuture<Errors>>> byProducer = new LinkedHashMap<>();
        for (WriteTxnMarkersRequestData.WritableTxnMarker marker : body.data().markers()) {
            write(marker, image, byProducer.computeIfAbsent(marker.producerId(), id -> new LinkedHashMap<>()));
        }
        CompletableFuture.allOf(byProducer.values().stream().flatMap(m -> m.values().stream())
                .toArray(CompletableFuture[]::new)).whenComplete((ignored, error) -> {
                    WriteTxnMarkersResponseData data = new WriteTxnMarkersResponseData();
                    byProducer.forEach((producerId, outcomes) -> data.markers().add(markerResult(producerId,
                            outcomes)));
                    request.respond(new WriteTxnMarkersResponse(data));
                });
    }

    /** One marker: each partition it names gets its outcome in {@code outcomes}, now or once appended. */
    private void write(WriteTxnMarkersRequestData.WritableTxnMarker marker, MetadataImage image,
                       Map<TopicPartition, CompletableFuture<Errors>> outcomes) {
        Map<TopicIdPartition, MemoryRecords> appends = new LinkedHashMap<>();
        TransactionResult result = marker.transactionResult() ? TransactionResult.COMMIT : TransactionResult.ABORT;
        for (WriteTxnMarkersRequestData.WritableTxnMarkerTopic t : marker.topics()) {
            Optional<TopicImage> topic = image.topic(t.name());
            for (int p : t.partitionIndexes()) {
                TopicPartition tp = new TopicPartition(t.name(), p);
                // not hosted here, or offline in a failed log dir: Kafka's "no online partition" answer
                if (topic.isEmpty() || !topic.get().partitions().containsKey(p)
                        || ctx.replicaManager().partition(tp).isEmpty()) {
                    outcomes.put(tp, CompletableFuture.completedFuture(Errors.UNKNOWN_TOPIC_OR_PARTITION));
                } else if (MirrorReadOnly.reason(image, tp).isPresent()) {
                    outcomes.put(tp, CompletableFuture.completedFuture(Errors.POLICY_VIOLATION));
                } else if (tp.topic().equals(GroupCoordinatorHost.OFFSETS_TOPIC)) {
                    outcomes.put(tp, completeOffsets(tp, marker, result));
                } else {
                    outcomes.put(tp, new CompletableFuture<>());
                    appends.put(new TopicIdPartition(topic.get().topicId(), tp), MemoryRecords.withEndTransactionMarker(
                            ctx.time().milliseconds(), marker.producerId(), marker.producerEpoch(),
                            new EndTransactionMarker(result == TransactionResult.COMMIT ? ControlRecordType.COMMIT
                                    : ControlRecordType.ABORT, marker.coordinatorEpoch())));
                }
            }
        }
        if (!appends.isEmpty()) {
            ctx.replicaManager().appendTransactionMarkers(APPEND_TIMEOUT_MS, appends, marker.transactionVersion(),
                    appended -> appended.forEach((tip, r) -> outcomes.get(tip.topicPartition()).complete(outcome(
                            tip.topicPartition(), marker, r))));
        }
    }

    private static Errors outcome(TopicPartition tp, WriteTxnMarkersRequestData.WritableTxnMarker marker,
                                  AppendResult r) {
        if (r.error() != Errors.NONE) {
            log.debug("Marker of producer {} (epoch {}, coordinator epoch {}) not written to {}: {} {}",
                    marker.producerId(), marker.producerEpoch(), marker.coordinatorEpoch(), tp, r.error(),
                    r.errorMessage());
        }
        return r.error();
    }

    /** The group coordinator completes the transaction's offset commits; its "not here" errors as Kafka maps them. */
    private CompletableFuture<Errors> completeOffsets(TopicPartition tp,
                                                      WriteTxnMarkersRequestData.WritableTxnMarker marker,
                                                      TransactionResult result) {
        return groups.coordinator().completeTransaction(tp, marker.producerId(), marker.producerEpoch(),
                marker.coordinatorEpoch(), result, marker.transactionVersion()).handle((ignored, error) -> {
                    if (error == null) {
                        return Errors.NONE;
                    }
                    Errors e = Errors.forException(error instanceof CompletionException && error.getCause() != null
                            ? error.getCause() : error);
                    return switch (e) {
                        case COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR ->
                                Errors.NOT_LEADER_OR_FOLLOWER;
                        default -> e;
                    };
                });
    }

    private static WriteTxnMarkersResponseData.WritableTxnMarkerResult markerResult(
            long producerId, Map<TopicPartition, CompletableFuture<Errors>> outcomes) {
        Map<String, WriteTxnMarkersResponseData.WritableTxnMarkerTopicResult> topics = new LinkedHashMap<>();
        outcomes.forEach((tp, outcome) -> topics.computeIfAbsent(tp.topic(), name ->
                        new WriteTxnMarkersResponseData.WritableTxnMarkerTopicResult().setName(name))
                .partitions().add(new WriteTxnMarkersResponseData.WritableTxnMarkerPartitionResult()
                        .setPartitionIndex(tp.partition()).setErrorCode(outcome.join().code())));
        return new WriteTxnMarkersResponseData.WritableTxnMarkerResult().setProducerId(producerId)
                .setTopics(new ArrayList<>(topics.values()));
    }
}
