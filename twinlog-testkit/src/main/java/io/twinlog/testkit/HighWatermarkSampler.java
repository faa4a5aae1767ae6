package io.twinlog.testkit;

import io.twinlog.replication.Partition;
import org.apache.kafka.common.TopicPartition;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Samples, while a scenario runs, that a partition's high watermark never counts a record some member of its ISR
 * does not hold: every few milliseconds it reads the leader's high watermark and ISR and checks that each ISR
 * member's log holds the leader's batches below the high watermark, byte for byte (same CRCs). Violations are kept
 * (at most {@value #MAX_VIOLATIONS}) and reported by {@link #assertNoViolation}.
 *
 * <p>The check reads the leader first and the followers after, so a record below the high watermark can only be
 * missed by a follower that really lacks it (logs below the high watermark are never rewritten in a correct run).
 */
public final class HighWatermarkSampler implements AutoCloseable {
    private static final int MAX_VIOLATIONS = 20;
    private static final long INTERVAL_MS = 20;

    private final TestCluster cluster;
    private final TopicPartition tp;
    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile int samples;
    private volatile Exception lastSkipped;

    private HighWatermarkSampler(TestCluster cluster, TopicPartition tp) {
        this.cluster = cluster;
        this.tp = tp;
        this.thread = new Thread(this::run, "high-watermark-sampler-" + tp);
        this.thread.setDaemon(true);
    }

    /** Starts sampling {@code tp} in {@code cluster}. */
    public static HighWatermarkSampler start(TestCluster cluster, TopicPartition tp) {
        HighWatermarkSampler sampler = new HighWatermarkSampler(cluster, tp);
        sampler.thread.start();
        return sampler;
    }

    private void run() {
        while (running) {
            try {
                sampleOnce();
                samples++;
            } catch (Exception e) {
                // a broker stopping or a log being replaced between two reads: not a sample, but kept for the report
                lastSkipped = e;
            }
            try {
                Thread.sleep(INTERVAL_MS); // sampling period, not a wait for state
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void sampleOnce() throws Exception {
        for (Integer id : cluster.runningBrokerIds()) {
            Optional<Partition> p = cluster.broker(id).replicaManager().partition(tp);
            if (p.isEmpty() || !p.get().isLeader()) {
                continue;
            }
            long highWatermark = p.get().log().highWatermark();
            long logStart = p.get().log().logStartOffset();
            List<Integer> isr = p.get().isr();
            List<ReplicaLogs.Batch> committed = below(ReplicaLogs.read(cluster.broker(id), tp), highWatermark);
            long covered = committed.isEmpty() ? logStart : committed.get(committed.size() - 1).lastOffset() + 1;
            if (p.get().log().highWatermark() != highWatermark || p.get().log().logStartOffset() != logStart
                    || p.get().log().logEndOffset() < highWatermark || covered < highWatermark) {
                // the leader's own log moved during the read (a mirror leader cutting it: Kafka's full truncation
                // removes the segments before it moves the offsets), so its read does not cover its high
                // watermark: not a sample
                continue;
            }
            long leaderEnd = p.get().log().logEndOffset();
            for (Integer member : isr) {
                if (member.equals(id) || !cluster.runningBrokerIds().contains(member)) {
                    continue;
                }
                long memberEnd = cluster.broker(member).logStore().log(tp).map(l -> l.logEndOffset()).orElse(-1L);
                List<ReplicaLogs.Batch> held = below(ReplicaLogs.read(cluster.broker(member), tp), highWatermark);
                boolean leaderUnchanged = p.get().log().highWatermark() == highWatermark
                        && p.get().log().logStartOffset() == logStart && p.get().isLeader();
                // a leader that cut its log and refilled it to the same offsets between the reads (a failback
                // truncation re-mirrored within one sample) shows the same numbers: compare its batches again
                boolean leaderBatchesUnchanged = leaderUnchanged && !held.equals(committed)
                        && below(ReplicaLogs.read(cluster.broker(id), tp), highWatermark).equals(committed);
                if (leaderBatchesUnchanged && violations.size() < MAX_VIOLATIONS) {
                    violations.add("at " + System.currentTimeMillis() + " leader " + id + " (end " + leaderEnd
                            + ") high watermark " + highWatermark + " ISR " + isr + ": broker " + member + " (end "
                            + memberEnd + ") holds " + summary(held) + " where the leader has " + summary(committed));
                }
            }
        }
    }

    private static List<ReplicaLogs.Batch> below(List<ReplicaLogs.Batch> log, long offset) {
        return log.stream().filter(b -> b.lastOffset() < offset).toList();
    }

    private static List<String> summary(List<ReplicaLogs.Batch> batches) {
        List<String> out = new ArrayList<>();
        for (ReplicaLogs.Batch b : batches) {
            out.add(b.baseOffset() + "-" + b.lastOffset() + "@" + b.partitionLeaderEpoch() + " crc " + b.crc());
        }
        return out;
    }

    /** Stops sampling and fails if any sample saw the high watermark above what an ISR member holds. */
    public void assertNoViolation() {
        close();
        if (samples == 0) {
            throw new AssertionError("The high watermark of " + tp + " was never sampled", lastSkipped);
        }
        if (!violations.isEmpty()) {
            throw new AssertionError("The high watermark of " + tp + " counted records an ISR member does not hold ("
                    + violations.size() + " of " + samples + " samples):\n  " + String.join("\n  ", violations));
        }
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
