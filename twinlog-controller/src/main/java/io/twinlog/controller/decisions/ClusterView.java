package io.twinlog.controller.decisions;

import io.twinlog.controller.metadata.BrokerRegistration;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * The brokers as one controller decision sees them: registered (live), in controlled shutdown, and restarted since
 * the previous reconciliation (same id, new registration: a new broker epoch).
 *
 * <p>A restarted broker may have lost its log, so for the round that notices the restart it counts as failed
 * ({@link #available()} leaves it out): it leaves the ISRs and must catch up again before rejoining. The next
 * round, with {@link #brokerEpochs()} as the known epochs, counts it as live again.
 */
public record ClusterView(Set<Integer> live, Set<Integer> shuttingDown, Set<Integer> restarted,
                          Map<Integer, Long> brokerEpochs) {

    public ClusterView {
        live = Set.copyOf(live);
        shuttingDown = Set.copyOf(shuttingDown);
        restarted = Set.copyOf(restarted);
        brokerEpochs = Map.copyOf(brokerEpochs);
    }

    /**
     * @param knownBrokerEpochs the broker epochs of the previous reconciliation (empty for a new controller, which
     *                          therefore sees no restart)
     */
    public static ClusterView of(Map<Integer, BrokerRegistration> brokers, Map<Integer, Long> knownBrokerEpochs) {
        Set<Integer> live = new HashSet<>();
        Set<Integer> shuttingDown = new HashSet<>();
        Set<Integer> restarted = new HashSet<>();
        Map<Integer, Long> epochs = new HashMap<>();
        for (BrokerRegistration b : brokers.values()) {
            live.add(b.id());
            epochs.put(b.id(), b.brokerEpoch());
            if (b.shuttingDown()) {
                shuttingDown.add(b.id());
            }
            Long known = knownBrokerEpochs.get(b.id());
            if (known != null && known != b.brokerEpoch()) {
                restarted.add(b.id());
            }
        }
        return new ClusterView(live, shuttingDown, restarted, epochs);
    }

    /** The brokers as they are now, with no restart history (requests, not reconciliation). */
    public static ClusterView of(Map<Integer, BrokerRegistration> brokers) {
        return of(brokers, Map.of());
    }

    /** Live brokers that did not just restart: those that may stay in or lead from an ISR this round. */
    public Set<Integer> available() {
        Set<Integer> out = new HashSet<>(live);
        out.removeAll(restarted);
        return out;
    }

    /** Live brokers not in controlled shutdown: those a leader may add to its ISR. */
    public Set<Integer> eligibleForIsr() {
        Set<Integer> out = new HashSet<>(live);
        out.removeAll(shuttingDown);
        return out;
    }
}
