package io.twinlog.server.handlers;

import io.twinlog.clients.mirror.ClusterMirrorResource;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.server.security.AclStore;
import io.twinlog.server.security.BrokerAuthorization;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.message.CreateAclsRequestData;
import org.apache.kafka.common.message.CreateAclsResponseData;
import org.apache.kafka.common.message.DeleteAclsResponseData;
import org.apache.kafka.common.message.DescribeAclsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.CreateAclsRequest;
import org.apache.kafka.common.requests.CreateAclsResponse;
import org.apache.kafka.common.requests.DeleteAclsRequest;
import org.apache.kafka.common.requests.DeleteAclsResponse;
import org.apache.kafka.common.requests.DescribeAclsRequest;
import org.apache.kafka.common.requests.DescribeAclsResponse;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.Resource;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.utils.internals.SecurityUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * CreateAcls, DescribeAcls and DeleteAcls (issue 13, point 3), what Kafka's {@code kafka-acls} uses. Without an
 * authorizer they answer SECURITY_DISABLED, as a Kafka broker without one does (tools that look at ACLs as a side
 * task then know there are none). With one: describing needs DESCRIBE on the cluster, creating and deleting ALTER
 * on the cluster (CLUSTER_AUTHORIZATION_FAILED otherwise), as in Kafka; ACLs are kept in ZooKeeper
 * ({@link AclStore}) and read back from the authorizer.
 */
public final class AclsHandler {
    private static final Logger log = LoggerFactory.getLogger(AclsHandler.class);
    private static final String DISABLED = "No Authorizer is configured.";

    private final BrokerAuthorization authorization;

    public AclsHandler(BrokerAuthorization authorization) {
        this.authorization = authorization;
    }

    /** In memory: safe on a request thread. */
    public RequestHandler describe() {
        return request -> {
            DescribeAclsResponseData data = new DescribeAclsResponseData();
            if (!authorization.enabled()) {
                data.setErrorCode(Errors.SECURITY_DISABLED.code()).setErrorMessage(DISABLED);
            } else if (!clusterAllowed(request, AclOperation.DESCRIBE)) {
                data.setErrorCode(Errors.CLUSTER_AUTHORIZATION_FAILED.code())
                        .setErrorMessage("Not authorized: DescribeAcls needs DESCRIBE on the cluster");
            } else {
                DescribeAclsRequest body = request.body();
                byte type = body.data().resourceTypeFilter();
                List<DescribeAclsResponseData.DescribeAclsResource> resources = new ArrayList<>();
                if (type != ClusterMirrorResource.CODE) {
                    resources.addAll(DescribeAclsResponse.aclsResources(
                            authorization.authorizer().orElseThrow().acls(body.filter())));
                }
                if (type == ResourceType.ANY.code() || type == ClusterMirrorResource.CODE) {
                    DescribeAclsResponse.aclsResources(authorization.mirrorAcls(asMirrorFilter(body.filter())))
                            .forEach(r -> resources.add(r.setResourceType(ClusterMirrorResource.CODE)));
                }
                data.setResources(resources);
            }
            request.respond(new DescribeAclsResponse(data, request.apiVersion()));
        };
    }

    /** Writes ZooKeeper: register it off request threads. */
    public RequestHandler create() {
        return request -> {
            CreateAclsRequest body = request.body();
            CreateAclsResponseData data = new CreateAclsResponseData();
            boolean allowed = authorization.enabled() && clusterAllowed(request, AclOperation.ALTER);
            for (CreateAclsRequestData.AclCreation creation : body.data().creations()) {
                CreateAclsResponseData.AclCreationResult result = new CreateAclsResponseData.AclCreationResult();
                if (!authorization.enabled()) {
                    result.setErrorCode(Errors.SECURITY_DISABLED.code()).setErrorMessage(DISABLED);
                } else if (!allowed) {
                    result.setErrorCode(Errors.CLUSTER_AUTHORIZATION_FAILED.code())
                            .setErrorMessage("Not authorized: changing ACLs needs ALTER on the cluster");
                } else {
                    boolean mirror = creation.resourceType() == ClusterMirrorResource.CODE;
                    ApiError error = mirror ? createMirrorAcl(creation, store())
                            : create(CreateAclsRequest.aclBinding(creation), false, store());
                    result.setErrorCode(error.error().code()).setErrorMessage(error.message());
                }
                data.results().add(result);
            }
            request.respond(new CreateAclsResponse(data));
        };
    }

