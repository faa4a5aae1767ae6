package io.twinlog.mirror.runtime;

import io.twinlog.common.mirror.BatchIdentity;
import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.mirror.LastMirroredTruncation.LastMirrored;
import io.twinlog.mirror.MirrorTransitions;
import io.twinlog.mirror.fetcher.SimSourceTopics;
import io.twinlog.mirror.partition.EpochHistory;
import io.twinlog.mirror.partition.MirrorAction;
import io.twinlog.mirror.partition.MirrorDecision;
import io.twinlog.mirror.partition.MirrorEvent;
import io.twinlog.mirror.partition.MirrorPartitionDriver;
import io.twinlog.mirror.partition.MirrorPartitionHost;
import io.twinlog.mirror.partition.MirrorPartitionMachine;
import io.twinlog.mirror.partition.MirrorSettings;
import io.twinlog.mirror.partition.PartitionView;
import io.twinlog.mirror.partition.PeerLookup;
import io.twinlog.mirror.partition.PeerLookup.Failure;
import io.twinlog.mirror.partition.SourceProblem;
import io.twinlog.mirror.partition.VersionedRecord;
import io.twinlog.mirror.runtime.PeerFailures.PeerDoubtException;
import io.twinlog.mirror.sim.SimCluster;
import io.twinlog.mirror.sim.SimLog;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.SaslAuthenticationException;

import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;

/**
 * A deterministic simulation of several mirrors of several partitions each between two clusters, A and B, at the
 * level of each cluster's mirror manager, driven by one seed (decision 65). What runs is the broker's own code where
 * it decides: the partition state machine and its driver ({@link MirrorPartitionMachine},
 * {@link MirrorPartitionDriver}), the manager's rule for calls off its thread, per mirror ({@link MirrorCallRouter},
 * {@link MirrorCalls}, {@link PartitionCalls}, each mirror's thread a {@link SimThread} in simulated time), the sorting
 * of peer failures ({@link PeerFailures}, fed the exceptions a real client throws) and the fetcher's view of the
 * source topic ({@code SourceTopicStatus}: deleted, created again, unreachable). Simulated around it: replicas,
 * elections (clean and unclean), controllers, the fetch, the peer's answers, the quarantine topic, and the operator.
 *
 * <p>Each mirror {@code mi} mirrors topic {@code ti} from one cluster into the other; its link (its connections and
 * credentials to its source) fails on its own with every kind of {@link Failure}, a TIMEOUT taking the client's
 * {@value #CALL_TIMEOUT_MS} ms. Its source topic may be deleted, and created again with a new topic ID.
 *
 * <p>Invariants, after every step: those of the one-partition simulation (epochs, DLE &gt; SLE, legal transitions);
 * a truncation is applied only on a peer answer, never on a {@link PeerLookup.Failed}, and only once every record
 * it removes is in the quarantine; no batch of a source topic created again reaches the log that mirrored the old
 * one; each peer failure is sorted as the kind injected. At the end, with faults healed: every acknowledged record
 * is in its cluster's log or quarantine (unless an unclean election or the operator's deletion of the topic took it);
 * every partition is MIRRORING and caught up, STOPPED, PAUSED, or FAILED with the reason expected (its source topic
 * gone, a source divergence); then one mirror, with another mirror's peer blackholed in the middle of its failback
 * on the same manager, fails back within {@value #FAILBACK_BOUND_MS} ms of simulated time.
 */
final class MirrorManagerSimulation {
    static final long STATE_TIMEOUT_MS = 10_000;
    static final long CALL_TIMEOUT_MS = 30_000;
    static final long FAILBACK_BOUND_MS = 5_000;
    private static final long TICK_MS = 500;
    private static final long WORLD_MS = 100;
    private static final long LAG_MAX_MS = 3_000;
    private static final int TRACE = Integer.getInteger("twinlog.sim.trace", 60);

    private final long seed;
    private final Random random;
    private final MirrorPartitionMachine machine;
    private final Site[] sites;
    private final List<Mirror> mirrors = new ArrayList<>();
    private final PriorityQueue<Event> events = new PriorityQueue<>();
    private final Deque<String> trace = new ArrayDeque<>();
    /** Every batch a client wrote: where, in which topic incarnation. */
    private final Map<Long, Origin> origins = new HashMap<>();
    /** Batches acknowledged (below their partition's high watermark once), with the unclean count then. */
    private final Map<Long, Integer> acknowledged = new HashMap<>();
    private final Map<Failure, Integer> faultsInjected = new EnumMap<>(Failure.class);
    private final Stats stats;
    private long nowMs;
    private long nextSeq;
    private long nextBatchId = 1;
    private int step;

    /** Counts over the seeds of a run, for the report. */
    static final class Stats {
        long seeds;
        long steps;
        long peerFailures;
        long cutsApplied;
        long recordsQuarantined;
        long topicsRecreated;
        long topicsDeleted;
        long failbacks;
        long failovers;
        long isolationChecks;
        long acknowledged;
        long uncleanElections;
        final Map<Failure, Long> byKind = new EnumMap<>(Failure.class);
        final Map<String, Long> endStates = new HashMap<>();

        @Override
        public String toString() {
            return seeds + " seeds, " + steps + " steps; " + acknowledged + " records acknowledged, none lost; "
                    + failovers + " failovers, " + failbacks + " failbacks, " + cutsApplied + " cuts ("
                    + recordsQuarantined + " records quarantined first), " + uncleanElections + " unclean elections, "
                    + topicsDeleted + " source topics deleted (" + topicsRecreated + " created again), "
                    + peerFailures + " peer calls failed (links failed by kind " + byKind + "), " + isolationChecks
                    + " isolation checks; partitions at the end: " + endStates;
        }
    }

    private record Event(long timeMs, long seq, Runnable action) implements Comparable<Event> {
        @Override
        public int compareTo(Event o) {
            return timeMs != o.timeMs ? Long.compare(timeMs, o.timeMs) : Long.compare(seq, o.seq);
        }
    }

    private record Origin(int site, String topic, Uuid topicId, int partition) {
    }

