package io.twinlog.tests.dist;

import io.twinlog.testkit.Waits;
import io.twinlog.tests.ToolResult;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The release tarball ({@code twinlog-dist/target/twinlog-VERSION.tgz}, built before this module in the reactor) as
 * an operator uses it: unpacked with {@code tar} into a temporary directory, a broker started from it with
 * {@code bin/twinlog-server-start.sh -daemon}, driven with the bundled {@code bin/kafka-*.sh} tools and stopped
 * with {@code bin/twinlog-server-stop.sh} — every script run with a PATH that holds Java and a few basic commands,
 * but no Maven and no source tree.
 */
@Timeout(300)
class DistributionTest {
    /** what bin/ scripts call besides java (bash through /usr/bin/env) */
    private static final List<String> BASIC_COMMANDS = List.of("bash", "dirname", "mkdir", "nohup", "ps", "sleep", "cat");
    private static final Duration TOOL_TIMEOUT = Duration.ofSeconds(90);

    @TempDir
    static Path work;
    private static Path home;
    private static Path javaOnlyPath;

    @BeforeAll
    static void unpackTarball() throws Exception {
        Path tarball = newestTarball();
        Process tar = new ProcessBuilder(command("tar").toString(), "xzf", tarball.toString(), "-C", work.toString())
                .redirectErrorStream(true).start();
        String tarOutput = new String(tar.getInputStream().readAllBytes());
        assertTrue(tar.waitFor(60, TimeUnit.SECONDS) && tar.exitValue() == 0, "tar xzf " + tarball + ": " + tarOutput);
        String top = tarball.getFileName().toString().replace(".tgz", "");
        home = work.resolve(top);
        assertTrue(Files.isDirectory(home), "the tarball's top directory is " + top);

        javaOnlyPath = Files.createDirectory(work.resolve("path"));
        Files.createSymbolicLink(javaOnlyPath.resolve("java"), Path.of(System.getProperty("java.home"), "bin", "java"));
        for (String name : BASIC_COMMANDS) {
            Files.createSymbolicLink(javaOnlyPath.resolve(name), command(name));
        }
    }

    @AfterAll
    static void killLeftovers() {
        // only after a failure: a broker the test could not stop must not outlive it
        if (home != null) {
            String marker = "-Dtwinlog.home=" + home;
            ProcessHandle.allProcesses()
                    .filter(p -> p.info().commandLine().map(c -> c.contains(marker)).orElse(false))
                    .forEach(ProcessHandle::destroyForcibly);
        }
    }

    @Test
    void layoutIsKafkasWithEveryJarAndLicense() {
        for (String path : List.of("README", "bin/twinlog-server-start.sh", "bin/twinlog-server-stop.sh",
                "bin/twinlog-zookeeper-start.sh", "bin/twinlog-mirrors.sh", "bin/twinlog-quickstart.sh",
                "bin/kafka-topics.sh", "bin/kafka-verifiable-consumer.sh", "config/server.properties",
                "config/zookeeper.properties", "config/tools-log4j2.properties", "config/twinlog-server.service",
                "config/twinlog-zookeeper.service", "config/grafana/twinlog-dashboard.json",
                "libs/kafka-tools-4.4.0.jar", "licenses/Apache-2.0.txt",
                "licenses/THIRD-PARTY.txt", "licenses/kafka-clients-4.4.0/LICENSE.txt", "docs/installing.md")) {
            assertTrue(Files.exists(home.resolve(path)), path + " is in the tarball");
        }
        assertTrue(Files.isExecutable(home.resolve("bin/kafka-console-consumer.sh")), "bin/ scripts are executable");
        assertFalse(Files.exists(home.resolve("pom.xml")), "no source tree in the tarball");
        // the broker, and the modules it does not depend on: the dashboard it loads when configured, the launcher
        for (String module : List.of("twinlog-server-", "twinlog-dashboard-", "twinlog-launcher-")) {
            assertTrue(libs().stream().anyMatch(n -> n.startsWith(module)), module + " in libs/ " + libs());
        }
    }

