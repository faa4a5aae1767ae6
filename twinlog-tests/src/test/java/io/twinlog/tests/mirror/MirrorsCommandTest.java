package io.twinlog.tests.mirror;

import io.twinlog.cli.MirrorsCommand;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code bin/twinlog-mirrors.sh} run in-process against two in-process clusters: what create, list, describe and
 * delete print, that credentials never show, and that every error is one line on stderr (two for a wrong command
 * line: the error and the usage hint) with exit code 1 and nothing on stdout.
 */
@Timeout(300)
class MirrorsCommandTest {
    private static final String HINT = "Run 'twinlog-mirrors.sh --help' for usage.";
    private static final List<String> LIST_HEADER = List.of("MIRROR", "STATE", "TOPICS", "SOURCE-CLUSTER-ID",
            "SOURCE-BOOTSTRAP-SERVER");
    private static final List<String> PARTITION_HEADER = List.of("MIRROR", "TOPIC", "PARTITION", "STATE",
            "SOURCE-END", "DESTINATION-END", "LAG", "NEWEST-MIRRORED", "RPO-S", "LAST-MIRRORED-EPOCH", "OUT-OF-SYNC",
            "TRUNCATION", "CONSISTENT-FROM", "ERROR");
    private static final List<String> GROUP_HEADER = List.of("MIRROR", "GROUP", "TYPE", "LAST-SYNC",
            "OFFSETS-SYNCED", "OFFSETS-CLAMPED");
    /** Nothing listens there: a command that reaches the network fails with "Could not connect". */
    private static final String CLOSED_PORT = "127.0.0.1:1";

    private static TestCluster source;
    private static TestCluster destination;
    private static String sourceClusterId;

    @TempDir
    Path tempDir;

    @BeforeAll
    static void start() throws Exception {
        source = TestCluster.builder().brokers(1).build().start();
        destination = TestCluster.builder().brokers(1).build().start();
        try (Admin admin = source.admin()) {
            sourceClusterId = admin.describeCluster().clusterId().get();
        }
    }

    @AfterAll
    static void stop() {
        if (destination != null) {
            destination.close();
        }
        if (source != null) {
            source.close();
        }
    }

    @Test
    void createListDescribeDelete() throws Exception {
        Path configFile = tempDir.resolve("source.properties");
        Files.writeString(configFile, "ssl.truststore.password=file-s3cret\nclient.id=from-file\n");
        Result created = mirrors("--create", "--mirror", "dr", "--source-bootstrap-server", source.bootstrapServers(),
                "--source-config", "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                        + "username=\"u\" password=\"s3cret\";",
                "--source-config", "client.id=dr-mirror",
                "--source-config-file", configFile.toString(),
                "--include", "orders.*,payments", "--exclude", ".*-internal",
                "--groups-include", "app-.*", "--groups-exclude", "app-test", "--groups-sync-interval-ms", "60000",
                "--replication-throttled-rate", "1048576");
        created.assertSuccess();
        assertEquals(List.of("Created cluster mirror 'dr' from " + source.bootstrapServers() + "."), created.outLines());

        Result listed = mirrors("--list", "--mirror", "dr");
        listed.assertSuccess();
        assertTable(listed.outLines(), LIST_HEADER,
                List.of(List.of("dr", "ACTIVE", "0", sourceClusterId, source.bootstrapServers())));
        Result listedAll = mirrors("--list");
        listedAll.assertSuccess();
        assertEquals(LIST_HEADER, words(listedAll.outLines().get(0)));
        assertTrue(listedAll.outLines().stream().anyMatch(l -> words(l).equals(
                List.of("dr", "ACTIVE", "0", sourceClusterId, source.bootstrapServers()))), listedAll.out);

        Result described = mirrors("--describe", "--mirror", "dr");
        described.assertSuccess();
        assertEquals(List.of(
                "Mirror: dr",
                "  State: ACTIVE",
                "  Reason: -",
                "  SourceClusterId: " + sourceClusterId,
                "  SourceBootstrapServer: " + source.bootstrapServers(),
                "  Include: orders.*,payments",
                "  Exclude: .*-internal",
                "  Configs:",
                "    bootstrap.servers=" + source.bootstrapServers(),
                "    client.id=dr-mirror",
                "    mirror.groups.exclude=app-test",
                "    mirror.groups.include=app-.*",
                "    mirror.groups.sync.interval.ms=60000",
                "    mirror.replication.throttled.rate=1048576",
                "    mirror.topic.exclude=.*-internal",
                "    mirror.topic.include=orders.*,payments",
                "    sasl.jaas.config=[hidden]",
                "    ssl.truststore.password=[hidden]",
                "  Topics: 0",
                "  MirroredUpTo: -",
                ""), described.outLines().subList(0, 21));
        assertEquals(PARTITION_HEADER, words(described.outLines().get(21)));
        assertEquals("", described.outLines().get(22));
        assertEquals(GROUP_HEADER, words(described.outLines().get(23)));
        assertEquals(24, described.outLines().size(), "no mirror partitions or synced groups yet: the tables are "
                + "their headers\n" + described.out);
        assertFalse(described.out.contains("s3cret"), "credentials are never printed");

        Result deleted = mirrors("--delete", "--mirror", "dr");
        deleted.assertSuccess();
        assertEquals(List.of("Deleted cluster mirror 'dr'."), deleted.outLines());
        mirrors("--list", "--mirror", "dr").assertError("UNKNOWN_CLUSTER_MIRROR: No cluster mirror named 'dr'");
    }

