package io.twinlog.server.handlers;

import io.twinlog.protocol.RequestHandler;
import io.twinlog.server.quota.ClientQuotaStore;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.requests.AlterClientQuotasRequest;
import org.apache.kafka.common.requests.AlterClientQuotasResponse;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.DescribeClientQuotasRequest;
import org.apache.kafka.common.requests.DescribeClientQuotasResponse;

import java.util.Map;

/**
 * DescribeClientQuotas and AlterClientQuotas, as Apache Kafka 4.4 answers them: the filters answered by Kafka's own
 * {@code ClientQuotasImage}, the changes checked with Kafka's rules and messages and stored where
 * {@code kafka-configs --entity-type users|clients|ips} finds them ({@link ClientQuotaStore}). Authorization (DESCRIBE_CONFIGS /
 * ALTER_CONFIGS on the cluster) is the caller's, as for every cluster API.
 */
public final class ClientQuotasHandler {
    /** How long an alter waits for this broker to read back what it wrote, so a describe right after shows it. */
    private static final long APPLY_TIMEOUT_MS = 10_000;
    private final ClientQuotaStore store;

    public ClientQuotasHandler(ClientQuotaStore store) {
        this.store = store;
    }

    /** Reads memory only: safe on a request thread. */
    public RequestHandler describe() {
        return request -> {
            DescribeClientQuotasRequest body = request.body();
            try {
                request.respond(new DescribeClientQuotasResponse(store.image().describe(body.data())));
            } catch (InvalidRequestException | UnsupportedVersionException e) {
                // a filter Kafka refuses (an unknown entity type, EXACT without a name...): its message, its code
                request.respond(request.errorResponse(e));
            }
        };
    }

    /** Writes to ZooKeeper: to be run off the request threads. */
    public RequestHandler alter() {
        return request -> {
            AlterClientQuotasRequest body = request.body();
            Map<ClientQuotaEntity, ApiError> results;
            try {
                results = store.alter(body.entries(), body.validateOnly(), APPLY_TIMEOUT_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                request.respond(request.errorResponse(e));
                return;
            }
            request.respond(AlterClientQuotasResponse.fromQuotaEntities(results, 0));
        };
    }
}
