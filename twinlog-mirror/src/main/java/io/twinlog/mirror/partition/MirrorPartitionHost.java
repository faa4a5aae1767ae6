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

    /** Runs one action; returns the peer's answer as known afterwards (changed only by {@code AskPeer}). */
    PeerLookup execute(MirrorAction action, PeerLookup peer) throws Exception;

    /**
     * Writes the decision's record if the durable record is still {@code current} (same version), and reports it;
     * returns the new version, or -1 if the record changed concurrently.
     */
    int write(VersionedRecord current, MirrorDecision decision) throws Exception;
}