    @Test
    void describeWithoutMirrorDescribesEveryMirrorInNameOrder() {
        mirrors("--create", "--mirror", "zz-second", "--source-bootstrap-server", source.bootstrapServers())
                .assertSuccess();
        mirrors("--create", "--mirror", "aa-first", "--source-bootstrap-server", source.bootstrapServers())
                .assertSuccess();
        try {
            Result described = mirrors("--describe");
            described.assertSuccess();
            List<String> lines = described.outLines();
            int first = lines.indexOf("Mirror: aa-first");
            int second = lines.indexOf("Mirror: zz-second");
            assertTrue(first >= 0 && second > first, described.out);
            long tables = lines.stream().filter(l -> words(l).equals(PARTITION_HEADER)).count();
            assertEquals(lines.stream().filter(l -> l.startsWith("Mirror: ")).count(), tables,
                    "a partition table per mirror\n" + described.out);
            assertEquals(tables, lines.stream().filter(l -> words(l).equals(GROUP_HEADER)).count(),
                    "a group table per mirror\n" + described.out);
        } finally {
            mirrors("--delete", "--mirror", "aa-first").assertSuccess();
            mirrors("--delete", "--mirror", "zz-second").assertSuccess();
        }
    }

    @Test
    void aMirrorFromAConfigFileWithAnUnreachableSource() throws Exception {
        Path configFile = tempDir.resolve("later.properties");
        Files.writeString(configFile, "bootstrap.servers=" + CLOSED_PORT + "\nrequest.timeout.ms=2000\n");
        mirrors("--create", "--mirror", "later", "--source-config-file", configFile.toString()).assertSuccess();
        try {
            Result listed = mirrors("--list", "--mirror", "later");
            listed.assertSuccess();
            assertTable(listed.outLines(), LIST_HEADER, List.of(List.of("later", "ACTIVE", "0", "-", CLOSED_PORT)));
            Result described = mirrors("--describe", "--mirror", "later");
            described.assertSuccess();
            assertTrue(described.outLines().contains("  SourceClusterId: -"), described.out);
            assertTrue(described.outLines().stream().anyMatch(l -> l.startsWith("  Reason: Source not reachable yet")),
                    described.out);
            assertTrue(described.outLines().contains("  Include: -"), described.out);
        } finally {
            mirrors("--delete", "--mirror", "later").assertSuccess();
        }
    }

