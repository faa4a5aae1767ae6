package io.twinlog.tests;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs one of Apache Kafka's command-line tools (kafka-tools 4.4.0 main classes) in its own JVM on the test
 * classpath, as an operator would run it: its {@code Exit.exit} cannot end the test JVM, and the result carries
 * the exit code and what it printed.
 */
public final class KafkaTools {
    private KafkaTools() {
    }

    /** @param stdin null means empty input */
    public static ToolResult run(File workDir, Duration timeout, String mainClass, String stdin, String... args)
            throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        // Small, quick-starting JVMs: the tools do little work and the machine has two cores.
        cmd.addAll(List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto"));
        cmd.add("-Dlog4j2.configurationFile=" + Paths.get(KafkaTools.class.getResource("/tools-log4j2.properties").toURI()));
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(mainClass);
        cmd.addAll(List.of(args));
        String name = mainClass.substring(mainClass.lastIndexOf('.') + 1) + "-" + System.nanoTime();
        Path in = workDir.toPath().resolve(name + ".in");
        Path out = workDir.toPath().resolve(name + ".out");
        Path err = workDir.toPath().resolve(name + ".err");
        Files.writeString(in, stdin == null ? "" : stdin);
        Process process = new ProcessBuilder(cmd).redirectInput(in.toFile()).redirectOutput(out.toFile())
                .redirectError(err.toFile()).start();
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError(mainClass + " " + String.join(" ", args) + " did not finish within "
                    + timeout + "\n" + new ToolResult(name, -1, read(out), read(err)));
        }
        return new ToolResult(mainClass + " " + String.join(" ", args), process.exitValue(), read(out), read(err));
    }

    /** Kafka's {@code kafka-configs} against {@code bootstrapServers}, with up to 90 s to finish. */
    public static ToolResult configs(File workDir, String bootstrapServers, String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of("--bootstrap-server", bootstrapServers));
        all.addAll(List.of(args));
        return run(workDir, Duration.ofSeconds(90), "org.apache.kafka.tools.ConfigCommand", null,
                all.toArray(String[]::new));
    }

    private static String read(Path p) throws IOException {
        return Files.exists(p) ? Files.readString(p) : "";
    }
}
