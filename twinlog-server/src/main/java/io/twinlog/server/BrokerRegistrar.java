package io.twinlog.server;

import io.twinlog.common.tasks.BackgroundTask;
import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.zk.MetadataStore;
import io.twinlog.controller.zk.MetadataStore.RegistrationSync;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.ExponentialBackoff;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * Keeps this broker registered in ZooKeeper: {@code /brokers/ids/<id>} is the current session's ephemeral node and
 * holds the registration the broker last asked for (offline log dirs, controlled shutdown).
 *
 * <p>A ZooKeeper session can expire while the broker runs (ZooKeeper away longer than
 * {@code zookeeper.session.timeout.ms}); Curator then reports LOST and, once ZooKeeper is back, RECONNECTED on a new
 * session. The broker registers again on that new session at once, replacing the node its expired session may
 * have left ({@link MetadataStore#syncRegistration}), and checks again every {@value #CHECK_INTERVAL_MS} ms, so a
 * missed notification or a failed write costs at most that.
 *
 * <p>Threading: callers change the wanted registration in memory under a lock and get a future; one writer thread
 * makes every ZooKeeper write, in order, retrying with backoff while ZooKeeper is away. No lock is held across
 * ZooKeeper I/O, so a caller never waits behind a write that waits for ZooKeeper (issue 25, point 4).
 */
final class BrokerRegistrar implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BrokerRegistrar.class);
    private static final long CHECK_INTERVAL_MS = 5_000;
    private static final ExponentialBackoff RETRY_BACKOFF = new ExponentialBackoff(200, 2, 5_000, 0.2);

    private final int brokerId;
    private final MetadataStore store;
    private final ScheduledExecutorService writer;
    /**
     * The age of the last check that found the registration in place (or wrote it): STALE when the broker has not
     * been registered for three checks, a ZooKeeper that refuses it or a chain that stopped (decision 78).
     */
    private final BackgroundTask liveness;
    private final Object lock = new Object();
    // guarded by lock
    private BrokerRegistration wanted;
    private long wantedVersion;
    private boolean registered;
    private boolean closed;
    private final List<PendingWrite> pending = new ArrayList<>();
    // writer thread only
    private int failedAttempts;

    private record PendingWrite(long version, CompletableFuture<Void> future) {
    }

    /** @param initial what to register; changes made before {@link #register} are carried by the first write */
    BrokerRegistrar(int brokerId, MetadataStore store, BrokerRegistration initial) {
        this.brokerId = brokerId;
        this.store = store;
        this.wanted = initial;
        this.liveness = BackgroundTask.loop("broker-registration", CHECK_INTERVAL_MS, Time.SYSTEM, log);
        this.writer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "twinlog-registration-" + brokerId);
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Registers the broker (blocking: start-up). A node left by this broker's previous process (a kill -9 a moment
     * ago) is waited out up to {@code waitForStaleMs}, as before; a node held by a live broker then is a duplicate
     * broker.id and fails the start.
     */
    void register(CuratorFramework zk, long waitForStaleMs) throws Exception {
        BrokerRegistration first;
        synchronized (lock) {
            first = wanted;
        }
        try {
            writer.submit(() -> {
                store.registerBroker(first, waitForStaleMs);
                return null;
            }).get();
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
        synchronized (lock) {
            registered = true;
        }
        zk.getConnectionStateListenable().addListener((client, state) -> onConnectionStateChange(state));
        schedule(this::checkAndReschedule, CHECK_INTERVAL_MS);
        syncSoon(); // changes made while the first write ran
    }

    /** The registration as last asked for (may not be written yet). */
    BrokerRegistration wanted() {
        synchronized (lock) {
            return wanted;
        }
    }

    /**
     * Changes the registration; the future completes once ZooKeeper holds it (at once before {@link #register}:
     * the first write carries it). Never blocks.
     */
    CompletableFuture<Void> update(UnaryOperator<BrokerRegistration> change) {
        CompletableFuture<Void> written = new CompletableFuture<>();
        synchronized (lock) {
            wanted = change.apply(wanted);
            wantedVersion++;
            if (closed) {
                written.completeExceptionally(new IllegalStateException("broker " + brokerId + " is shutting down"));
                return written;
            }
            if (!registered) {
                written.complete(null);
                return written;
            }
            pending.add(new PendingWrite(wantedVersion, written));
        }
        syncSoon();
        return written;
    }

    private void onConnectionStateChange(ConnectionState state) {
        switch (state) {
            case LOST -> log.warn("ZooKeeper session of broker {} lost (ZooKeeper away longer than the session "
                    + "timeout); the broker keeps serving and registers again on its next session", brokerId);
            case SUSPENDED -> log.warn("Broker {} lost its ZooKeeper connection; its session lives on until the "
                    + "session timeout", brokerId);
            case RECONNECTED, CONNECTED -> syncSoon();
            default -> {
            }
        }
    }

    /** One attempt now; if it fails, the periodic check retries it. */
    private void syncSoon() {
        schedule(this::sync, 0);
    }

    /**
     * The one periodic chain: a check every {@value #CHECK_INTERVAL_MS} ms, sooner (with backoff) after a failure.
     * Only this chain reschedules itself, so attempts never multiply while ZooKeeper is away.
     */
    private void checkAndReschedule() {
        boolean written = false;
        try {
            written = sync();
        } finally {
            // whatever sync let through (an Error), the chain goes on: it is the only one that retries
            schedule(this::checkAndReschedule, written ? CHECK_INTERVAL_MS : RETRY_BACKOFF.backoff(failedAttempts));
        }
    }

    /** The registration's health among the broker's background tasks. */
    BackgroundTask liveness() {
        return liveness;
    }

    private void schedule(Runnable task, long delayMs) {
        try {
            writer.schedule(task, delayMs, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // closing: nothing more to register
        }
    }

    /** On the writer thread: make ZooKeeper hold the wanted registration in this session; false if it does not. */
    private boolean sync() {
        BrokerRegistration target;
        long version;
        synchronized (lock) {
            if (closed || !registered) {
                return true;
            }
            target = wanted;
            version = wantedVersion;
        }
        try {
            RegistrationSync outcome = store.syncRegistration(target);
            switch (outcome) {
                case CREATED -> log.info("Broker {} registered again in ZooKeeper on its new session (its earlier "
                        + "session's node was gone)", brokerId);
                case REPLACED_STALE -> log.info("Broker {} registered again in ZooKeeper on its new session, "
                        + "replacing the node its expired session left", brokerId);
                case HELD_BY_ANOTHER -> {
                    failedAttempts++;
                    log.error("Broker {} cannot register: /brokers/ids/{} is held by another session with other "
                            + "endpoints (a second broker with broker.id={}?); retrying", brokerId, brokerId, brokerId);
                    return false;
                }
                default -> {
                }
            }
            failedAttempts = 0;
            completeWritten(version);
            liveness.iterationCompleted();
            return true;
        } catch (Throwable e) { // an Error too: this thread is the registration's only writer
            failedAttempts++;
            if (failedAttempts == 1) {
                log.warn("Broker {} could not write its registration to ZooKeeper; retrying", brokerId, e);
            } else {
                log.warn("Broker {} could not write its registration to ZooKeeper (attempt {}: {}); retrying",
                        brokerId, failedAttempts, e.toString());
            }
            return false;
        }
    }

    private void completeWritten(long version) {
        List<PendingWrite> done = new ArrayList<>();
        synchronized (lock) {
            pending.removeIf(p -> p.version() <= version && done.add(p));
        }
        done.forEach(p -> p.future().complete(null));
    }

    @Override
    public void close() throws InterruptedException {
        List<PendingWrite> left;
        synchronized (lock) {
            closed = true;
            left = new ArrayList<>(pending);
            pending.clear();
        }
        writer.shutdownNow();
        writer.awaitTermination(10, TimeUnit.SECONDS);
        left.forEach(p -> p.future().completeExceptionally(
                new IllegalStateException("broker " + brokerId + " shut down before its registration was written")));
    }
}
