package io.twinlog.clients.mirror;

import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;

/**
 * An ACL on a cluster mirror (KIP-1279's ClusterMirror resource): {@code principal} from {@code host} is allowed or
 * denied {@code operation} on the mirrors {@code mirror} names, literally or as a prefix.
 */
public record MirrorAcl(String mirror, PatternType patternType, String principal, String host,
                        AclOperation operation, AclPermissionType permission) {

    @Override
    public String toString() {
        return principal + " is " + permission + " " + operation + " from host " + host + " on "
                + ClusterMirrorResource.NAME + ":" + patternType + ":" + mirror;
    }
}
