package io.twinlog.controller.metadata;

import org.apache.kafka.server.common.ShareVersion;
import org.apache.kafka.server.common.TransactionVersion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.TreeMap;

/**
 * The cluster's finalized feature levels as every broker advertises them in ApiVersions (v3+) and applies them: the
 * levels written in ZooKeeper's {@code /feature} node (Kafka's ZooKeeper-mode path and format,
 * {@code {"version":1,"features":{"transaction.version":1}}}), each bounded by what this build supports, and the
 * build's default for a feature the node does not name.
 *
 * <p>{@code epoch} is what clients compare to keep the newest answer (kafka-clients' {@code ApiVersions} takes
 * finalized features only from a higher epoch): the node's ZooKeeper version plus one, so that creating the node
 * (version 0) is already newer than the defaults advertised without it (epoch 0).
 */
public record FeatureLevels(Map<String, Short> finalized, long epoch) {
    private static final Logger log = LoggerFactory.getLogger(FeatureLevels.class);

    /**
     * Features this build serves, with the lowest and highest level it can run at. share.version stops at 1 (share
     * groups, KIP-932): level 2 is Kafka 4.4's dead-letter queue (KIP-1191), which Twinlog does not have.
     */
    public static final Map<String, Range> SUPPORTED = Map.of(
            TransactionVersion.FEATURE_NAME, new Range((short) 0, TransactionVersion.TV_2.featureLevel()),
            ShareVersion.FEATURE_NAME, new Range((short) 0, ShareVersion.SV_1.featureLevel()));

    /**
     * Levels when the node does not name a feature: transaction.version 2, what a new Kafka 4.4 cluster finalizes, so
     * 4.4 clients use KIP-890's protocol (the epoch bumped by every transaction's end, partitions added by their
     * leaders). An operator pins 1 in the node to keep the older protocol. share.version 1: share groups on, as a
     * new Kafka 4.4 cluster has them (Kafka finalizes 2, whose dead-letter queue Twinlog does not have); an operator
     * writes 0 in the node to switch them off (decision 106).
     */
    public static final Map<String, Short> DEFAULTS = Map.of(
            TransactionVersion.FEATURE_NAME, TransactionVersion.TV_2.featureLevel(),
            ShareVersion.FEATURE_NAME, ShareVersion.SV_1.featureLevel());

    /** The levels advertised while no {@code /feature} node exists. */
    public static final FeatureLevels DEFAULT = new FeatureLevels(DEFAULTS, 0);

    public record Range(short min, short max) {
    }

    public FeatureLevels {
        finalized = Map.copyOf(finalized);
    }

    /**
     * The levels to apply for a {@code /feature} node with these levels at this ZooKeeper version: features this
     * build does not know are left out, a level outside {@link #SUPPORTED} is bounded to it (logged, so an operator
     * who wrote it sees why it is not in effect).
     */
    public static FeatureLevels fromNode(Map<String, Short> written, int zkVersion, String path) {
        Map<String, Short> levels = new TreeMap<>(DEFAULTS);
        written.forEach((name, level) -> {
            Range range = SUPPORTED.get(name);
            if (range == null) {
                log.warn("{} finalizes feature {} at level {}, which this broker does not know; ignored", path, name,
                        level);
            } else if (level < range.min() || level > range.max()) {
                short bounded = (short) Math.max(range.min(), Math.min(range.max(), level));
                log.warn("{} finalizes {} at level {}, outside what this broker supports ({}-{}); applying {}", path,
                        name, level, range.min(), range.max(), bounded);
                levels.put(name, bounded);
            } else {
                levels.put(name, level);
            }
        });
        return new FeatureLevels(levels, zkVersion + 1L);
    }

    /** The finalized level of {@code name}, or 0 if this build does not know it. */
    public short level(String name) {
        return finalized.getOrDefault(name, (short) 0);
    }

    /** The finalized share.version, as the enum Kafka's share code takes. */
    public ShareVersion shareVersion() {
        return ShareVersion.fromFeatureLevel(level(ShareVersion.FEATURE_NAME));
    }

    /** Whether share groups (KIP-932) are on: share.version 1 or more, Kafka 4.4's only switch for them. */
    public boolean shareGroupsEnabled() {
        return shareVersion().supportsShareGroups();
    }

    /** The finalized transaction.version, as the enum Kafka's transaction code takes. */
    public TransactionVersion transactionVersion() {
        return TransactionVersion.fromFeatureLevel(level(TransactionVersion.FEATURE_NAME));
    }
}
