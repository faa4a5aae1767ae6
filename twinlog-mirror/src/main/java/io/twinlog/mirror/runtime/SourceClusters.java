package io.twinlog.mirror.runtime;

import io.twinlog.mirror.store.MirrorDefinition;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Short-lived admin connections to a mirror's source cluster, with the mirror's client configs. */
public final class SourceClusters {
    private SourceClusters() {
    }

    public static Admin admin(MirrorDefinition mirror, int timeoutMs) {
        Map<String, Object> props = new HashMap<>(mirror.sourceClientConfigs());
        props.put(AdminClientConfig.CLIENT_ID_CONFIG, "twinlog-mirror-" + mirror.name());
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, timeoutMs);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, timeoutMs);
        return new ShortLivedAdmin(props);
    }

    /** The source's cluster ID, or an exception saying why it could not be read. */
    public static String clusterId(MirrorDefinition mirror, int timeoutMs) throws Exception {
        try (Admin admin = admin(mirror, timeoutMs)) {
            return admin.describeCluster(new DescribeClusterOptions().timeoutMs(timeoutMs)).clusterId()
                    .get(timeoutMs + 1_000L, TimeUnit.MILLISECONDS);
        }
    }
}
