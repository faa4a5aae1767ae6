package io.twinlog.share.fetch;

import io.twinlog.share.partition.SharePartitions;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.InvalidShareSessionEpochException;
import org.apache.kafka.common.errors.ShareSessionLimitReachedException;
import org.apache.kafka.common.errors.ShareSessionNotFoundException;
import org.apache.kafka.common.requests.ShareRequestMetadata;
import org.apache.kafka.common.utils.internals.ImplicitLinkedHashCollection;
import org.apache.kafka.server.network.ConnectionDisconnectListener;
import org.apache.kafka.server.share.CachedSharePartition;
import org.apache.kafka.server.share.ShareGroupListener;
import org.apache.kafka.server.share.context.FinalContext;
import org.apache.kafka.server.share.context.ShareFetchContext;
import org.apache.kafka.server.share.context.ShareSessionContext;
import org.apache.kafka.server.share.session.ShareSession;
import org.apache.kafka.server.share.session.ShareSessionCache;
import org.apache.kafka.server.share.session.ShareSessionKey;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The share sessions of this broker's share consumers (KIP-932), in Kafka's {@link ShareSessionCache}
 * ({@code max.share.sessions} of them), with Kafka's rules for a request's session epoch: 0 opens a session (a
 * member's earlier one is dropped; acknowledgements are refused, there is nothing to acknowledge yet), -1 is the
 * last request of a session, any other epoch must be the session's next one (SHARE_SESSION_NOT_FOUND,
 * INVALID_SHARE_SESSION_EPOCH, SHARE_SESSION_LIMIT_REACHED otherwise).
 *
 * <p>A member whose connection closes leaves its sessions: the cache tells its listener, which makes the member's
 * acquired records available again, and tells the share partitions when a group has no session left here. The
 * network thread only queues the closed connection's id; the cache is worked on {@code twinlog-share-sessions-<id>}.
 */
