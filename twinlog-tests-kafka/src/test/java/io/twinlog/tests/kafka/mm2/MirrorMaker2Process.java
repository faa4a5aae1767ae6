package io.twinlog.tests.kafka.mm2;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Apache Kafka MirrorMaker 2 4.3.1 in dedicated mode ({@code org.apache.kafka.connect.mirror.MirrorMaker
 * mm2.properties}), a JVM of its own on the jars that the pom-only module {@code classpaths/mirrormaker2-4.3} lists in
 * its {@code target/classpath.txt}: connect-mirror uses connect-runtime internals of its own release, so it never
 * runs on the test's 4.4 class path. Everything the JVM prints (slf4j-simple logs to stderr) goes to {@link #logFile()},
 * which stays in {@code target/} after the test for a post-mortem; {@link #logTail()} is for failure messages.
 *
 * <p>The process is always killed: by {@link #close()}, and by a shutdown hook if the test JVM exits first.
 */
final class MirrorMaker2Process implements AutoCloseable {
    /** MM2 may hang on SIGTERM once its clusters are gone (seen in the benchmark), so SIGTERM has this long. */
    static final Duration STOP_TIMEOUT = Duration.ofSeconds(15);
    private static final int LOG_TAIL_LINES = 80;

    private final Process process;
    private final Path logFile;
    private final Thread killOnExit;

    private MirrorMaker2Process(Process process, Path logFile) {
        this.process = process;
        this.logFile = logFile;
        this.killOnExit = new Thread(process::destroyForcibly, "mirrormaker2-kill-on-exit");
        Runtime.getRuntime().addShutdownHook(killOnExit);
    }

    /**
     * Writes {@code properties} (in their iteration order) to {@code dir/mm2.properties} and starts MM2 on it with
     * {@code arguments} after the file (such as {@code --clusters twinlog}).
     */
    static MirrorMaker2Process start(Path dir, Map<String, String> properties, String... arguments)
            throws IOException {
        String classPath = Files.readString(classPathFile()).trim();
        Files.createDirectories(dir);
        Path config = dir.resolve("mm2.properties");
        StringBuilder text = new StringBuilder();
        properties.forEach((key, value) -> text.append(key).append('=').append(value).append('\n'));
        Files.writeString(config, text, StandardCharsets.UTF_8);
        Path logFile = dir.resolve("mm2.log");
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                // a small heap, the serial collector and C1 only: MM2 shares 2 cores with four brokers in this JVM
                "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
                "-Dorg.slf4j.simpleLogger.showDateTime=true",
                "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
                "-Dorg.slf4j.simpleLogger.showShortLogName=true",
                // every client, worker and connector prints all its configs at INFO (through AbstractConfig's
                // logger): hundreds of lines that would push what went wrong out of a failure's log tail
                "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.common.config.AbstractConfig=warn",
                // and MM2's scheduler and each source task log every run, here every second
                "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.connect.mirror.Scheduler=warn",
                "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.connect.runtime.WorkerSourceTask=warn",
                "-cp", classPath, "org.apache.kafka.connect.mirror.MirrorMaker", config.toString()));
        command.addAll(List.of(arguments));
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile())).start();
        return new MirrorMaker2Process(process, logFile);
    }

    /**
     * SIGTERM, and SIGKILL if MM2 has not exited within {@link #STOP_TIMEOUT}. Returns true if it exited on
     * SIGTERM.
     */
    boolean stop() throws InterruptedException {
        process.destroy();
        if (process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
            return true;
        }
        kill();
        return false;
    }

    /**
     * Fails if MM2's JVM has exited (a bad config, a cluster it gave up on): an {@link AssertionError}, so that a
     * {@code Waits} poll stops at once instead of running into its deadline.
     */
    void failIfExited() {
        if (!process.isAlive()) {
            throw new AssertionError("MirrorMaker 2 (pid " + process.pid() + ") exited with " + process.exitValue());
        }
    }

    long pid() {
        return process.pid();
    }

    Path logFile() {
        return logFile;
    }

    /** The last lines MM2 logged, for failure messages. */
    String logTail() {
        try {
            List<String> lines = Files.readAllLines(logFile, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size()));
        } catch (IOException | UncheckedIOException e) {
            return "(no log: " + e + ")";
        }
    }

    /** Kills MM2 if it still runs (a test that failed before {@link #stop()}). */
    @Override
    public void close() throws InterruptedException {
        kill();
        try {
            Runtime.getRuntime().removeShutdownHook(killOnExit);
        } catch (IllegalStateException e) {
            // the JVM is already exiting: the hook runs anyway
        }
    }

    private void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new AssertionError("MirrorMaker 2 (pid " + process.pid() + ") still runs 30 s after SIGKILL");
        }
    }

    /**
     * {@code classpaths/mirrormaker2-4.3/target/classpath.txt} of this module, which the reactor writes before this
     * module's tests run (its generate-resources phase).
     */
    private static Path classPathFile() {
        Path file = Path.of(System.getProperty("basedir", "."), "classpaths", "mirrormaker2-4.3", "target",
                "classpath.txt");
        if (!Files.isRegularFile(file)) {
            throw new IllegalStateException("no MirrorMaker 2 class path at " + file.toAbsolutePath()
                    + ": build it with `mvn -B install -pl twinlog-tests-kafka/classpaths/mirrormaker2-4.3` (or a"
                    + " reactor build)");
        }
        return file;
    }
}
