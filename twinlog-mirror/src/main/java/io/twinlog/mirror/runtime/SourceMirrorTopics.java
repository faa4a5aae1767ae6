package io.twinlog.mirror.runtime;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.clients.mirror.MirrorException;
import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.mirror.partition.PeerLookup;
import io.twinlog.mirror.store.MirrorDefinition;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Uuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which of a source's topics are themselves mirrors of this cluster, still mirroring: mirroring one of them back
 * here would form a loop (this cluster's records copied back into it under another name, and on around). Asked of
 * the source's own mirror APIs (ListClusterMirrors, then DescribeClusterMirrors of the mirrors whose recorded source
 * cluster ID is this cluster's). A failed-over topic (desired state STOPPED) is not a loop: mirroring it back is a
 * failback.
 *
 * <p>A source that does not serve the mirror APIs (Apache Kafka) mirrors nothing from here. One that refuses to say
 * (the mirror's principal there lacks DESCRIBE on its mirrors) or cannot be asked leaves the answer
 * {@link Loops#unanswered}: the caller refuses a start that would take over a local topic (a failback by topic ID:
 * were it a loop, the local topic's producers would be refused and its log cut) and starts a new topic with a WARN
 * (decision 125).
 */
final class SourceMirrorTopics {
    private static final Logger log = LoggerFactory.getLogger(SourceMirrorTopics.class);

    private SourceMirrorTopics() {
    }

    /**
     * What the source said: its topics that mirror from here and are not failed over, by their source names; why it
     * could not say, if it could not (then {@code topics} is empty and proves nothing), {@code refused} when it
     * refused to; and the topics it refused to say about one by one ({@code hidden}: a mirror the principal may not
     * describe is left out of ListClusterMirrors without a word, so a failback's topic is also asked by name).
     */
    record Loops(Set<String> topics, Optional<String> unanswered, boolean refused, Set<String> hidden) {
        static final Loops NONE = new Loops(Set.of(), Optional.empty(), false, Set.of());

        /** Why whether {@code topic} still mirrors from here is not known, if it is not. */
        Optional<String> doubtAbout(String topic) {
            return hidden.contains(topic) ? Optional.of(HIDDEN) : unanswered;
        }

        /** Whether that doubt is the source's refusal (the mirror's principal lacks DESCRIBE there). */
        boolean refusedAbout(String topic) {
            return refused || hidden.contains(topic);
        }
    }

    private static final String HIDDEN = "the source refused to say whether it still mirrors this topic from this "
            + "cluster: the mirror's principal there needs DESCRIBE on the source's cluster mirror of it (grant it, "
            + "or fail the topic over there first and grant it for the failback's lookup)";

    /**
     * The source's topics that mirror from {@code localClusterId} and are not failed over, by their source names.
     *
     * @param takeovers source topics whose start would take over a local topic (a failback), with their topic IDs:
     *                  each is also asked by name (LastMirroredEpochs, which refuses rather than hides a mirror the
     *                  principal may not describe)
     */
    static Loops mirroringFrom(MirrorDefinition mirror, String localClusterId, int timeoutMs,
                               Map<String, Uuid> takeovers) {
        Map<String, Object> configs = new HashMap<>(mirror.sourceClientConfigs());
        configs.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, timeoutMs);
        configs.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, timeoutMs);
        Set<String> out = new TreeSet<>();
        try (MirrorAdmin admin = MirrorAdmin.create(configs)) {
            if (!admin.advertises(MirrorApi.LIST_CLUSTER_MIRRORS)
                    || !admin.advertises(MirrorApi.DESCRIBE_CLUSTER_MIRRORS)) {
                return Loops.NONE;
            }
            Set<String> hidden = hiddenTopics(admin, localClusterId, takeovers);
            List<String> fromHere = admin.listClusterMirrors(false).stream()
                    .filter(m -> localClusterId.equals(m.sourceClusterId())).map(MirrorAdmin.MirrorListing::name)
                    .toList();
            if (!fromHere.isEmpty()) {
                admin.describeClusterMirrors(fromHere).values().forEach(m -> m.topics().values().forEach(t -> {
                    if (!DesiredMirrorState.STOPPED.name().equals(t.desiredState())) {
                        out.add(t.name());
                    }
                }));
            }
            if (!hidden.isEmpty()) {
                log.warn("[Mirror {}] {}: {}", mirror.name(), HIDDEN, hidden);
            }
            return new Loops(out, Optional.empty(), false, hidden);
        } catch (IOException | RuntimeException e) {
            // broad: any failure to ask (refused, unreachable, an error answer) is a doubt the caller weighs per
            // topic; logged with its stack trace
            boolean refused = PeerFailures.failure(e) == PeerLookup.Failure.AUTHORIZATION;
            String why = refused
                    ? "the source refused to say which of its topics mirror from this cluster: the mirror's principal "
                    + "there needs DESCRIBE on its cluster mirrors (grant it, or fail the topic over there first)"
                    : "the source could not be asked which of its topics mirror from this cluster (" + e.getMessage()
                    + "): start again once it answers";
            log.warn("[Mirror {}] {} ({}); a new topic starts as asked, a failback into a local topic is refused",
                    mirror.name(), why, mirror.sourceBootstrap(), e);
            return new Loops(Set.of(), Optional.of(why), refused, Set.of());
        }
    }

    /**
     * Of {@code takeovers}, the topics the source refuses to say about: a mirror of its that mirrors the topic from
     * here and that the principal may not describe answers LastMirroredEpochs with CLUSTER_MIRROR_AUTHORIZATION_FAILED
     * (any other answer: the list and descriptions tell). A source that does not serve it has no mirrors to hide.
     */
    private static Set<String> hiddenTopics(MirrorAdmin admin, String localClusterId, Map<String, Uuid> takeovers)
            throws IOException {
        Set<String> hidden = new TreeSet<>();
        if (!admin.advertises(MirrorApi.LAST_MIRRORED_EPOCHS)) {
            return hidden;
        }
        for (Map.Entry<String, Uuid> topic : takeovers.entrySet()) {
            try {
                admin.lastMirroredEpochs(localClusterId, Map.of(topic.getKey(), List.of(0)),
                        Map.of(topic.getKey(), topic.getValue()));
            } catch (MirrorException e) {
                if (e.mirrorError().filter(MirrorErrors.CLUSTER_MIRROR_AUTHORIZATION_FAILED::equals).isPresent()) {
                    hidden.add(topic.getKey());
                }
            }
        }
        return hidden;
    }
}
