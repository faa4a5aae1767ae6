package io.twinlog.share.partition;

import org.apache.kafka.common.errors.CoordinatorNotAvailableException;
import org.apache.kafka.common.message.ShareFetchResponseData.AcquiredRecords;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.coordinator.group.ShareGroupAutoOffsetResetStrategy;
import org.apache.kafka.server.share.acknowledge.ShareAcknowledgementBatch;
import org.apache.kafka.server.share.fetch.ShareAcquiredRecords;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A seeded random run of producers, three members fetching, acknowledging (accept, release, reject, per offset),
 * leaving, acquisition locks expiring and share-coordinator writes failing, against one share partition on a real
 * log; a model of what each member holds is checked after every step:
 * <ul>
 *   <li>a record is never delivered while another member holds it, nor after it was accepted;</li>
 *   <li>each delivery carries the record's delivery count (one more than the deliveries before it);</li>
 *   <li>an acknowledgement of records the member holds succeeds unless the write failed, then nothing changed;</li>
 *   <li>the start offset never moves back, and every record below it was accepted, rejected or archived at the
 *       delivery limit;</li>
 *   <li>at the end, once every member accepts what it gets, every record is accepted or archived.</li>
 * </ul>
 * The steps are applied one at a time from a seeded {@link Random}, so any run replays: {@code
 * -Dtwinlog.share.simulation.seed=S}. {@code -Dtwinlog.share.simulation.long=true} runs 20 seeds of 20,000 steps (the default: 5 of 5,000).
 */
@Timeout(600)
class SharePartitionSimulationTest {
    private static final String SEED = "twinlog.share.simulation.seed";
    private static final int LOCK_MS = 1_000;
    private static final int DELIVERY_LIMIT = 3;
    private static final List<String> MEMBERS = List.of("m0", "m1", "m2");

    @TempDir
    File dir;

    @Test
    void randomRunsKeepTheInvariants() throws Exception {
        boolean longRun = Boolean.getBoolean("twinlog.share.simulation.long");
        Long fixed = Long.getLong(SEED);
        List<Long> seeds = new ArrayList<>();
        if (fixed != null) {
            seeds.add(fixed);
        } else {
            for (int i = 0; i < (longRun ? 20 : 5); i++) {
                seeds.add(20261207L + i);
            }
        }
        for (long seed : seeds) {
            File runDir = new File(dir, "seed-" + seed);
            assertTrue(runDir.mkdirs());
            try {
                new Run(seed, runDir).run(longRun ? 20_000 : 5_000);
            } catch (AssertionError | Exception e) {
                throw new AssertionError("simulation failed with seed " + seed + " (replay with -D" + SEED + "="
                        + seed + "): " + e.getMessage(), e);
            }
        }
    }

    /** One run: the share partition, its log and persister, and the model. */
    private static final class Run {
        private final Random random;
        private final File dir;
        private final ManualTimer timer = new ManualTimer();
        private final InMemoryPersister persister = new InMemoryPersister();
        private final SharePartitionStateTest.TestSettings settings = new SharePartitionStateTest.TestSettings();
        /** member → offset → lock deadline */
        private final Map<String, TreeMap<Long, Long>> held = new HashMap<>();
        private final Map<Long, Integer> deliveries = new HashMap<>();
        private final Set<Long> accepted = new HashSet<>();
        private final Set<Long> rejected = new HashSet<>();
        private long previousStart;

        Run(long seed, File dir) {
            this.random = new Random(seed);
            this.dir = dir;
            settings.lockMs = LOCK_MS;
            settings.deliveryLimit = DELIVERY_LIMIT;
            settings.maxLocks = 50;
            settings.reset = ShareGroupAutoOffsetResetStrategy.EARLIEST;
            MEMBERS.forEach(m -> held.put(m, new TreeMap<>()));
        }

