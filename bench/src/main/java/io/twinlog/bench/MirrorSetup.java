package io.twinlog.bench;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

/**
 * What copies the data in the {@code mirror} phase, and between which clusters. The phase runs each selected setup
 * once per round, on fresh clusters; the order rotates by one every round, so with three setups and three rounds each
 * setup runs once first, once second and once last.
 */
enum MirrorSetup {
    /** Twinlog's own mirroring (MirrorAdmin) from a 1-broker Twinlog cluster into another one. */
    TWINLOG("twinlog", "Twinlog mirroring, Twinlog → Twinlog"),
    /** Apache Kafka MirrorMaker 2 (a separate process) from a 1-broker Twinlog cluster into another one. */
    MM2_TWINLOG("mm2-twinlog", "MM2, Twinlog → Twinlog"),
    /** Apache Kafka MirrorMaker 2 (a separate process) from a 1-node Kafka 4.4.0 cluster into another one. */
    MM2_KAFKA("mm2-kafka", "MM2, Kafka → Kafka");

    private final String label;
    private final String displayName;

    MirrorSetup(String label, String displayName) {
        this.label = label;
        this.displayName = displayName;
    }

    /** Command-line name, also the "system" of this setup's runs in {@link Results}. */
    String label() {
        return label;
    }

    String displayName() {
        return displayName;
    }

    static Optional<MirrorSetup> parse(String label) {
        String l = label.toLowerCase(Locale.ROOT);
        return Arrays.stream(values()).filter(s -> s.label.equals(l)).findFirst();
    }

    @Override
    public String toString() {
        return label;
    }
}