    /** Writes ZooKeeper: register it off request threads. */
    public RequestHandler delete() {
        return request -> {
            DeleteAclsRequest body = request.body();
            DeleteAclsResponseData data = new DeleteAclsResponseData();
            boolean allowed = authorization.enabled() && clusterAllowed(request, AclOperation.ALTER);
            List<AclBindingFilter> filters = body.filters();
            for (int i = 0; i < filters.size(); i++) {
                AclBindingFilter filter = filters.get(i);
                byte type = body.data().filters().get(i).resourceTypeFilter();
                DeleteAclsResponseData.DeleteAclsFilterResult result = new DeleteAclsResponseData.DeleteAclsFilterResult();
                if (!authorization.enabled()) {
                    result.setErrorCode(Errors.SECURITY_DISABLED.code()).setErrorMessage(DISABLED);
                } else if (!allowed) {
                    result.setErrorCode(Errors.CLUSTER_AUTHORIZATION_FAILED.code())
                            .setErrorMessage("Not authorized: changing ACLs needs ALTER on the cluster");
                } else {
                    try {
                        if (type != ClusterMirrorResource.CODE) {
                            for (AclBinding deleted : store().delete(filter, false)) {
                                result.matchingAcls().add(DeleteAclsResponse.matchingAcl(deleted, ApiError.NONE));
                            }
                        }
                        if (type == ResourceType.ANY.code() || type == ClusterMirrorResource.CODE) {
                            for (AclBinding deleted : store().delete(asMirrorFilter(filter), true)) {
                                result.matchingAcls().add(DeleteAclsResponse.matchingAcl(deleted, ApiError.NONE)
                                        .setResourceType(ClusterMirrorResource.CODE));
                            }
                        }
                    } catch (Exception e) {
                        // broad: a failure of any kind is this filter's error answer, the other filters go on
                        log.error("Could not delete the ACLs matching {}", filter, e);
                        ApiError error = ApiError.fromThrowable(e);
                        result.setErrorCode(error.error().code()).setErrorMessage(error.message());
                    }
                }
                data.filterResults().add(result);
            }
            request.respond(new DeleteAclsResponse(data, request.apiVersion()));
        };
    }

    private AclStore store() {
        return authorization.store().orElseThrow();
    }

    private boolean clusterAllowed(Request request, AclOperation operation) {
        return authorization.allowed(request.context(), operation, ResourceType.CLUSTER, Resource.CLUSTER_NAME);
    }

    /** A filter on ClusterMirror ACLs, which the mirror authorizer holds as TOPIC ACLs (decision 49). */
    private static AclBindingFilter asMirrorFilter(AclBindingFilter filter) {
        return new AclBindingFilter(new ResourcePatternFilter(ResourceType.TOPIC, filter.patternFilter().name(),
                filter.patternFilter().patternType()), filter.entryFilter());
    }

    /** A ClusterMirror ACL: only the KIP's operations; then Kafka's checks and the write, as a TOPIC binding. */
    private static ApiError createMirrorAcl(CreateAclsRequestData.AclCreation creation, AclStore store) {
        AclOperation operation = AclOperation.fromCode(creation.operation());
        if (!ClusterMirrorResource.OPERATIONS.contains(operation)) {
            return new ApiError(Errors.INVALID_REQUEST, "Invalid operation " + operation + " for a "
                    + ClusterMirrorResource.NAME + " ACL: one of " + ClusterMirrorResource.OPERATIONS);
        }
        AclBinding binding = new AclBinding(new ResourcePattern(ResourceType.TOPIC, creation.resourceName(),
                PatternType.fromCode(creation.resourcePatternType())), new AccessControlEntry(creation.principal(),
                creation.host(), operation, AclPermissionType.fromCode(creation.permissionType())));
        return create(binding, true, store);
    }

    /** Kafka's checks of an ACL to create, then the write. */
    private static ApiError create(AclBinding binding, boolean mirror, AclStore store) {
        ResourceType type = binding.pattern().resourceType();
        if (type == ResourceType.ANY || type == ResourceType.UNKNOWN) {
            return new ApiError(Errors.INVALID_REQUEST, "Invalid resource type " + type);
        }
        PatternType pattern = binding.pattern().patternType();
        if (pattern != PatternType.LITERAL && pattern != PatternType.PREFIXED) {
            return new ApiError(Errors.INVALID_REQUEST, "Invalid pattern type " + pattern);
        }
        if (type == ResourceType.CLUSTER && !binding.pattern().name().equals(Resource.CLUSTER_NAME)) {
            return new ApiError(Errors.INVALID_REQUEST, "The only valid name for the CLUSTER resource is "
                    + Resource.CLUSTER_NAME);
        }
        AclOperation operation = binding.entry().operation();
        AclPermissionType permission = binding.entry().permissionType();
        if (operation == AclOperation.ANY || operation == AclOperation.UNKNOWN) {
            return new ApiError(Errors.INVALID_REQUEST, "Invalid operation " + operation);
        }
        if (permission != AclPermissionType.ALLOW && permission != AclPermissionType.DENY) {
            return new ApiError(Errors.INVALID_REQUEST, "Invalid permission type " + permission);
        }
        try {
            SecurityUtils.parseKafkaPrincipal(binding.entry().principal());
        } catch (IllegalArgumentException e) {
            return new ApiError(Errors.INVALID_REQUEST, "Invalid principal " + binding.entry().principal());
        }
        try {
            store.create(binding, mirror);
            log.info("{} ACL created: {}", mirror ? ClusterMirrorResource.NAME : "Kafka", binding);
            return ApiError.NONE;
        } catch (Exception e) {
            // broad: a failure of any kind is this ACL's error answer, the others go on
            log.error("Could not create the ACL {}", binding, e);
            return ApiError.fromThrowable(e);
        }
    }
}
