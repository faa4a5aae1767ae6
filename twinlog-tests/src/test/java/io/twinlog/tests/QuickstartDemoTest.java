package io.twinlog.tests;

import io.twinlog.testkit.TestDirectories;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * {@code bin/twinlog-quickstart.sh --demo} end to end (issue 15 point 5): {@code LocalClusterMain --demo} in its own
 * JVM, as the script runs it, on free ports and a fresh data directory. It must print all nine steps, no
 * {@code FAILED}, end with every check held, and exit 0 after stopping both clusters.
 */
@Timeout(240)
class QuickstartDemoTest {
    private static final int STEPS = 9;
    private final File dataDir = TestDirectories.create("quickstart-demo");
    private Process process;

    @AfterEach
    void cleanUp() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
        TestDirectories.delete(dataDir);
    }

    @Test
    void theDemoWalksThroughEveryStepAndExitsZero() throws Exception {
        Path config = Path.of("..", "config", "log4j2.properties").toAbsolutePath().normalize();
        assertTrue(Files.isRegularFile(config), config + " (tests run from the twinlog-tests directory)");
        int firstPort = freePortBlock();
        File output = new File(dataDir, "demo.out");
        List<String> cmd = List.of(new File(System.getProperty("java.home"), "bin/java").getAbsolutePath(),
                "-Xmx768m", "-Dlog4j2.configurationFile=" + config, "-cp", System.getProperty("java.class.path"),
                "io.twinlog.launcher.LocalClusterMain", "--brokers", "3", "--first-port", Integer.toString(firstPort),
                "--zookeeper-port", Integer.toString(firstPort + 200), "--data",
                new File(dataDir, "data").getAbsolutePath(), "--demo");
        process = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.to(output)).start();
        if (!process.waitFor(200, TimeUnit.SECONDS)) {
            fail("the demo did not end within 200 s:\n" + read(output) + logTail());
        }
        String out = read(output);
        System.out.println(out);
        for (int step = 1; step <= STEPS; step++) {
            assertTrue(out.contains("=== Step " + step + " of " + STEPS + ": "), "step " + step + " missing:\n" + out);
        }
        assertFalse(out.lines().anyMatch(l -> l.strip().startsWith("FAILED")), "a check failed:\n" + out + logTail());
        assertTrue(out.matches("(?s).*=== Demo done in \\d+ s: all \\d+ checks held\\. ===.*"), out);
        assertEquals(0, process.exitValue(), "exit status:\n" + out + logTail());
    }

    private String logTail() throws IOException {
        File log = new File(dataDir, "data/demo.log");
        if (!log.isFile()) {
            return "\n(no " + log + ")";
        }
        List<String> lines = Files.readAllLines(log.toPath());
        return "\nlast lines of " + log + ":\n" + String.join("\n", lines.subList(Math.max(0, lines.size() - 80),
                lines.size()));
    }

    private static String read(File file) throws IOException {
        return file.isFile() ? Files.readString(file.toPath()) : "(no output)";
    }

    /**
     * A first port P such that the demo's ports are free: the source's brokers P..P+2, the destination's P+100..P+102,
     * the two ZooKeepers P+200 and P+201.
     */
    private static int freePortBlock() throws IOException {
        Random random = new Random();
        for (int attempt = 0; attempt < 100; attempt++) {
            int first = 20_000 + random.nextInt(20_000);
            List<Integer> ports = List.of(first, first + 1, first + 2, first + 100, first + 101, first + 102,
                    first + 200, first + 201);
            if (allFree(ports)) {
                return first;
            }
        }
        throw new IOException("no free block of ports for the demo in 100 attempts");
    }

    private static boolean allFree(List<Integer> ports) {
        List<ServerSocket> bound = new ArrayList<>();
        try {
            for (int port : ports) {
                bound.add(new ServerSocket(port, 1, InetAddress.getLoopbackAddress()));
            }
            return true;
        } catch (IOException e) {
            return false; // taken: the caller tries another block
        } finally {
            for (ServerSocket s : bound) {
                try {
                    s.close();
                } catch (IOException e) {
                    throw new IllegalStateException("could not release port " + s.getLocalPort(), e);
                }
            }
        }
    }
}
