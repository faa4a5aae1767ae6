package io.twinlog.transaction.internals;

import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.coordinator.transaction.TransactionMetadata;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The transactional ids this broker coordinates: per {@code __transaction_state} partition it leads, the leader
 * epoch it was elected in (the coordinator epoch every marker carries), whether the partition's log has been
 * loaded, and the metadata of each id. Owned by the coordinator's event thread; not thread-safe.
 */
public final class TransactionStateCache {
    /** Whether a partition's transactional ids can be served yet. */
    public enum Status { LOADING, LOADED }

    /** One {@code __transaction_state} partition this broker coordinates. */
    public static final class Slot {
        private final int coordinatorEpoch;
        private Status status = Status.LOADING;
        private final Map<String, TransactionMetadata> transactions = new HashMap<>();

        Slot(int coordinatorEpoch) {
            this.coordinatorEpoch = coordinatorEpoch;
        }

        public int coordinatorEpoch() {
            return coordinatorEpoch;
        }

        public Status status() {
            return status;
        }

        public Optional<TransactionMetadata> get(String transactionalId) {
            return Optional.ofNullable(transactions.get(transactionalId));
        }

        /** The metadata already there for its id, else {@code created}, now cached. */
        public TransactionMetadata putIfAbsent(TransactionMetadata created) {
            TransactionMetadata existing = transactions.putIfAbsent(created.transactionalId(), created);
            return existing == null ? created : existing;
        }

        public void remove(String transactionalId) {
            transactions.remove(transactionalId);
        }

        public Collection<TransactionMetadata> transactions() {
            return transactions.values();
        }
    }

    private final Map<Integer, Slot> slots = new HashMap<>();

    /** This broker now leads {@code partition} in {@code coordinatorEpoch}: its ids are LOADING until loaded. */
    public Slot elect(int partition, int coordinatorEpoch) {
        Slot slot = new Slot(coordinatorEpoch);
        slots.put(partition, slot);
        return slot;
    }

    /**
     * The loader's result for {@code partition} as of {@code coordinatorEpoch}, ignored (false) if the partition
     * was resigned or elected again since.
     */
    public boolean loaded(int partition, int coordinatorEpoch, Map<String, TransactionMetadata> loaded) {
        Slot slot = slots.get(partition);
        if (slot == null || slot.coordinatorEpoch != coordinatorEpoch || slot.status != Status.LOADING) {
            return false;
        }
        slot.transactions.putAll(loaded);
        slot.status = Status.LOADED;
        return true;
    }

    /** Whether {@code partition} is led here in {@code coordinatorEpoch} and still loading. */
    public boolean isLoading(int partition, int coordinatorEpoch) {
        Slot slot = slots.get(partition);
        return slot != null && slot.coordinatorEpoch == coordinatorEpoch && slot.status == Status.LOADING;
    }

    public Optional<Slot> resign(int partition) {
        return Optional.ofNullable(slots.remove(partition));
    }

    /** The coordinator epoch this broker leads {@code partition} in, if it does. */
    public Optional<Integer> electedEpoch(int partition) {
        return Optional.ofNullable(slots.get(partition)).map(Slot::coordinatorEpoch);
    }

    public Set<Integer> partitions() {
        return Set.copyOf(slots.keySet());
    }

    /**
     * The loaded slot of {@code partition}, or why a request for an id there cannot be served: NOT_COORDINATOR if
     * this broker does not lead it, COORDINATOR_LOAD_IN_PROGRESS while its log is loading (both retriable: clients
     * look the coordinator up again or wait).
     */
    public Lookup lookup(int partition) {
        Slot slot = slots.get(partition);
        if (slot == null) {
            return new Lookup(Errors.NOT_COORDINATOR, null);
        }
        if (slot.status == Status.LOADING) {
            return new Lookup(Errors.COORDINATOR_LOAD_IN_PROGRESS, null);
        }
        return new Lookup(Errors.NONE, slot);
    }

    /**
     * The slot a transition was written for, if this broker still coordinates that partition in the same epoch
     * (else the write's outcome belongs to nobody: NOT_COORDINATOR).
     */
    public Optional<Slot> stillOwned(int partition, int coordinatorEpoch) {
        Slot slot = slots.get(partition);
        return slot != null && slot.coordinatorEpoch == coordinatorEpoch && slot.status == Status.LOADED
                ? Optional.of(slot) : Optional.empty();
    }

    /** The loaded slots, by partition. */
    public Map<Integer, Slot> loadedSlots() {
        Map<Integer, Slot> out = new HashMap<>();
        slots.forEach((p, slot) -> {
            if (slot.status == Status.LOADED) {
                out.put(p, slot);
            }
        });
        return out;
    }

    public boolean anyLoading() {
        return slots.values().stream().anyMatch(s -> s.status == Status.LOADING);
    }

    public Collection<Slot> slots() {
        return slots.values();
    }

    /** A lookup's outcome: {@code slot} is set exactly when {@code error} is NONE. */
    public record Lookup(Errors error, Slot slot) {
    }
}
