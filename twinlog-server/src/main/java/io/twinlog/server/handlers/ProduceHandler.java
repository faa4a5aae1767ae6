package io.twinlog.server.handlers;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.replication.AppendResult;
import io.twinlog.transaction.verification.TransactionVerification;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.RequestUtils;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.storage.internals.log.VerificationGuard;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Produce (acks 0, 1 and all): resolves topics by name or, from v13, by topic ID; appends through the replica
 * manager; answers per partition with base offset, log start offset and Kafka's error codes. With acks=0 nothing is
 * answered, except that an error closes the connection so the producer notices, as Kafka does.
 */
public final class ProduceHandler implements RequestHandler {
    private static final Logger log = LoggerFactory.getLogger(ProduceHandler.class);
    private final BrokerContext ctx;

    public ProduceHandler(BrokerContext ctx) {
        this.ctx = ctx;
    }

    /**
     * Whether any batch is transactional. Records too broken to tell are not: the partition's own validation below
     * answers them CORRUPT_MESSAGE (or the error that fits), so the client hears of it either way.
     */
    private static boolean hasTransactionalRecords(ProduceRequest body) {
        try {
            return RequestUtils.hasTransactionalRecords(body);
        } catch (RuntimeException unreadable) {
            // broad: records unreadable in any way are answered by each partition's validation
            log.debug("Produce records unreadable while looking for transactional batches; each partition's "
                    + "validation answers them", unreadable);
            return false;
        }
    }

