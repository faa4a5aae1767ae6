package io.twinlog.protocol;

import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.network.ClientInformation;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.IncrementalAlterConfigsRequest;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetAddress;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which deadline an admin request gets: its own timeoutMs where it has a positive one, else the client default. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class AdminDeadlineTest {
    private static final long RECEIVED = TimeUnit.SECONDS.toNanos(100);

    @Test
    void aCreateTopicsExpiresAtItsOwnTimeout() {
        AdminDeadline deadline = AdminDeadline.of(request(createTopics(1_500)));
        assertEquals(1_500, deadline.timeoutMs());
        assertFalse(deadline.hasPassed(RECEIVED + TimeUnit.MILLISECONDS.toNanos(1_499)));
        assertTrue(deadline.hasPassed(RECEIVED + TimeUnit.MILLISECONDS.toNanos(1_500)));
        assertTrue(deadline.exception(RECEIVED + TimeUnit.MILLISECONDS.toNanos(2_000)).getMessage()
                .contains("waited 2000 ms"));
    }

    @Test
    void aForwardedRequestCarriesTheTimeItsClientHasLeft() {
        AdminDeadline deadline = AdminDeadline.of(request(createTopics(1_500)));
        assertEquals(1_500, deadline.remainingMs(RECEIVED));
        assertEquals(300, deadline.remainingMs(RECEIVED + TimeUnit.MILLISECONDS.toNanos(1_200)));
        assertTrue(deadline.remainingMs(RECEIVED + TimeUnit.MILLISECONDS.toNanos(1_500)) <= 0);
    }

    @Test
    void aTimeoutOfZeroMeansDoNotWaitNotExpireAtOnce() {
        assertEquals(AdminDeadline.DEFAULT_TIMEOUT_MS, AdminDeadline.of(request(createTopics(0))).timeoutMs());
    }

    @Test
    void aRequestWithoutATimeoutGetsTheClientDefault() {
        AbstractRequest alter = new IncrementalAlterConfigsRequest.Builder(new IncrementalAlterConfigsRequestData())
                .build();
        assertEquals(AdminDeadline.DEFAULT_TIMEOUT_MS, AdminDeadline.of(request(alter)).timeoutMs());
    }

    private static AbstractRequest createTopics(int timeoutMs) {
        return new CreateTopicsRequest.Builder(new CreateTopicsRequestData().setTimeoutMs(timeoutMs)).build();
    }

    private static Request request(AbstractRequest body) {
        ApiKeys api = body.apiKey();
        RequestHeader header = new RequestHeader(api, body.version(), "test-client", 1);
        RequestContext context = new RequestContext(header, "conn-1", InetAddress.getLoopbackAddress(),
                KafkaPrincipal.ANONYMOUS, ListenerName.forSecurityProtocol(SecurityProtocol.PLAINTEXT),
                SecurityProtocol.PLAINTEXT, ClientInformation.EMPTY, false);
        return new Request(context, body, RECEIVED, 0, new Request.ResponseSink() {
            @Override
            public void send(Request request, Send send) {
            }

            @Override
            public void noResponse(Request request) {
            }

            @Override
            public void close(Request request) {
            }

            @Override
            public void throttleStarted(Request request) {
            }

            @Override
            public void throttleEnded(Request request) {
            }

            @Override
            public ResponseThrottling throttling() {
                return ResponseThrottling.NONE;
            }
        });
    }
}
