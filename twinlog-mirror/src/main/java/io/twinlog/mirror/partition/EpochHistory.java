package io.twinlog.mirror.partition;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * A partition's leader-epoch history as its log holds it: each epoch with the offset of its first batch, ascending
 * (Kafka's leader-epoch checkpoint). Immutable. The lookups follow Kafka's {@code LeaderEpochFileCache}, so the
 * state machine decides on the same answers the broker's log gives.
 */
public record EpochHistory(List<Entry> entries) {
    public static final EpochHistory EMPTY = new EpochHistory(List.of());

    /** One epoch and the offset of its first batch. */
    public record Entry(int epoch, long startOffset) {
    }

    /** An epoch and the offset where it ends (the start of the next epoch, or the log end for the latest). */
    public record EpochEnd(int epoch, long endOffset) {
    }

    public EpochHistory {
        entries = List.copyOf(entries);
        for (int i = 1; i < entries.size(); i++) {
            if (entries.get(i).epoch() <= entries.get(i - 1).epoch()
                    || entries.get(i).startOffset() < entries.get(i - 1).startOffset()) {
                throw new IllegalArgumentException("Epochs must ascend with their start offsets: " + entries);
            }
        }
    }

    public OptionalInt latestEpoch() {
        return entries.isEmpty() ? OptionalInt.empty() : OptionalInt.of(entries.get(entries.size() - 1).epoch());
    }

    /**
     * Where {@code epoch} ends in this history, as Kafka's {@code endOffsetForEpoch}: the latest epoch ends at the
     * log end; an older one at the start of the next higher epoch, reported with the largest epoch at or below the
     * one asked (or the one asked, if it is below every epoch held); empty if it is above every epoch held.
     */
    public Optional<EpochEnd> endOffsetFor(int epoch, long logEndOffset) {
        if (epoch < 0 || entries.isEmpty()) {
            return Optional.empty();
        }
        if (latestEpoch().getAsInt() == epoch) {
            return Optional.of(new EpochEnd(epoch, logEndOffset));
        }
        Entry floor = null;
        for (Entry e : entries) {
            if (e.epoch() > epoch) {
                return Optional.of(new EpochEnd(floor == null ? epoch : floor.epoch(), e.startOffset()));
            }
            floor = e;
        }
        return Optional.empty();
    }

    /** The history after the log is cut to {@code offset}: epochs starting at or above it are gone. */
    public EpochHistory truncatedTo(long offset) {
        List<Entry> kept = new ArrayList<>();
        for (Entry e : entries) {
            if (e.startOffset() < offset) {
                kept.add(e);
            }
        }
        return new EpochHistory(kept);
    }

    /** The history after a batch of {@code epoch} is appended at {@code offset} (a new entry if the epoch is new). */
    public EpochHistory appended(int epoch, long offset) {
        OptionalInt latest = latestEpoch();
        if (latest.isPresent() && latest.getAsInt() >= epoch) {
            if (latest.getAsInt() == epoch) {
                return this;
            }
            throw new IllegalArgumentException("Epoch " + epoch + " appended after epoch " + latest.getAsInt());
        }
        List<Entry> next = new ArrayList<>(entries);
        next.add(new Entry(epoch, offset));
        return new EpochHistory(next);
    }
}
