package io.twinlog.clients.mirror.internals;

import io.twinlog.clients.mirror.ClusterMirrorResource;
import io.twinlog.clients.mirror.MirrorAcl;
import io.twinlog.clients.mirror.MirrorAdmin.MirrorDescription;
import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.clients.mirror.MirrorException;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirror;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirrorConfig;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.message.DeleteAclsRequestData;
import org.apache.kafka.common.message.DeleteAclsResponseData;
import org.apache.kafka.common.message.DescribeAclsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DeleteAclsRequest;
import org.apache.kafka.common.requests.DeleteAclsResponse;
import org.apache.kafka.common.requests.DescribeAclsRequest;
import org.apache.kafka.common.requests.DescribeAclsResponse;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * What MirrorAdmin's ACL calls and describe send and read: the ClusterMirror resource type on every request, other
 * resource types left out of an answer, an unset operation meaning any, errors as {@link MirrorException}s.
 */
@Timeout(10)
class MirrorAclMessagesTest {
    private static final short VERSION = 3;

    @Test
    void describeAsksForClusterMirrorAclsOfOneMirrorOrAll() {
        DescribeAclsRequest one = MirrorAclMessages.describeRequest(Optional.of("m1"));
        assertEquals(ClusterMirrorResource.CODE, one.data().resourceTypeFilter());
        assertEquals("m1", one.data().resourceNameFilter());
        assertEquals(PatternType.MATCH.code(), one.data().patternTypeFilter());
        DescribeAclsRequest all = MirrorAclMessages.describeRequest(Optional.empty());
        assertEquals(PatternType.ANY.code(), all.data().patternTypeFilter());
        assertEquals(VERSION, all.version());
    }

    @Test
    void describedKeepsOnlyClusterMirrorResources() {
        DescribeAclsResponseData data = new DescribeAclsResponseData().setResources(List.of(
                resource(ClusterMirrorResource.CODE, "m1"), resource(ResourceType.TOPIC.code(), "t1")));
        List<MirrorAcl> acls = MirrorAclMessages.described(new DescribeAclsResponse(data, VERSION));
        assertEquals(List.of(new MirrorAcl("m1", PatternType.LITERAL, "User:alice", "*", AclOperation.ALTER,
                AclPermissionType.ALLOW)), acls);
    }

    @Test
    void aRefusedDescribeIsAMirrorException() {
        DescribeAclsResponseData data = new DescribeAclsResponseData()
                .setErrorCode(Errors.CLUSTER_AUTHORIZATION_FAILED.code()).setErrorMessage("no");
        MirrorException e = assertThrows(MirrorException.class,
                () -> MirrorAclMessages.described(new DescribeAclsResponse(data, VERSION)));
        assertEquals(Errors.CLUSTER_AUTHORIZATION_FAILED.code(), e.errorCode());
    }

    @Test
    void deleteWithoutAnOperationDeletesAnyAndReportsTheFirstRefusal() {
        DeleteAclsRequest request = MirrorAclMessages.deleteRequest("m1", PatternType.LITERAL, null, null, null,
                AclPermissionType.ALLOW);
        DeleteAclsRequestData.DeleteAclsFilter filter = request.data().filters().get(0);
        assertEquals(AclOperation.ANY.code(), filter.operation());
        assertEquals(ClusterMirrorResource.CODE, filter.resourceTypeFilter());

        DeleteAclsResponseData refused = new DeleteAclsResponseData().setFilterResults(List.of(
                new DeleteAclsResponseData.DeleteAclsFilterResult()
                        .setErrorCode(Errors.CLUSTER_AUTHORIZATION_FAILED.code())));
        assertThrows(MirrorException.class, () -> MirrorAclMessages.deleted(new DeleteAclsResponse(refused,
                VERSION)));
    }

    @Test
    void describedMirrorsKeepTheirOrderAndSensitiveConfigs() {
        DescribeClusterMirrorsResponseData data = new DescribeClusterMirrorsResponseData().setMirrors(List.of(
                new DescribedMirror().setMirrorName("b").setConfigs(List.of(new DescribedMirrorConfig()
                        .setName("sasl.jaas.config").setValue(null).setSensitive(true))),
                new DescribedMirror().setMirrorName("a")));
        Map<String, MirrorDescription> described = MirrorDescriptions.from(data);
        assertEquals(List.of("b", "a"), List.copyOf(described.keySet()));
        assertEquals(List.of("sasl.jaas.config"), described.get("b").sensitiveConfigs());
    }

    @Test
    void anUnknownMirrorInADescribeIsAMirrorException() {
        short unknown = MirrorErrors.UNKNOWN_CLUSTER_MIRROR.code;
        DescribeClusterMirrorsResponseData data = new DescribeClusterMirrorsResponseData().setMirrors(List.of(
                new DescribedMirror().setMirrorName("x").setErrorCode(unknown)));
        assertEquals(unknown, assertThrows(MirrorException.class, () -> MirrorDescriptions.from(data)).errorCode());
    }

    private static DescribeAclsResponseData.DescribeAclsResource resource(byte type, String name) {
        return new DescribeAclsResponseData.DescribeAclsResource().setResourceType(type).setResourceName(name)
                .setPatternType(PatternType.LITERAL.code()).setAcls(List.of(new DescribeAclsResponseData.AclDescription()
                        .setPrincipal("User:alice").setHost("*").setOperation(AclOperation.ALTER.code())
                        .setPermissionType(AclPermissionType.ALLOW.code())));
    }
}