    @Test
    void brokerErrorsAreOneLineWithTheirCode() {
        mirrors("--create", "--mirror", "twice", "--source-bootstrap-server", source.bootstrapServers())
                .assertSuccess();
        try {
            mirrors("--create", "--mirror", "twice", "--source-bootstrap-server", source.bootstrapServers())
                    .assertError("CLUSTER_MIRROR_ALREADY_EXISTS: Cluster mirror 'twice' already exists");
        } finally {
            mirrors("--delete", "--mirror", "twice").assertSuccess();
        }
        mirrors("--create", "--mirror", "bad/name", "--source-bootstrap-server", source.bootstrapServers())
                .assertErrorStartsWith("INVALID_CLUSTER_MIRROR_NAME: Invalid cluster mirror name 'bad/name'");
        mirrors("--create", "--mirror", "bad-regex", "--source-bootstrap-server", source.bootstrapServers(),
                "--include", "orders[").assertErrorStartsWith("INVALID_REGULAR_EXPRESSION: ");
        mirrors("--create", "--mirror", "bad-group-regex", "--source-bootstrap-server", source.bootstrapServers(),
                "--groups-exclude", "app[").assertErrorStartsWith("INVALID_REGULAR_EXPRESSION: ");
        mirrors("--create", "--mirror", "bad-interval", "--source-bootstrap-server", source.bootstrapServers(),
                "--source-config", "mirror.groups.sync.interval.ms=often")
                .assertErrorStartsWith("INVALID_CONFIG: Invalid value often for configuration "
                        + "mirror.groups.sync.interval.ms: Not a number of type LONG");
        mirrors("--create", "--mirror", "bad-refresh", "--source-bootstrap-server", source.bootstrapServers(),
                "--source-config", "mirror.metadata.refresh.interval.ms=0")
                .assertErrorStartsWith("INVALID_CONFIG: Invalid value 0 for configuration "
                        + "mirror.metadata.refresh.interval.ms: Value must be at least 1");
        mirrors("--describe", "--mirror", "nope").assertError("UNKNOWN_CLUSTER_MIRROR: No cluster mirror named 'nope'");
        mirrors("--delete", "--mirror", "nope").assertError("UNKNOWN_CLUSTER_MIRROR: No cluster mirror named 'nope'");
        mirrors("--list", "--mirror", "nope").assertError("UNKNOWN_CLUSTER_MIRROR: No cluster mirror named 'nope'");
        run(MirrorsCommand.newCommandLine(), "--bootstrap-server", CLOSED_PORT, "--list")
                .assertErrorStartsWith("Could not connect to any of ");
    }