        void run(int steps) throws Exception {
            try (ShareTestLog log = new ShareTestLog(dir, "sim", 1)) {
                SharePartitionState state = new SharePartitionState("g", log.partition, 1,
                        SharePartitionLog.of(log.replica), persister, timer, timer.time, settings,
                        new SharePartitionState.Listener() {
                            @Override
                            public void onAcquirable(SharePartitionState s) {
                            }

                            @Override
                            public void onFenced(SharePartitionState s) {
                                throw new AssertionError("fenced in a run without fencing");
                            }
                        });
                state.maybeInitialize().get(10, TimeUnit.SECONDS);
                try {
                    for (int step = 0; step < steps; step++) {
                        int op = random.nextInt(100);
                        if (op < 15 && log.logEndOffset() < steps / 2) { // producing until the end: records are left to drain
                            log.append(1 + random.nextInt(5));
                        } else if (op < 45) {
                            fetch(state, log, MEMBERS.get(random.nextInt(MEMBERS.size())), false);
                        } else if (op < 80) {
                            acknowledge(state, MEMBERS.get(random.nextInt(MEMBERS.size())));
                        } else if (op < 83) {
                            String member = MEMBERS.get(random.nextInt(MEMBERS.size()));
                            state.releaseAcquiredRecords(member).get(10, TimeUnit.SECONDS);
                            held.get(member).clear();
                        } else {
                            advance(random.nextInt(LOCK_MS / 2));
                        }
                        checkStartOffset(state);
                    }
                    int delivered = deliveries.values().stream().mapToInt(Integer::intValue).sum();
                    int beforeDrain = accepted.size();
                    drain(state, log);
                    System.out.printf("share simulation: %d records, %d deliveries, %d accepted (%d while draining), "
                            + "%d rejected, %d persister writes%n", log.logEndOffset(), delivered, accepted.size(),
                            accepted.size() - beforeDrain, rejected.size(), persister.writes.get());
                } finally {
                    state.close();
                }
            }
        }

        private void fetch(SharePartitionState state, ShareTestLog log, String member, boolean drain)
                throws Exception {
            int maxRecords = drain ? 50 : 1 + random.nextInt(20);
            ShareAcquiredRecords acquired = SharePartitionStateTest.fetch(state, log, member, maxRecords,
                    FetchIsolation.HIGH_WATERMARK);
            long deadline = timer.time.milliseconds() + LOCK_MS;
            for (AcquiredRecords range : acquired.acquiredRecords()) {
                for (long offset = range.firstOffset(); offset <= range.lastOffset(); offset++) {
                    assertFalse(accepted.contains(offset), "accepted offset " + offset + " delivered again");
                    assertFalse(rejected.contains(offset), "rejected offset " + offset + " delivered again");
                    for (String other : held.keySet()) {
                        assertFalse(held.get(other).containsKey(offset), "offset " + offset + " delivered to "
                                + member + " while " + other + " holds it");
                    }
                    int count = deliveries.merge(offset, 1, Integer::sum);
                    assertEquals(count, range.deliveryCount(), "delivery count of offset " + offset);
                    held.get(member).put(offset, deadline);
                }
            }
        }

