package io.twinlog.transaction.internals;

import io.twinlog.replication.Partition;
import io.twinlog.replication.ReplicaManager;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.requests.TransactionResult;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.common.runtime.CoordinatorLoaderImpl;
import org.apache.kafka.coordinator.common.runtime.CoordinatorPlayback;
import org.apache.kafka.coordinator.common.runtime.Deserializer;
import org.apache.kafka.coordinator.transaction.TransactionLog;
import org.apache.kafka.coordinator.transaction.TransactionMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Reads a {@code __transaction_state} partition's log into the latest metadata of each transactional id, with
 * Kafka's coordinator loader (the one the hosted group coordinator loads {@code __consumer_offsets} with) and
 * Kafka's record format: the last record of an id wins, a tombstone removes it. Loading runs on the loader's own
 * thread; the future completes with what was read.
 */
public final class TransactionLogLoader implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TransactionLogLoader.class);
    private final CoordinatorLoaderImpl<TransactionLog.ReadResult> loader;

    public TransactionLogLoader(ReplicaManager replicaManager, int loadBufferSize, Time time) {
        this.loader = new CoordinatorLoaderImpl<>(time,
                tp -> replicaManager.partition(tp).map(Partition::log),
                tp -> replicaManager.partition(tp).map(p -> p.log().logEndOffset()),
                TransactionLogLoader::read, loadBufferSize, CoordinatorLoaderImpl.DEFAULT_COMMIT_INTERVAL_OFFSETS);
    }

    /** The transactional ids {@code tp} holds, by id, as of its log end when the load started. */
    public CompletableFuture<Map<String, TransactionMetadata>> load(TopicPartition tp) {
        Playback playback = new Playback();
        return loader.load(tp, playback).thenApply(summary -> {
            log.info("Loaded {} transactional ids from {} ({} records, {} bytes) in {} ms", playback.loaded.size(),
                    tp, summary.numRecords(), summary.numBytes(), summary.endTimeMs() - summary.startTimeMs());
            return playback.loaded;
        });
    }

    /**
     * Kafka's record reader; a key version this build does not know is skipped by the loader (a newer Kafka's
     * record type), as the group coordinator's serde does.
     */
    private static TransactionLog.ReadResult read(ByteBuffer key, ByteBuffer value) {
        short keyVersion = key.getShort(key.position());
        if (keyVersion != 0) {
            throw new Deserializer.UnknownRecordTypeException(keyVersion);
        }
        return TransactionLog.read(key, value);
    }

    /** Collects the records on the loader's thread; handed over only when the load completes. */
    private static final class Playback implements CoordinatorPlayback<TransactionLog.ReadResult> {
        private final Map<String, TransactionMetadata> loaded = new HashMap<>();

        @Override
        public void replay(long offset, long producerId, short producerEpoch, TransactionLog.ReadResult record) {
            if (record instanceof TransactionLog.TxnRecord txn) {
                loaded.put(txn.transactionId(), txn.metadata());
            } else if (record instanceof TransactionLog.TxnTombstone tombstone) {
                loaded.remove(tombstone.transactionId());
            }
        }

        @Override
        public void replayEndTransactionMarker(long producerId, short producerEpoch, TransactionResult result) {
            // __transaction_state is never written transactionally
        }

        @Override
        public void updateLastWrittenOffset(long offset) {
        }

        @Override
        public void updateLastCommittedOffset(long offset) {
        }
    }

    @Override
    public void close() throws Exception {
        loader.close();
    }
}
