package io.twinlog.bench;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Entry point: for each round and each system in turn (Twinlog, then Apache Kafka; the order is reversed every
 * other round so neither always runs in the warmer JVM), start the system in this JVM, run {@link SystemBenchmark},
 * and shut it down before the next one starts; then print the results as markdown and write them to the output
 * file. Exit code 0 on success, 1 on a failed run, 2 on a bad command line.
 */
public final class BenchMain {
    private static final Logger log = LoggerFactory.getLogger(BenchMain.class);

    private BenchMain() {
    }

    public static void main(String[] args) {
        int exitCode;
        try {
            run(BenchOptions.parse(args));
            exitCode = 0;
        } catch (BenchOptions.UsageException e) {
            System.err.println(e.getMessage());
            exitCode = 2;
        } catch (Exception e) {
            log.error("Benchmark failed", e);
            exitCode = 1;
        }
        // Some broker threads (ZooKeeper, KRaft) are not daemons; do not wait for them.
        System.exit(exitCode);
    }

    static void run(BenchOptions options) throws Exception {
        log.info("Benchmark options: {}", options);
        Payloads payloads = new Payloads(options.recordSizeBytes(), options.seed());
        List<Measurement> measurements = new ArrayList<>();
        List<Report.SystemRun> runs = new ArrayList<>();
        for (int round = 1; round <= options.rounds(); round++) {
            List<String> order = new ArrayList<>(options.systems());
            if (round % 2 == 0) {
                Collections.reverse(order);
            }
            for (String system : order) {
                runs.add(runSystem(system, round, options, payloads, measurements));
                System.gc();    // leave the next system a clean heap
            }
        }
        String markdown = new Report(options, runs, measurements, ZonedDateTime.now()).markdown();
        System.out.println();
        System.out.println(markdown);
        write(options.output(), markdown);
        System.out.println("Written to " + options.output().toAbsolutePath().normalize());
    }

    private static Report.SystemRun runSystem(String system, int round, BenchOptions options, Payloads payloads,
                                              List<Measurement> measurements) throws Exception {
        log.info("[{}] Round {} of {}", system, round, options.rounds());
        try (ClusterUnderTest cluster = create(system)) {
            long startNanos = System.nanoTime();
            cluster.start();
            long startupMs = (System.nanoTime() - startNanos) / 1_000_000;
            log.info("[{}] Started in {} ms at {}", system, startupMs, cluster.bootstrapServers());
            CpuAccounting.Snapshot before = CpuAccounting.snapshot();
            measurements.addAll(new SystemBenchmark(cluster, round, options, payloads).run());
            CpuAccounting.Snapshot after = CpuAccounting.snapshot();
            Report.SystemRun run = new Report.SystemRun(system, round, startupMs, after.wallSecondsSince(before),
                    after.otherProcessesCpuSecondsSince(before));
            log.info("[{}] Done in {} s; other processes used {} CPU-seconds meanwhile; shutting down", system,
                    String.format("%.1f", run.wallSeconds()),
                    run.otherProcessesCpuSeconds().map(c -> String.format("%.1f", c)).orElse("an unknown number of"));
            return run;
        }
    }

    private static ClusterUnderTest create(String system) {
        return switch (system) {
            case "twinlog" -> new TwinlogCluster(TempDirectories.create(system));
            case "kafka" -> new KafkaCluster(TempDirectories.create(system));
            default -> throw new IllegalArgumentException("Unknown system " + system);
        };
    }

    private static void write(Path output, String markdown) throws IOException {
        Path parent = output.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.writeString(output, markdown, StandardCharsets.UTF_8);
    }
}
