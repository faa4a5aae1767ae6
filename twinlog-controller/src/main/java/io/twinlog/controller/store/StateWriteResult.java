package io.twinlog.controller.store;

import org.apache.kafka.common.TopicPartition;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * What a {@link ControllerStore#writeStates} call committed. A large write is split into several transactions
 * (ZooKeeper caps a request at 1 MiB), each all or nothing but independent of the others, so one call can commit
 * some partitions and not others: the caller learns per batch which, and why not, and must treat a committed batch
 * as done even when a later one failed.
 *
 * <pre>
 *   batch 1 (states 1-400)    COMMITTED
 *   batch 2 (states 401-800)  STALE         a state changed since it was read: decide again from fresh metadata
 *   batch 3 (states 801-900)  COMMITTED     independent of batch 2's failure
 * </pre>
 *
 * After a FENCED or FAILED batch the rest are NOT_ATTEMPTED: a deposed controller must stop writing, and a
 * ZooKeeper that does not answer will not answer the next batch either.
 */
public record StateWriteResult(List<Batch> batches) {

    /** How one transaction ended. */
    public enum Outcome {
        /** Written. */
        COMMITTED,
        /** Refused: a state's version (or its topic) changed since the controller read it. Nothing written. */
        STALE,
        /** Refused: another broker claimed a newer controller epoch. Nothing written. */
        FENCED,
        /** ZooKeeper did not answer or failed otherwise; whether it was written is unknown until read back. */
        FAILED,
        /** Not sent, because an earlier batch was FENCED or FAILED. */
        NOT_ATTEMPTED
    }

    /**
     * One transaction's writes and how it ended; {@code reason} says why it was not committed (empty if it was),
     * {@code cause} is the exception behind a FAILED one, for its stack trace.
     */
    public record Batch(List<StateWrite> writes, Outcome outcome, String reason, Optional<Throwable> cause) {
        public Batch {
            writes = List.copyOf(writes);
        }

        public Batch(List<StateWrite> writes, Outcome outcome, String reason) {
            this(writes, outcome, reason, Optional.empty());
        }

        public static Batch committed(List<StateWrite> writes) {
            return new Batch(writes, Outcome.COMMITTED, "");
        }

        public static Batch failed(List<StateWrite> writes, Throwable cause) {
            return new Batch(writes, Outcome.FAILED, cause.toString(), Optional.of(cause));
        }

        public boolean isCommitted() {
            return outcome == Outcome.COMMITTED;
        }
    }

    public StateWriteResult {
        batches = List.copyOf(batches);
    }

    /**
     * Writes {@code writes} in transactions of {@code perTransaction} with {@code transaction}, in order, and
     * gathers their outcomes; after a FENCED or FAILED one the rest are NOT_ATTEMPTED.
     */
    public static StateWriteResult inTransactions(List<StateWrite> writes, int perTransaction,
                                                  Function<List<StateWrite>, Batch> transaction) {
        List<Batch> batches = new ArrayList<>();
        Batch stoppedBy = null;
        for (int from = 0; from < writes.size(); from += perTransaction) {
            List<StateWrite> batch = writes.subList(from, Math.min(writes.size(), from + perTransaction));
            if (stoppedBy != null) {
                batches.add(new Batch(batch, Outcome.NOT_ATTEMPTED, "an earlier batch was " + stoppedBy.outcome()));
                continue;
            }
            Batch outcome = transaction.apply(batch);
            batches.add(outcome);
            if (outcome.outcome() == Outcome.FENCED || outcome.outcome() == Outcome.FAILED) {
                stoppedBy = outcome; // a deposed controller stops writing; a silent ZooKeeper stays silent
            }
        }
        return new StateWriteResult(batches);
    }

    /** Every write committed, as one batch (a store that writes everything in one transaction). */
    public static StateWriteResult allCommitted(List<StateWrite> writes) {
        return new StateWriteResult(List.of(Batch.committed(writes)));
    }

    /** Nothing committed, as one batch. */
    public static StateWriteResult noneCommitted(List<StateWrite> writes, Outcome outcome, String reason) {
        return new StateWriteResult(List.of(new Batch(writes, outcome, reason)));
    }

    public boolean isComplete() {
        return batches.stream().allMatch(Batch::isCommitted);
    }

    /** The writes of the committed batches, in the order given. */
    public List<StateWrite> committed() {
        List<StateWrite> out = new ArrayList<>();
        batches.stream().filter(Batch::isCommitted).forEach(b -> out.addAll(b.writes()));
        return out;
    }

    public boolean isCommitted(TopicPartition partition) {
        return batches.stream().filter(Batch::isCommitted)
                .anyMatch(b -> b.writes().stream().anyMatch(w -> w.partition().equals(partition)));
    }

    /**
     * The failure that decides what the caller does next, most serious first: FENCED (resign), FAILED (retry
     * later), STALE (decide again now); empty when everything committed.
     */
    public Optional<Batch> worstFailure() {
        for (Outcome o : List.of(Outcome.FENCED, Outcome.FAILED, Outcome.STALE)) {
            Optional<Batch> b = batches.stream().filter(x -> x.outcome() == o).findFirst();
            if (b.isPresent()) {
                return b;
            }
        }
        return Optional.empty();
    }

    /** One line for the log: "3 of 5 transactions committed (1,200 of 2,000 states); batch 4 STALE: ...". */
    public String summary() {
        long committedBatches = batches.stream().filter(Batch::isCommitted).count();
        StringBuilder s = new StringBuilder().append(committedBatches).append(" of ").append(batches.size())
                .append(" transactions committed (").append(committed().size()).append(" of ")
                .append(batches.stream().mapToInt(b -> b.writes().size()).sum()).append(" states)");
        for (int i = 0; i < batches.size(); i++) {
            Batch b = batches.get(i);
            if (!b.isCommitted() && b.outcome() != Outcome.NOT_ATTEMPTED) {
                s.append("; batch ").append(i + 1).append(' ').append(b.outcome()).append(": ").append(b.reason());
            }
        }
        return s.toString();
    }
}
