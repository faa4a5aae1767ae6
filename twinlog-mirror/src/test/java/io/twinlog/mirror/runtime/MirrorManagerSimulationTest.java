package io.twinlog.mirror.runtime;

import io.twinlog.mirror.partition.PeerLookup.Failure;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The seeded simulation of several mirrors and partitions at the level of the mirror manager
 * ({@link MirrorManagerSimulation}, decision 65). {@code -Dtwinlog.sim.seeds=N} runs N seeds (CI runs
 * {@value #DEFAULT_SEEDS}), {@code -Dtwinlog.sim.firstSeed=S} starts elsewhere, {@code -Dtwinlog.sim.seed=S} replays
 * one seed exactly (a failure prints its seed), {@code -Dtwinlog.sim.steps=K} sets the faulty steps per seed.
 */
@Timeout(value = 30, unit = TimeUnit.MINUTES)
class MirrorManagerSimulationTest {
    private static final int DEFAULT_SEEDS = 150;
    private static final int DEFAULT_STEPS = 300;

    @Test
    @Timeout(value = 30, unit = TimeUnit.MINUTES) // the default run takes seconds; a flag may ask for many more
    void severalMirrorsKeepTheirInvariantsUnderFaults() {
        int steps = Integer.getInteger("twinlog.sim.steps", DEFAULT_STEPS);
        MirrorManagerSimulation.Stats stats = new MirrorManagerSimulation.Stats();
        String one = System.getProperty("twinlog.sim.seed");
        if (one != null) {
            new MirrorManagerSimulation(Long.parseLong(one), stats).run(steps);
            System.out.println("Mirror manager simulation: " + stats);
            return;
        }
        long first = Long.getLong("twinlog.sim.firstSeed", 0L);
        long seeds = Long.getLong("twinlog.sim.seeds", (long) DEFAULT_SEEDS);
        long startNs = System.nanoTime();
        for (long seed = first; seed < first + seeds; seed++) {
            new MirrorManagerSimulation(seed, stats).run(steps);
        }
        System.out.printf("Mirror manager simulation: %s (%d s)%n", stats,
                TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startNs));
        if (seeds >= DEFAULT_SEEDS) {
            // a run that never drew a kind of peer failure, or never reached a scenario, proves nothing about it
            for (Failure kind : Failure.values()) {
                assertTrue(stats.byKind.getOrDefault(kind, 0L) > 0, "no link failed with " + kind + ": " + stats);
            }
            assertTrue(stats.failbacks > 0 && stats.failovers > 0 && stats.cutsApplied > 0
                    && stats.uncleanElections > 0 && stats.topicsDeleted > 0 && stats.topicsRecreated > 0
                    && stats.isolationChecks > 0, "every scenario was reached: " + stats);
        }
    }
}
