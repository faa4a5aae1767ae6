package io.twinlog.tests.kafka.clients;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Runs the non-Java client programs (kcat, the python and node scripts under {@code src/test/clients}) as separate
 * processes and fails with everything they printed. Each client counts as present only when its binary or package is
 * installed ({@code .ci/run} installs them); a test of an absent client is skipped, never passed.
 */
final class ClientScripts {
    static final Path SCRIPTS = Path.of("src/test/clients").toAbsolutePath();
    private static final String PYTHON = "/usr/bin/python3";

    private ClientScripts() {
    }

    /** The scripted clients: confluent-kafka-python (librdkafka) and kafkajs, with the same scenarios. */
    enum Script {
        PYTHON("py"), NODE("js");

        private final String prefix;

        Script(String prefix) {
            this.prefix = prefix;
        }

        String prefix() {
            return prefix;
        }

        void assumeInstalled() {
            if (this == PYTHON) {
                assumePython();
            } else {
                assumeNode();
            }
        }

        /** Runs one scenario: {@code args} are BOOTSTRAP SCENARIO TOPIC [ARGS...]; returns what it printed. */
        String run(Duration timeout, String... args) throws Exception {
            return this == PYTHON ? python(timeout, args) : node(timeout, args);
        }
    }

    static void assumePython() {
        assumeTrue(succeeds(List.of(PYTHON, "-c", "import confluent_kafka")),
                "python3-confluent-kafka is not installed (.ci/run installs it)");
    }

    static void assumeNode() {
        assumeTrue(succeeds(List.of("node", "-e", "require('kafkajs')"), SCRIPTS.resolve("node").toFile()),
                "node or kafkajs is not installed (.ci/run runs npm ci in src/test/clients/node)");
    }

    static void assumeKcat() {
        assumeTrue(hasKcat(), "kcat is not installed (.ci/run installs it)");
    }

    static boolean hasKcat() {
        return succeeds(List.of("kcat", "-V"));
    }

    static String python(Duration timeout, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(PYTHON, SCRIPTS.resolve("python/clients.py").toString()));
        cmd.addAll(List.of(args));
        return run(cmd, null, SCRIPTS.toFile(), timeout);
    }

    static String node(Duration timeout, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("node", SCRIPTS.resolve("node/clients.js").toString()));
        cmd.addAll(List.of(args));
        return run(cmd, null, SCRIPTS.resolve("node").toFile(), timeout);
    }

    /** Runs {@code cmd} with {@code stdin}, returns its standard output; fails on a non-zero exit or the timeout. */
    static String run(List<String> cmd, String stdin, File dir, Duration timeout) throws Exception {
        Path out = Files.createTempFile("client", ".out");
        Path err = Files.createTempFile("client", ".err");
        Path in = Files.createTempFile("client", ".in");
        try {
            Files.writeString(in, stdin == null ? "" : stdin);
            Process process = new ProcessBuilder(cmd).directory(dir).redirectInput(in.toFile())
                    .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            boolean finished = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (!finished) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            String stdout = Files.readString(out);
            if (!finished || process.exitValue() != 0) {
                throw new AssertionError(String.join(" ", cmd) + (finished ? " exited " + process.exitValue()
                        : " did not finish within " + timeout) + "\nstdout:\n" + tail(stdout) + "\nstderr:\n"
                        + tail(Files.readString(err)));
            }
            return stdout;
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
            Files.deleteIfExists(in);
        }
    }

    private static String tail(String text) {
        return text.length() <= 8000 ? text : "..." + text.substring(text.length() - 8000);
    }

    private static boolean succeeds(List<String> cmd) {
        return succeeds(cmd, SCRIPTS.toFile());
    }

    private static boolean succeeds(List<String> cmd, File dir) {
        try {
            Process p = new ProcessBuilder(cmd).directory(dir).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false; // the binary is absent
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
