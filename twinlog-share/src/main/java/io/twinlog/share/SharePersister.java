package io.twinlog.share;

import io.twinlog.protocol.client.InterBrokerClient;
import io.twinlog.protocol.client.MonotonicTime;
import org.apache.kafka.clients.NetworkClient;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.share.persister.DefaultStatePersister;
import org.apache.kafka.server.share.persister.Persister;
import org.apache.kafka.server.share.persister.ShareCoordinatorMetadataCacheHelper;
import org.apache.kafka.server.util.timer.SystemTimer;
import org.apache.kafka.server.util.timer.SystemTimerReaper;
import org.apache.kafka.server.util.timer.Timer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kafka's share-group persister ({@link DefaultStatePersister}), as Kafka's brokers run it: the group coordinator
 * initializes, reads and deletes share partitions' state through it, and it sends the state RPCs to the share
 * coordinator that owns each key (found with {@link ImageShareCoordinatorLocator}, or FindCoordinator), batching
 * per broker and retrying, on its own send thread over one non-blocking {@link NetworkClient} on the inter-broker
 * listener. It goes through the network also when this broker is the coordinator, as Kafka's does.
 */
public final class SharePersister implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SharePersister.class);

    private final Metrics metrics = new Metrics();
    private final Timer timer;
    private final DefaultStatePersister persister;

    /**
     * @param channel          connections on the inter-broker listener (its security and credentials)
     * @param requestTimeoutMs how long one state RPC may take before the persister retries it
     */
    public SharePersister(int brokerId, ChannelBuilder channel, ShareCoordinatorMetadataCacheHelper locator,
                          int requestTimeoutMs, Time time) {
        String clientId = "twinlog-share-persister-" + brokerId;
        // several requests in flight per broker: the persister batches per coordinator but does not wait for one
        // answer before sending the next
        NetworkClient client = InterBrokerClient.networkClient(clientId, channel, metrics, 5, requestTimeoutMs,
                -1, 50, 1_000, MonotonicTime.orMock(time));
        this.timer = new SystemTimerReaper("twinlog-persister-reaper-" + brokerId,
                new SystemTimer("twinlog-persister-timer-" + brokerId));
        this.persister = DefaultStatePersister.instance(client, locator, time, timer);
    }

    public Persister persister() {
        return persister;
    }

    @Override
    public void close() {
        persister.stop(); // also closes the network client
        try {
            timer.close();
        } catch (Exception e) {
            // broad: Kafka's timer close throws Exception; closing goes on
            log.warn("Could not close the share persister's timer", e);
        }
        metrics.close();
    }
}