public final class ShareSessions implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ShareSessions.class);
    /** Closed connections waiting for the session thread; more than this many at once are dropped with a WARN. */
    private static final int MAX_QUEUED_DISCONNECTS = 10_000;

    private final ShareSessionCache cache;
    private final ThreadPoolExecutor disconnects;
    private final ConnectionDisconnectListener disconnectListener;

    public ShareSessions(int brokerId, int maxSessions, SharePartitions partitions) {
        this.cache = new ShareSessionCache(maxSessions);
        cache.registerShareGroupListener(new ShareGroupListener() {
            @Override
            public void onMemberLeave(String groupId, String memberId) {
                log.info("Share group {} member {} left this broker's sessions (connection closed): its acquired "
                        + "records are released", groupId, memberId);
                release(partitions, groupId, memberId);
            }

            @Override
            public void onGroupEmpty(String groupId) {
                partitions.onGroupEmpty(groupId);
            }
        });
        this.disconnects = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(MAX_QUEUED_DISCONNECTS), r -> {
                    Thread t = new Thread(r, "twinlog-share-sessions-" + brokerId);
                    t.setDaemon(true);
                    return t;
                });
        // started now rather than at the first closed connection: the broker's threads are the same from its start
        // on, so a thread count taken at any time (MirrorLeakTest) sees no thread appear later
        disconnects.prestartCoreThread();
        ConnectionDisconnectListener onCache = cache.connectionDisconnectListener();
        this.disconnectListener = connectionId -> {
            try {
                disconnects.execute(() -> {
                    try {
                        onCache.onDisconnect(connectionId);
                    } catch (RuntimeException e) {
                        // broad: the sessions thread must go on with the next closed connection
                        log.error("Could not end the share session of closed connection {}", connectionId, e);
                    }
                });
            } catch (RejectedExecutionException e) {
                // closing, or a storm of closes: the member's records come back when their locks expire
                log.warn("Closed connection {} not handed to the share sessions: {}", connectionId, e.toString());
            }
        };
    }

    /** Releases what {@code memberId} holds in its group's partitions here; a failure is logged, not thrown. */
    static void release(SharePartitions partitions, String groupId, String memberId) {
        partitions.releaseAcquiredRecords(groupId, memberId).whenComplete((v, e) -> {
            if (e != null) {
                log.warn("Could not release the records share group {} member {} acquired here; they come back "
                        + "when their acquisition locks expire", groupId, memberId, e);
            }
        });
    }

    /** For every listener's {@code SocketServer}: closed connections end their sessions (off the network thread). */
    public ConnectionDisconnectListener disconnectListener() {
        return disconnectListener;
    }

    /**
     * The session context of a ShareFetch: a new session at epoch 0, the final one at -1, else the member's session
     * moved to its next epoch with {@code added} partitions added and {@code forgotten} ones removed.
     *
     * @throws ApiException with Kafka's error for a bad epoch or a full cache
     */
    public ShareFetchContext newContext(String groupId, String memberId, int epoch, List<TopicIdPartition> added,
                                        List<TopicIdPartition> forgotten, boolean acknowledgementsPresent,
                                        String connectionId) {
        ShareSessionKey key = new ShareSessionKey(groupId, memberId);
        if (epoch == ShareRequestMetadata.FINAL_EPOCH) {
            if (cache.get(key) == null) {
                throw new ShareSessionNotFoundException("No share session for member " + memberId + " of group "
                        + groupId);
            }
            return new FinalContext();
        }
        if (epoch == ShareRequestMetadata.INITIAL_EPOCH) {
            if (acknowledgementsPresent) {
                throw new InvalidRequestException("A ShareFetch opening a share session carries acknowledgements");
            }
            if (cache.remove(key) != null) {
                log.debug("Share session {} replaced by a new one", key);
            }
            ImplicitLinkedHashCollection<CachedSharePartition> partitions =
                    new ImplicitLinkedHashCollection<>(added.size());
            added.forEach(tip -> partitions.mustAdd(new CachedSharePartition(tip, false)));
            if (cache.maybeCreateSession(groupId, memberId, partitions, connectionId) == null) {
                throw new ShareSessionLimitReachedException("This broker holds its maximum of share sessions");
            }
            return new ShareSessionContext(epoch, added);
        }
        // the epoch check and the move to the next epoch are one step: two requests of a session cannot both pass
        synchronized (cache) {
            ShareSession session = sessionAt(key, epoch);
            session.update(added, forgotten);
            cache.updateNumPartitions(session);
            session.epoch = ShareRequestMetadata.nextEpoch(session.epoch);
            return new ShareSessionContext(epoch, session);
        }
    }

    /**
     * A ShareAcknowledge's epoch: checked and moved to the next one; -1 (the session's last request) only checks
     * the session exists, 0 is refused (a session is opened by ShareFetch only).
     */
    public void acknowledgeSessionUpdate(String groupId, String memberId, int epoch) {
        if (epoch == ShareRequestMetadata.INITIAL_EPOCH) {
            throw new InvalidShareSessionEpochException("A ShareAcknowledge cannot open a share session");
        }
        ShareSessionKey key = new ShareSessionKey(groupId, memberId);
        synchronized (cache) {
            if (epoch == ShareRequestMetadata.FINAL_EPOCH) {
                if (cache.get(key) == null) {
                    throw new ShareSessionNotFoundException("No share session for member " + memberId + " of group "
                            + groupId);
                }
                return;
            }
            ShareSession session = sessionAt(key, epoch);
            cache.updateNumPartitions(session);
            session.epoch = ShareRequestMetadata.nextEpoch(session.epoch);
        }
    }

    private ShareSession sessionAt(ShareSessionKey key, int epoch) {
        ShareSession session = cache.get(key);
        if (session == null) {
            throw new ShareSessionNotFoundException("No share session for member " + key.memberId() + " of group "
                    + key.groupId());
        }
        if (session.epoch != epoch) {
            throw new InvalidShareSessionEpochException("The share session of member " + key.memberId()
                    + " is at epoch " + session.epoch + ", the request says " + epoch);
        }
        return session;
    }

    /**
     * Ends a member's session after its final request (epoch -1) and releases the records it still holds here.
     * Nothing happens if the session is already gone.
     */
    public void closeSession(String groupId, String memberId, SharePartitions partitions) {
        if (cache.remove(new ShareSessionKey(groupId, memberId)) != null) {
            log.debug("Share session of group {} member {} closed by its final request", groupId, memberId);
            release(partitions, groupId, memberId);
        }
    }

    /** The partitions of a member's session, empty without one. */
    public List<TopicIdPartition> partitionsOf(String groupId, String memberId) {
        ShareSession session = cache.get(new ShareSessionKey(groupId, memberId));
        List<TopicIdPartition> partitions = new ArrayList<>();
        if (session != null) {
            session.partitionMap().forEach(p -> partitions.add(new TopicIdPartition(p.topicId(), p.partition(),
                    p.topic())));
        }
        return partitions;
    }

    /** share.version went below 1: every session ends (Kafka's {@code onShareVersionToggle}). */
    public void removeAll() {
        cache.removeAllSessions();
    }

    /** Sessions held, for tests and metrics. */
    public int size() {
        return cache.size();
    }

    @Override
    public void close() throws InterruptedException {
        disconnects.shutdown();
        if (!disconnects.awaitTermination(5, TimeUnit.SECONDS)) {
            log.warn("The share session thread did not stop within 5 s");
            disconnects.shutdownNow();
        }
    }
}