    /** One cluster: its mirror manager (a loop, its mirrors' call threads), its quarantine topic, its controller. */
    private final class Site implements SimThread.Clock {
        final int index;
        final String name;
        final MirrorCallRouter router;
        final Map<String, SimThread> threads = new HashMap<>();
        final Map<TopicPartition, Context> contexts = new HashMap<>();
        /** The ids of the batches copied to the quarantine topic. */
        final Set<Long> quarantine = new HashSet<>();
        boolean controllerUp = true;

        Site(int index) {
            this.index = index;
            this.name = index == 0 ? "A" : "B";
            this.router = new MirrorCallRouter(mirror -> {
                SimThread thread = new SimThread(name + "/" + mirror, this);
                threads.put(mirror, thread);
                return new MirrorCalls(mirror, thread::deliver, thread);
            });
        }

        @Override
        public long nowMs() {
            return nowMs;
        }

        @Override
        public void at(long timeMs, Runnable event) {
            MirrorManagerSimulation.this.at(timeMs, event);
        }
    }

    /** The manager's memory of a partition its cluster leads (dropped when the leader changes). */
    private static final class Context {
        final MirrorPartitionDriver driver;
        final PartitionCalls calls = new PartitionCalls();
        final int leaderBroker;

        Context(MirrorPartitionMachine machine, int leaderBroker) {
            this.driver = new MirrorPartitionDriver(machine);
            this.leaderBroker = leaderBroker;
        }
    }

    /** One mirror: topic {@code ti}, one {@link SimCluster} per partition on each side, its link and topic IDs. */
    private final class Mirror {
        final String name;
        final String topic;
        /** Per partition: [A side, B side]. */
        final List<SimCluster[]> parts = new ArrayList<>();
        final Uuid[] topicIds = new Uuid[2];
        int destination;
        /** The topic ID the destination topic mirrors (the source's when the mirror started). */
        Uuid mirroredTopicId;
        /** How the link to the source fails now, or null. */
        Failure fault;
        boolean sourceDeleted;
        /** The source topic was deleted (and maybe created again) while mirrored: the mirror cannot go on. */
        boolean gone;
        boolean recreated;
        SimSourceTopics status;

        Mirror(int i, int partitions) {
            this.name = "m" + i;
            this.topic = "t" + i;
            for (int p = 0; p < partitions; p++) {
                parts.add(new SimCluster[] {new SimCluster("A/" + topic + "-" + p),
                        new SimCluster("B/" + topic + "-" + p)});
            }
        }

        int source() {
            return 1 - destination;
        }

        SimCluster dest(int p) {
            return parts.get(p)[destination];
        }

        SimCluster src(int p) {
            return parts.get(p)[source()];
        }
    }

    private final class AwaitingBarrier extends Exception {
        AwaitingBarrier() {
            super(null, null, false, false);
        }
    }

    MirrorManagerSimulation(long seed, Stats stats) {
        this.seed = seed;
        this.stats = stats;
        this.random = new Random(seed);
        this.machine = new MirrorPartitionMachine(new MirrorSettings(STATE_TIMEOUT_MS, 1_000, 30_000, 5_000, 10),
                random);
        this.sites = new Site[] {new Site(0), new Site(1)};
        int count = 2 + random.nextInt(2);
        for (int i = 0; i < count; i++) {
            Mirror m = new Mirror(i, 1 + random.nextInt(3));
            m.topicIds[0] = uuid(); // from the seed, not Uuid.randomUuid: a run replays exactly
            m.topicIds[1] = uuid();
            boolean flag = random.nextInt(4) == 0;
            for (SimCluster[] pair : m.parts) {
                pair[0].uncleanElectionSupport = flag;
                pair[1].uncleanElectionSupport = flag;
            }
            mirrors.add(m);
        }
    }

    private Uuid uuid() {
        return new Uuid(random.nextLong() | 1, random.nextLong());
    }

    void run(int steps) {
        try {
            for (Mirror m : mirrors) {
                int source = random.nextInt(2);
                for (int p = 0; p < m.parts.size(); p++) {
                    produce(m, m.parts.get(p)[source], source, p, 1 + random.nextInt(5));
                }
                startMirror(m, 1 - source);
            }
            for (Site s : sites) {
                long offset = random.nextInt((int) TICK_MS);
                at(offset, () -> managerTick(s));
            }
            at(0, this::worldTick);
            for (step = 0; step < steps; step++) {
                advance(10 + random.nextInt(600));
                fault();
                checkInvariants();
            }
            heal();
            for (int i = 0; i < 400; i++) {
                advance(250);
                checkInvariants();
            }
            checkConverged();
            checkIsolation();
            stats.seeds++;
            stats.steps += steps;
            stats.acknowledged += acknowledged.size();
            faultsInjected.forEach((k, v) -> stats.byKind.merge(k, (long) v, Long::sum));
        } catch (RuntimeException | AssertionError e) {
            throw new AssertionError("Mirror manager simulation failed with seed " + seed + " at step " + step
                    + " t=" + nowMs + " (replay: -Dtwinlog.sim.seed=" + seed + "): " + e + "\nrecent steps:\n  "
                    + String.join("\n  ", trace) + "\nmirrors:\n" + describe(), e);
        }
    }

    // ---------------------------------------------------------------- time

    private void at(long timeMs, Runnable action) {
        events.add(new Event(Math.max(timeMs, nowMs), nextSeq++, action));
    }

    /** Runs every event due in the next {@code ms}, in order of time (and of scheduling). */
    private void advance(long ms) {
        long until = nowMs + ms;
        while (!events.isEmpty() && events.peek().timeMs() <= until) {
            Event e = events.poll();
            nowMs = e.timeMs();
            e.action().run();
        }
        nowMs = until;
    }

    // ---------------------------------------------------------------- faults and commands

