package io.twinlog.server.quota;

import io.twinlog.protocol.Request;
import io.twinlog.protocol.ResponseThrottling;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.Quota;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.Sanitizer;
import org.apache.kafka.network.Session;
import org.apache.kafka.server.config.ClientQuotaManagerConfig;
import org.apache.kafka.server.config.QuotaConfig;
import org.apache.kafka.server.quota.ClientQuotaEntity.ConfigEntity;
import org.apache.kafka.server.quota.ClientQuotaManager;
import org.apache.kafka.server.quota.ClientRequestQuotaManager;
import org.apache.kafka.server.quota.QuotaType;
import org.apache.kafka.server.quota.ThrottleCallback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Optional;
import java.util.OptionalDouble;
import java.util.concurrent.TimeUnit;

/**
 * The broker's client quotas, enforced by Kafka's own quota managers (kafka-server's {@link ClientQuotaManager} for
 * produce and fetch bytes, {@link ClientRequestQuotaManager} for request-handler time), with Kafka's order of
 * recording and throttling and Kafka's metrics ({@code kafka.server:type=Produce|Fetch|Request,user=,client-id=}).
 *
 * <p>What is recorded, as Kafka 4.4's broker does:
 * <ul>
 *   <li>Produce: the request's size against {@code producer_byte_rate}, and (unless acks=0) its handler time
 *   against {@code request_percentage}, once the append completes; the larger throttle wins.</li>
 *   <li>Consumer fetch: the response's size against {@code consumer_byte_rate} and its handler time; a throttled
 *   fetch is answered empty and its bytes are not counted, and a fetch never asks for more than the quota window
 *   allows. Follower fetches are exempt.</li>
 *   <li>Every other Kafka API: its handler time ({@link #onResponse}); cluster actions (inter-broker APIs) are
 *   exempt, as are Twinlog's own APIs.</li>
 * </ul>
 * A throttled response carries {@code throttle_time_ms}, and its connection stays muted until the throttle ends
 * (KIP-219), through {@link Request#startThrottling()} / {@link Request#endThrottling()}.
 *
 * <p>With no quota set nothing is recorded: one volatile read per request. Thread-safe (the managers are).
 */