    @Test
    void brokerFromTheTarballDrivenWithTheBundledKafkaTools() throws Exception {
        assertNotEquals(0, run(null, null, javaOnlyPath.resolve("bash").toString(), "-c", "command -v mvn").exitCode(), "Maven is not on the test's PATH");
        String bootstrap = "127.0.0.1:" + freePort();
        Path out = home.resolve("logs/twinlogServer.out");

        ToolResult start = run(Map.of("TWINLOG_HEAP_OPTS", "-Xmx384m"), null, "bin/twinlog-server-start.sh", "-daemon",
                "config/server.properties", "--override", "listeners=PLAINTEXT://" + bootstrap,
                "--override", "zookeeper.embedded.port=" + freePort(),
                "--override", "log.dirs=" + work.resolve("data/broker-0"));
        start.assertSuccess();
        assertTrue(start.stdout().contains("output in " + out), start.toString());
        Waits.waitUntil("the broker started from the tarball to say it is up in " + out,
                () -> Files.readString(out).contains("Twinlog broker 0 started in"), Duration.ofSeconds(60));

        ToolResult create = run(null, null, "bin/kafka-topics.sh", "--bootstrap-server", bootstrap, "--create",
                "--topic", "orders", "--partitions", "3", "--replication-factor", "1");
        create.assertSuccess();
        assertEquals(List.of("Created topic orders."), create.stdoutLines(), create.toString());

        List<String> records = IntStream.range(0, 20).mapToObj(i -> "order-" + i).collect(Collectors.toList());
        run(null, String.join("\n", records) + "\n", "bin/kafka-console-producer.sh", "--bootstrap-server",
                bootstrap, "--topic", "orders").assertSuccess();

        ToolResult consume = run(null, null, "bin/kafka-console-consumer.sh", "--bootstrap-server", bootstrap,
                "--topic", "orders", "--from-beginning", "--max-messages", "20", "--group", "billing",
                "--timeout-ms", "60000");
        consume.assertSuccess();
        assertEquals(records.stream().sorted().collect(Collectors.toList()),
                consume.stdoutLines().stream().sorted().collect(Collectors.toList()), consume.toString());

        ToolResult describe = run(null, null, "bin/kafka-consumer-groups.sh", "--bootstrap-server", bootstrap,
                "--describe", "--group", "billing");
        describe.assertSuccess();
        Map<String, String[]> rows = describe.stdoutLines().stream().map(l -> l.trim().split("\\s+"))
                .filter(c -> c.length >= 6 && c[0].equals("billing") && c[1].equals("orders"))
                .collect(Collectors.toMap(c -> c[2], c -> c, (a, b) -> a, TreeMap::new));
        assertEquals(List.of("0", "1", "2"), new ArrayList<>(rows.keySet()), describe.toString());
        // GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG: everything committed, nothing left to read
        assertEquals(20, rows.values().stream().mapToLong(c -> Long.parseLong(c[3])).sum(), describe.toString());
        rows.values().forEach(c -> assertEquals("0", c[5], describe.toString()));

        run(null, null, "bin/twinlog-mirrors.sh", "--bootstrap-server", bootstrap, "--list").assertSuccess();

        ToolResult stop = run(null, null, "bin/twinlog-server-stop.sh");
        stop.assertSuccess();
        assertTrue(Files.readString(out).contains("Twinlog broker 0 shut down in"), "clean shutdown in " + out);
        assertEquals(1, run(null, null, "bin/twinlog-server-stop.sh").exitCode(), "nothing left to stop");
    }