    private void fault() {
        int dice = random.nextInt(100);
        Mirror m = mirrors.get(random.nextInt(mirrors.size()));
        int p = random.nextInt(m.parts.size());
        int side = random.nextInt(2);
        SimCluster c = m.parts.get(p)[side];
        if (dice < 30) {
            if (writable(m, side, p)) {
                produce(m, c, side, p, 1 + random.nextInt(3));
            }
        } else if (dice < 36) {
            int r = random.nextInt(SimCluster.REPLICAS);
            if (c.alive[r]) {
                c.crash(r);
                note(c.name + ": broker " + r + " crashes");
                if (c.leader == r) {
                    elect(m, c);
                }
            }
        } else if (dice < 44) {
            int r = random.nextInt(SimCluster.REPLICAS);
            if (!c.alive[r]) {
                c.alive[r] = true;
                note(c.name + ": broker " + r + " restarts");
                if (!c.hasLeader()) {
                    elect(m, c);
                }
            }
        } else if (dice < 46) {
            Site s = sites[side];
            s.controllerUp = !s.controllerUp;
            forEachPartition(x -> x.controllerUp = sites[0].controllerUp, 0);
            forEachPartition(x -> x.controllerUp = sites[1].controllerUp, 1);
            note(s.name + ": controller " + (s.controllerUp ? "back" : "stops acting"));
        } else if (dice < 52) {
            if (m.fault == null) {
                Failure[] kinds = Failure.values();
                m.fault = kinds[random.nextInt(kinds.length)];
                faultsInjected.merge(m.fault, 1, Integer::sum);
            } else {
                m.fault = null;
            }
            note(m.name + ": link to its source " + (m.fault == null ? "restored" : "fails with " + m.fault));
        } else if (dice < 56) {
            command(m);
        } else if (dice < 57) {
            // the operator deletes a source topic in about one seed of three, and creates it again in most of those
            int rare = random.nextInt(100);
            if (rare < 12 && !m.gone) {
                deleteSourceTopic(m);
            } else if (rare < 30 && m.sourceDeleted && !m.recreated) {
                recreateSourceTopic(m);
            }
        }
    }

    private void forEachPartition(Consumer<SimCluster> action, int side) {
        for (Mirror m : mirrors) {
            for (SimCluster[] pair : m.parts) {
                action.accept(pair[side]);
            }
        }
    }

    private boolean writable(Mirror m, int side, int p) {
        if (m.sourceDeleted && side == m.source()) {
            return false;
        }
        return m.parts.get(p)[side].writable();
    }

    /** An operator command on mirror {@code m}: its desired state, or a failback once its destination failed over. */
    private void command(Mirror m) {
        boolean failedOver = true;
        for (int p = 0; p < m.parts.size(); p++) {
            SimCluster d = m.dest(p);
            failedOver &= d.desired == DesiredMirrorState.STOPPED && d.stored != null
                    && d.stored.record().state() == MirrorPartitionState.STOPPED;
        }
        if (failedOver && !m.gone && random.nextInt(4) > 0) {
            note(m.name + ": failback, " + sites[m.source()].name + " mirrors from " + sites[m.destination].name);
            startMirror(m, m.source());
            stats.failbacks++;
            return;
        }
        if (m.dest(0).desired == DesiredMirrorState.STOPPED) {
            return; // a failover is not undone but by a failback
        }
        int choice = random.nextInt(5);
        DesiredMirrorState desired = choice == 0 ? DesiredMirrorState.PAUSED
                : choice < 3 ? DesiredMirrorState.MIRRORING : DesiredMirrorState.STOPPED;
        if (desired == DesiredMirrorState.STOPPED) {
            stats.failovers++;
        }
        setDesired(m, desired);
    }

    private void setDesired(Mirror m, DesiredMirrorState desired) {
        for (int p = 0; p < m.parts.size(); p++) {
            m.dest(p).desired = desired;
        }
        note(m.name + ": operator sets it to " + desired);
    }

    /** The mirror now copies into {@code destination} (a new mirror there: its record starts afresh). */
    private void startMirror(Mirror m, int destination) {
        for (int p = 0; p < m.parts.size(); p++) {
            SimCluster old = m.dest(p);
            old.mirrorSource = null;
            old.desired = null;
            old.driver = null;
        }
        m.destination = destination;
        m.mirroredTopicId = m.topicIds[m.source()];
        m.status = new SimSourceTopics(sites[m.source()].name, STATE_TIMEOUT_MS, nowMs);
        for (int p = 0; p < m.parts.size(); p++) {
            SimCluster d = m.dest(p);
            d.mirrorSource = m.src(p);
            d.desired = DesiredMirrorState.MIRRORING;
            // the partition's truncation points stay with it (its record is per partition)
            d.stored = d.stored == null ? null : new VersionedRecord(MirrorPartitionRecord.initial(0)
                    .withTruncation(d.stored.record().truncation().completed()), d.stored.version() + 1);
            d.fetching = false;
            d.sourceHighWatermark = null;
            d.sourceDiverged = false;
            d.sourceLeaderlessSinceMs = -1;
            sites[0].contexts.remove(tp(m, p));
            sites[1].contexts.remove(tp(m, p));
        }
    }

    private void deleteSourceTopic(Mirror m) {
        m.sourceDeleted = true;
        m.gone = true;
        stats.topicsDeleted++;
        note(m.name + ": its source topic " + m.topic + " on " + sites[m.source()].name + " is deleted (topic ID "
                + m.topicIds[m.source()] + ")");
    }

    /** The source topic created again: new partitions, empty logs, a new topic ID. */
    private void recreateSourceTopic(Mirror m) {
        int s = m.source();
        m.topicIds[s] = uuid();
        m.sourceDeleted = false;
        m.recreated = true;
        stats.topicsRecreated++;
        for (int p = 0; p < m.parts.size(); p++) {
            SimCluster fresh = new SimCluster(sites[s].name + "/" + m.topic + "-" + p + "'");
            fresh.controllerUp = sites[s].controllerUp;
            m.parts.get(p)[s] = fresh;
            m.dest(p).mirrorSource = fresh; // the fetcher finds the topic by name: only its ID tells them apart
        }
        note(m.name + ": its source topic " + m.topic + " is created again (topic ID " + m.topicIds[s] + ")");
    }

    private void heal() {
        for (Site s : sites) {
            s.controllerUp = true;
        }
        for (Mirror m : mirrors) {
            m.fault = null;
            for (SimCluster[] pair : m.parts) {
                for (SimCluster c : pair) {
                    for (int r = 0; r < SimCluster.REPLICAS; r++) {
                        c.alive[r] = true;
                    }
                    c.controllerUp = true;
                    if (!c.hasLeader()) {
                        elect(m, c);
                    }
                }
            }
        }
        note("healed: every broker up, controllers acting, every link restored");
    }

