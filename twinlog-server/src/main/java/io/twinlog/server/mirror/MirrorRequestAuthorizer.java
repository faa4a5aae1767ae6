package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.mirror.runtime.MirrorTopicStarter.TopicResult;
import io.twinlog.mirror.store.MirrorDefinition;
import io.twinlog.server.security.BrokerAuthorization;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;

import java.util.Collection;
import java.util.Optional;

/**
 * Who may call the mirror APIs (KIP-1279's ClusterMirror resource, decision 50), and the answer to one who may not.
 * Every check is a question to the broker's authorizer, in memory: safe on any thread. Each denial is the error
 * the handler answers with; the handlers decide only when to ask.
 *
 * <ul>
 *   <li>create, delete, alter, describe: CREATE, DELETE, ALTER_CONFIGS, DESCRIBE on the mirror; list and describe
 *       of every mirror leave out those the principal may not DESCRIBE;</li>
 *   <li>setting or changing {@code mirror.acls.include}: also ALTER on the cluster;</li>
 *   <li>the topic APIs: ALTER on the mirror, and ALTER_CONFIGS on each topic;</li>
 *   <li>LastMirroredEpochs: DESCRIBE on the mirror that recorded the partitions.</li>
 * </ul>
 */
final class MirrorRequestAuthorizer {
    /** The questions this class asks; {@link BrokerAuthorization} answers them in the broker. */
    interface Permissions {
        boolean onMirror(AuthorizableRequestContext context, AclOperation operation, String mirror);

        boolean onCluster(AuthorizableRequestContext context, AclOperation operation);

        boolean onTopic(AuthorizableRequestContext context, AclOperation operation, String topic);
    }

    private final Permissions permissions;

    MirrorRequestAuthorizer(Permissions permissions) {
        this.permissions = permissions;
    }

    /** The broker's authorizer: every request allowed when none is configured. */
    static MirrorRequestAuthorizer of(BrokerAuthorization authorization) {
        return new MirrorRequestAuthorizer(new Permissions() {
            @Override
            public boolean onMirror(AuthorizableRequestContext context, AclOperation operation, String mirror) {
                return authorization.allowedOnMirror(context, operation, mirror);
            }

            @Override
            public boolean onCluster(AuthorizableRequestContext context, AclOperation operation) {
                return authorization.allowedOnCluster(context, operation);
            }

            @Override
            public boolean onTopic(AuthorizableRequestContext context, AclOperation operation, String topic) {
                return authorization.allowed(context, operation, ResourceType.TOPIC, topic);
            }
        });
    }

    /** The request's error when the principal may not {@code operation} the mirror; empty when it may. */
    Optional<MirrorApiError> mirrorDenied(AuthorizableRequestContext context, AclOperation operation, String mirror) {
        if (permissions.onMirror(context, operation, mirror)) {
            return Optional.empty();
        }
        return Optional.of(MirrorApiError.of(MirrorErrors.CLUSTER_MIRROR_AUTHORIZATION_FAILED, "Not authorized: "
                + operation + " on cluster mirror '" + mirror + "' is needed"));
    }

    /** Whether the principal may see the mirror (list, describe, the failback lookup). */
    boolean mayDescribe(AuthorizableRequestContext context, String mirror) {
        return permissions.onMirror(context, AclOperation.DESCRIBE, mirror);
    }

    /** The error of one mirror's entry in a describe answer when the principal may not see it. */
    Optional<MirrorApiError> describeDenied(AuthorizableRequestContext context, String mirror) {
        if (mayDescribe(context, mirror)) {
            return Optional.empty();
        }
        return Optional.of(MirrorApiError.of(MirrorErrors.CLUSTER_MIRROR_AUTHORIZATION_FAILED,
                "Not authorized to describe cluster mirror '" + mirror + "'"));
    }

    /**
     * ACL sync creates ACLs on this cluster with the broker's own rights, so setting or changing
     * {@code mirror.acls.include} (one of {@code keys}) needs what creating ACLs needs: ALTER on the cluster
     * (decision 50). Without it, CREATE on a mirror would let a principal copy any ACL from a cluster it controls.
     */
    Optional<MirrorApiError> aclSyncDenied(AuthorizableRequestContext context, Collection<String> keys) {
        if (!keys.contains(MirrorDefinition.ACLS_INCLUDE) || permissions.onCluster(context, AclOperation.ALTER)) {
            return Optional.empty();
        }
        return Optional.of(MirrorApiError.of(Errors.CLUSTER_AUTHORIZATION_FAILED, "Not authorized: "
                + MirrorDefinition.ACLS_INCLUDE + " creates ACLs on this cluster, which needs ALTER on the cluster"));
    }

    /** KIP-1279: starting, stopping, pausing or resuming a topic also needs ALTER_CONFIGS on the topic. */
    Optional<TopicResult> topicDenied(AuthorizableRequestContext context, String topic) {
        if (permissions.onTopic(context, AclOperation.ALTER_CONFIGS, topic)) {
            return Optional.empty();
        }
        return Optional.of(new TopicResult(Errors.TOPIC_AUTHORIZATION_FAILED.code(), "Not authorized: "
                + "ALTER_CONFIGS on topic '" + topic + "' is needed"));
    }
}
