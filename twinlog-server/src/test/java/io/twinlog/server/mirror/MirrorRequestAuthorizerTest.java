package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.mirror.runtime.MirrorTopicStarter.TopicResult;
import io.twinlog.mirror.store.MirrorDefinition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link MirrorRequestAuthorizer}: which right each check asks for, and the error a principal without it gets. The
 * rights are an in-memory set (the broker's authorizer is tested end to end by MirrorAuthorizationTest); it records
 * each question, so a test also sees what was not asked.
 */
@Timeout(60)
class MirrorRequestAuthorizerTest {
    /** No request context is needed: the grants below are the one principal's. */
    private static final AuthorizableRequestContext PRINCIPAL = null;

    private final Set<String> grants = new HashSet<>();
    private final List<String> asked = new ArrayList<>();
    private final MirrorRequestAuthorizer authorizer = new MirrorRequestAuthorizer(
            new MirrorRequestAuthorizer.Permissions() {
                @Override
                public boolean onMirror(AuthorizableRequestContext context, AclOperation operation, String mirror) {
                    return ask("mirror:" + mirror + ":" + operation);
                }

                @Override
                public boolean onCluster(AuthorizableRequestContext context, AclOperation operation) {
                    return ask("cluster:" + operation);
                }

                @Override
                public boolean onTopic(AuthorizableRequestContext context, AclOperation operation, String topic) {
                    return ask("topic:" + topic + ":" + operation);
                }
            });

    private boolean ask(String right) {
        asked.add(right);
        return grants.contains(right);
    }

    @Test
    void anOperationOnAMirrorNeedsThatOperationOnThatMirror() {
        grants.add("mirror:m:CREATE");
        assertEquals(Optional.empty(), authorizer.mirrorDenied(PRINCIPAL, AclOperation.CREATE, "m"));
        assertEquals(Optional.of(MirrorApiError.of(MirrorErrors.CLUSTER_MIRROR_AUTHORIZATION_FAILED,
                "Not authorized: DELETE on cluster mirror 'm' is needed")),
                authorizer.mirrorDenied(PRINCIPAL, AclOperation.DELETE, "m"));
        assertEquals(Optional.of(MirrorApiError.of(MirrorErrors.CLUSTER_MIRROR_AUTHORIZATION_FAILED,
                "Not authorized: CREATE on cluster mirror 'other' is needed")),
                authorizer.mirrorDenied(PRINCIPAL, AclOperation.CREATE, "other"));
    }

    @Test
    void describingAMirrorNeedsDescribeOnIt() {
        grants.add("mirror:seen:DESCRIBE");
        assertTrue(authorizer.mayDescribe(PRINCIPAL, "seen"));
        assertFalse(authorizer.mayDescribe(PRINCIPAL, "hidden"));
        assertEquals(Optional.empty(), authorizer.describeDenied(PRINCIPAL, "seen"));
        assertEquals(Optional.of(MirrorApiError.of(MirrorErrors.CLUSTER_MIRROR_AUTHORIZATION_FAILED,
                "Not authorized to describe cluster mirror 'hidden'")), authorizer.describeDenied(PRINCIPAL, "hidden"));
    }

    @Test
    void configsWithoutAclSyncAskNothingOfTheCluster() {
        assertEquals(Optional.empty(), authorizer.aclSyncDenied(PRINCIPAL, List.of(
                MirrorDefinition.BOOTSTRAP_SERVERS, MirrorDefinition.TOPIC_INCLUDE)));
        assertEquals(List.of(), asked);
    }

    @Test
    void aclSyncNeedsAlterOnTheCluster() {
        List<String> keys = List.of(MirrorDefinition.BOOTSTRAP_SERVERS, MirrorDefinition.ACLS_INCLUDE);
        assertEquals(Optional.of(MirrorApiError.of(Errors.CLUSTER_AUTHORIZATION_FAILED, "Not authorized: "
                + "mirror.acls.include creates ACLs on this cluster, which needs ALTER on the cluster")),
                authorizer.aclSyncDenied(PRINCIPAL, keys));
        grants.add("cluster:ALTER");
        assertEquals(Optional.empty(), authorizer.aclSyncDenied(PRINCIPAL, keys));
    }

    @Test
    void aTopicNeedsAlterConfigsOnIt() {
        grants.add("topic:orders:ALTER_CONFIGS");
        assertEquals(Optional.empty(), authorizer.topicDenied(PRINCIPAL, "orders"));
        assertEquals(Optional.of(new TopicResult(Errors.TOPIC_AUTHORIZATION_FAILED.code(),
                "Not authorized: ALTER_CONFIGS on topic 'payments' is needed")),
                authorizer.topicDenied(PRINCIPAL, "payments"));
    }
}
