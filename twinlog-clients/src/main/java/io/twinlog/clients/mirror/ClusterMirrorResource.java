package io.twinlog.clients.mirror;

import org.apache.kafka.common.acl.AclOperation;

import java.util.Set;

/**
 * KIP-1279's ClusterMirror ACL resource type. Kafka 4.4's {@code ResourceType} has no such member, so on the wire
 * (CreateAcls, DescribeAcls, DeleteAcls) it is the code the KIP gives it, and the operations are the KIP's.
 */
public final class ClusterMirrorResource {
    /** The resource type code of ClusterMirror ACLs in Kafka's ACL APIs. */
    public static final byte CODE = 8;
    public static final String NAME = "ClusterMirror";
    /** The operations an ACL on a cluster mirror may name ({@code ALL} covers them all). */
    public static final Set<AclOperation> OPERATIONS = Set.of(AclOperation.ALL, AclOperation.CREATE,
            AclOperation.ALTER, AclOperation.DESCRIBE, AclOperation.DELETE, AclOperation.ALTER_CONFIGS,
            AclOperation.DESCRIBE_CONFIGS);

    private ClusterMirrorResource() {
    }
}
