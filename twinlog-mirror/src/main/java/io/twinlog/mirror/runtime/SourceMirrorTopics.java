package io.twinlog.mirror.runtime;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.mirror.store.MirrorDefinition;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which of a source's topics are themselves mirrors of this cluster, still mirroring: mirroring one of them back
 * here would form a loop (this cluster's records copied back into it under another name, and on around). Asked of
 * the source's own mirror APIs (ListClusterMirrors, then DescribeClusterMirrors of the mirrors whose recorded source
 * cluster ID is this cluster's). A failed-over topic (desired state STOPPED) is not a loop: mirroring it back is a
 * failback.
 *
 * <p>A source that does not serve the mirror APIs (Apache Kafka) mirrors nothing from here; one that refuses to say
 * (the mirror's principal there lacks DESCRIBE on its mirrors) or cannot be asked is taken as having no loop, said
 * at WARN: a loop copies records twice and loses none, while refusing every start on a doubt would stop mirroring
 * from a secured source altogether (docs/decisions.md).
 */
final class SourceMirrorTopics {
    private static final Logger log = LoggerFactory.getLogger(SourceMirrorTopics.class);

    private SourceMirrorTopics() {
    }

    /** The source's topics that mirror from {@code localClusterId} and are not failed over, by their source names. */
    static Set<String> mirroringFrom(MirrorDefinition mirror, String localClusterId, int timeoutMs) {
        Map<String, Object> configs = new HashMap<>(mirror.sourceClientConfigs());
        configs.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, timeoutMs);
        configs.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, timeoutMs);
        Set<String> out = new TreeSet<>();
        try (MirrorAdmin admin = MirrorAdmin.create(configs)) {
            if (!admin.advertises(MirrorApi.LIST_CLUSTER_MIRRORS)
                    || !admin.advertises(MirrorApi.DESCRIBE_CLUSTER_MIRRORS)) {
                return out;
            }
            List<String> fromHere = admin.listClusterMirrors(false).stream()
                    .filter(m -> localClusterId.equals(m.sourceClusterId())).map(MirrorAdmin.MirrorListing::name)
                    .toList();
            if (fromHere.isEmpty()) {
                return out;
            }
            admin.describeClusterMirrors(fromHere).values().forEach(m -> m.topics().values().forEach(t -> {
                if (!DesiredMirrorState.STOPPED.name().equals(t.desiredState())) {
                    out.add(t.name());
                }
            }));
            return out;
        } catch (IOException | RuntimeException e) {
            // broad: any failure to ask (refused, unreachable, an error answer) is a doubt, taken as no loop; logged
            // with its stack trace
            log.warn("[Mirror {}] could not ask the source {} which of its topics mirror from this cluster (so a "
                    + "topic mirrored back would form a loop): {}; starting as asked", mirror.name(),
                    mirror.sourceBootstrap(), e.toString(), e);
            return out;
        }
    }
}
