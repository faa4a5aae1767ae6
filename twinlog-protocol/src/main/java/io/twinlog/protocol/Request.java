package io.twinlog.protocol;

import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One parsed request from a client connection, with the means to answer it exactly once.
 *
 * <p>The connection stays muted (no further request is read from it) until {@link #respond} or
 * {@link #noResponse} is called, which keeps responses in request order as Kafka clients require. Both may be
 * called from any thread, including a purgatory expiry thread.
 */
public final class Request {
    private final RequestContext context;
    private final AbstractRequest body;
    private final long receivedNanos;
    private final int sizeInBytes;
    private final ResponseSink sink;
    private final AtomicBoolean answered = new AtomicBoolean();
    private final CustomApiHeader customHeader;
    private final java.nio.ByteBuffer customBody;
    private final String connectionId;

    Request(RequestContext context, AbstractRequest body, long receivedNanos, int sizeInBytes, ResponseSink sink) {
        this.context = context;
        this.body = body;
        this.receivedNanos = receivedNanos;
        this.sizeInBytes = sizeInBytes;
        this.sink = sink;
        this.customHeader = null;
        this.customBody = null;
        this.connectionId = context.connectionId;
    }

    /** A request of a Twinlog API (not a Kafka API key): header parsed, body left for the handler to decode. */
    Request(CustomApiHeader header, java.nio.ByteBuffer body, String connectionId, long receivedNanos, int sizeInBytes,
            ResponseSink sink) {
        this.context = null;
        this.body = null;
        this.receivedNanos = receivedNanos;
        this.sizeInBytes = sizeInBytes;
        this.sink = sink;
        this.customHeader = header;
        this.customBody = body;
        this.connectionId = connectionId;
    }

    public boolean isCustom() {
        return customHeader != null;
    }

    public CustomApiHeader customHeader() {
        return customHeader;
    }

    /** The undecoded body of a Twinlog API request. */
    public java.nio.ByteBuffer customBody() {
        return customBody.duplicate();
    }

    /** Answers a Twinlog API request with an encoded response body (the header is added here). */
    public void respondCustom(java.nio.ByteBuffer responseBody) {
        if (answered.compareAndSet(false, true)) {
            sink.send(this, new org.apache.kafka.common.network.ByteBufferSend(customHeader.responseFrame(responseBody)));
        }
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
            sink.send(this, context.buildResponseSend(response));
        }
    }

    /** For requests that carry no response (acks=0 produce): lets the connection read its next request. */
    public void noResponse() {
        if (answered.compareAndSet(false, true)) {
            sink.noResponse(this);
        }
    }

    /** Closes the connection without answering, for requests the broker cannot answer safely. */
    public void closeConnection() {
        if (answered.compareAndSet(false, true)) {
            sink.close(this);
        }
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
        void send(Request request, org.apache.kafka.common.network.Send send);

        void noResponse(Request request);

        void close(Request request);
    }
}
