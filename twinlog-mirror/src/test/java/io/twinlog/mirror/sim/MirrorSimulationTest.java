package io.twinlog.mirror.sim;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

/**
 * Runs the mirroring simulation over many seeds. {@code -Dtwinlog.sim.seeds=N} runs N seeds (default
 * {@value #DEFAULT_SEEDS}; millions are fine behind the flag), {@code -Dtwinlog.sim.firstSeed=S} starts elsewhere,
 * {@code -Dtwinlog.sim.seed=S} replays one seed exactly (a failure prints its seed), {@code -Dtwinlog.sim.steps=K}
 * sets the faulty steps per seed.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class MirrorSimulationTest {
    private static final int DEFAULT_SEEDS = 1_000;
    private static final int DEFAULT_STEPS = 300;

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES) // the default run takes seconds; a flag may ask for millions
    void mirroringKeepsItsInvariantsUnderFaults() {
        int steps = Integer.getInteger("twinlog.sim.steps", DEFAULT_STEPS);
        String one = System.getProperty("twinlog.sim.seed");
        if (one != null) {
            new MirrorSimulation(Long.parseLong(one)).run(steps);
            return;
        }
        long first = Long.getLong("twinlog.sim.firstSeed", 0L);
        long seeds = Long.getLong("twinlog.sim.seeds", (long) DEFAULT_SEEDS);
        for (long seed = first; seed < first + seeds; seed++) {
            new MirrorSimulation(seed).run(steps);
        }
        System.out.printf("Mirror simulation: %d seeds of %d steps passed, none with diverged replicas or "
                + "clusters%n", seeds, steps);
    }
}
