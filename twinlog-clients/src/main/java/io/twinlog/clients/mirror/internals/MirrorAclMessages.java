package io.twinlog.clients.mirror.internals;

import io.twinlog.clients.mirror.ClusterMirrorResource;
import io.twinlog.clients.mirror.MirrorAcl;
import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorException;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.message.CreateAclsRequestData;
import org.apache.kafka.common.message.CreateAclsResponseData;
import org.apache.kafka.common.message.DeleteAclsRequestData;
import org.apache.kafka.common.message.DeleteAclsResponseData;
import org.apache.kafka.common.message.DescribeAclsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.CreateAclsRequest;
import org.apache.kafka.common.requests.CreateAclsResponse;
import org.apache.kafka.common.requests.DeleteAclsRequest;
import org.apache.kafka.common.requests.DeleteAclsResponse;
import org.apache.kafka.common.requests.DescribeAclsRequest;
import org.apache.kafka.common.requests.DescribeAclsResponse;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The ClusterMirror ACLs as Kafka's ACL API messages (resource type {@value ClusterMirrorResource#CODE}): the
 * requests {@link MirrorAdmin}'s ACL calls send, and what their answers say.
 */
public final class MirrorAclMessages {
    /** The ACL APIs' version Twinlog brokers serve (Kafka 4.4's latest; flexible, with the pattern type). */
    private static final short ACL_API_VERSION = 3;

    private MirrorAclMessages() {
    }

    public static CreateAclsRequest createRequest(List<MirrorAcl> acls) {
        CreateAclsRequestData data = new CreateAclsRequestData();
        for (MirrorAcl acl : acls) {
            data.creations().add(new CreateAclsRequestData.AclCreation()
                    .setResourceType(ClusterMirrorResource.CODE).setResourceName(acl.mirror())
                    .setResourcePatternType(acl.patternType().code()).setPrincipal(acl.principal())
                    .setHost(acl.host()).setOperation(acl.operation().code())
                    .setPermissionType(acl.permission().code()));
        }
        return new CreateAclsRequest.Builder(data).build(ACL_API_VERSION);
    }

    /** @throws MirrorException with the first ACL the broker refused */
    public static void checkCreated(CreateAclsResponse response) {
        for (CreateAclsResponseData.AclCreationResult result : response.results()) {
            if (result.errorCode() != Errors.NONE.code()) {
                throw new MirrorException(result.errorCode(), result.errorMessage());
            }
        }
    }

    /** All ClusterMirror ACLs, or those that apply to {@code mirror} (literal, prefixed or wildcard). */
    public static DescribeAclsRequest describeRequest(Optional<String> mirror) {
        AclBindingFilter filter = new AclBindingFilter(new ResourcePatternFilter(ResourceType.TOPIC,
                mirror.orElse(null), mirror.isPresent() ? PatternType.MATCH : PatternType.ANY),
                AccessControlEntryFilter.ANY);
        DescribeAclsRequest request = new DescribeAclsRequest.Builder(filter).build(ACL_API_VERSION);
        request.data().setResourceTypeFilter(ClusterMirrorResource.CODE);
        return request;
    }

    public static List<MirrorAcl> described(DescribeAclsResponse response) {
        if (response.error().isFailure()) {
            throw new MirrorException(response.error().error().code(), response.error().message());
        }
        List<MirrorAcl> acls = new ArrayList<>();
        for (DescribeAclsResponseData.DescribeAclsResource resource : response.acls()) {
            if (resource.resourceType() != ClusterMirrorResource.CODE) {
                continue;
            }
            for (DescribeAclsResponseData.AclDescription acl : resource.acls()) {
                acls.add(new MirrorAcl(resource.resourceName(), PatternType.fromCode(resource.patternType()),
                        acl.principal(), acl.host(), AclOperation.fromCode(acl.operation()),
                        AclPermissionType.fromCode(acl.permissionType())));
            }
        }
        return acls;
    }

    /** The ClusterMirror ACLs matching; {@code null} principal, host or operation mean any. */
    public static DeleteAclsRequest deleteRequest(String mirror, PatternType patternType, String principal,
                                                  String host, AclOperation operation, AclPermissionType permission) {
        DeleteAclsRequestData data = new DeleteAclsRequestData();
        data.filters().add(new DeleteAclsRequestData.DeleteAclsFilter()
                .setResourceTypeFilter(ClusterMirrorResource.CODE).setResourceNameFilter(mirror)
                .setPatternTypeFilter(patternType.code()).setPrincipalFilter(principal).setHostFilter(host)
                .setOperation((operation == null ? AclOperation.ANY : operation).code())
                .setPermissionType(permission.code()));
        return new DeleteAclsRequest.Builder(data).build(ACL_API_VERSION);
    }

    /** @throws MirrorException with the first filter the broker refused */
    public static List<MirrorAcl> deleted(DeleteAclsResponse response) {
        List<MirrorAcl> deleted = new ArrayList<>();
        for (DeleteAclsResponseData.DeleteAclsFilterResult result : response.filterResults()) {
            if (result.errorCode() != Errors.NONE.code()) {
                throw new MirrorException(result.errorCode(), result.errorMessage());
            }
            for (DeleteAclsResponseData.DeleteAclsMatchingAcl acl : result.matchingAcls()) {
                deleted.add(new MirrorAcl(acl.resourceName(), PatternType.fromCode(acl.patternType()),
                        acl.principal(), acl.host(), AclOperation.fromCode(acl.operation()),
                        AclPermissionType.fromCode(acl.permissionType())));
            }
        }
        return deleted;
    }
}