    private void produce(Mirror m, SimCluster c, int side, int p, int count) {
        if (!c.hasLeader()) {
            return;
        }
        SimLog log = c.leaderLog();
        for (int i = 0; i < count; i++) {
            long id = nextBatchId++;
            origins.put(id, new Origin(side, m.topic, m.topicIds[side], p));
            log.append(new SimLog.Batch(log.logEnd(), c.leaderEpoch, id, false));
        }
    }

    private void elect(Mirror m, SimCluster c) {
        boolean mirroringHere = c.mirrorSource != null && c.desired == DesiredMirrorState.MIRRORING
                && c.stored != null && c.stored.record().state() == MirrorPartitionState.MIRRORING;
        boolean uncleanAllowed = (c.mirrorSource == null || mirroringHere) && random.nextInt(4) == 0;
        boolean unclean = c.elect(uncleanAllowed, nowMs);
        note(c.name + ": " + (c.hasLeader() ? (unclean ? "UNCLEAN " : "") + "election, leader " + c.leader
                + " epoch " + c.leaderEpoch : "no leader"));
        if (unclean) {
            stats.uncleanElections++;
            uncleanCount.merge(c, 1, Integer::sum);
            for (int p = 0; p < m.parts.size(); p++) {
                if (m.src(p) == c) {
                    m.dest(p).sourceDiverged = true;
                }
            }
        }
    }

    /** Per partition replica group, its unclean elections (acknowledged records before one may be lost). */
    private final Map<SimCluster, Integer> uncleanCount = new HashMap<>();

    // ---------------------------------------------------------------- the world between manager passes

    private void worldTick() {
        for (Mirror m : mirrors) {
            for (int p = 0; p < m.parts.size(); p++) {
                for (SimCluster c : m.parts.get(p)) {
                    if (!c.hasLeader() && c.controllerUp) {
                        elect(m, c);
                    }
                    raiseEpochForMirror(c);
                    c.replicate(nowMs, LAG_MAX_MS);
                    recordAcknowledged(c);
                }
            }
            metadataRound(m);
            for (int p = 0; p < m.parts.size(); p++) {
                mirrorFetch(m, p);
            }
        }
        at(nowMs + WORLD_MS, this::worldTick);
    }

    private void recordAcknowledged(SimCluster c) {
        if (!c.hasLeader()) {
            return;
        }
        SimLog log = c.leaderLog();
        int unclean = uncleanCount.getOrDefault(c, 0);
        for (long o = Math.max(0, c.highWatermark - 10); o < c.highWatermark; o++) {
            SimLog.Batch b = log.at(o);
            if (!b.barrier() && producedHere(b, c)) {
                acknowledged.putIfAbsent(b.id(), unclean);
            }
        }
    }

    /** Whether {@code b} was written by a client to {@code c} (not mirrored into it). */
    private boolean producedHere(SimLog.Batch b, SimCluster c) {
        Origin o = origins.get(b.id());
        return o != null && cluster(o) == c;
    }

    private SimCluster cluster(Origin o) {
        for (Mirror m : mirrors) {
            if (m.topic.equals(o.topic()) && m.topicIds[o.site()].equals(o.topicId())) {
                return m.parts.get(o.partition())[o.site()];
            }
        }
        return null; // its topic was deleted
    }

    private void raiseEpochForMirror(SimCluster c) {
        if (c.controllerUp && c.hasLeader() && c.stored != null
                && c.stored.record().minLeaderEpoch() > c.leaderEpoch) {
            c.bumpEpoch(c.stored.record().minLeaderEpoch());
            note(c.name + ": controller raises the leader epoch to " + c.leaderEpoch);
        }
    }

    /** The destination's fetcher asks the source for the mirror's topic (SourceTopicStatus keeps the answer). */
    private void metadataRound(Mirror m) {
        if (m.fault != null) {
            m.status.unanswered(m.name + " cannot reach its source: " + m.fault, m.fault == Failure.AUTHENTICATION);
        } else if (m.sourceDeleted) {
            m.status.answered(Map.of(), Set.of(m.topic), nowMs);
        } else {
            m.status.answered(Map.of(m.topic, m.topicIds[m.source()]), Set.of(), nowMs);
        }
    }

    /** One fetch of destination partition {@code p} from its source's leader, as the mirror fetcher does. */
    private void mirrorFetch(Mirror m, int p) {
        SimCluster d = m.dest(p);
        SimCluster s = m.src(p);
        if (!d.fetching || !d.hasLeader() || m.fault != null || m.sourceDeleted
                || !m.status.isMirroredTopic(m.topic, m.topicIds[m.source()])) {
            return;
        }
        if (!s.hasLeader()) {
            if (d.sourceLeaderlessSinceMs < 0) {
                d.sourceLeaderlessSinceMs = nowMs;
            } else if (nowMs - d.sourceLeaderlessSinceMs > STATE_TIMEOUT_MS) {
                d.sourceLeaderlessSinceMs = -1;
                d.fetching = false;
                event(m, p, new MirrorEvent.FetchFailed("the source partition has had no leader", true));
            }
            return;
        }
        d.sourceLeaderlessSinceMs = -1;
        SimLog local = d.leaderLog();
        SimLog source = s.leaderLog();
        long end = local.logEnd();
        if (end > 0) {
            int lastEpoch = local.latestEpoch();
            var answer = source.epochs().endOffsetFor(lastEpoch, source.logEnd());
            boolean agrees = answer.isPresent() && answer.get().epoch() == lastEpoch
                    && answer.get().endOffset() >= end;
            if (!agrees) {
                d.fetching = false;
                note(d.name + ": fetcher sees the source diverge at " + end);
                event(m, p, new MirrorEvent.SourceDiverged(answer.map(EpochHistory.EpochEnd::epoch).orElse(-1),
                        answer.map(EpochHistory.EpochEnd::endOffset).orElse(-1L), "Source divergence detected"));
                return;
            }
        }
        d.sourceHighWatermark = s.highWatermark;
        int copied = 0;
        for (long o = end; o < s.highWatermark && copied < 5; o++, copied++) {
            SimLog.Batch batch = source.at(o);
            if (batch.epoch() < local.latestEpoch()) {
                check(d.issue12Gap || d.sourceDiverged, d.name + ": the source's batch at " + o + " has epoch "
                        + batch.epoch() + ", below the mirrored log's " + local.latestEpoch());
                d.fetching = false;
                event(m, p, new MirrorEvent.FetchFailed("Source divergence detected (epochs go down)", false));
                return;
            }
            if (batch.epoch() >= d.leaderEpoch) {
                d.fetching = false;
                event(m, p, new MirrorEvent.EpochFencingNeeded(batch.epoch()));
                return;
            }
            local.append(batch);
        }
    }