    @Test
    void wrongCommandLinesAreOneLinePlusTheUsageHint() {
        String b = "--bootstrap-server";
        String[][] cases = {
            {"Exactly one action is needed: --create, --alter, --list, --describe, --delete, --start/--add, --stop/--remove, "
                    + "--pause, --resume, --verify, --add-acl, --remove-acl or --list-acls", b, CLOSED_PORT},
            {"Exactly one action is needed: --create, --alter, --list, --describe, --delete, --start/--add, --stop/--remove, "
                    + "--pause, --resume, --verify, --add-acl, --remove-acl or --list-acls"},
            {"--source-command-config is only valid with --verify", b, CLOSED_PORT, "--list",
                "--source-command-config", "x.properties"},
            {"--add-acl needs --operation", b, CLOSED_PORT, "--add-acl", "--mirror", "m", "--allow-principal",
                "User:a"},
            {"--add-acl needs --allow-principal or --deny-principal", b, CLOSED_PORT, "--add-acl", "--mirror", "m",
                "--operation", "Alter"},
            {"--operation Read does not apply to a cluster mirror: use Create, Alter, Describe, Delete, AlterConfigs, "
                    + "DescribeConfigs or All", b, CLOSED_PORT, "--add-acl", "--mirror", "m", "--allow-principal",
                "User:a", "--operation", "Read"},
            {"A principal is TYPE:NAME, e.g. User:alice, but got 'alice'", b, CLOSED_PORT, "--add-acl", "--mirror",
                "m", "--allow-principal", "alice", "--operation", "Alter"},
            {"Only one action at a time, but got --create and --list", b, CLOSED_PORT, "--list", "--create"},
            {"Only one action at a time, but got --stop and --remove", b, CLOSED_PORT, "--stop", "--remove",
                "--mirror", "m", "--topic", "t"},
            {"Missing required option --bootstrap-server HOST:PORT[,...]", "--list"},
            {"Invalid --bootstrap-server 'localhost': expected HOST:PORT", b, "localhost", "--list"},
            {"Invalid --bootstrap-server 'h:99999': the port must be a number from 1 to 65535", b, "h:99999",
                "--list"},
            {"Invalid --bootstrap-server 'h:99999999999': the port must be a number from 1 to 65535", b,
                "h:99999999999", "--list"},
            {"--bootstrap-server needs at least one HOST:PORT", b, " , ", "--list"},
            {"--create needs --mirror NAME", b, CLOSED_PORT, "--create", "--source-bootstrap-server", "h:9092"},
            {"--delete needs --mirror NAME", b, CLOSED_PORT, "--delete"},
            {"--remove needs --mirror NAME", b, CLOSED_PORT, "--remove", "--topic", ".*"},
            {"--pause needs --topic REGEX", b, CLOSED_PORT, "--pause", "--mirror", "m"},
            {"--topic is only valid with --start/--add, --stop/--remove, --pause, --resume or --verify", b, CLOSED_PORT,
                "--list", "--topic", "t"},
            {"--source-config is only valid with --create", b, CLOSED_PORT, "--describe", "--source-config", "a=b"},
            {"--include is only valid with --create", b, CLOSED_PORT, "--delete", "--mirror", "m", "--include", "x"},
            {"--groups-include is only valid with --create", b, CLOSED_PORT, "--describe", "--groups-include", "x"},
            {"--groups-sync-interval-ms must be positive, but got 0", b, CLOSED_PORT, "--create", "--mirror", "m",
                "--source-bootstrap-server", "h:9092", "--groups-sync-interval-ms", "0"},
            {"--replication-throttled-rate must be positive, but got -5", b, CLOSED_PORT, "--create", "--mirror", "m",
                "--source-bootstrap-server", "h:9092", "--replication-throttled-rate", "-5"},
            {"--create needs --source-bootstrap-server (or bootstrap.servers in --source-config or "
                    + "--source-config-file)", b, CLOSED_PORT, "--create", "--mirror", "m"},
            {"Invalid --source-bootstrap-server ':9092': a host is needed, the destination brokers connect to it",
                b, CLOSED_PORT, "--create", "--mirror", "m", "--source-bootstrap-server", ":9092"},
            {"Invalid bootstrap.servers 'nohost': expected HOST:PORT", b, CLOSED_PORT, "--create", "--mirror", "m",
                "--source-config", "bootstrap.servers=nohost"},
            {"Invalid --source-config 'novalue': expected KEY=VALUE", b, CLOSED_PORT, "--create", "--mirror", "m",
                "--source-bootstrap-server", "h:9092", "--source-config", "novalue"},
            {"Could not read --source-config-file '/nonexistent/source.properties': no such file", b, CLOSED_PORT,
                "--create", "--mirror", "m", "--source-bootstrap-server", "h:9092", "--source-config-file",
                "/nonexistent/source.properties"},
            {"--timeout-ms must be positive, but got 0", b, CLOSED_PORT, "--list", "--timeout-ms", "0"},
            // parse errors, reported by the handler newCommandLine() installs
            {"Unknown option: '--lst'", b, CLOSED_PORT, "--lst"},
            {"Missing required parameter for option '--mirror' (NAME)", b, CLOSED_PORT, "--describe", "--mirror"},
            {"Invalid value for option '--timeout-ms': 'soon' is not an int", b, CLOSED_PORT, "--list",
                "--timeout-ms", "soon"},
            {"Unmatched argument at index 3: 'extra'", b, CLOSED_PORT, "--list", "extra"},
        };
        for (String[] c : cases) {
            run(MirrorsCommand.newCommandLine(), Arrays.copyOfRange(c, 1, c.length)).assertUsageError(c[0]);
        }
    }

