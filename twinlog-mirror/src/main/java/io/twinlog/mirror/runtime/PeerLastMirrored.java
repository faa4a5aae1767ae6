package io.twinlog.mirror.runtime;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.clients.mirror.MirrorException;
import io.twinlog.mirror.LastMirroredTruncation.LastMirrored;
import io.twinlog.mirror.store.MirrorDefinition;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Asks a mirror's source (the peer) for the last epoch and offset it mirrored from this cluster before it failed
 * over — the LastMirroredEpochs API (7008) — so a failback truncates this cluster's log only as far as needed.
 * Only a Twinlog peer answers it (an Apache Kafka source does not know the API: the answer is then "no record", and
 * LOG_TRUNCATION falls back to mirroring everything again). The peer is reached with the mirror's own source client
 * configs, TLS and SASL included.
 */
final class PeerLastMirrored {
    private static final Logger log = LoggerFactory.getLogger(PeerLastMirrored.class);
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private PeerLastMirrored() {
    }

    /**
     * The peer's records for the given partitions of one topic (one request); partitions it has no record of are
     * absent.
     *
     * @throws IOException when no source broker accepts a connection ({@link MirrorAdmin.UnreachableException}),
     *         or the source refuses to say because the mirror's principal there may not describe the cluster mirror
     *         that recorded them (CLUSTER_MIRROR_AUTHORIZATION_FAILED): ask again later, since cutting to 0 now
     *         would throw away what a failback could keep
     */
    static Map<Integer, LastMirrored> lookup(MirrorDefinition mirror, String localClusterId, String topic,
                                             List<Integer> partitions) throws IOException {
        Map<String, Object> configs = new HashMap<>(mirror.sourceClientConfigs());
        configs.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) TIMEOUT.toMillis());
        configs.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TIMEOUT.toMillis());
        try (MirrorAdmin peer = MirrorAdmin.create(configs)) {
            Map<Integer, LastMirrored> out = new HashMap<>();
            peer.lastMirroredEpochs(localClusterId, Map.of(topic, partitions)).forEach((tp, answer) -> {
                if (answer.epoch() >= 0 && answer.offset() >= 0) {
                    out.put(tp.partition(), new LastMirrored(answer.epoch(), answer.offset()));
                }
            });
            return out;
        } catch (MirrorAdmin.UnreachableException e) {
            throw e;
        } catch (MirrorException e) {
            if (e.mirrorError().equals(Optional.of(MirrorErrors.CLUSTER_MIRROR_AUTHORIZATION_FAILED))) {
                throw new IOException("the source refused LastMirroredEpochs for " + topic + ": the mirror's principal "
                        + "there needs DESCRIBE on the cluster mirror that mirrored it (" + e.getMessage() + ")", e);
            }
            log.info("[Mirror {}] the source answers LastMirroredEpochs for {} with {}; mirroring everything again",
                    mirror.name(), topic, e.getMessage());
            return Map.of();
        } catch (IOException | RuntimeException e) {
            // it answered, but not this API: an Apache Kafka source (migration), or an older Twinlog
            log.info("[Mirror {}] the source does not answer LastMirroredEpochs for {} ({}); mirroring everything "
                    + "again", mirror.name(), topic, e.getMessage());
            return Map.of();
        }
    }
}
