package io.twinlog.mirror.runtime;

import io.twinlog.mirror.partition.MirrorPartitionMachine;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;

import java.util.Set;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * What the manager gives each of its {@link MirrorWorker}s: the broker's seams (records, metadata, partitions,
 * sources, peer), what the workers share (the pure state machine, the metrics, the failover steps' threads, the
 * thread that ends stopped fetchers) and the way back onto the manager's thread.
 *
 * @param managerThread runs a task on the manager's thread (drops it once the manager is closed)
 * @param queuePasses   gives partitions a pass on the manager's thread, coalesced with others queued
 * @param fetcherCloser waits for a stopped fetcher's threads, off the manager's thread
 * @param closed        whether the manager is closing (an interrupted read is then expected, not reported)
 */
record MirrorWorkerServices(int brokerId, MirrorRecords records, MirrorMetadata metadata, LocalPartitions partitions,
                            MirrorSource.Factory sources, MirrorPeer peer, MirrorPartitionMachine machine,
                            MirrorMetrics metrics, FailoverBarriers barriers, Executor fetcherCloser, Time time,
                            Executor managerThread, Consumer<Set<TopicPartition>> queuePasses,
                            BooleanSupplier closed) {

    /** The failover steps (aborts, barriers) queued in the pass just ended, run side by side; see FailoverBarriers. */
    void runFailoverSteps() {
        try {
            barriers.runQueued();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // closing
        }
    }
}