    @Test
    void theSeedsFailoverCommandWorksAsWritten() throws Exception {
        try (Admin admin = source.admin()) {
            admin.createTopics(List.of(new NewTopic("seed-orders", 1, (short) 1)))
                    .all().get();
        }
        mirrors("--create", "--mirror", "my-mirror", "--source-bootstrap-server", source.bootstrapServers())
                .assertSuccess();
        mirrors("--add", "--mirror", "my-mirror", "--topic", "seed-.*").assertSuccess();
        mirrors("--pause", "--mirror", "my-mirror", "--topic", "seed-.*").assertSuccess();
        mirrors("--resume", "--mirror", "my-mirror", "--topic", "seed-.*").assertSuccess();
        // exactly as the seed spells it, apart from the script name and the port of this test's destination
        String port = destination.bootstrapServers().substring(destination.bootstrapServers().lastIndexOf(':'));
        Result failover = run(MirrorsCommand.newCommandLine(), "--bootstrap-server", port, "--remove", "--topic", ".*",
                "--mirror", "my-mirror");
        failover.assertSuccess();
        assertTrue(failover.out.contains("stopped (failed over, writable)"), failover.out);
        Result describe = mirrors("--describe", "--mirror", "my-mirror");
        assertTrue(describe.out.contains("STOPPED"), describe.out);
        mirrors("--pause", "--mirror", "my-mirror", "--topic", "no-such-topic").assertError(
                "1 topic(s) failed, first: no-such-topic: TOPIC_NOT_IN_CLUSTER_MIRROR: Topic 'no-such-topic' is not "
                        + "mirrored by cluster mirror 'my-mirror'");
        mirrors("--delete", "--mirror", "my-mirror").assertSuccess();
    }

    /**
     * --verify (issue 12, point 6): a mirrored topic is identical up to the high watermark, by binary search and with
     * --full; after a failover and writes on both sides it reports the fork at the last mirrored offset, which is
     * expected (exit 0). A real difference is exit 1 (SourceUncleanElectionTest).
     */
    @Test
    void verifyComparesEveryPartitionWithTheSource() throws Exception {
        try (Admin admin = source.admin();
             KafkaProducer<byte[], byte[]> producer = source.producer(
                     Map.of("linger.ms", 5))) {
            admin.createTopics(List.of(new NewTopic("verified", 2, (short) 1)))
                    .all().get();
            for (int i = 0; i < 200; i++) {
                producer.send(new ProducerRecord<>("verified", i % 2, null,
                        ("v-" + i).getBytes(StandardCharsets.UTF_8)));
                if (i % 10 == 9) {
                    producer.flush(); // many batches, so the search has something to search
                }
            }
            producer.flush();
        }
        mirrors("--create", "--mirror", "checked", "--source-bootstrap-server", source.bootstrapServers())
                .assertSuccess();
        mirrors("--start", "--mirror", "checked", "--topic", "verified").assertSuccess();
        try {
            Waits.waitUntil("both partitions mirrored", () -> mirrors("--verify", "--mirror", "checked").outLines()
                    .equals(List.of("verified 0 identical up to 100", "verified 1 identical up to 100")));
            Result verified = mirrors("--verify", "--mirror", "checked", "--topic", "verif.*");
            verified.assertSuccess();
            Result full = mirrors("--verify", "--mirror", "checked", "--full");
            assertEquals(0, full.exitCode(), "exit code; stderr: " + full.err());
            assertEquals(verified.outLines(), full.outLines());
            // its progress goes to stderr (not a terminal here: plain lines, none within 10 s), then a summary
            assertEquals(1, full.errLines().size(), full.err());
            assertTrue(full.errLines().get(0).matches("Compared 2 partition\\(s\\): \\d+ batches, [\\d.]+ K?B "
                    + "read from both clusters, in \\d+ (ms|s)"), full.err());

            // a start of a mirroring topic: every leader compares with the source again (and would repair)
            mirrors("--start", "--mirror", "checked", "--topic", "verified").assertSuccess();
            for (int partition : List.of(0, 1)) {
                TopicPartition tp = new TopicPartition("verified", partition);
                Waits.waitUntil("partition " + partition + " asked to reconcile", () -> MirrorPartitionRecord.fromJson(
                        destination.broker(0).metadata().image().mirrors().partitions().get(tp).json())
                        .reconcileRequests() == 1);
            }
            assertEquals(verified.outLines(), mirrors("--verify", "--mirror", "checked").outLines(),
                    "nothing differed: nothing was cut");

            mirrors("--remove", "--mirror", "checked", "--topic", "verified").assertSuccess();
            try (KafkaProducer<byte[], byte[]> here = destination.producer(Map.of());
                 KafkaProducer<byte[], byte[]> there = source.producer(Map.of())) {
                here.send(new ProducerRecord<>("verified", 0, null, new byte[] {1}))
                        .get();
                there.send(new ProducerRecord<>("verified", 0, null, new byte[] {2}))
                        .get();
            }
            Result forked = mirrors("--verify", "--mirror", "checked");
            forked.assertSuccess();
            assertEquals(List.of("verified 0 forked at offset 100, where it failed over (identical before it)",
                    "verified 1 identical up to 100"), forked.outLines(), "the barrier at 100 differs: expected");
            mirrors("--verify", "--mirror", "checked", "--topic", "nothing-like-it")
                    .assertExit(2, "Error: Mirror 'checked' has no topic matching [nothing-like-it]");
            mirrors("--list", "--full").assertUsageError("--full is only valid with --verify");
        } finally {
            mirrors("--delete", "--mirror", "checked");
        }
    }

