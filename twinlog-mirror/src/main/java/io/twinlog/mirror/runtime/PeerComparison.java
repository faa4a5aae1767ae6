package io.twinlog.mirror.runtime;

import io.twinlog.common.mirror.BatchIdentity;
import io.twinlog.mirror.partition.PeerLookup.Failure;
import io.twinlog.mirror.runtime.PeerFailures.PeerDoubtException;
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
 * kept between comparisons while the mirror's client configs stay the same; dropped when a comparison fails so the
 * next one reconnects.
 *
 * <p>Only an answer one can trust is a difference: the peer must be the mirror's recorded source cluster, and a
 * batch the peer lacks inside the offsets it said it holds means its log changed under the comparison. Either is a
 * {@link PeerDoubtException}, never a difference, so a failback's reconciliation cuts nothing on a doubt (issue 25,
 * point 2).
 */
final class PeerComparison implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PeerComparison.class);

    /** One mirror's reader, and the client configs it was made with. */
    private record Peer(Map<String, String> configs, ClusterBatches batches) {
    }

    private final Map<String, Peer> peers = new HashMap<>();

    /** The first offset below {@code upTo} where the two logs differ; empty when they agree as far as both go. */
    OptionalLong firstDifference(MirrorDefinition def, TopicPartition tp, MirrorLocalPartition local, long upTo)
            throws IOException {
        ClusterBatches peer = reader(def);
        try {
            String clusterId = peer.clusterId();
            if (def.sourceClusterId().isPresent() && !def.sourceClusterId().get().equals(clusterId)) {
                throw new PeerDoubtException(Failure.WRONG_CLUSTER, def.sourceBootstrap() + " answers for cluster "
                        + clusterId + ", not for this mirror's source cluster " + def.sourceClusterId().get());
            }
            ClusterBatches.Range range = peer.range(tp);
            long lo = Math.max(local.logStartOffset(), range.start());
            long hi = Math.min(Math.min(upTo, local.logEndOffset()), range.end());
            OptionalLong first = BatchIdentity.firstDifference(lo, hi, offset -> {
                try {
                    Optional<BatchIdentity> theirs = peer.batchAt(tp, offset);
                    if (theirs.isEmpty()) { // every offset probed is inside [range.start, range.end)
                        throw new PeerDoubtException(Failure.ERROR, "the source holds no batch at offset " + offset
                                + " of " + tp + ", inside the offsets " + range.start() + "-" + (range.end() - 1)
                                + " it reported: its log changed during the comparison");
                    }
                    Optional<BatchIdentity> here = localBatch(local, offset);
                    return here.isPresent() && here.equals(theirs);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            log.info("[Mirror {} {}] compared with the source below offset {}: {}", def.name(), tp, upTo,
                    first.isPresent() ? "they differ from offset " + first.getAsLong()
                            : "identical over offsets " + lo + "-" + (hi - 1));
            return first;
        } catch (IOException | RuntimeException e) {
            // broad: any failure of the comparison closes the peer and reaches the caller as an IOException
            peers.remove(def.name());
            peer.close();
            throw e instanceof UncheckedIOException u ? u.getCause()
                    : e instanceof IOException io ? io : new IOException(e.toString(), e);
        }
    }

    private ClusterBatches reader(MirrorDefinition def) {
        Map<String, String> clientConfigs = def.sourceClientConfigs();
        Peer peer = peers.get(def.name());
        if (peer != null && !peer.configs().equals(clientConfigs)) {
            peer.batches().close(); // the mirror now points elsewhere or connects differently
            peer = null;
        }
        if (peer == null) {
            Map<String, Object> configs = new HashMap<>(clientConfigs);
            configs.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
            configs.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5_000);
            peer = new Peer(clientConfigs, new ClusterBatches("the source of mirror " + def.name(), configs));
            peers.put(def.name(), peer);
        }
        return peer.batches();
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
        peers.values().forEach(p -> p.batches().close());
        peers.clear();
    }
}