public final class BrokerQuotas implements ResponseThrottling, ClientQuotaStore.Listener, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BrokerQuotas.class);
    private static final double NANOS_TO_PERCENT = 100.0 / TimeUnit.SECONDS.toNanos(1);

    private final Time time;
    private final ClientQuotaManager produce;
    private final ClientQuotaManager fetch;
    private final ClientRequestQuotaManager request;

    public BrokerQuotas(int numSamples, int windowSizeSeconds, Metrics metrics, Time time, int brokerId) {
        this.time = time;
        ClientQuotaManagerConfig config = new ClientQuotaManagerConfig(numSamples, windowSizeSeconds);
        String threadPrefix = "twinlog-broker-" + brokerId + "-";
        this.produce = new ClientQuotaManager(config, metrics, QuotaType.PRODUCE, time, threadPrefix);
        this.fetch = new ClientQuotaManager(config, metrics, QuotaType.FETCH, time, threadPrefix);
        this.request = new ClientRequestQuotaManager(config, metrics, time, threadPrefix, Optional.empty());
    }

    /** A quota value changed in ZooKeeper: hands it to the manager of its kind. */
    @Override
    public void onQuota(ClientQuotaEntity entity, String key, OptionalDouble value) {
        ClientQuotaManager manager = switch (key) {
            case QuotaConfig.PRODUCER_BYTE_RATE_OVERRIDE_CONFIG -> produce;
            case QuotaConfig.CONSUMER_BYTE_RATE_OVERRIDE_CONFIG -> fetch;
            case QuotaConfig.REQUEST_PERCENTAGE_OVERRIDE_CONFIG -> request;
            default -> null; // controller_mutation_rate, connection_creation_rate: stored, not enforced
        };
        if (manager == null || entity.entries().containsKey(ClientQuotaEntity.IP)) {
            log.debug("Client quota {} of {} is stored but not enforced by Twinlog", key, entity);
            return;
        }
        // two classes share the name ClientQuotaEntity: the wire's (kafka-clients) and the managers' (kafka-server)
        Optional<ConfigEntity> user = entity.entries().containsKey(ClientQuotaEntity.USER)
                ? Optional.of(userEntity(entity.entries().get(ClientQuotaEntity.USER))) : Optional.empty();
        Optional<ConfigEntity> client = entity.entries().containsKey(ClientQuotaEntity.CLIENT_ID)
                ? Optional.of(clientEntity(entity.entries().get(ClientQuotaEntity.CLIENT_ID))) : Optional.empty();
        manager.updateQuota(user, client,
                value.isPresent() ? Optional.of(new Quota(value.getAsDouble(), true)) : Optional.empty());
    }

    private static ConfigEntity userEntity(String user) {
        return user == null ? ClientQuotaManager.DEFAULT_USER_ENTITY
                : new ClientQuotaManager.UserEntity(Sanitizer.sanitize(user));
    }

    private static ConfigEntity clientEntity(String clientId) {
        return clientId == null ? ClientQuotaManager.DEFAULT_USER_CLIENT_ID
                : new ClientQuotaManager.ClientIdEntity(clientId);
    }

    /**
     * A produce's append completed: records its bytes and (unless acks=0) its handler time, starts the larger
     * throttle, and tells the request, whose response then carries it.
     */
    public void onProduceAppended(Request r, boolean acksZero) {
        if (!produce.quotasEnabled() && !request.quotasEnabled()) {
            r.throttleDecided(0);
            return;
        }
        Session session = session(r);
        long now = time.milliseconds();
        int bandwidth = produce.maybeRecordAndGetThrottleTimeMs(session, r.clientId(), r.sizeInBytes(), now);
        int requestTime = acksZero ? 0 : request.maybeRecordAndGetThrottleTimeMs(session, r.clientId(),
                percent(r), now);
        int throttle = Math.max(bandwidth, requestTime);
        if (throttle > 0) {
            (bandwidth > requestTime ? produce : request).throttle(r.clientId(), session, callback(r), throttle);
        }
        r.throttleDecided(throttle);
    }

    /** The most a consumer fetch may return now: what its byte-rate quota allows over the quota window. */
    public int maxConsumerFetchBytes(Request r, int requested) {
        if (!fetch.quotasEnabled()) {
            return requested;
        }
        return (int) Math.min(requested, fetch.maxValueInQuotaWindow(session(r), r.clientId()));
    }

    /**
     * A consumer fetch is ready to answer with {@code responseSize} bytes: records them and its handler time.
     *
     * @return the throttle time; when positive, the caller answers with an empty, throttled response and the
     *         bytes are not counted against the client (it did not get them)
     */
    public int onConsumerFetchReady(Request r, int responseSize) {
        if (!fetch.quotasEnabled() && !request.quotasEnabled()) {
            r.throttleDecided(0);
            return 0;
        }
        Session session = session(r);
        long now = time.milliseconds();
        int requestTime = request.maybeRecordAndGetThrottleTimeMs(session, r.clientId(), percent(r), now);
        int bandwidth = fetch.maybeRecordAndGetThrottleTimeMs(session, r.clientId(), responseSize, now);
        int throttle = Math.max(bandwidth, requestTime);
        if (throttle > 0) {
            fetch.unrecordQuotaSensor(session, r.clientId(), responseSize, now);
            (bandwidth > requestTime ? fetch : request).throttle(r.clientId(), session, callback(r), throttle);
        }
        r.throttleDecided(throttle);
        return throttle;
    }

    /** Any other Kafka response: its handler time against the client's request quota. */
    @Override
    public int onResponse(Request r, AbstractResponse response) {
        if (r.isCustom() || !request.quotasEnabled()) {
            return 0;
        }
        if (r.apiKey().clusterAction || isFollowerFetch(r)) {
            // inter-broker traffic is never throttled; Kafka still counts its time as exempt
            request.exemptSensor().record(percent(r));
            return 0;
        }
        Session session = session(r);
        int throttle = request.maybeRecordAndGetThrottleTimeMs(session, r.clientId(), percent(r),
                time.milliseconds());
        if (throttle > 0) {
            request.throttle(r.clientId(), session, callback(r), throttle);
        }
        return throttle;
    }

    private static boolean isFollowerFetch(Request r) {
        return r.apiKey() == ApiKeys.FETCH && r.<FetchRequest>body().replicaId() >= 0;
    }

    private static double percent(Request r) {
        return r.handlerThreadNanos() * NANOS_TO_PERCENT;
    }

    private static Session session(Request r) {
        return new Session(r.context().principal, r.context().clientAddress);
    }

    private static ThrottleCallback callback(Request r) {
        return new ThrottleCallback() {
            @Override
            public void startThrottling() {
                r.startThrottling();
            }

            @Override
            public void endThrottling() {
                r.endThrottling();
            }
        };
    }

    @Override
    public void close() {
        produce.shutdown();
        fetch.shutdown();
        request.shutdown();
    }
}
