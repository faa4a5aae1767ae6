package io.twinlog.bench;

import com.sun.management.OperatingSystemMXBean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * How much CPU other processes used while a system was measured: the machine's busy time from {@code /proc/stat}
 * minus this JVM's CPU time. The benchmark shares two cores with everything else on the machine, so a run during
 * which others used a noticeable share should be repeated. Linux only; elsewhere nothing is reported.
 */
final class CpuAccounting {
    /** USER_HZ, the unit of /proc/stat; 100 on every mainstream Linux build. */
    private static final Logger log = LoggerFactory.getLogger(CpuAccounting.class);
    private static final double TICKS_PER_SECOND = 100.0;
    private static final Path PROC_STAT = Path.of("/proc/stat");

    private CpuAccounting() {
    }

    static Snapshot snapshot() {
        return new Snapshot(System.nanoTime(), machineBusySeconds(), processCpuSeconds());
    }

    /** Busy seconds summed over all cores (user, nice, system, irq, softirq, steal), if readable. */
    private static Optional<Double> machineBusySeconds() {
        try {
            List<String> lines = Files.readAllLines(PROC_STAT);
            String[] fields = lines.get(0).trim().split("\\s+");   // cpu user nice system idle iowait irq softirq steal
            if (!fields[0].equals("cpu") || fields.length < 9) {
                return Optional.empty();
            }
            long busyTicks = 0;
            for (int i : new int[] {1, 2, 3, 6, 7, 8}) {
                busyTicks += Long.parseLong(fields[i]);
            }
            return Optional.of(busyTicks / TICKS_PER_SECOND);
        } catch (IOException | RuntimeException e) {
            // broad: /proc/stat missing or in another format only means the machine's CPU is not known
            log.debug("Could not read the machine's CPU time from {}", PROC_STAT, e);
            return Optional.empty();
        }
    }

    /** This JVM's CPU time in seconds (all threads, GC and JIT included); NaN where the JVM does not say. */
    static double processCpuSeconds() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof OperatingSystemMXBean os) {
            return os.getProcessCpuTime() / 1e9;
        }
        return Double.NaN;
    }

    record Snapshot(long nanoTime, Optional<Double> machineBusySeconds, double processCpuSeconds) {

        /** CPU seconds used by other processes since {@code earlier}, if the machine's busy time is known. */
        Optional<Double> otherProcessesCpuSecondsSince(Snapshot earlier) {
            if (machineBusySeconds.isEmpty() || earlier.machineBusySeconds.isEmpty()
                    || Double.isNaN(processCpuSeconds)) {
                return Optional.empty();
            }
            double machine = machineBusySeconds.get() - earlier.machineBusySeconds.get();
            double ours = processCpuSeconds - earlier.processCpuSeconds;
            return Optional.of(Math.max(0, machine - ours));
        }

        double wallSecondsSince(Snapshot earlier) {
            return (nanoTime - earlier.nanoTime) / 1e9;
        }
    }
}
