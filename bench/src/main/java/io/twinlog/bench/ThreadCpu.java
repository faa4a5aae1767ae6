package io.twinlog.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * CPU time of this JVM's threads, grouped by name with the numbers taken out ("twinlog-request-handler-N-N"), so a
 * window's CPU can be split between the brokers' thread pools and the clients: where a system spends the cores two
 * systems share on this machine.
 */
final class ThreadCpu {
    private final Map<Long, Long> nanosByThread;
    private final Map<Long, String> groupByThread;

    private ThreadCpu(Map<Long, Long> nanosByThread, Map<Long, String> groupByThread) {
        this.nanosByThread = nanosByThread;
        this.groupByThread = groupByThread;
    }

    static ThreadCpu snapshot() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Map<Long, Long> nanos = new HashMap<>();
        Map<Long, String> groups = new HashMap<>();
        for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (info == null) {
                continue;
            }
            long cpu = threads.getThreadCpuTime(info.getThreadId());
            if (cpu >= 0) {
                nanos.put(info.getThreadId(), cpu);
                groups.put(info.getThreadId(), group(info.getThreadName()));
            }
        }
        return new ThreadCpu(nanos, groups);
    }

    static String group(String threadName) {
        return threadName.replaceAll("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "ID")
                .replaceAll("\\d+", "N");
    }

    /** Cores used per thread group between {@code before} and this snapshot, largest first. */
    Map<String, Double> coresSince(ThreadCpu before, long elapsedNanos) {
        Map<String, Double> cores = new HashMap<>();
        nanosByThread.forEach((id, nanos) -> {
            long used = nanos - before.nanosByThread.getOrDefault(id, 0L);
            cores.merge(groupByThread.get(id), (double) used / elapsedNanos, Double::sum);
        });
        return cores.entrySet().stream().sorted(Map.Entry.<String, Double>comparingByValue().reversed())
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue, (a, b) -> a, LinkedHashMap::new));
    }

    /** The largest groups as lines "  0.42 cores  name", and the total. */
    static String describe(Map<String, Double> cores, int top) {
        StringBuilder out = new StringBuilder(String.format("%n  %.2f cores in all", cores.values().stream()
                .mapToDouble(Double::doubleValue).sum()));
        cores.entrySet().stream().limit(top).forEach(e -> out.append(String.format("%n  %.2f cores  %s",
                e.getValue(), e.getKey())));
        return out.toString();
    }
}
