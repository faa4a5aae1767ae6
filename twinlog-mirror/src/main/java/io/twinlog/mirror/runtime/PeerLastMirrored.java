package io.twinlog.mirror.runtime;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.clients.mirror.MirrorException;
import io.twinlog.mirror.LastMirroredTruncation.LastMirrored;
import io.twinlog.mirror.partition.PeerLookup.Failure;
import io.twinlog.mirror.runtime.PeerFailures.PeerDoubtException;
import io.twinlog.mirror.store.MirrorDefinition;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Uuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.time.Duration;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Asks a mirror's source (the peer) for the last epoch and offset it mirrored from this cluster before it failed
 * over — the LastMirroredEpochs API (7008) — so a failback truncates this cluster's log only as far as needed. The
 * peer is reached with the mirror's own source client configs, TLS and SASL included.
 *
 * <p>"No record" (a cut to 0: everything is mirrored again) is answered only when it is known: the peer is the
 * mirror's recorded source cluster (Metadata's cluster ID) and either does not serve the API at all (its
 * ApiVersions answer lacks key 7008: an Apache Kafka cluster, an older Twinlog) or serves it and has no record of
 * the partition. A peer whose partition has not completed its failover (still mirroring, paused, or being stopped)
 * has no last mirrored point yet and says so with an error, a doubt like the others. Anything else — a timeout, a refused or dropped connection, a failed TLS or SASL authentication,
 * a refusal to say, another cluster at the address, an error answer — is a {@link PeerDoubtException}: the
 * partition keeps its log and asks again (issue 25, point 2).
 */
final class PeerLastMirrored {
    private static final Logger log = LoggerFactory.getLogger(PeerLastMirrored.class);
    private static final Duration TIMEOUT = Duration.ofSeconds(5);
    /** The peer's answer for a partition whose failover has not completed there: no last mirrored point yet. */
    private static final Set<MirrorErrors> NOT_FAILED_OVER = EnumSet.of(MirrorErrors.INVALID_MIRROR_STATE,
            MirrorErrors.MIRROR_TOPIC_BEING_STOPPED);

    private PeerLastMirrored() {
    }

    /**
     * The peer's records for the given partitions of one topic (one request); partitions it has no record of are
     * absent, and so is every partition when the peer does not serve LastMirroredEpochs.
     *
     * @throws PeerDoubtException with its {@link Failure} when the answer cannot be had or trusted
     */
    static Map<Integer, LastMirrored> lookup(MirrorDefinition mirror, String localClusterId, String topic,
                                             Uuid topicId, List<Integer> partitions) throws PeerDoubtException {
        Map<String, Object> configs = new HashMap<>(mirror.sourceClientConfigs());
        configs.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) TIMEOUT.toMillis());
        configs.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TIMEOUT.toMillis());
        try (MirrorAdmin peer = MirrorAdmin.create(configs)) {
            checkIdentity(mirror, peer.clusterId());
            if (!peer.advertises(MirrorApi.LAST_MIRRORED_EPOCHS)) {
                log.info("[Mirror {}] the source (cluster {}) does not serve LastMirroredEpochs (not in its "
                        + "ApiVersions answer: Apache Kafka, or an older Twinlog): no record of what it mirrored "
                        + "from here, {} is mirrored again from 0", mirror.name(), mirror.sourceClusterId()
                        .orElse("not recorded"), topic);
                return Map.of();
            }
            Map<Integer, LastMirrored> out = new HashMap<>();
            // with the topic's ID: a peer that knows no topic of that name and ID (a name mismatch) refuses it, a
            // doubt, rather than answering "no record", which would cut this log to 0
            peer.lastMirroredEpochs(localClusterId, Map.of(topic, partitions), Map.of(topic, topicId))
                    .forEach((tp, answer) -> {
                        if (answer.epoch() >= 0 && answer.offset() >= 0) {
                            out.put(tp.partition(), new LastMirrored(answer.epoch(), answer.offset()));
                        }
                    });
            return out;
        } catch (PeerDoubtException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            if (e instanceof MirrorException m && m.mirrorError().filter(NOT_FAILED_OVER::contains).isPresent()) {
                throw new PeerDoubtException(Failure.ERROR, "the source has not completed its failover of " + topic
                        + " (its partition is still mirroring, paused or being stopped there: " + m.getMessage()
                        + "); run or finish the failover there first (--stop), this failback waits for it");
            }
            // a KafkaException too: MirrorException (an error answer), bad TLS/SASL configs, an unparsable answer
            Failure failure = PeerFailures.failure(e);
            throw new PeerDoubtException(failure, describe(failure, mirror, e));
        }
    }

    /**
     * Another cluster at the mirror's address (a rebuilt peer, a wrong DNS entry) would answer that it has no
     * record, and the failback would cut everything: its answer is not the source's. Without a recorded ID (the
     * mirror was created while its source was unreachable, and nothing has reached it since) there is nothing to
     * compare with, and the first cluster to answer is taken as the source, as the fetcher does at first contact.
     */
    private static void checkIdentity(MirrorDefinition mirror, String peerClusterId) throws PeerDoubtException {
        Optional<String> recorded = mirror.sourceClusterId();
        if (recorded.isEmpty()) {
            log.info("[Mirror {}] the source cluster ID is not recorded yet; taking cluster {} at {} as the source",
                    mirror.name(), peerClusterId, mirror.sourceBootstrap());
        } else if (!recorded.get().equals(peerClusterId)) {
            throw new PeerDoubtException(Failure.WRONG_CLUSTER, mirror.sourceBootstrap() + " answers for cluster "
                    + peerClusterId + ", not for this mirror's source cluster " + recorded.get() + " (a wrong "
                    + "address or DNS entry, or a rebuilt source?)");
        }
    }

    private static String describe(Failure failure, MirrorDefinition mirror, Exception e) {
        String what = switch (failure) {
            case TIMEOUT -> "no answer in time";
            case DISCONNECTED -> "the connection was refused or closed";
            case AUTHENTICATION -> "authentication failed (check the mirror's security.protocol, sasl.* and ssl.* "
                    + "configs)";
            case AUTHORIZATION -> "the source refused to say: the mirror's principal there needs DESCRIBE on the "
                    + "cluster mirror that mirrored this topic";
            case WRONG_CLUSTER, ERROR -> "an error";
        };
        return what + " from " + mirror.sourceBootstrap() + " (" + e.getMessage() + ")";
    }
}
