package io.twinlog.mirror.runtime;

import io.twinlog.common.mirror.BatchIdentity;
import io.twinlog.mirror.store.MirrorDefinition;
import io.twinlog.protocol.client.ClusterBatches;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Where a local mirror partition's log and the same partition on the mirror's source (the peer) first differ below
 * an offset, by binary search over batch identities (issue 12, point 4): this log read locally, the peer's with
 * ordinary single-batch Fetches ({@link ClusterBatches}, the mirror's own client configs). One reader per mirror,
 * kept between comparisons; dropped when a comparison fails so the next one reconnects.
 */
final class PeerComparison implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PeerComparison.class);

    private final Map<String, ClusterBatches> peers = new HashMap<>();

    /** The first offset below {@code upTo} where the two logs differ; empty when they agree as far as both go. */
    OptionalLong firstDifference(MirrorDefinition def, TopicPartition tp, MirrorLocalPartition local, long upTo)
            throws IOException {
        ClusterBatches peer = peers.computeIfAbsent(def.name(), n -> {
            Map<String, Object> configs = new HashMap<>(def.sourceClientConfigs());
            configs.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
            configs.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5_000);
            return new ClusterBatches("the source of mirror " + n, configs);
        });
        try {
            ClusterBatches.Range range = peer.range(tp);
            long lo = Math.max(local.logStartOffset(), range.start());
            long hi = Math.min(Math.min(upTo, local.logEndOffset()), range.end());
            OptionalLong first = BatchIdentity.firstDifference(lo, hi, offset -> {
                try {
                    Optional<BatchIdentity> here = localBatch(local, offset);
                    return here.isPresent() && here.equals(peer.batchAt(tp, offset));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            log.info("[Mirror {} {}] compared with the source below offset {}: {}", def.name(), tp, upTo,
                    first.isPresent() ? "they differ from offset " + first.getAsLong()
                            : "identical over offsets " + lo + "-" + (hi - 1));
            return first;
        } catch (IOException | RuntimeException e) {
            peers.remove(def.name());
            peer.close();
            throw e instanceof UncheckedIOException u ? u.getCause()
                    : e instanceof IOException io ? io : new IOException(e.toString(), e);
        }
    }

    private static Optional<BatchIdentity> localBatch(MirrorLocalPartition local, long offset) throws IOException {
        for (RecordBatch batch : local.read(offset, 1).batches()) {
            if (batch.lastOffset() >= offset) {
                return Optional.of(new BatchIdentity(batch.baseOffset(), batch.lastOffset(),
                        batch.partitionLeaderEpoch(), batch.checksum()));
            }
        }
        return Optional.empty();
    }

    @Override
    public void close() {
        peers.values().forEach(ClusterBatches::close);
        peers.clear();
    }
}
