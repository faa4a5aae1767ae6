package io.twinlog.server.handlers;

import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.message.DescribeClientQuotasResponseData;
import org.apache.kafka.common.requests.DescribeClientQuotasResponse;

/**
 * DescribeClientQuotas: Twinlog enforces no client quotas, so there are none to describe, for any filter. Served
 * because Kafka's {@code kafka-configs --describe --entity-type users} asks for a user's quotas before its SCRAM
 * credentials and would otherwise fail on an API the broker does not list.
 */
public final class ClientQuotasHandler {
    private ClientQuotasHandler() {
    }

    public static RequestHandler describeNone() {
        return request -> request.respond(new DescribeClientQuotasResponse(new DescribeClientQuotasResponseData()));
    }
}
