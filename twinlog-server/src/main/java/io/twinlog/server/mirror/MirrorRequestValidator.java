package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.clients.mirror.message.AlterClusterMirrorRequestData.AlterableMirrorConfig;
import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.PointInTimeStop;
import io.twinlog.mirror.fetcher.SourceChannels;
import io.twinlog.mirror.runtime.MirrorTopicStarter.TopicResult;
import io.twinlog.mirror.store.MirrorDefinition;
import org.apache.kafka.common.protocol.Errors;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * What a mirror API request asks for, and whether it may be asked: pure functions of the request and what the
 * handler read, no I/O, so the rules are tested one by one. Each check answers with the error the client gets
 * (codes and messages are the wire's contract), or empty when the request passes it; the handler runs them in
 * its order, the first error wins.
 */
final class MirrorRequestValidator {
    private MirrorRequestValidator() {
    }

    /** A mirror's name: letters, digits, '.', '_' and '-', 1 to 249 of them (a topic name's rule). */
    static Optional<MirrorApiError> name(String name) {
        return MirrorDefinition.validateName(name)
                .map(why -> MirrorApiError.of(MirrorErrors.INVALID_CLUSTER_MIRROR_NAME, why));
    }

    /** A mirror's configs name the source: {@code bootstrap.servers}, not blank. */
    static Optional<MirrorApiError> sourceBootstrap(Map<String, String> configs) {
        String bootstrap = configs.get(MirrorDefinition.BOOTSTRAP_SERVERS);
        if (bootstrap != null && !bootstrap.isBlank()) {
            return Optional.empty();
        }
        return Optional.of(MirrorApiError.of(Errors.INVALID_CONFIG, "The mirror needs the source's bootstrap.servers"));
    }

    /**
     * A mirror as created or altered: its topic and group patterns compile, its {@code mirror.} settings have legal
     * values, and its source client configs build a channel (TLS files readable, SASL settings complete).
     */
    static Optional<MirrorApiError> definition(MirrorDefinition definition) {
        Optional<String> badRegex = MirrorDefinition.validatePatterns(definition.allPatterns());
        if (badRegex.isPresent()) {
            return Optional.of(MirrorApiError.of(Errors.INVALID_REGULAR_EXPRESSION, badRegex.get()));
        }
        return definition.validateSettings().or(() -> SourceChannels.validate(definition.sourceClientConfigs()))
                .map(why -> MirrorApiError.of(Errors.INVALID_CONFIG, why));
    }

    /** The configs after an alter: each change sets its key, or removes it when its value is null. */
    /**
     * A new topic prefix while some of the mirror's topics mirror is refused: they keep the names they were started
     * under, and a mirror whose topics follow two naming rules at once would confuse its operators and the other
     * cluster of an active-active pair (docs/decisions.md). Fail them over (or have none) first.
     */
    static Optional<MirrorApiError> prefixChangeRefused(String mirror, Map<String, DesiredMirrorState> topics) {
        List<String> mirroring = topics.entrySet().stream().filter(e -> e.getValue() != DesiredMirrorState.STOPPED)
                .map(Map.Entry::getKey).toList();
        if (mirroring.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(MirrorApiError.of(Errors.INVALID_CONFIG, MirrorDefinition.TOPIC_PREFIX + " and "
                + MirrorDefinition.TOPIC_PREFIX_SEPARATOR + " of cluster mirror '" + mirror + "' cannot change while "
                + "its topics mirror (" + mirroring.size() + " not stopped, e.g. " + mirroring.get(0) + "): they keep "
                + "the names they were started under; stop them first, or create another mirror"));
    }

    static Map<String, String> altered(Map<String, String> current, List<AlterableMirrorConfig> changes) {
        Map<String, String> configs = new TreeMap<>(current);
        for (AlterableMirrorConfig c : changes) {
            if (c.value() == null) {
                configs.remove(c.name());
            } else {
                configs.put(c.name(), c.value());
            }
        }
        return configs;
    }

    /** The topic patterns of a topic API request (with a start's exclusions) compile. */
    /**
     * The longest wait for a point in time a stop may ask: a day. A failover is an operator waiting for a topic to
     * become writable; a longer wait is a mistake (a unit mixed up), and without a bound the deadline, the request's
     * arrival plus the wait, could overflow to a time in the past and end every partition's wait at once.
     */
    static final long MAX_STOP_TIMEOUT_MS = 24L * 60 * 60 * 1000;

    /**
     * A failover to a point in time (StopMirrorTopics version 1) needs a time of 0 or later, or -1 for none, and a
     * wait bound of 0 to {@link #MAX_STOP_TIMEOUT_MS} (-1: none, the partitions stop at what they have when they are
     * not there yet).
     */
    static Optional<MirrorApiError> pointInTimeRefused(long stopAtMs, long stopTimeoutMs) {
        if (stopAtMs < -1) {
            return Optional.of(MirrorApiError.of(Errors.INVALID_REQUEST, "StopAtMs must be a time (epoch ms) or -1, "
                    + "but got " + stopAtMs));
        }
        if (stopTimeoutMs < -1 || stopTimeoutMs > MAX_STOP_TIMEOUT_MS) {
            return Optional.of(MirrorApiError.of(Errors.INVALID_REQUEST, "StopTimeoutMs must be 0 to "
                    + MAX_STOP_TIMEOUT_MS + " (a day), or -1, but got " + stopTimeoutMs));
        }
        return Optional.empty();
    }

    /**
     * A stop of a topic already being failed over to a point in time ({@code stored}, its node's) may not change or
     * drop that time while any of its partitions is not STOPPED ({@code allStopped} false): partitions still waiting
     * would fail over at another point, and partitions already cut would be cut again or not at all. The same time
     * is let through (nothing to write: {@link #sameStop}). {@code --at common} picks a new time at each call, so the
     * message names the time in force.
     */
    static Optional<TopicResult> stopTimeRefused(String mirror, String topic, DesiredMirrorState current,
                                                 PointInTimeStop stored, Optional<PointInTimeStop> asked,
                                                 boolean allStopped) {
        if (current != DesiredMirrorState.STOPPED || stored == null || allStopped || sameStop(current, stored, asked)) {
            return Optional.empty();
        }
        return Optional.of(new TopicResult(MirrorErrors.MIRROR_TOPIC_BEING_STOPPED.code, "Topic '" + topic
                + "' of cluster mirror '" + mirror + "' is being failed over to the point in time "
                + Instant.ofEpochMilli(stored.atMs()) + " (" + stored.atMs() + "); "
                + asked.map(a -> "another time (" + Instant.ofEpochMilli(a.atMs()) + ")")
                        .orElse("a stop without a time")
                + " cannot replace it until every partition is STOPPED: wait for it, or stop again with --at "
                + stored.atMs()));
    }

    /** Whether a stop asks a topic already stopping for the time it has: its node stays as it is (deadline too). */
    static boolean sameStop(DesiredMirrorState current, PointInTimeStop stored, Optional<PointInTimeStop> asked) {
        return current == DesiredMirrorState.STOPPED && stored != null && asked.isPresent()
                && asked.get().atMs() == stored.atMs();
    }

    static Optional<MirrorApiError> topicPatterns(List<String> patterns, List<String> excludePatterns) {
        List<String> all = new ArrayList<>(patterns);
        all.addAll(excludePatterns);
        return MirrorDefinition.validatePatterns(all)
                .map(why -> MirrorApiError.of(Errors.INVALID_REGULAR_EXPRESSION, why));
    }

    /**
     * The topics a topic API request selects: those it names, in its order, then each of {@code candidates} (the
     * source's topics for a start, the mirror's for the others) that matches a pattern and no exclusion.
     */
    static Set<String> selectTopics(List<String> named, List<String> patterns, List<String> excludePatterns,
                                    Collection<String> candidates) {
        Set<String> wanted = new LinkedHashSet<>(named);
        if (patterns.isEmpty()) {
            return wanted;
        }
        for (String topic : candidates) {
            if (patterns.stream().anyMatch(p -> Pattern.matches(p, topic))
                    && excludePatterns.stream().noneMatch(p -> Pattern.matches(p, topic))) {
                wanted.add(topic);
            }
        }
        return wanted;
    }

    /**
     * Whether a topic of the mirror may be set to {@code desired}, given its {@code current} desired state (null:
     * not a topic of the mirror): resume only a paused (or mirroring) topic, pause none that is stopped (failed
     * over). Stop is always allowed: it is how a failover is retried.
     */
    static Optional<TopicResult> desiredStateRefused(String mirror, String topic, DesiredMirrorState current,
                                                     DesiredMirrorState desired) {
        if (current == null) {
            return Optional.of(new TopicResult(MirrorErrors.TOPIC_NOT_IN_CLUSTER_MIRROR.code, "Topic '" + topic
                    + "' is not mirrored by cluster mirror '" + mirror + "'"));
        }
        if (desired == DesiredMirrorState.MIRRORING && current != DesiredMirrorState.PAUSED
                && current != DesiredMirrorState.MIRRORING) {
            return Optional.of(new TopicResult(MirrorErrors.MIRROR_TOPIC_NOT_PAUSED.code, "Topic '" + topic
                    + "' is " + current + ", not paused; start it again to mirror it"));
        }
        if (desired == DesiredMirrorState.PAUSED && current == DesiredMirrorState.STOPPED) {
            return Optional.of(new TopicResult(MirrorErrors.MIRROR_TOPIC_BEING_STOPPED.code, "Topic '" + topic
                    + "' is stopped (failed over)"));
        }
        return Optional.empty();
    }
}
