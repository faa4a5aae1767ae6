package io.twinlog.mirror.runtime;

import io.twinlog.common.Failures;
import io.twinlog.mirror.acl.AclSyncPlan;
import io.twinlog.mirror.acl.AclSyncRule;
import io.twinlog.mirror.store.MirrorDefinition;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.errors.SecurityDisabledException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * ACL sync (issue 13, point 6): at each metadata sync pass of a mirror with {@code mirror.acls.include}, the source
 * ACLs its rules select and the destination lacks are created on the destination ({@link AclSyncPlan}: never a
 * deletion, never a ClusterMirror ACL). The source is read with the mirror's principal (it needs DESCRIBE on the
 * source cluster); the destination is written with this broker's own login over the inter-broker listener.
 */
final class MirrorAclSync {
    private static final Logger log = LoggerFactory.getLogger(MirrorAclSync.class);
    private static final int TIMEOUT_MS = MirrorRuntime.SOURCE_TIMEOUT_MS;

    private final Supplier<Optional<Map<String, Object>>> localClients;
    private final MirrorMetrics metrics;

    MirrorAclSync(Supplier<Optional<Map<String, Object>>> localClients, MirrorMetrics metrics) {
        this.localClients = localClients;
        this.metrics = metrics;
    }

    /**
     * One pass for {@code mirror}; a failure is logged (with why) and the next pass tries again.
     *
     * @param destinationOf the name each of the mirror's source topics has here, by source name
     *                      ({@code OffsetSyncPlan.destinationTopics})
     */
    void maybeSync(MirrorDefinition mirror, Admin source, Map<String, String> destinationOf)
            throws InterruptedException {
        List<AclSyncRule> rules = mirror.aclSyncRules();
        if (rules.isEmpty()) {
            return;
        }
        Optional<Map<String, Object>> local = localClients.get();
        if (local.isEmpty()) {
            log.info("[Mirror {}] ACL sync skipped: this cluster's address is not known yet", mirror.name());
            return;
        }
        try (Admin destination = localAdmin(mirror.name(), local.get())) {
            Collection<AclBinding> sourceAcls = source.describeAcls(AclBindingFilter.ANY).values()
                    .get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            Collection<AclBinding> destinationAcls = destination.describeAcls(AclBindingFilter.ANY).values()
                    .get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            List<AclBinding> missing = AclSyncPlan.toCreate(sourceAcls, destinationAcls, rules,
                    mirror.topicNamePrefix(), destinationOf);
            if (!missing.isEmpty()) {
                destination.createAcls(missing).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
                log.info("[Mirror {}] ACL sync created {} ACLs copied from the source: {}", mirror.name(),
                        missing.size(), missing);
            }
        } catch (ExecutionException e) {
            metrics.onAclSyncError(mirror.name());
            if (e.getCause() instanceof SecurityDisabledException) {
                log.warn("[Mirror {}] ACL sync skipped: {} (mirror.acls.include needs an authorizer on both "
                        + "clusters)", mirror.name(), e.getCause().getMessage());
            } else {
                log.warn("[Mirror {}] ACL sync failed: {}", mirror.name(), Failures.rootMessage(e));
            }
        } catch (TimeoutException e) {
            metrics.onAclSyncError(mirror.name());
            log.warn("[Mirror {}] ACL sync skipped: a cluster did not answer within {} ms", mirror.name(),
                    TIMEOUT_MS);
        }
    }

    private static Admin localAdmin(String mirror, Map<String, Object> local) {
        return ShortLivedAdmin.local("twinlog-mirror-acls-" + mirror, local, TIMEOUT_MS);
    }
}
