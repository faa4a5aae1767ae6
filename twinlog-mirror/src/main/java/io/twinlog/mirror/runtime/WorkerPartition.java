package io.twinlog.mirror.runtime;

import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.common.progress.ProgressReporter;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.mirror.partition.MirrorPartitionDriver;
import io.twinlog.mirror.partition.MirrorPartitionMachine;
import io.twinlog.mirror.store.MirrorPartitionRecord;

/**
 * A worker's memory of one mirror partition this broker leads: the driver of its state machine, its calls off the
 * manager's thread, its catch-up report, and the parsed record. Created when the broker leads the partition and
 * dropped when it stops, so a new leader starts from the durable record alone. Manager thread only.
 */
final class WorkerPartition {
    final MirrorPartitionDriver driver;
    /** Its calls off the manager's thread (peer, comparison, quarantine), pending or answered. */
    final PartitionCalls calls = new PartitionCalls();
    /** How far a backlog is copied, while one is (see {@code MirrorWorker#maybeReportCatchUp}). */
    ProgressReporter catchUp;
    /** Its state at the end of its last pass (null before the first): a return to MIRRORING reads the log's time. */
    MirrorPartitionState lastState;
    /** A deferred write of the current pass was refused. */
    boolean refused;
    /**
     * Failed over and meant to stay so (desired and recorded STOPPED): its mirror's fetcher is not kept for it,
     * and its pass is given no source problem (the machine ignores them once failing over).
     */
    boolean failedOver;
    /**
     * The image's record of the partition last read, and what it parsed to: a pass reads the stored record for
     * every decision, and parsing each partition's JSON on every tick was most of the manager thread's CPU at
     * 10,000 partitions. The image replaces a partition's record object whenever the record changes.
     */
    MirrorImage.MirrorPartition storedFrom;
    MirrorPartitionRecord stored;

    WorkerPartition(MirrorPartitionMachine machine) {
        this.driver = new MirrorPartitionDriver(machine);
    }
}