    @Test
    void scriptsSayInOneLineThatJavaIsMissingOrTooOld() throws Exception {
        Path noJava = Files.createDirectory(work.resolve("path-without-java"));
        for (String name : BASIC_COMMANDS) {
            Files.createSymbolicLink(noJava.resolve(name), command(name));
        }
        ToolResult missing = run(Map.of("PATH", noJava.toString()), null, "bin/kafka-topics.sh", "--version");
        assertEquals(1, missing.exitCode(), missing.toString());
        assertEquals("", missing.stdout(), missing.toString());
        assertTrue(missing.stderr().matches("twinlog: no java found in the PATH: Twinlog needs Java 17 or newer[^\n]*\n"),
                missing.toString());

        Path oldJavaHome = work.resolve("jdk8");
        Path oldJava = Files.createDirectories(oldJavaHome.resolve("bin")).resolve("java");
        Files.writeString(oldJava, "#!/bin/sh\necho 'java version \"1.8.0_381\"' >&2\n");
        Files.setPosixFilePermissions(oldJava, PosixFilePermissions.fromString("rwxr-xr-x"));
        ToolResult old = run(Map.of("JAVA_HOME", oldJavaHome.toString()), null, "bin/twinlog-server-start.sh",
                "config/server.properties");
        assertEquals(1, old.exitCode(), old.toString());
        assertEquals(List.of("twinlog: " + oldJava + " (from JAVA_HOME=" + oldJavaHome + ") is Java 8, Twinlog needs "
                + "Java 17 or newer: set JAVA_HOME to a Java 17+"), old.stderr().lines().collect(Collectors.toList()));
    }

    /** Runs {@code args} in the unpacked tarball with only {@link #javaOnlyPath} on the PATH, plus {@code env}. */
    private static ToolResult run(Map<String, String> env, String stdin, String... args) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(args).directory(home.toFile());
        builder.environment().clear();
        builder.environment().put("PATH", javaOnlyPath.toString());
        builder.environment().put("HOME", work.toString());
        if (env != null) {
            builder.environment().putAll(env);
        }
        String name = Path.of(args[0]).getFileName() + "-" + System.nanoTime();
        Path in = work.resolve(name + ".in");
        Path out = work.resolve(name + ".out");
        Path err = work.resolve(name + ".err");
        Files.writeString(in, stdin == null ? "" : stdin);
        Process process = builder.redirectInput(in.toFile()).redirectOutput(out.toFile()).redirectError(err.toFile())
                .start();
        String command = String.join(" ", args);
        if (!process.waitFor(TOOL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            throw new AssertionError(command + " did not finish within " + TOOL_TIMEOUT + "\n"
                    + new ToolResult(command, -1, Files.readString(out), Files.readString(err)));
        }
        return new ToolResult(command, process.exitValue(), Files.readString(out), Files.readString(err));
    }

    private static Path newestTarball() throws IOException {
        Path target = Path.of("..", "twinlog-dist", "target").toAbsolutePath().normalize();
        try (Stream<Path> files = Files.list(target)) {
            return files.filter(p -> p.getFileName().toString().matches("twinlog-.*\\.tgz"))
                    .max(Comparator.comparing(p -> p.toFile().lastModified()))
                    .orElseThrow(() -> new AssertionError("no twinlog-*.tgz in " + target
                            + ": build it with mvn -B install -DskipTests -pl twinlog-dist -am"));
        } catch (NoSuchFileException e) {
            throw new AssertionError(target + " does not exist: build it with mvn -B install -DskipTests -pl "
                    + "twinlog-dist -am", e);
        }
    }

    /** a basic command from /usr/bin or /bin, found without Maven's directories on the way */
    private static Path command(String name) {
        return Stream.of("/usr/bin", "/bin").map(dir -> Path.of(dir, name)).filter(Files::isExecutable).findFirst()
                .orElseThrow(() -> new AssertionError(name + " is in neither /usr/bin nor /bin"));
    }

    private static List<String> libs() {
        File[] files = home.resolve("libs").toFile().listFiles();
        return files == null ? List.of() : Stream.of(files).map(File::getName).sorted().collect(Collectors.toList());
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
