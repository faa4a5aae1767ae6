package io.twinlog.tests.kafka.protocol;

import org.apache.kafka.common.message.AddOffsetsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.DescribeTransactionsRequestData;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.ListTransactionsRequestData;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.FindCoordinatorRequest;

import java.util.List;
import java.util.Map;

import static io.twinlog.tests.kafka.protocol.SideBySideClusters.TOPIC;

/**
 * Representative requests of the transaction APIs, for a transactional id neither cluster knows (each API and version
 * its own): the coordinator's answers for an unknown id and producer (INVALID_PRODUCER_ID_MAPPING,
 * TRANSACTIONAL_ID_NOT_FOUND) are compared, not just the empty request's.
 */
final class TransactionRequests {
    private static final long UNKNOWN_PRODUCER = 4_242L;

    private TransactionRequests() {
    }

    static String transactionalId(ApiKeys api, short version) {
        return "matrix-" + api.name.toLowerCase() + "-v" + version;
    }

    /** A FindCoordinator for a transactional id: creates {@code __transaction_state} on either cluster. */
    static FindCoordinatorRequestData findTransactionCoordinator(String transactionalId) {
        return new FindCoordinatorRequestData().setKeyType(FindCoordinatorRequest.CoordinatorType.TRANSACTION.id())
                .setCoordinatorKeys(List.of(transactionalId));
    }

    static void register(Map<ApiKeys, RepresentativeRequest> requests) {
        requests.put(ApiKeys.ADD_PARTITIONS_TO_TXN, (target, version, connection) -> {
            AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection topics =
                    new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection();
            topics.add(new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic().setName(TOPIC)
                    .setPartitions(List.of(0)));
            if (version >= 4) {
                // the broker form (KIP-890): a partition leader verifying an unknown producer's write
                AddPartitionsToTxnRequestData.AddPartitionsToTxnTransactionCollection transactions =
                        new AddPartitionsToTxnRequestData.AddPartitionsToTxnTransactionCollection();
                transactions.add(new AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction()
                        .setTransactionalId(transactionalId(ApiKeys.ADD_PARTITIONS_TO_TXN, version))
                        .setProducerId(UNKNOWN_PRODUCER).setProducerEpoch((short) 0).setVerifyOnly(true)
                        .setTopics(topics));
                return new AddPartitionsToTxnRequestData().setTransactions(transactions);
            }
            return new AddPartitionsToTxnRequestData()
                    .setV3AndBelowTransactionalId(transactionalId(ApiKeys.ADD_PARTITIONS_TO_TXN, version))
                    .setV3AndBelowProducerId(UNKNOWN_PRODUCER).setV3AndBelowProducerEpoch((short) 0)
                    .setV3AndBelowTopics(topics);
        });
        requests.put(ApiKeys.ADD_OFFSETS_TO_TXN, (target, version, connection) -> new AddOffsetsToTxnRequestData()
                .setTransactionalId(transactionalId(ApiKeys.ADD_OFFSETS_TO_TXN, version))
                .setProducerId(UNKNOWN_PRODUCER).setProducerEpoch((short) 0).setGroupId("matrix-txn-group"));
        requests.put(ApiKeys.END_TXN, (target, version, connection) -> new EndTxnRequestData()
                .setTransactionalId(transactionalId(ApiKeys.END_TXN, version)).setProducerId(UNKNOWN_PRODUCER)
                .setProducerEpoch((short) 0).setCommitted(true));
        requests.put(ApiKeys.DESCRIBE_TRANSACTIONS, (target, version, connection) ->
                new DescribeTransactionsRequestData().setTransactionalIds(List.of(
                        transactionalId(ApiKeys.DESCRIBE_TRANSACTIONS, version))));
        requests.put(ApiKeys.TXN_OFFSET_COMMIT, (target, version, connection) -> new TxnOffsetCommitRequestData()
                .setTransactionalId(transactionalId(ApiKeys.TXN_OFFSET_COMMIT, version))
                .setGroupId(transactionalId(ApiKeys.TXN_OFFSET_COMMIT, version)).setProducerId(UNKNOWN_PRODUCER)
                .setProducerEpoch((short) 0).setTopics(List.of(new TxnOffsetCommitRequestData
                        .TxnOffsetCommitRequestTopic().setName(TOPIC).setPartitions(List.of(new
                                TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition().setPartitionIndex(0)
                                .setCommittedOffset(0))))));
        requests.put(ApiKeys.LIST_TRANSACTIONS, (target, version, connection) -> new ListTransactionsRequestData()
                .setStateFilters(List.of("Ongoing", "NoSuchState")));
    }
}