    // ---------------------------------------------------------------- the mirror manager of each cluster

    private static TopicPartition tp(Mirror m, int p) {
        return new TopicPartition(m.topic, p);
    }

    /** Every half second: a pass over every mirror partition this cluster leads (MirrorManager#tick). */
    private void managerTick(Site site) {
        Set<String> led = new HashSet<>();
        for (Mirror m : mirrors) {
            if (m.destination != site.index) {
                continue;
            }
            for (int p = 0; p < m.parts.size(); p++) {
                if (m.dest(p).hasLeader()) {
                    led.add(m.name);
                }
                pass(m, p, MirrorEvent.TICK);
            }
        }
        site.router.closeIdle(led);
        at(nowMs + TICK_MS, () -> managerTick(site));
    }

    private void event(Mirror m, int p, MirrorEvent event) {
        pass(m, p, event);
    }

    /** One pass of the destination leader's driver, as the manager's run/passOver: a new leader, a new context. */
    private void pass(Mirror m, int p, MirrorEvent event) {
        Site site = sites[m.destination];
        SimCluster d = m.dest(p);
        TopicPartition tp = tp(m, p);
        if (!d.hasLeader() || d.mirrorSource == null) {
            site.contexts.remove(tp);
            return;
        }
        Context ctx = site.contexts.get(tp);
        if (ctx == null || ctx.leaderBroker != d.leader) {
            ctx = new Context(machine, d.leader);
            site.contexts.put(tp, ctx);
            d.fetching = false;
        }
        Optional<SourceProblem> problem = m.status.problem(m.topic, m.mirroredTopicId, nowMs);
        Host host = new Host(m, p, site, ctx);
        try {
            ctx.driver.pass(host, d.desired, event, problem,
                    d.sourceHighWatermark == null ? OptionalLong.empty() : OptionalLong.of(d.sourceHighWatermark),
                    nowMs);
        } catch (MirrorCallRouter.AwaitingCall | AwaitingBarrier e) {
            // its call's outcome (or the next pass) goes on
        } catch (ExecutionException e) {
            note(d.name + ": step failed (" + e.getCause() + "); deciding again at the next pass");
        } catch (Exception e) {
            throw new AssertionError(d.name + ": a pass threw " + e, e);
        }
    }

    /** The destination leader's surroundings: the manager's execute, with the peer and quarantine simulated. */
    private final class Host implements MirrorPartitionHost {
        private final Mirror m;
        private final int p;
        private final SimCluster d;
        private final Site site;
        private final Context ctx;
        private final TopicPartition tp;

        Host(Mirror m, int p, Site site, Context ctx) {
            this.m = m;
            this.p = p;
            this.d = m.dest(p);
            this.site = site;
            this.ctx = ctx;
            this.tp = MirrorManagerSimulation.tp(m, p);
        }

        @Override
        public Optional<VersionedRecord> stored() {
            return d.stored();
        }

        @Override
        public PartitionView view() {
            SimLog log = d.leaderLog();
            Map<Integer, Long> followerEnds = new HashMap<>();
            for (int r = 0; r < SimCluster.REPLICAS; r++) {
                if (r != d.leader) {
                    followerEnds.put(r, d.logs.get(r).logEnd());
                }
            }
            return new PartitionView(d.leaderEpoch, log.logEnd(), d.highWatermark, log.epochs(), log.latestBarrier(),
                    List.of(0, 1, 2), List.copyOf(d.isr), followerEnds, 1, d.uncleanElectionSupport,
                    d.truncationsApplied());
        }

        /** As WorkerActions#outcomeOf: the router, on this leadership and record. */
        private <T> T outcomeOf(PartitionCalls.Key key, String sharedKey, String what,
                                Callable<T> work) throws Exception {
            int epoch = d.leaderEpoch;
            PartitionCalls.Basis basis = new PartitionCalls.Basis(epoch, ctx.driver.current(this, epoch).version());
            Context mine = ctx;
            return site.router.outcomeOf(tp, m.name, ctx.calls, basis, key, sharedKey, what, work, outcome -> { },
                    () -> site.contexts.get(tp) == mine, () -> at(nowMs, () -> pass(m, p, MirrorEvent.TICK)));
        }

