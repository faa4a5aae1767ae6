package io.twinlog.campaign;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.Optional;

/**
 * A broker's wall clock that the campaign can step while the broker runs, for {@link FaultKind#CLOCK_STEP}:
 * libfaketime preloaded into the broker's JVM reads its offset from the file {@code <broker dir>/clock-offset}
 * (re-read every second), so writing {@code -90m} there steps {@code System.currentTimeMillis()} and
 * {@code Instant.now()} of that one process back by 90 minutes at once, as an NTP step or an operator's
 * {@code date -s} would on its host. The monotonic clock ({@code System.nanoTime()}) is left alone
 * ({@code FAKETIME_DONT_FAKE_MONOTONIC}): a step moves the wall clock only, as on a real host. No root is needed;
 * the library comes with Debian's {@code faketime} package.
 */
final class BrokerClock {
    static final String LIBRARY = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

    private final File offsetFile;

    BrokerClock(File brokerDir) throws IOException {
        this.offsetFile = new File(brokerDir, "clock-offset");
        write("+0");
    }

    /** Why no broker clock can be stepped here, or empty if it can. */
    static Optional<String> unavailableReason() {
        return new File(LIBRARY).isFile() ? Optional.empty()
                : Optional.of("libfaketime is not installed (" + LIBRARY + "; apt-get install faketime)");
    }

    /** What the broker's JVM is started with. */
    Map<String, String> environment() {
        return Map.of("LD_PRELOAD", LIBRARY,
                "FAKETIME_TIMESTAMP_FILE", offsetFile.getAbsolutePath(),
                "FAKETIME_DONT_FAKE_MONOTONIC", "1",
                "FAKETIME_CACHE_DURATION", "1");
    }

    /** The wall clock is {@code minutes} away from the real time from now on (negative: behind). */
    void stepTo(int minutes) throws IOException {
        write((minutes < 0 ? "-" : "+") + Math.abs(minutes) + "m");
    }

    void reset() throws IOException {
        write("+0");
    }

    private void write(String offset) throws IOException {
        // written whole and renamed, so that the library never reads half an offset
        File tmp = new File(offsetFile.getParentFile(), offsetFile.getName() + ".tmp");
        Files.writeString(tmp.toPath(), offset + "\n");
        Files.move(tmp.toPath(), offsetFile.toPath(), StandardCopyOption.REPLACE_EXISTING,
                StandardCopyOption.ATOMIC_MOVE);
    }
}
