package io.twinlog.group;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.storage.internals.log.VerificationGuard;

import java.util.concurrent.CompletableFuture;

/**
 * How the group coordinator has a transactional offset commit verified with the producer's transaction coordinator
 * before writing it (KIP-890; TxnOffsetCommit v5 and later also adds the offsets partition to the transaction): the
 * guard to append with, or the coordinator's refusal as the future's exception.
 */
@FunctionalInterface
public interface TransactionalOffsetVerification {
    CompletableFuture<VerificationGuard> start(TopicPartition offsetsPartition, String transactionalId,
                                               long producerId, short producerEpoch, int txnOffsetCommitVersion);
}