        @Override
        public PeerLookup execute(MirrorAction action, PeerLookup peer) throws Exception {
            SimLog log = d.leaderLog();
            if (action instanceof MirrorAction.AddFetcher) {
                d.fetching = true;
            } else if (action instanceof MirrorAction.RemoveFetcher) {
                d.fetching = false;
            } else if (action instanceof MirrorAction.AskPeer) {
                Map<Integer, LastMirrored> answer;
                try {
                    answer = outcomeOf(new PartitionCalls.Key.AskPeer(), "ask/" + m.topic,
                            "asking the source for the last mirrored epochs of " + m.topic, () -> askPeer(m));
                } catch (ExecutionException e) {
                    return failed("asking the source for its last mirrored epoch", e.getCause());
                }
                return new PeerLookup.Answered(Optional.ofNullable(answer.get(p)));
            } else if (action instanceof MirrorAction.ComparePeer compare) {
                Optional<LastMirrored> answer = peer instanceof PeerLookup.Answered a ? a.lastMirrored()
                        : Optional.empty();
                OptionalLong first;
                try {
                    first = outcomeOf(new PartitionCalls.Key.ComparePeer(compare.upTo()), "compare/" + tp + "/"
                            + compare.upTo(), "comparing " + tp, () -> compareWithPeer(m, p, compare.upTo()));
                } catch (ExecutionException e) {
                    return failed("comparing this log with the source's", e.getCause());
                }
                return new PeerLookup.Compared(answer, first);
            } else if (action instanceof MirrorAction.ApplyTruncationPoint point) {
                check(!(peer instanceof PeerLookup.Failed), d.name + ": a truncation point decided on a doubt ("
                        + peer + ")");
                long end = log.logEnd();
                long copied = outcomeOf(new PartitionCalls.Key.CopyToQuarantine(point.offset(), end), "copy/" + tp
                        + "/" + point.offset() + "/" + end, "copying to the quarantine",
                        () -> copyToQuarantine(m, p, site, point.offset(), end));
                for (long o = point.offset(); o < log.logEnd(); o++) {
                    SimLog.Batch b = log.at(o);
                    check(b.barrier() || site.quarantine.contains(b.id()), d.name + ": cut at " + point.offset()
                            + " would remove batch " + b.id() + " at " + o + ", not in the quarantine");
                }
                note(d.name + ": leader applies truncation point " + point.id() + ", cuts its log from " + end
                        + " to " + point.offset() + " (" + copied + " batches quarantined first)");
                stats.cutsApplied++;
                stats.recordsQuarantined += copied;
                if (point.offset() < log.logEnd()) {
                    log.truncateTo(point.offset());
                }
                d.truncationApplied(d.leader, point.id());
                d.leaderTruncated();
            } else if (action instanceof MirrorAction.AbortOpenTransactions) {
                return peer; // no transactions in this model
            } else if (action instanceof MirrorAction.AppendProducerStateBarrier) {
                // the manager appends it at the end of the pass (FailoverBarriers) and ends the pass there
                log.append(new SimLog.Batch(log.logEnd(), d.leaderEpoch, nextBatchId++, true));
                note(d.name + ": barrier at " + (log.logEnd() - 1));
                throw new AwaitingBarrier();
            }
            return peer;
        }

        /** The failure as the manager sorts it, which must be the kind the link was given. */
        private PeerLookup failed(String what, Throwable cause) {
            PeerLookup.Failed failed = PeerFailures.failed(what, cause);
            Failure kind = injected.remove(cause);
            if (kind != null) {
                check(failed.failure() == kind, d.name + ": a peer failure of kind " + kind + " was sorted as "
                        + failed.failure() + ": " + failed.reason());
            }
            stats.peerFailures++;
            return failed;
        }

        @Override
        public int write(VersionedRecord current, MirrorDecision decision) {
            MirrorPartitionRecord next = decision.write().orElseThrow();
            int storedVersion = d.stored == null ? -1 : d.stored.version();
            if (storedVersion != current.version()) {
                return -1;
            }
            MirrorPartitionState from = d.stored == null ? MirrorPartitionState.UNKNOWN : d.stored.record().state();
            check(MirrorTransitions.isValid(from, next.state()), d.name + ": illegal transition " + from + " -> "
                    + next.state());
            if (from == MirrorPartitionState.LOG_TRUNCATION && next.state() == MirrorPartitionState.EPOCH_FENCING
                    && d.mirrorSource.hasLeader() && !d.leaderLog().samePrefix(d.mirrorSource.leaderLog(),
                    Math.min(d.leaderLog().logEnd(), d.mirrorSource.leaderLog().logEnd()))) {
                d.issue12Gap = true;
                note(d.name + ": aligned a log that keeps records the source does not have");
            }
            d.stored = new VersionedRecord(next, storedVersion + 1);
            if (!decision.progressOnly()) {
                note(d.name + ": " + from + " -> " + next.state() + ": " + decision.reason());
            }
            return storedVersion + 1;
        }
    }

    // ---------------------------------------------------------------- the peer, on the mirror's thread

    /** The exceptions a failing link threw, with the kind each stands for. */
    private final Map<Throwable, Failure> injected = new IdentityHashMap<>();

    private SimThread thread(Mirror m) {
        return sites[m.destination].threads.get(m.name);
    }

    /** Fails as the link does now: the exception a real client throws for that kind, after its delay. */
    private void maybeFail(Mirror m) throws IOException {
        SimThread t = thread(m);
        if (m.fault == null) {
            t.takes(2 + random.nextInt(20));
            return;
        }
        t.takes(m.fault == Failure.TIMEOUT ? CALL_TIMEOUT_MS : 5);
        Throwable cause = switch (m.fault) {
            case TIMEOUT -> new SocketTimeoutException("no answer from the source in " + CALL_TIMEOUT_MS + " ms");
            case DISCONNECTED -> new ConnectException("Connection refused");
            case AUTHENTICATION -> new SaslAuthenticationException("Authentication failed: invalid credentials");
            case AUTHORIZATION -> new ClusterAuthorizationException("Cluster authorization failed");
            case WRONG_CLUSTER -> new PeerDoubtException(Failure.WRONG_CLUSTER, "the source answers for cluster "
                    + "another-cluster, not the recorded one");
            case ERROR -> new IOException("the answer does not parse");
        };
        // the client's own exceptions come wrapped in the lookup's IOException, ours as they are
        IOException thrown = cause instanceof IOException io ? io : new IOException("the source call failed", cause);
        injected.put(thrown, m.fault);
        throw thrown;
    }

    /** LastMirroredEpochs on the source: the record of each partition that mirrored from this cluster. */
    private Map<Integer, LastMirrored> askPeer(Mirror m) throws IOException {
        maybeFail(m);
        if (m.sourceDeleted) {
            throw new IOException("UNKNOWN_TOPIC_OR_PARTITION: the source has no topic " + m.topic);
        }
        Map<Integer, LastMirrored> out = new HashMap<>();
        for (int p = 0; p < m.parts.size(); p++) {
            SimCluster s = m.src(p);
            // the source's record of the mirror it ran from this cluster (gone with a recreated topic)
            boolean related = s.mirrorSource == null && s.stored != null
                    && s.stored.record().state() == MirrorPartitionState.STOPPED
                    && s.stored.record().lastMirroredOffset() >= 0;
            if (related) {
                out.put(p, new LastMirrored(s.stored.record().lastMirroredEpoch(),
                        s.stored.record().lastMirroredOffset()));
            }
        }
        return out;
    }

