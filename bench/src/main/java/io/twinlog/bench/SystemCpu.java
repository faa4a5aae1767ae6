package io.twinlog.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.List;

/**
 * CPU seconds the system under test spent: this JVM's CPU time (every thread, the garbage collector's and the JIT
 * compiler's included) minus the CPU time of the benchmark's own client threads (the thread driving the workload
 * and the producer's, consumer's and admin client's I/O threads). Both systems run in this JVM with the same
 * kafka-clients, so the clients' share is taken out and the rest is the brokers' (and their ZooKeeper or KRaft
 * controller's). Divided by the bytes moved, it is the figure the machine's noise moves least: another process
 * stealing a core slows both throughput and wall time, but not the CPU a broker spends per byte.
 */
final class SystemCpu {
    private static final List<String> CLIENT_THREAD_PREFIXES = List.of("kafka-producer-network-thread",
            "kafka-admin-client-thread", "consumer_background_thread", "kafka-coordinator-heartbeat-thread");

    private SystemCpu() {
    }

    /** Taken on the thread that drives the workload, which counts as a client thread. */
    static Snapshot snapshot() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long driver = Thread.currentThread().getId();
        long clientNanos = 0;
        for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (info != null && (info.getThreadId() == driver || isClientThread(info.getThreadName()))) {
                clientNanos += Math.max(0, threads.getThreadCpuTime(info.getThreadId()));
            }
        }
        return new Snapshot(CpuAccounting.processCpuSeconds(), clientNanos / 1e9);
    }

    static boolean isClientThread(String threadName) {
        return CLIENT_THREAD_PREFIXES.stream().anyMatch(threadName::startsWith);
    }

    record Snapshot(double processSeconds, double clientSeconds) {
        /**
         * The system's CPU seconds since {@code earlier}. A client thread that ended in between takes its CPU time
         * with it, so its share would count as the system's; the workloads keep their clients open across the
         * window for that reason.
         */
        double systemSecondsSince(Snapshot earlier) {
            return (processSeconds - earlier.processSeconds) - (clientSeconds - earlier.clientSeconds);
        }
    }
}
