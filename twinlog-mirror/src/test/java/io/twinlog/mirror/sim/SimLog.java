package io.twinlog.mirror.sim;

import io.twinlog.mirror.partition.EpochHistory;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/** One replica's log in the simulation: one record per batch, each with the epoch it was written in. */
public final class SimLog {
    /**
     * A batch: its offset, leader epoch, identity (unique per record written anywhere, so two logs hold "the same
     * batch" only if one copied it from the other) and whether it is a producer-state barrier.
     */
    public record Batch(long offset, int epoch, long id, boolean barrier) {
    }

    private final List<Batch> batches = new ArrayList<>();

    public long logEnd() {
        return batches.size();
    }

    public List<Batch> batches() {
        return List.copyOf(batches);
    }

    public Batch at(long offset) {
        return batches.get((int) offset);
    }

    public int latestEpoch() {
        return batches.isEmpty() ? -1 : batches.get(batches.size() - 1).epoch();
    }

    public EpochHistory epochs() {
        EpochHistory h = EpochHistory.EMPTY;
        for (Batch b : batches) {
            h = h.appended(b.epoch(), b.offset());
        }
        return h;
    }

    public OptionalLong latestBarrier() {
        for (int i = batches.size() - 1; i >= 0; i--) {
            if (batches.get(i).barrier()) {
                return OptionalLong.of(i);
            }
        }
        return OptionalLong.empty();
    }

    public void append(Batch b) {
        if (b.offset() != logEnd()) {
            throw new IllegalStateException("append of offset " + b.offset() + " at log end " + logEnd());
        }
        if (b.epoch() < latestEpoch()) {
            throw new IllegalStateException("append of epoch " + b.epoch() + " after epoch " + latestEpoch());
        }
        batches.add(b);
    }

    public void truncateTo(long offset) {
        while (batches.size() > offset) {
            batches.remove(batches.size() - 1);
        }
    }

    /** Whether this log's first {@code length} batches are the same as {@code other}'s. */
    public boolean samePrefix(SimLog other, long length) {
        if (logEnd() < length || other.logEnd() < length) {
            return false;
        }
        for (int i = 0; i < length; i++) {
            if (!batches.get(i).equals(other.batches.get(i))) {
                return false;
            }
        }
        return true;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("[");
        for (Batch b : batches) {
            sb.append(b.offset()).append('@').append(b.epoch()).append(b.barrier() ? "B" : "#" + b.id()).append(' ');
        }
        return sb.append(']').toString();
    }
}
