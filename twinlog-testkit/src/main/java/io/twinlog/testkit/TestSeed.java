package io.twinlog.testkit;

import java.security.SecureRandom;
import java.util.Random;

/**
 * The seed of a randomized test: fresh on every run, so CI explores new runs instead of repeating one, unless a
 * system property fixes it to replay a run. A test logs {@link #toString()} when it starts and puts it in its failure
 * message, which says how to replay:
 *
 * <pre>
 * TestSeed seed = TestSeed.fromProperty("twinlog.seed");
 * log.info("Randomized loop: {}", seed);           // seed 42 (fresh; replay with -Dtwinlog.seed=42)
 * Random random = seed.random();
 * </pre>
 *
 * @param value    the seed
 * @param property the system property that replays it
 * @param given    whether the property gave it (a replay) rather than a fresh draw
 */
public record TestSeed(long value, String property, boolean given) {
    private static final SecureRandom FRESH = new SecureRandom();

    /** The seed {@code property} names, or a fresh one drawn now when it is not set. */
    public static TestSeed fromProperty(String property) {
        Long fixed = Long.getLong(property);
        return fixed != null ? new TestSeed(fixed, property, true) : new TestSeed(FRESH.nextLong(), property, false);
    }

    /** A generator seeded with it: the test's only source of randomness, so the seed replays its choices. */
    public Random random() {
        return new Random(value);
    }

    /** The JVM option that replays this run: {@code -Dtwinlog.seed=42}. */
    public String replayOption() {
        return "-D" + property + "=" + value;
    }

    @Override
    public String toString() {
        return "seed " + value + " (" + (given ? "given" : "fresh") + "; replay with " + replayOption() + ")";
    }
}