    private OptionalLong compareWithPeer(Mirror m, int p, long upTo) throws IOException {
        maybeFail(m);
        SimCluster d = m.dest(p);
        SimCluster s = m.src(p);
        if (m.sourceDeleted || !s.hasLeader() || !d.hasLeader()) {
            throw new IOException("the source partition has no leader to compare with");
        }
        SimLog log = d.leaderLog();
        SimLog source = s.leaderLog();
        long hi = Math.min(Math.min(upTo, log.logEnd()), s.highWatermark);
        OptionalLong first = BatchIdentity.firstDifference(0, hi, o -> log.at(o).equals(source.at(o)));
        if (first.isPresent()) {
            note(d.name + ": reconciliation finds the logs differ from offset " + first.getAsLong());
        }
        return first;
    }

    /** The quarantine copy of offsets {@code from} to {@code end} of the leader's log, acknowledged by its cluster. */
    private long copyToQuarantine(Mirror m, int p, Site site, long from, long end) throws IOException {
        SimCluster d = m.dest(p);
        thread(m).takes(1 + (end - from));
        if (!d.hasLeader() || random.nextInt(10) == 0) {
            throw new IOException("the quarantine topic's leader did not acknowledge the copy");
        }
        SimLog log = d.leaderLog();
        long copied = 0;
        for (long o = from; o < Math.min(end, log.logEnd()); o++) {
            if (!log.at(o).barrier()) {
                site.quarantine.add(log.at(o).id());
                copied++;
            }
        }
        return copied;
    }

    // ---------------------------------------------------------------- invariants

    private void checkInvariants() {
        for (Mirror m : mirrors) {
            for (int p = 0; p < m.parts.size(); p++) {
                for (SimCluster c : m.parts.get(p)) {
                    check(c.leaderEpoch == c.highestEpochSeen, c.name + ": the leader epoch went down");
                }
                SimCluster d = m.dest(p);
                if (!d.hasLeader()) {
                    continue;
                }
                // nothing of a source topic created again reaches the log that mirrored the old one
                for (SimLog.Batch b : d.leaderLog().batches()) {
                    Origin o = origins.get(b.id());
                    check(o == null || o.site() == m.destination || o.topicId().equals(m.mirroredTopicId)
                            || !o.topic().equals(m.topic), d.name + ": holds batch " + b.id() + " of source topic ID "
                            + (o == null ? "?" : o.topicId()) + ", but mirrors topic ID " + m.mirroredTopicId);
                }
                if (d.stored == null) {
                    continue;
                }
                MirrorPartitionRecord rec = d.stored.record();
                SimLog log = d.leaderLog();
                if (rec.state() == MirrorPartitionState.MIRRORING) {
                    check(log.latestEpoch() < d.leaderEpoch, d.name + ": MIRRORING with a mirrored batch of epoch "
                            + log.latestEpoch() + " at or above the local leader epoch " + d.leaderEpoch);
                }
                if (rec.state() == MirrorPartitionState.STOPPED && rec.lastMirroredOffset() < log.logEnd()) {
                    long lmo = rec.lastMirroredOffset();
                    check(log.at(lmo).barrier(), d.name + ": STOPPED without the producer-state barrier at LMO "
                            + lmo);
                }
            }
        }
    }

    private void checkConverged() {
        for (Mirror m : mirrors) {
            for (int p = 0; p < m.parts.size(); p++) {
                SimCluster d = m.dest(p);
                for (SimCluster c : m.parts.get(p)) {
                    for (int r = 0; r < SimCluster.REPLICAS; r++) {
                        boolean identical = c.logs.get(r).logEnd() == c.leaderLog().logEnd()
                                && c.logs.get(r).samePrefix(c.leaderLog(), c.leaderLog().logEnd());
                        check(identical || c.issue12Gap, c.name + ": replica " + r + " differs from the leader "
                                + "after healing");
                    }
                }
                if (d.desired != DesiredMirrorState.MIRRORING && (d.stored == null
                        || d.stored.record().state() == MirrorPartitionState.UNKNOWN)) {
                    // stopped or paused before its leader's first pass: either leaves a partition never started alone
                    stats.endStates.merge("UNKNOWN (stopped or paused before its first pass)", 1L, Long::sum);
                    continue;
                }
                check(d.stored != null, d.name + ": no mirror record after healing");
                MirrorPartitionRecord rec = d.stored.record();
                String reason = rec.lastError().orElse("");
                String expected;
                if (d.desired == DesiredMirrorState.STOPPED) {
                    expected = "STOPPED";
                    check(rec.state() == MirrorPartitionState.STOPPED, d.name + ": failed over but " + rec.state()
                            + " after healing (" + reason + ")");
                } else if (m.gone) {
                    expected = "FAILED (source topic gone)";
                    boolean failedForGood = rec.state() == MirrorPartitionState.FAILED && rec.retryAttempt() < 0
                            && reason.contains(m.topic) && reason.contains(m.mirroredTopicId.toString())
                            && (!m.recreated || reason.contains("created again")
                            && reason.contains(m.topicIds[m.source()].toString()));
                    boolean waitingOnPeer = rec.state() == MirrorPartitionState.LOG_TRUNCATION && m.sourceDeleted
                            && !reason.isEmpty();
                    if (waitingOnPeer) {
                        expected = "LOG_TRUNCATION (source topic gone, peer cannot answer)";
                    }
                    check(failedForGood || waitingOnPeer, d.name + ": its source topic is gone, but it is "
                            + rec.state() + " (" + reason + ")");
                } else if (rec.state() == MirrorPartitionState.FAILED && rec.retryAttempt() < 0) {
                    expected = "FAILED for good (source diverged, or a truncation past its deadline)";
                    boolean truncationTimedOut = d.uncleanElectionSupport
                            && rec.previousState() == MirrorPartitionState.LOG_TRUNCATION;
                    check(d.sourceDiverged || d.issue12Gap || truncationTimedOut, d.name + ": failed for good "
                            + "although its source never diverged: " + reason);
                } else if (d.desired == DesiredMirrorState.PAUSED) {
                    expected = "PAUSED"; // a partition failed for good waits for the operator, paused or not (above)
                    check(rec.state() == MirrorPartitionState.PAUSED, d.name + ": paused but " + rec.state() + " ("
                            + reason + ")");
                } else {
                    expected = "MIRRORING";
                    check(rec.state() == MirrorPartitionState.MIRRORING, d.name + ": wanted MIRRORING, is "
                            + rec.state() + " after healing (" + reason + ")");
                    SimCluster s = m.src(p);
                    if (!d.sourceDiverged && !d.issue12Gap) {
                        check(d.leaderLog().logEnd() == s.highWatermark && d.leaderLog().samePrefix(s.leaderLog(),
                                s.highWatermark), d.name + ": has not caught up with " + s.name + " after healing");
                    }
                }
                stats.endStates.merge(expected, 1L, Long::sum);
            }
        }
        checkNothingLost();
    }

