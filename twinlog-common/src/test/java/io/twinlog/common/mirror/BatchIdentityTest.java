package io.twinlog.common.mirror;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The first difference of two logs by binary search over batch identities. */
@Timeout(10)
class BatchIdentityTest {
    @Test
    void findsTheForkInLogarithmicProbes() {
        long fork = 777_777;
        AtomicInteger probes = new AtomicInteger();
        OptionalLong first = BatchIdentity.firstDifference(0, 1_000_000, o -> {
            probes.incrementAndGet();
            return o < fork;
        });
        assertEquals(OptionalLong.of(fork), first);
        assertTrue(probes.get() <= 22, "log2(1,000,000) + 2 probes, was " + probes.get());
    }

    @Test
    void agreementEverywhereOrFromTheStart() {
        assertEquals(OptionalLong.empty(), BatchIdentity.firstDifference(5, 100, o -> true));
        assertEquals(OptionalLong.of(5), BatchIdentity.firstDifference(5, 100, o -> false));
        assertEquals(OptionalLong.empty(), BatchIdentity.firstDifference(5, 5, o -> false), "an empty range");
        assertEquals(OptionalLong.of(99), BatchIdentity.firstDifference(5, 100, o -> o < 99));
    }

    @Test
    void agreesWithALinearScanOnRandomForks() {
        Random random = new Random(42);
        for (int i = 0; i < 1_000; i++) {
            long lo = random.nextInt(50);
            long hi = lo + random.nextInt(200);
            long fork = lo + random.nextInt(250);
            OptionalLong expected = fork < hi ? OptionalLong.of(fork) : OptionalLong.empty();
            assertEquals(expected, BatchIdentity.firstDifference(lo, hi, o -> o < fork), "lo " + lo + " hi " + hi
                    + " fork " + fork);
        }
    }
}
