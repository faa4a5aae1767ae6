package io.twinlog.mirror.runtime;

import io.twinlog.mirror.runtime.MirrorCalls.Outcome;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * What one led mirror partition has asked of its mirror's thread ({@link MirrorCalls}) and what came back: per
 * {@link Key}, a call pending or its outcome, each on the {@link Basis} it was asked on (the leader epoch and the
 * version of the state record). An outcome on another basis is stale — the leadership changed or a new record was
 * written — and is never given to the state machine: its call is made again.
 *
 * <p>So a pass never waits: the first pass that needs a call starts it and stops ("waiting for the peer"); passes
 * meanwhile find it pending; its outcome comes back as an event that gives the partition a pass, in which the
 * machine decides again and now finds the answer. Manager thread only.
 */
final class PartitionCalls {
    /** What an outcome holds for: the leadership and the state record it was asked under. */
    record Basis(int leaderEpoch, int recordVersion) {
    }

    /** The calls a partition makes off the manager thread. */
    sealed interface Key {
        /** The peer's last mirrored epoch and offset (LastMirroredEpochs, one call per topic). */
        record AskPeer() implements Key {
        }

        /** Where this log and the peer's first differ below {@code upTo}. */
        record ComparePeer(long upTo) implements Key {
        }

        /** The quarantine copy of offsets {@code from} to {@code logEndOffset} (the log end it was made of). */
        record CopyToQuarantine(long from, long logEndOffset) implements Key {
        }
    }

    /** What {@link #find} knows of a call on a basis. */
    sealed interface Found {
        /** Never asked on this basis (or its call was lost with its mirror's thread): start it. */
        record NotStarted() implements Found {
        }

        record Pending() implements Found {
        }

        record Finished(Outcome<?> outcome) implements Found {
        }
    }

    private static final Found NOT_STARTED = new Found.NotStarted();
    private static final Found PENDING = new Found.Pending();

    private record Entry(Basis basis, long token, MirrorCalls owner, Outcome<?> outcome) {
    }

    private final Map<Key, Entry> entries = new HashMap<>();
    private long nextToken;

    Found find(Key key, Basis basis) {
        Entry e = entries.get(key);
        if (e == null || !e.basis().equals(basis)) {
            return NOT_STARTED;
        }
        if (e.outcome() != null) {
            return new Found.Finished(e.outcome());
        }
        return e.owner().isClosed() ? NOT_STARTED : PENDING;
    }

    /**
     * A call of {@code key} on {@code basis} started on {@code owner}; returns its token for {@link #complete}.
     * Whatever was kept on another basis goes.
     */
    long started(Key key, Basis basis, MirrorCalls owner) {
        long token = ++nextToken;
        entries.values().removeIf(e -> !e.basis().equals(basis)); // stale: never used again
        entries.put(key, new Entry(basis, token, owner, null));
        return token;
    }

    /**
     * The outcome of the call {@code token}; false (and dropped) if that call is no longer the one this partition
     * waits on: asked again since, on another basis.
     */
    boolean complete(Key key, long token, Outcome<?> outcome) {
        Entry e = entries.get(key);
        if (e == null || e.token() != token || e.outcome() != null) {
            return false;
        }
        entries.put(key, new Entry(e.basis(), token, e.owner(), outcome));
        return true;
    }

    /** Forgets the call of {@code key}: its next need starts it again (after a failure, or a call not started). */
    void discard(Key key) {
        entries.remove(key);
    }

    /** The outcome of {@code key} if finished on {@code basis} (for tests and logs). */
    Optional<Outcome<?>> finished(Key key, Basis basis) {
        return find(key, basis) instanceof Found.Finished f ? Optional.of(f.outcome()) : Optional.empty();
    }
}
