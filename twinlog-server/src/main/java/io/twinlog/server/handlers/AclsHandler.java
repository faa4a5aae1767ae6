package io.twinlog.server.handlers;

import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.message.CreateAclsResponseData;
import org.apache.kafka.common.message.DeleteAclsResponseData;
import org.apache.kafka.common.message.DescribeAclsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.CreateAclsRequest;
import org.apache.kafka.common.requests.CreateAclsResponse;
import org.apache.kafka.common.requests.DeleteAclsRequest;
import org.apache.kafka.common.requests.DeleteAclsResponse;
import org.apache.kafka.common.requests.DescribeAclsResponse;

/**
 * ACL APIs answered as a Kafka broker without an authorizer answers them: SECURITY_DISABLED. Tools that look at
 * ACLs as a side task (MirrorMaker 2's ACL sync, {@code kafka-acls}) then know there are none to read or write,
 * instead of failing on an API the broker does not list. Twinlog has no authorizer yet.
 */
public final class AclsHandler {
    private static final String MESSAGE = "No Authorizer is configured.";

    private AclsHandler() {
    }

    public static RequestHandler describe() {
        return request -> request.respond(new DescribeAclsResponse(new DescribeAclsResponseData()
                .setErrorCode(Errors.SECURITY_DISABLED.code()).setErrorMessage(MESSAGE), request.apiVersion()));
    }

    public static RequestHandler create() {
        return request -> {
            CreateAclsRequest body = request.body();
            CreateAclsResponseData data = new CreateAclsResponseData();
            body.data().creations().forEach(c -> data.results().add(new CreateAclsResponseData.AclCreationResult()
                    .setErrorCode(Errors.SECURITY_DISABLED.code()).setErrorMessage(MESSAGE)));
            request.respond(new CreateAclsResponse(data));
        };
    }

    public static RequestHandler delete() {
        return request -> {
            DeleteAclsRequest body = request.body();
            DeleteAclsResponseData data = new DeleteAclsResponseData();
            body.data().filters().forEach(f -> data.filterResults().add(new DeleteAclsResponseData.DeleteAclsFilterResult()
                    .setErrorCode(Errors.SECURITY_DISABLED.code()).setErrorMessage(MESSAGE)));
            request.respond(new DeleteAclsResponse(data, request.apiVersion()));
        };
    }
}
