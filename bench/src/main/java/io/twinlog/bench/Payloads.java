package io.twinlog.bench;

import java.util.Random;

/**
 * A fixed pool of random record values (incompressible), generated once from a seed and cycled through, so the
 * producer loop measures the clients and the broker rather than the random number generator.
 */
final class Payloads {
    private static final int POOL_SIZE = 1024;

    private final byte[][] pool;

    Payloads(int recordSizeBytes, long seed) {
        Random random = new Random(seed);
        pool = new byte[POOL_SIZE][recordSizeBytes];
        for (byte[] value : pool) {
            random.nextBytes(value);
        }
    }

    byte[] get(long index) {
        return pool[(int) (index % POOL_SIZE)];
    }

    int recordSizeBytes() {
        return pool[0].length;
    }
}