    @Override
    public void handle(Request request) {
        ProduceRequest body = request.body();
        ProduceRequestData data = body.data();
        short acks = data.acks();
        MetadataImage image = ctx.image();
        LinkedHashMap<TopicIdPartition, MemoryRecords> toAppend = new LinkedHashMap<>();
        LinkedHashMap<TopicIdPartition, AppendResult> early = new LinkedHashMap<>();
        // resolved partition -> the partition as the client named it (by name before v13, by topic ID after)
        Map<TopicIdPartition, TopicIdPartition> idOrName = new HashMap<>();
        if (hasTransactionalRecords(body) && (data.transactionalId() == null || !ctx.authorization().allowed(
                request.context(), AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, data.transactionalId()))) {
            // Kafka's rule: transactional batches need a transactional id the principal may write with; without
            // one, a transactional batch would open a transaction no coordinator knows to end, holding the
            // partition's last stable offset, and every read_committed consumer, where it is for good
            for (ProduceRequestData.TopicProduceData t : data.topicData()) {
                for (ProduceRequestData.PartitionProduceData p : t.partitionData()) {
                    early.put(new TopicIdPartition(t.topicId(), p.index(), t.name()),
                            AppendResult.error(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, data.transactionalId()
                                    == null ? "Transactional records need a transactional id"
                                    : "Not authorized to write with transactional id " + data.transactionalId()));
                }
            }
        } else {
            for (ProduceRequestData.TopicProduceData t : data.topicData()) {
                Optional<TopicImage> topic = t.name() != null && !t.name().isEmpty()
                        ? image.topic(t.name()) : image.topic(t.topicId());
                String name = topic.map(TopicImage::name).orElse(t.name());
                // Kafka's rule: WRITE on the topic, checked before whether it exists
                boolean allowed = name == null || name.isEmpty() || ctx.authorization().allowed(request.context(),
                        AclOperation.WRITE, ResourceType.TOPIC, name);
                for (ProduceRequestData.PartitionProduceData p : t.partitionData()) {
                    TopicIdPartition tip = new TopicIdPartition(t.topicId(), p.index(), t.name());
                    if (!allowed) {
                        early.put(tip, AppendResult.error(Errors.TOPIC_AUTHORIZATION_FAILED, null));
                        continue;
                    }
                    if (topic.isEmpty() || !topic.get().partitions().containsKey(p.index())) {
                        boolean byId = t.name() == null || t.name().isEmpty();
                        early.put(tip, AppendResult.error(byId && topic.isEmpty() ? Errors.UNKNOWN_TOPIC_ID
                                : Errors.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition."));
                        continue;
                    }
                    TopicIdPartition resolved = new TopicIdPartition(topic.get().topicId(), p.index(), topic.get().name());
                    if (Topic.isInternal(resolved.topic())) {
                        // only the hosted coordinator writes __consumer_offsets: a client record would corrupt the
                        // coordinator's view of its log
                        early.put(tip, AppendResult.error(Errors.INVALID_TOPIC_EXCEPTION,
                                "Cannot append to internal topic " + resolved.topic()));
                        idOrName.put(resolved, tip);
                        continue;
                    }
                    Optional<String> readOnly = MirrorReadOnly.reason(image, resolved.topicPartition());
                    if (readOnly.isPresent()) {
                        // POLICY_VIOLATION: not retriable, and the producer shows the broker's message
                        early.put(tip, AppendResult.error(Errors.POLICY_VIOLATION, readOnly.get()));
                        idOrName.put(resolved, tip);
                        continue;
                    }
                    try {
                        MemoryRecords records = (MemoryRecords) p.records();
                        if (records == null) {
                            // the field is nullable on the wire; validateRecords lets null through to the log
                            throw new InvalidRecordException("Produce requests must carry one record batch per "
                                    + "partition; partition " + p.index() + " has none");
                        }
                        ProduceRequest.validateRecords(request.apiVersion(), records);
                        // validateRecords reads the codec only for versions before 7; an unknown codec id would
                        // otherwise first fail inside UnifiedLog, as an unexpected error of the broker
                        records.batches().forEach(batch -> batch.compressionType());
                        toAppend.put(resolved, records);
                    } catch (ApiException e) {
                        early.put(tip, AppendResult.error(Errors.forException(e), e.getMessage()));
                    } catch (ClassCastException e) {
                        early.put(tip, AppendResult.error(Errors.CORRUPT_MESSAGE, "Records could not be read"));
                    } catch (IllegalArgumentException e) {
                        // A batch header kafka-clients cannot decode (an unknown compression codec id): the
                        // client's corrupt input, not a broker failure (Kafka 4.4 answers UNKNOWN_SERVER_ERROR).
                        early.put(tip, AppendResult.error(Errors.CORRUPT_MESSAGE, "Records could not be read: "
                                + e.getMessage()));
                    }
                    // keep the caller's identity (name or id) for the response
                    idOrName.put(resolved, tip);
                }
            }
        }
        // Kafka's broker topic metrics: partitions of topics that exist, counted when their local append is done
        // (before acks=all waits), and those refused before the log (read-only mirror topic, bad records)
        idOrName.forEach((resolved, tip) -> {
            AppendResult refused = early.get(tip);
            if (refused != null) {
                ctx.topicMetrics().produced(resolved.topic(), refused.error(), null);
            }
        });
        // without a transactional id no transactional batch got this far (refused above): nothing to verify
        Map<TopicPartition, TransactionVerification.FirstBatch> transactional = data.transactionalId() == null
                ? Map.of() : transactionalBatches(toAppend);
        if (transactional.isEmpty()) {
            append(request, toAppend, Map.of(), early, idOrName);
            return;
        }
        // KIP-890: a producer's first write to a partition in a transaction is verified with its coordinator
        // first; answered on the verifier's thread, which then appends (local disk only)
        ctx.transactionVerification().verifyProduce(data.transactionalId(), transactional, request.apiVersion())
                .whenComplete((outcome, failure) -> {
                    Map<TopicPartition, ApiException> refused = new HashMap<>();
                    if (failure != null) {
                        log.error("Verifying the transactional produce of {} failed", data.transactionalId(),
                                failure);
                        transactional.keySet().forEach(tp -> refused.put(tp, Errors.UNKNOWN_SERVER_ERROR
                                .exception()));
                    } else {
                        refused.putAll(outcome.errors());
                    }
                    LinkedHashMap<TopicIdPartition, MemoryRecords> verified = new LinkedHashMap<>();
                    toAppend.forEach((tip, records) -> {
                        ApiException e = refused.get(tip.topicPartition());
                        if (e == null) {
                            verified.put(tip, records);
                        } else {
                            early.put(idOrName.getOrDefault(tip, tip), AppendResult.error(Errors.forException(e),
                                    e.getMessage()));
                            ctx.topicMetrics().produced(tip.topic(), Errors.forException(e), null);
                        }
                    });
                    append(request, verified, failure != null ? Map.of() : outcome.guards(), early, idOrName);
                });
    }

    /** Each partition whose records start with a transactional batch: what its verification needs. */
    private static Map<TopicPartition, TransactionVerification.FirstBatch> transactionalBatches(
            Map<TopicIdPartition, MemoryRecords> toAppend) {
        Map<TopicPartition, TransactionVerification.FirstBatch> transactional = new LinkedHashMap<>();
        toAppend.forEach((tip, records) -> {
            Iterator<MutableRecordBatch> batches = records.batches().iterator();
            if (batches.hasNext()) {
                MutableRecordBatch first = batches.next();
                if (first.hasProducerId() && first.isTransactional()) {
                    transactional.put(tip.topicPartition(), TransactionVerification.FirstBatch.of(first));
                }
            }
        });
        return transactional;
    }

    private void append(Request request, LinkedHashMap<TopicIdPartition, MemoryRecords> toAppend,
                        Map<TopicPartition, VerificationGuard> guards,
                        LinkedHashMap<TopicIdPartition, AppendResult> early,
                        Map<TopicIdPartition, TopicIdPartition> idOrName) {
        ProduceRequestData data = request.<ProduceRequest>body().data();
        short acks = data.acks();
        ctx.replicaManager().appendRecords(data.timeoutMs(), acks, toAppend, guards,
                (tip, local) -> ctx.topicMetrics().produced(tip.topic(), local.error(), toAppend.get(tip)), results -> {
            Map<TopicIdPartition, AppendResult> all = new LinkedHashMap<>(early);
            results.forEach((tip, r) -> all.put(idOrName.getOrDefault(tip, tip), r));
            // Kafka's order: the client's quotas are charged once the append is done, and the response (if any)
            // carries the throttle; acks=0 pays for its bytes, not for handler time
            ctx.quotas().onProduceAppended(request, acks == 0);
            if (acks == 0) {
                boolean anyError = all.values().stream().anyMatch(r -> r.error() != Errors.NONE);
                if (anyError) {
                    request.closeConnection();
                } else {
                    request.noResponse();
                }
                return;
            }
            request.respond(new ProduceResponse(response(all)));
        });
    }

    private static ProduceResponseData response(Map<TopicIdPartition, AppendResult> results) {
        ProduceResponseData data = new ProduceResponseData();
        Map<String, ProduceResponseData.TopicProduceResponse> byTopic = new LinkedHashMap<>();
        for (Map.Entry<TopicIdPartition, AppendResult> e : results.entrySet()) {
            TopicIdPartition tip = e.getKey();
            String key = tip.topic() + "/" + tip.topicId();
            ProduceResponseData.TopicProduceResponse t = byTopic.computeIfAbsent(key, k -> {
                ProduceResponseData.TopicProduceResponse r = new ProduceResponseData.TopicProduceResponse()
                        .setName(tip.topic() == null ? "" : tip.topic())
                        .setTopicId(tip.topicId() == null ? Uuid.ZERO_UUID : tip.topicId());
                data.responses().add(r);
                return r;
            });
            AppendResult r = e.getValue();
            List<ProduceResponseData.BatchIndexAndErrorMessage> recordErrors = new ArrayList<>();
            r.recordErrors().forEach(re -> recordErrors.add(new ProduceResponseData.BatchIndexAndErrorMessage()
                    .setBatchIndex(re.batchIndex).setBatchIndexErrorMessage(re.message)));
            t.partitionResponses().add(new ProduceResponseData.PartitionProduceResponse()
                    .setIndex(tip.partition())
                    .setErrorCode(r.error().code())
                    .setErrorMessage(r.error() == Errors.NONE ? null : r.errorMessage())
                    .setBaseOffset(r.baseOffset())
                    .setLogAppendTimeMs(r.logAppendTimeMs())
                    .setLogStartOffset(r.logStartOffset())
                    .setRecordErrors(recordErrors));
        }
        return data;
    }
}
