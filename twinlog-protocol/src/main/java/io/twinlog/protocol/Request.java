package io.twinlog.protocol;

import org.apache.kafka.common.network.ByteBufferSend;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One parsed request from a client connection, with the means to answer it exactly once.
 *
 * <p>The connection stays muted (no further request is read from it) until {@link #respond} or
 * {@link #noResponse} is called, which keeps responses in request order as Kafka clients require. Both may be
 * called from any thread, including a purgatory expiry thread.
 *
 * <p>A response that cannot be written (a handler set a field the request's version does not carry, for
 * example) closes the connection with one ERROR line: the request is already marked answered, so no second
 * response may follow, and a client waiting for an answer that never comes would hang on a muted connection.
 */
public final class Request {
    private static final Logger log = LoggerFactory.getLogger(Request.class);
    private final RequestContext context;
    private final AbstractRequest body;
    private final long receivedNanos;
    private final int sizeInBytes;
    private final ResponseSink sink;
    private final AtomicBoolean answered = new AtomicBoolean();
    private final CustomApiHeader customHeader;
    private final ByteBuffer customBody;
    private final String connectionId;
    /** Who sent it, for the authorizer: the Kafka request's context, or a Twinlog API request's own. */
    private final AuthorizableRequestContext authorizationContext;
    // when it was read and when each later stage ended (System.nanoTime, one clock for every stamp; 0 until
    // reached), for RequestMetrics
    private volatile long dequeuedNanos;
    private volatile long localCompleteNanos;
    private volatile long responseReadyNanos;
    private volatile long responseDequeuedNanos;
    private volatile Map<Errors, Integer> errorCounts;
    private volatile String customName;
    private volatile boolean unsupportedVersion;
    /** Set by a handler that applied the client quotas itself; -1: the generic request quota applies. */
    private volatile int handlerThrottleTimeMs = -1;
    private volatile int throttleTimeMs;

    Request(RequestContext context, AbstractRequest body, long receivedNanos, int sizeInBytes, ResponseSink sink) {
        this.context = context;
        this.body = body;
        this.receivedNanos = receivedNanos;
        this.sizeInBytes = sizeInBytes;
        this.sink = sink;
        this.customHeader = null;
        this.customBody = null;
        this.connectionId = context.connectionId;
        this.authorizationContext = context;
    }

    /** A request of a Twinlog API (not a Kafka API key): header parsed, body left for the handler to decode. */
    Request(CustomApiHeader header, ByteBuffer body, String connectionId, AuthorizableRequestContext sender,
            long receivedNanos, int sizeInBytes, ResponseSink sink) {
        this.context = null;
        this.body = null;
        this.receivedNanos = receivedNanos;
        this.sizeInBytes = sizeInBytes;
        this.sink = sink;
        this.customHeader = header;
        this.customBody = body;
        this.connectionId = connectionId;
        this.authorizationContext = sender;
    }

    public boolean isCustom() {
        return customHeader != null;
    }

    public CustomApiHeader customHeader() {
        return customHeader;
    }

    /** The undecoded body of a Twinlog API request. */
    public ByteBuffer customBody() {
        return customBody.duplicate();
    }

    /** Answers a Twinlog API request with an encoded response body (the header is added here). */
    public void respondCustom(ByteBuffer responseBody) {
        if (answered.compareAndSet(false, true)) {
            markResponseReady();
            Send send;
            try {
                send = new ByteBufferSend(customHeader.responseFrame(responseBody));
            } catch (RuntimeException e) {
                // broad: a response that cannot be written, for any reason, closes the connection
                closeAfterUnwritableResponse(e);
                return;
            }
            sink.send(this, send);
        }
    }

    /** Who sent the request, as Kafka's authorizer reads it (a Kafka API request's or a Twinlog API request's). */
    public AuthorizableRequestContext authorizationContext() {
        return authorizationContext;
    }

    public RequestContext context() {
        return context;
    }

    public RequestHeader header() {
        return context.header;
    }

    public ApiKeys apiKey() {
        return context.header.apiKey();
    }

    public short apiVersion() {
        return context.header.apiVersion();
    }

    public String clientId() {
        return context.header.clientId();
    }

    public String connectionId() {
        return connectionId;
    }

    public int sizeInBytes() {
        return sizeInBytes;
    }

    public long receivedNanos() {
        return receivedNanos;
    }

    @SuppressWarnings("unchecked")
    public <T extends AbstractRequest> T body() {
        return (T) body;
    }

    /** Sends the response; later calls are ignored (a delayed operation may race with its own expiry). */
    public void respond(AbstractResponse response) {
        if (answered.compareAndSet(false, true)) {
            markResponseReady();
            errorCounts = response.errorCounts();
            applyThrottle(response);
            Send send;
            try {
                send = context.buildResponseSend(response);
            } catch (RuntimeException e) {
                // broad: a response that cannot be written, for any reason, closes the connection
                closeAfterUnwritableResponse(e);
                return;
            }
            sink.send(this, send);
        }
    }

    /**
     * Asks the quotas how long this client is held back and says so in the response. A failure of the quota code
     * is logged and the response goes out unthrottled: a quota must never cost a client its answer.
     */
    private void applyThrottle(AbstractResponse response) {
        int ms;
        try {
            ms = handlerThrottleTimeMs >= 0 ? handlerThrottleTimeMs : sink.throttling().onResponse(this, response);
        } catch (RuntimeException e) {
            // broad: the quota plug-in's failure must not lose the answer; it goes unthrottled
            log.error("Client quotas failed on {}; answering without a throttle", this, e);
            return;
        }
        if (ms > 0) {
            throttleTimeMs = ms;
            response.maybeSetThrottleTimeMs(ms);
        }
    }

    /**
     * The handler recorded this request against the client's quotas itself (Produce and Fetch, which measure
     * bytes) and decided the throttle, already started if positive: {@link #respond} uses it as is.
     */
    public void throttleDecided(int throttleTimeMs) {
        this.handlerThrottleTimeMs = Math.max(0, throttleTimeMs);
        if (throttleTimeMs > 0) {
            this.throttleTimeMs = throttleTimeMs;
        }
    }

    /** KIP-219: from now on the connection stays muted after its response is written, until {@link #endThrottling}. */
    public void startThrottling() {
        sink.throttleStarted(this);
    }

    /** The client's throttle time is over: the connection reads again once its response is written. */
    public void endThrottling() {
        sink.throttleEnded(this);
    }

    /** The throttle time given to the client in this request's response, 0 if none (for RequestMetrics). */
    int throttleTimeMs() {
        return throttleTimeMs;
    }

    /**
     * Time a request handler thread spent on this request so far, in nanoseconds: what Kafka's request quota
     * ({@code request_percentage}) counts.
     */
    public long handlerThreadNanos() {
        long dequeued = dequeuedNanos;
        if (dequeued == 0) {
            return 0;
        }
        long local = localCompleteNanos;
        return Math.max(0, (local != 0 ? local : System.nanoTime()) - dequeued);
    }

    /**
     * The response could not be serialized (or, from the network thread, not handed to the socket): closes the
     * connection, the only answer left that the client notices at once.
     */
    void closeAfterUnwritableResponse(Throwable cause) {
        log.error("Closing connection {}: could not write the response to {} version {} from client {}: {}",
                connectionId, apiName(), apiVersionForLog(), clientIdForLog(), cause.toString());
        sink.close(this);
    }

    private String apiName() {
        return isCustom() ? "Twinlog API " + customHeader.apiKey() : apiKey().name;
    }

    private short apiVersionForLog() {
        return isCustom() ? customHeader.apiVersion() : apiVersion();
    }

    private String clientIdForLog() {
        return isCustom() ? customHeader.clientId() : clientId();
    }

    /** For requests that carry no response (acks=0 produce): lets the connection read its next request. */
    public void noResponse() {
        if (answered.compareAndSet(false, true)) {
            markResponseReady();
            sink.noResponse(this);
        }
    }

    /** Closes the connection without answering, for requests the broker cannot answer safely. */
    public void closeConnection() {
        if (answered.compareAndSet(false, true)) {
            markResponseReady();
            sink.close(this);
        }
    }

    private void markResponseReady() {
        long now = System.nanoTime();
        responseReadyNanos = now;
        if (localCompleteNanos == 0) {
            localCompleteNanos = now; // answered from its handler: no time spent waiting on others
        }
    }

    void markDequeued() {
        dequeuedNanos = System.nanoTime();
    }

    /** Its handler returned: what follows until the response is ready is remote time (purgatory, other brokers). */
    void markLocalComplete() {
        if (localCompleteNanos == 0) {
            localCompleteNanos = System.nanoTime();
        }
    }

    void markResponseDequeued() {
        responseDequeuedNanos = System.nanoTime();
    }

    void customName(String name) {
        customName = name;
    }

    long dequeuedNanos() {
        return dequeuedNanos;
    }

    long localCompleteNanos() {
        return localCompleteNanos;
    }

    long responseReadyNanos() {
        return responseReadyNanos;
    }

    long responseDequeuedNanos() {
        return responseDequeuedNanos;
    }

    /** The errors its response carried, by count (Kafka's {@code errorCounts}); null without a Kafka response. */
    Map<Errors, Integer> errorCounts() {
        return errorCounts;
    }

    /** The request type in metrics: Kafka's API name ({@code Produce}), or a Twinlog API's registered name. */
    String metricsName() {
        if (isCustom()) {
            return customName != null ? customName : "TwinlogApi" + customHeader.apiKey();
        }
        return apiKey().name;
    }

    /** {@code FetchFollower} or {@code FetchConsumer} for a fetch, as Kafka also counts them; null otherwise. */
    String fetchKind() {
        if (isCustom() || apiKey() != ApiKeys.FETCH) {
            return null;
        }
        return ((FetchRequest) body).replicaId() >= 0 ? "FetchFollower" : "FetchConsumer";
    }

    /**
     * The version as a metric tag; a Twinlog API version this broker does not serve is "unsupported", so that a client
     * cannot create a meter per version number it makes up.
     */
    String versionForMetrics() {
        if (isCustom()) {
            return unsupportedVersion ? "unsupported" : Short.toString(customHeader.apiVersion());
        }
        return Short.toString(apiVersion());
    }

    /** The dispatcher found no handler for this Twinlog API version (the connection is closed). */
    void markUnsupportedVersion() {
        unsupportedVersion = true;
    }

    /** Kafka's error response for this request and the given error. */
    public AbstractResponse errorResponse(Throwable error) {
        return body.getErrorResponse(0, error);
    }

    @Override
    public String toString() {
        if (isCustom()) {
            return "api " + customHeader.apiKey() + " v" + customHeader.apiVersion() + " corr="
                    + customHeader.correlationId() + " client=" + customHeader.clientId() + " conn=" + connectionId;
        }
        return context.header.apiKey() + " v" + context.header.apiVersion() + " corr=" + context.header.correlationId()
                + " client=" + context.header.clientId() + " conn=" + context.connectionId;
    }

    /** Where responses go: implemented by the network processor that read the request. */
    interface ResponseSink {
        void send(Request request, Send send);

        void noResponse(Request request);

        void close(Request request);

        /** Mutes the connection beyond its response (KIP-219); queued before the response it belongs to. */
        void throttleStarted(Request request);

        void throttleEnded(Request request);

        ResponseThrottling throttling();
    }
}
