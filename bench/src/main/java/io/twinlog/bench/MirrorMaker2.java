package io.twinlog.bench;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Apache Kafka MirrorMaker 2 (connect-mirror, dedicated mode) as a separate process on its own classpath
 * ({@code bench/mm2/pom.xml}, resolved by run.sh), mirroring cluster A into cluster B with its defaults apart from the
 * replication factors; its output goes to a log file.
 */
final class MirrorMaker2 {
    private static final Logger log = LoggerFactory.getLogger(MirrorMaker2.class);

    private MirrorMaker2() {
    }

    /** The target topic MM2 (default replication policy) writes a source topic to. */
    static String targetTopic(String sourceTopic) {
        return "A." + sourceTopic;
    }

    /** Starts MM2 from {@code source} to {@code target} for the topics matching {@code topics} (a regex). */
    static Process start(Path workDir, Path logFile, String source, String target, String topics,
                         int replicationFactor) throws IOException {
        Path cpPath = Path.of(System.getProperty("bench.mm2Classpath", "bench/mm2/target/classpath.txt"));
        if (!Files.exists(cpPath)) {
            throw new IllegalStateException("No MirrorMaker 2 classpath at " + cpPath.toAbsolutePath()
                    + "; build it with: mvn -B -q -f bench/mm2/pom.xml dependency:build-classpath "
                    + "-Dmdep.outputFile=target/classpath.txt (bench/run.sh does when a phase needs it)");
        }
        String classpath = Files.readString(cpPath).trim();
        Path props = workDir.resolve("mm2.properties");
        Files.writeString(props, properties(source, target, topics, replicationFactor), StandardCharsets.UTF_8);
        Files.createDirectories(logFile.toAbsolutePath().getParent());
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // slf4j-simple (on MM2's classpath) writes INFO and above to stderr, i.e. to the log file.
        Process mm2 = new ProcessBuilder(java, "-Xmx1g", "-XX:+UseG1GC",
                "-Dorg.slf4j.simpleLogger.showDateTime=true",
                "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
                "-cp", classpath, "org.apache.kafka.connect.mirror.MirrorMaker", props.toString())
                .redirectErrorStream(true).redirectOutput(logFile.toFile()).start();
        log.info("MirrorMaker 2 started (pid {}), output in {}", mm2.pid(), logFile);
        return mm2;
    }

    static String properties(String a, String b, String topics, int replicationFactor) {
        String rf = Integer.toString(replicationFactor);
        return String.join("\n",
                "clusters=A,B",
                "A.bootstrap.servers=" + a,
                "B.bootstrap.servers=" + b,
                "A->B.enabled=true",
                "A->B.topics=" + topics,
                "B->A.enabled=false",
                "replication.factor=" + rf,
                "offset-syncs.topic.replication.factor=" + rf,
                "checkpoints.topic.replication.factor=" + rf,
                "heartbeats.topic.replication.factor=" + rf,
                "config.storage.replication.factor=" + rf,
                "offset.storage.replication.factor=" + rf,
                "status.storage.replication.factor=" + rf,
                "");
    }

    /** MM2 does not exit on SIGTERM once its clusters are gone, so it is stopped first, and killed if need be. */
    static void stop(Process mm2) throws InterruptedException {
        if (mm2 == null) {
            return;
        }
        mm2.destroy();
        if (!mm2.waitFor(15, TimeUnit.SECONDS)) {
            log.warn("MirrorMaker 2 (pid {}) did not exit within 15 s of SIGTERM; killing it", mm2.pid());
            mm2.destroyForcibly();
            mm2.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
