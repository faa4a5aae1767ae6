package io.twinlog.mirror.partition;

import java.util.Optional;

/**
 * What the {@link MirrorPartitionDriver} needs around one mirror partition: the broker's partition, fetcher, peer
 * and ZooKeeper in a broker ({@code MirrorManager}), simulated ones in the simulation.
 */
public interface MirrorPartitionHost {
    /** The durable record as last read (e.g. from the metadata image), if there is one. */
    Optional<VersionedRecord> stored();

    /** The local partition now. */
    PartitionView view() throws Exception;

    /**
     * Where a failover to the point in time {@code atMs} cuts the local log now ({@link TimeCut}'s rule over the
     * leader's batches). A host without logs to read (the simulation) holds nothing after any time.
     */
    default TimeCut timeCut(long atMs) throws Exception {
        long end = view().logEndOffset();
        return new TimeCut(atMs, end, -1L, end);
    }

    /** Runs one action; returns the peer's answer as known afterwards (changed only by {@code AskPeer}). */
    PeerLookup execute(MirrorAction action, PeerLookup peer) throws Exception;

    /**
     * Writes the decision's record if the durable record is still {@code current} (same version), and reports it;
     * returns the new version, or -1 if the record changed concurrently.
     */
    int write(VersionedRecord current, MirrorDecision decision) throws Exception;
}