        private void acknowledge(SharePartitionState state, String member) throws Exception {
            TreeMap<Long, Long> mine = held.get(member);
            if (mine.isEmpty()) {
                return;
            }
            // a contiguous run of held offsets from a random one
            List<Long> offsets = new ArrayList<>(mine.keySet());
            int from = random.nextInt(offsets.size());
            int to = from;
            while (to + 1 < offsets.size() && offsets.get(to + 1) == offsets.get(to) + 1 && random.nextInt(4) != 0) {
                to++;
            }
            long first = offsets.get(from);
            long last = offsets.get(to);
            List<Byte> types = new ArrayList<>();
            if (random.nextInt(5) == 0) {
                for (long o = first; o <= last; o++) {
                    types.add(randomType());
                }
            } else {
                types.add(randomType());
            }
            boolean failWrite = random.nextInt(10) == 0;
            persister.failWrites(failWrite ? Errors.COORDINATOR_NOT_AVAILABLE : Errors.NONE);
            CompletableFuture<Void> ack = state.acknowledge(member, List.of(new ShareAcknowledgementBatch(first, last,
                    types)));
            try {
                ack.get(10, TimeUnit.SECONDS);
                assertFalse(failWrite, "an acknowledgement succeeded although its write failed");
            } catch (ExecutionException e) {
                assertTrue(failWrite, "acknowledgement of held " + first + "-" + last + " by " + member + " failed: "
                        + e.getCause());
                assertInstanceOf(CoordinatorNotAvailableException.class, e.getCause());
                return; // rolled back: the member still holds them
            } finally {
                persister.failWrites(Errors.NONE);
            }
            for (long o = first; o <= last; o++) {
                byte type = types.size() == 1 ? types.get(0) : types.get((int) (o - first));
                mine.remove(o);
                if (type == SharePartitionStateTest.ACCEPT) {
                    assertTrue(accepted.add(o), "offset " + o + " accepted twice");
                } else if (type == SharePartitionStateTest.REJECT) {
                    rejected.add(o);
                }
            }
        }

        private byte randomType() {
            int r = random.nextInt(20);
            return r < 12 ? SharePartitionStateTest.ACCEPT : r < 17 ? SharePartitionStateTest.RELEASE
                    : SharePartitionStateTest.REJECT;
        }

        private void advance(long ms) {
            timer.advance(ms);
            long now = timer.time.milliseconds();
            held.values().forEach(m -> m.values().removeIf(deadline -> deadline <= now));
        }

        /** Done with: accepted, rejected, or delivered up to the limit and held by nobody. */
        private boolean done(long offset) {
            return accepted.contains(offset) || rejected.contains(offset)
                    || (deliveries.getOrDefault(offset, 0) >= DELIVERY_LIMIT
                    && held.values().stream().noneMatch(m -> m.containsKey(offset)));
        }

        private void checkStartOffset(SharePartitionState state) {
            long start = state.startOffset();
            assertTrue(start >= previousStart, "start offset moved back from " + previousStart + " to " + start);
            for (long o = previousStart; o < start; o++) {
                assertTrue(done(o), "offset " + o + " is below the start offset " + start + " but not done with");
            }
            assertTrue(start <= state.endOffset(), "start offset past the end offset");
            previousStart = start;
        }

        /** Everyone accepts what it gets until nothing is left: every record ends accepted or archived. */
        private void drain(SharePartitionState state, ShareTestLog log) throws Exception {
            for (String member : MEMBERS) {
                state.releaseAcquiredRecords(member).get(10, TimeUnit.SECONDS);
                held.get(member).clear();
            }
            held.put("drainer", new TreeMap<>());
            for (int round = 0; round < 10_000 && state.startOffset() < log.logEndOffset(); round++) {
                fetch(state, log, "drainer", true);
                TreeMap<Long, Long> mine = held.get("drainer");
                List<ShareAcknowledgementBatch> runs = new ArrayList<>();
                long first = -1;
                long last = -1;
                for (long o : mine.keySet()) {
                    if (first >= 0 && o != last + 1) {
                        runs.add(new ShareAcknowledgementBatch(first, last, List.of(SharePartitionStateTest.ACCEPT)));
                        first = -1;
                    }
                    if (first < 0) {
                        first = o;
                    }
                    last = o;
                    assertTrue(accepted.add(o), "offset " + o + " accepted twice");
                }
                if (first >= 0) {
                    runs.add(new ShareAcknowledgementBatch(first, last, List.of(SharePartitionStateTest.ACCEPT)));
                    state.acknowledge("drainer", runs).get(10, TimeUnit.SECONDS);
                }
                mine.clear();
                checkStartOffset(state);
            }
            assertEquals(log.logEndOffset(), state.startOffset(), "every record is done with");
            for (long o = 0; o < log.logEndOffset(); o++) {
                assertTrue(done(o), "offset " + o + " neither accepted nor archived");
            }
        }
    }
}