    @Test
    void theCommandConfigFileConfiguresTheConnection() throws Exception {
        Path commandConfig = tempDir.resolve("admin.properties");
        Files.writeString(commandConfig, "security.protocol=PLAINTEXT\nclient.id=ops-console\n"
                + "request.timeout.ms=5000\n");
        mirrors("--list", "--command-config", commandConfig.toString()).assertSuccess();

        Path badProtocol = tempDir.resolve("bad.properties");
        Files.writeString(badProtocol, "security.protocol=CARRIER_PIGEON\n");
        mirrors("--list", "--command-config", badProtocol.toString())
                .assertErrorStartsWith("Invalid client configs for the destination cluster: ");
        run(MirrorsCommand.newCommandLine(), "--bootstrap-server", CLOSED_PORT, "--list", "--command-config",
                "/nonexistent/admin.properties")
                .assertUsageError("Could not read --command-config '/nonexistent/admin.properties': no such file");
    }

    @Test
    void verbosePrintsTheStackTrace() {
        Result quiet = mirrors("--describe", "--mirror", "nope");
        quiet.assertError("UNKNOWN_CLUSTER_MIRROR: No cluster mirror named 'nope'");
        Result verbose = mirrors("--describe", "--mirror", "nope", "--verbose");
        assertEquals(1, verbose.exitCode);
        assertEquals("Error: UNKNOWN_CLUSTER_MIRROR: No cluster mirror named 'nope'", verbose.errLines().get(0));
        assertTrue(verbose.errLines().size() > 3, verbose.err);
        assertTrue(verbose.errLines().get(1).startsWith("io.twinlog.clients.mirror.MirrorException"), verbose.err);
        assertTrue(verbose.err.contains("\tat io.twinlog.cli."), verbose.err);
    }

    @Test
    void helpPrintsTheUsageOnStdout() {
        Result help = run(MirrorsCommand.newCommandLine(), "--help");
        help.assertSuccess();
        assertTrue(help.out.startsWith("Usage: twinlog-mirrors.sh --bootstrap-server HOST:PORT[,...] ACTION [OPTIONS]"),
                help.out);
        for (String option : List.of("--bootstrap-server", "--mirror", "--create", "--list", "--describe", "--delete",
                "--start", "--add", "--stop", "--remove", "--pause", "--resume", "--topic", "--source-bootstrap-server",
                "--source-config", "--source-config-file", "--include", "--exclude", "--groups-include",
                "--groups-exclude", "--groups-sync-interval-ms", "--replication-throttled-rate", "--command-config",
                "--timeout-ms", "--verbose")) {
            assertTrue(help.out.contains(option + " ") || help.out.contains(option + "="), option);
        }
    }