    /** Every acknowledged record is in its partition's log, or in its cluster's quarantine. */
    private void checkNothingLost() {
        for (Map.Entry<Long, Integer> e : acknowledged.entrySet()) {
            long id = e.getKey();
            Origin o = origins.get(id);
            SimCluster c = cluster(o);
            if (c == null || uncleanCount.getOrDefault(c, 0) > e.getValue() || c.issue12Gap || c.sourceDiverged) {
                continue; // its topic deleted by the operator, or an unclean election: Kafka's own loss
            }
            boolean inLog = false;
            for (SimLog.Batch b : c.leaderLog().batches()) {
                inLog |= b.id() == id;
            }
            check(inLog || sites[o.site()].quarantine.contains(id), c.name + ": acknowledged batch " + id
                    + " is neither in the log nor in the quarantine");
        }
    }

    /**
     * With every fault healed, two mirrors into the same cluster fail over and then fail back onto the same manager:
     * {@code slow}'s peer blackholed (TIMEOUT) in the middle of its failback, {@code fast}'s healthy. {@code fast}
     * is MIRRORING again within {@value #FAILBACK_BOUND_MS} ms of simulated time (its lookup never queues behind
     * the other mirror's), and {@code slow}'s partitions still wait in LOG_TRUNCATION with their logs uncut.
     */
    private void checkIsolation() {
        Mirror fast = null;
        Mirror slow = null;
        for (Mirror x : mirrors) {
            for (Mirror y : mirrors) {
                if (x != y && isolationCandidate(x) && isolationCandidate(y) && x.destination == y.destination) {
                    fast = x;
                    slow = y;
                }
            }
        }
        if (fast == null) {
            return;
        }
        note("isolation: " + fast.name + " and " + slow.name + " fail over, then back, " + slow.name
                + "'s peer blackholed");
        for (Mirror m : List.of(fast, slow)) {
            if (!allIn(m, MirrorPartitionState.STOPPED)) {
                setDesired(m, DesiredMirrorState.STOPPED);
            }
        }
        for (int n = 0; n < 200 && !(allIn(fast, MirrorPartitionState.STOPPED)
                && allIn(slow, MirrorPartitionState.STOPPED)); n++) {
            advance(100);
        }
        for (Mirror m : List.of(fast, slow)) {
            check(allIn(m, MirrorPartitionState.STOPPED), m.name + ": failover did not complete");
            for (int p = 0; p < m.parts.size(); p++) {
                produce(m, m.dest(p), m.destination, p, 1); // written after the failover: kept by the failback
            }
        }
        advance(1_000);
        slow.fault = Failure.TIMEOUT;
        startMirror(slow, slow.source());
        List<Long> ends = new ArrayList<>();
        for (int p = 0; p < slow.parts.size(); p++) {
            ends.add(slow.dest(p).leaderLog().logEnd());
        }
        advance(2_000); // its lookup is on its mirror's thread now, for the client's timeout
        long start = nowMs;
        startMirror(fast, fast.source());
        while (!allIn(fast, MirrorPartitionState.MIRRORING) && nowMs - start <= FAILBACK_BOUND_MS) {
            advance(50);
        }
        check(allIn(fast, MirrorPartitionState.MIRRORING), fast.name + ": failback took longer than "
                + FAILBACK_BOUND_MS + " ms while " + slow.name + "'s peer is blackholed");
        advance(CALL_TIMEOUT_MS);
        for (int p = 0; p < slow.parts.size(); p++) {
            SimCluster d = slow.dest(p);
            MirrorPartitionRecord rec = d.stored.record();
            check(rec.state() == MirrorPartitionState.LOG_TRUNCATION && rec.lastError().orElse("").contains("TIMEOUT"),
                    d.name + ": failback with a blackholed peer is " + rec.state() + " (" + rec.lastError() + ")");
            check(d.leaderLog().logEnd() == ends.get(p), d.name + ": a failback cut its log on a timeout");
        }
        stats.isolationChecks++;
    }

    private boolean isolationCandidate(Mirror m) {
        return !m.gone && (allIn(m, MirrorPartitionState.STOPPED) || allIn(m, MirrorPartitionState.MIRRORING)
                && m.dest(0).desired == DesiredMirrorState.MIRRORING);
    }

    private boolean allIn(Mirror m, MirrorPartitionState state) {
        for (int p = 0; p < m.parts.size(); p++) {
            SimCluster d = m.dest(p);
            if (d.stored == null || d.stored.record().state() != state) {
                return false;
            }
        }
        return true;
    }

    private void check(boolean condition, String what) {
        if (!condition) {
            throw new AssertionError(what);
        }
    }

    private void note(String event) {
        if (trace.size() == TRACE) {
            trace.removeFirst();
        }
        trace.addLast("[" + step + " t=" + nowMs + "] " + event);
    }

    private String describe() {
        StringBuilder sb = new StringBuilder();
        for (Mirror m : mirrors) {
            sb.append("  ").append(m.name).append(' ').append(sites[m.source()].name).append("->")
                    .append(sites[m.destination].name).append(m.fault == null ? "" : " link " + m.fault)
                    .append(m.gone ? " source topic gone" : "").append('\n');
            for (SimCluster[] pair : m.parts) {
                sb.append("    ").append(pair[0]).append("\n    ").append(pair[1]).append('\n');
            }
        }
        return sb.toString();
    }
}
