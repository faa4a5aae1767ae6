package io.twinlog.server.handlers.txn;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.protocol.ApiRegistry;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.server.handlers.CoordinatorFinder;
import io.twinlog.server.handlers.CoordinatorLocation;
import io.twinlog.server.handlers.FutureResponses;
import io.twinlog.server.handlers.InternalTopicCreator;
import io.twinlog.server.metadata.TopicAdmin;
import io.twinlog.server.security.BrokerAuthorization;
import io.twinlog.transaction.TransactionCoordinatorHost;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.transaction.TransactionLogConfig;

import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;

/**
 * The transaction APIs, served by this broker's {@link TransactionCoordinatorHost}: finding a transactional id's
 * coordinator (FindCoordinator's TRANSACTION key type, creating {@code __transaction_state} on first use),
 * InitProducerId with a transactional id, DescribeTransactions and ListTransactions. Answers come from the
 * coordinator's futures; no request thread waits.
 */
public final class TransactionApis implements AutoCloseable {
    private final TransactionCoordinatorHost host;
    private final BrokerAuthorization authorization;
    private final Supplier<MetadataImage> image;
    private final InternalTopicCreator stateTopic;

    public TransactionApis(TransactionCoordinatorHost host, TopicAdmin topicAdmin, Supplier<MetadataImage> image,
                           BrokerAuthorization authorization, Time time) {
        this.host = host;
        this.authorization = authorization;
        this.image = image;
        this.stateTopic = new InternalTopicCreator(TransactionCoordinatorHost.TRANSACTION_STATE_TOPIC,
                TransactionLogConfig.TRANSACTIONS_TOPIC_REPLICATION_FACTOR_CONFIG,
                () -> new InternalTopicCreator.Spec(host.config().transactionLogNumPartitions(),
                        host.config().transactionLogReplicationFactor(), host.topicConfigs()),
                topicAdmin, image, time);
    }

    /**
     * Registers the transaction APIs, with Kafka 4.4's versions: AddPartitionsToTxn v4-5 are partition leaders
     * verifying or adding (KIP-890), EndTxn v5 is transaction version 2.
     *
     * @param offsetsPartition the {@code __consumer_offsets} partition of a group (AddOffsetsToTxn)
     */
    public void register(ApiRegistry.Builder registry, ToIntFunction<String> offsetsPartition) {
        registry.add(ApiKeys.DESCRIBE_TRANSACTIONS, new DescribeTransactionsHandler(this))
                .add(ApiKeys.LIST_TRANSACTIONS, new ListTransactionsHandler(this))
                .add(ApiKeys.ADD_PARTITIONS_TO_TXN, new AddPartitionsToTxnHandler(this, image))
                .add(ApiKeys.ADD_OFFSETS_TO_TXN, new AddOffsetsToTxnHandler(this, offsetsPartition))
                .add(ApiKeys.END_TXN, new EndTxnHandler(this));
    }

    /** InitProducerId with a transactional id; the broker's InitProducerId handler passes those here. */
    public RequestHandler initProducerId() {
        return new TransactionalInitProducerIdHandler(this);
    }

    /**
     * FindCoordinator for transactional ids: DESCRIBE on the id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED, as
     * Kafka), then the leader of its {@code __transaction_state} partition; COORDINATOR_NOT_AVAILABLE while the
     * topic is created or the partition has no leader (clients retry).
     */
    public CoordinatorFinder finder() {
        return this::find;
    }

    private CoordinatorLocation find(Request request, String key, String listener) {
        if (key == null || key.isEmpty()) {
            return CoordinatorLocation.error(Errors.INVALID_REQUEST, "The transactional id is empty");
        }
        if (!authorization.allowed(request.context(), AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, key)) {
            return CoordinatorLocation.error(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, null);
        }
        if (!host.isStarted()) {
            return CoordinatorLocation.error(Errors.COORDINATOR_NOT_AVAILABLE,
                    "The transaction coordinator is starting");
        }
        MetadataImage current = image.get();
        if (current.topic(TransactionCoordinatorHost.TRANSACTION_STATE_TOPIC).isEmpty()) {
            stateTopic.ensureCreated();
            return CoordinatorLocation.error(Errors.COORDINATOR_NOT_AVAILABLE,
                    TransactionCoordinatorHost.TRANSACTION_STATE_TOPIC + " is being created");
        }
        return CoordinatorLocation.leaderOf(current, TransactionCoordinatorHost.TRANSACTION_STATE_TOPIC,
                host.partitionFor(key), listener);
    }

    TransactionCoordinatorHost host() {
        return host;
    }

    BrokerAuthorization authorization() {
        return authorization;
    }

    /**
     * Kafka's rule for clients older than PRODUCER_FENCED (InitProducerId before v4; EndTxn, AddPartitionsToTxn and
     * AddOffsetsToTxn before v2): they are told INVALID_PRODUCER_EPOCH, which they handle the same way.
     */
    static Errors forVersion(Errors error, short version, short firstVersionWithProducerFenced) {
        return error == Errors.PRODUCER_FENCED && version < firstVersionWithProducerFenced
                ? Errors.INVALID_PRODUCER_EPOCH : error;
    }

    static <T> void answer(Request request, CompletableFuture<T> future, Function<T, AbstractResponse> toResponse) {
        FutureResponses.answer(request, future, toResponse, "the transaction coordinator");
    }

    @Override
    public void close() {
        stateTopic.close();
    }
}