    /** The brief's harness, without the one-line handler of main: same results, and parse errors still exit 1. */
    @Test
    void aBareCommandLineBehavesTheSameExceptForParseErrorUsage() {
        run(new CommandLine(new MirrorsCommand()), "--bootstrap-server", destination.bootstrapServers(), "--list")
                .assertSuccess();
        run(new CommandLine(new MirrorsCommand()), "--bootstrap-server", destination.bootstrapServers(), "--describe",
                "--mirror", "nope").assertError("UNKNOWN_CLUSTER_MIRROR: No cluster mirror named 'nope'");
        run(new CommandLine(new MirrorsCommand()), "--bootstrap-server", destination.bootstrapServers(), "--remove",
                "--topic", ".*", "--mirror", "no-such-mirror")
                .assertError("UNKNOWN_CLUSTER_MIRROR: No cluster mirror named 'no-such-mirror'");
        run(new CommandLine(new MirrorsCommand()), "--list").assertUsageError(
                "Missing required option --bootstrap-server HOST:PORT[,...]");
        Result unknown = run(new CommandLine(new MirrorsCommand()), "--bootstrap-server", CLOSED_PORT, "--lst");
        assertEquals(1, unknown.exitCode);
        assertTrue(unknown.err.startsWith("Unknown option: '--lst'"), unknown.err);
    }

    // --- harness

    private record Result(int exitCode, String out, String err) {
        List<String> outLines() {
            return lines(out);
        }

        List<String> errLines() {
            return lines(err);
        }

        void assertSuccess() {
            assertEquals(0, exitCode, "exit code; stderr: " + err);
            assertEquals("", err, "stderr");
        }

        /** One line on stderr, nothing on stdout, exit code 1. */
        void assertError(String message) {
            assertEquals(List.of("Error: " + message), errLines(), "stderr");
            assertFailure();
        }

        void assertErrorStartsWith(String prefix) {
            assertEquals(1, errLines().size(), "one line on stderr: " + err);
            assertTrue(errLines().get(0).startsWith("Error: " + prefix), err);
            assertFailure();
        }

        /** The error line and the usage hint. */
        void assertUsageError(String message) {
            assertEquals(List.of("Error: " + message, HINT), errLines(), "stderr");
            assertFailure();
        }

        /** Exactly this stderr and exit code, nothing on stdout. */
        void assertExit(int code, String errLine) {
            assertEquals(List.of(errLine), errLines(), "stderr");
            assertEquals(code, exitCode, "exit code; stderr: " + err);
            assertEquals("", out, "stdout");
        }

        private void assertFailure() {
            assertEquals(1, exitCode, "exit code; stderr: " + err);
            assertEquals("", out, "stdout");
        }

        private static List<String> lines(String s) {
            return s.isEmpty() ? List.of() : List.of(s.split("\n"));
        }
    }

    /** Runs the command as main does, against the destination cluster unless the arguments name another. */
    private static Result mirrors(String... args) {
        List<String> all = new ArrayList<>(Arrays.asList(args));
        if (!all.contains("--bootstrap-server")) {
            all.addAll(0, List.of("--bootstrap-server", destination.bootstrapServers()));
        }
        return run(MirrorsCommand.newCommandLine(), all.toArray(String[]::new));
    }

    private static Result run(CommandLine commandLine, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        int exitCode = commandLine.execute(args);
        return new Result(exitCode, out.toString().replace("\r\n", "\n"), err.toString().replace("\r\n", "\n"));
    }

    private static List<String> words(String line) {
        return List.of(line.trim().split("\\s+"));
    }

    /** The header and rows, and every cell starting in its header's column. */
    private static void assertTable(List<String> lines, List<String> header, List<List<String>> rows) {
        assertEquals(header, words(lines.get(0)), String.join("\n", lines));
        assertEquals(rows.size() + 1, lines.size(), String.join("\n", lines));
        for (int r = 0; r < rows.size(); r++) {
            String line = lines.get(r + 1);
            assertEquals(rows.get(r), words(line), line);
            for (int c = 0; c < header.size(); c++) {
                int column = lines.get(0).indexOf(header.get(c));
                assertEquals(rows.get(r).get(c), line.substring(column).split("\\s+")[0],
                        "column " + header.get(c) + " is aligned:\n" + String.join("\n", lines));
            }
        }
    }
}
