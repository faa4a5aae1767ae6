package io.twinlog.tests.security;

import io.twinlog.cli.MirrorsCommand;
import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.clients.mirror.MirrorException;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.File;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 13, point 4: the mirror APIs authorized as KIP-1279 specifies, with a ClusterMirror ACL resource that
 * {@code twinlog-mirrors.sh} manages. As in {@link ApiAuthorizationTableTest}, each row has an allowed principal
 * (prerequisites and the checked ACL) and a denied one (prerequisites only), and its mirror and topic of its own.
 * The destination cluster is secured (SASL/PLAIN, Kafka's StandardAuthorizer); the source is plain.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class MirrorAuthorizationTest {
    private static final int ROWS = 10;

    /** One literal ALLOW: on a cluster mirror, or on a topic of the destination. */
    record Grant(AclOperation operation, boolean mirror, String name) {
        static Grant mirror(AclOperation operation, String name) {
            return new Grant(operation, true, name);
        }

        static Grant topic(AclOperation operation, String name) {
            return new Grant(operation, false, name);
        }

        @Override
        public String toString() {
            return operation + (mirror ? " ClusterMirror " : " Topic ") + name;
        }
    }

    interface Action {
        void run(MirrorAdmin admin) throws Exception;
    }

    /** A denial that is something left out, not an error. */
    static final class NotVisible extends RuntimeException {
        NotVisible(String what) {
            super(what);
        }
    }

    record Row(String api, List<Grant> prerequisites, Grant checked, short deniedCode, Action action) {
    }

    @TempDir
    static File workDir;
    private static TestCluster source;
    private static TestCluster destination;
    private static final PlainUsers USERS = new PlainUsers(() -> destination.bootstrapServers());

    @BeforeAll
    static void start() throws Exception {
        source = TestCluster.builder().brokers(1).build().start();
        List<String> users = new ArrayList<>(List.of("operator"));
        for (int i = 0; i < ROWS; i++) {
            users.add("a" + i);
            users.add("d" + i);
        }
        destination = PlainUsers.authorizedCluster(users).brokers(1).build().start();
        try (Admin admin = source.admin()) {
            List<NewTopic> topics = new ArrayList<>();
            for (int i = 0; i < ROWS; i++) {
                topics.add(new NewTopic("t" + i, 1, (short) 1));
            }
            topics.add(new NewTopic("orders", 1, (short) 1));
            admin.createTopics(topics).all().get();
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

    private static List<Row> table() {
        short mirrorDenied = MirrorErrors.CLUSTER_MIRROR_AUTHORIZATION_FAILED.code;
        short topicDenied = Errors.TOPIC_AUTHORIZATION_FAILED.code();
        List<Row> rows = new ArrayList<>();
        rows.add(new Row("CreateClusterMirror", List.of(), Grant.mirror(AclOperation.CREATE, "new0"), mirrorDenied,
                admin -> admin.createClusterMirror("new0", Map.of("bootstrap.servers",
                        source.bootstrapServers()))));
        rows.add(new Row("AlterClusterMirror", List.of(), Grant.mirror(AclOperation.ALTER_CONFIGS, "m1"),
                // a pattern no topic of this test matches: "t.*" made m1 discover and claim t6 while row 6 started it
                mirrorDenied, admin -> admin.alterClusterMirror("m1", Map.of("mirror.topic.include", "unused-.*"))));
        rows.add(new Row("DeleteClusterMirror", List.of(), Grant.mirror(AclOperation.DELETE, "m2"), mirrorDenied,
                admin -> admin.deleteClusterMirror("m2")));
        rows.add(new Row("ListClusterMirrors", List.of(), Grant.mirror(AclOperation.DESCRIBE, "m3"), (short) -1,
                admin -> {
                    if (admin.listClusterMirrors(false).stream().noneMatch(m -> m.name().equals("m3"))) {
                        throw new NotVisible("m3 not listed");
                    }
                }));
        rows.add(new Row("DescribeClusterMirrors", List.of(), Grant.mirror(AclOperation.DESCRIBE, "m4"),
                mirrorDenied, admin -> admin.describeClusterMirrors(List.of("m4"))));
        rows.add(new Row("StartMirrorTopics (mirror)", List.of(Grant.topic(AclOperation.ALTER_CONFIGS, "t5")),
                Grant.mirror(AclOperation.ALTER, "m5"), mirrorDenied,
                admin -> throwFirst(admin.startMirrorTopics("m5", List.of("t5"), List.of(), List.of()))));
        rows.add(new Row("StartMirrorTopics (topic)", List.of(Grant.mirror(AclOperation.ALTER, "m6")),
                Grant.topic(AclOperation.ALTER_CONFIGS, "t6"), topicDenied,
                admin -> throwFirst(admin.startMirrorTopics("m6", List.of("t6"), List.of(), List.of()))));
        rows.add(new Row("PauseMirrorTopics (mirror)", List.of(Grant.topic(AclOperation.ALTER_CONFIGS, "t7")),
                Grant.mirror(AclOperation.ALTER, "m7"), mirrorDenied,
                admin -> throwFirst(admin.pauseMirrorTopics("m7", List.of("t7"), List.of()))));
        rows.add(new Row("StopMirrorTopics (topic)", List.of(Grant.mirror(AclOperation.ALTER, "m8")),
                Grant.topic(AclOperation.ALTER_CONFIGS, "t8"), topicDenied,
                admin -> throwFirst(admin.stopMirrorTopics("m8", List.of("t8"), List.of()))));
        rows.add(new Row("LastMirroredEpochs (failback lookup)", List.of(), Grant.mirror(AclOperation.DESCRIBE, "m9"),
                mirrorDenied, admin -> admin.lastMirroredEpochs(null, Map.of("t9", List.of(0)), Map.of())));
        return rows;
    }

    @Test
    void everyMirrorApiChecksWhatKip1279Specifies() throws Exception {
        List<Row> rows = table();
        assertEquals(ROWS, rows.size());
        try (MirrorAdmin admin = MirrorAdmin.create(destinationAdminConfigs("admin"))) {
            for (int i = 1; i < ROWS; i++) {
                admin.createClusterMirror("m" + i, Map.of("bootstrap.servers", source.bootstrapServers()));
            }
            for (int i : List.of(7, 8, 9)) { // rows that act on a mirrored topic
                assertEquals(Map.of(), admin.startMirrorTopics("m" + i, List.of("t" + i), List.of(), List.of()));
            }
            // LastMirroredEpochs answers for a partition whose failover completed (a mirroring one has no last
            // mirrored point yet), from the broker's metadata image: t9 fails over, and the image shows it STOPPED
            Waits.waitUntil("t9 mirroring in the destination's image", () -> admin.describeClusterMirrors(
                    List.of("m9")).get("m9").topics().get("t9").partitions().stream()
                    .anyMatch(p -> p.state().equals("MIRRORING")));
            assertEquals(Map.of(), admin.stopMirrorTopics("m9", List.of("t9"), List.of()));
            Waits.waitUntil("t9 failed over in the destination's image", () -> admin.describeClusterMirrors(
                    List.of("m9")).get("m9").topics().get("t9").partitions().stream()
                    .allMatch(p -> p.state().equals("STOPPED")));
        }
        // the ACLs, with the tools: ClusterMirror ACLs with twinlog-mirrors.sh, topic ACLs with the Admin API
        List<AclBinding> topicAcls = new ArrayList<>();
        int mirrorAcls = 0;
        for (int i = 0; i < rows.size(); i++) {
            Row row = rows.get(i);
            for (String user : List.of("a" + i, "d" + i)) {
                List<Grant> grants = new ArrayList<>(row.prerequisites());
                if (user.startsWith("a")) {
                    grants.add(row.checked());
                }
                for (Grant g : grants) {
                    if (g.mirror()) {
                        mirrors("--add-acl", "--mirror", g.name(), "--allow-principal", "User:" + user,
                                "--operation", g.operation().name());
                        mirrorAcls++;
                    } else {
                        topicAcls.add(new AclBinding(new ResourcePattern(ResourceType.TOPIC, g.name(),
                                PatternType.LITERAL), new AccessControlEntry("User:" + user, "*", g.operation(),
                                AclPermissionType.ALLOW)));
                    }
                }
            }
        }
        int expectedMirrorAcls = mirrorAcls;
        try (Admin admin = destination.admin()) {
            admin.createAcls(topicAcls).all().get();
            // DescribeAcls (Kafka's API) shows the ClusterMirror ACLs too, with the KIP's resource type code
            Waits.waitUntil("every ACL applied", () -> admin.describeAcls(AclBindingFilter.ANY).values().get()
                    .stream().filter(b -> b.entry().principal().matches("User:[ad][0-9]+")).count()
                    == topicAcls.size() + expectedMirrorAcls, Duration.ofSeconds(30));
        }

        List<String> failures = new ArrayList<>();
        for (int i = 0; i < rows.size(); i++) {
            Row row = rows.get(i);
            Throwable denied = outcome(row, "d" + i);
            boolean deniedAsExpected = row.deniedCode() < 0 ? denied instanceof NotVisible
                    : denied instanceof MirrorException e && e.errorCode() == row.deniedCode();
            if (!deniedAsExpected) {
                failures.add(row.api() + ": without " + row.checked() + " expected error " + row.deniedCode()
                        + ", got " + (denied == null ? "success" : denied));
            }
            Throwable allowed = outcome(row, "a" + i);
            if (allowed != null) {
                failures.add(row.api() + ": with " + row.checked() + " expected success, got " + allowed);
            }
        }
        assertTrue(failures.isEmpty(), String.join("\n", failures));
    }

    /** The operator's day: prefixed ACLs from the tool, listed, used, removed. */
    @Test
    void twinlogMirrorsManagesClusterMirrorAcls() throws Exception {
        try (MirrorAdmin admin = MirrorAdmin.create(destinationAdminConfigs("admin"))) {
            admin.createClusterMirror("dr-orders", Map.of("bootstrap.servers", source.bootstrapServers()));
        }
        String added = mirrors("--add-acl", "--mirror", "dr-", "--resource-pattern-type", "prefixed",
                "--allow-principal", "User:operator", "--operation", "Alter", "--operation", "Describe");
        assertTrue(added.contains("ClusterMirror:PREFIXED:dr-") && added.contains("operation=ALTER"), added);
        try (Admin admin = destination.admin()) {
            admin.createAcls(List.of(new AclBinding(new ResourcePattern(ResourceType.TOPIC, "orders",
                    PatternType.LITERAL), new AccessControlEntry("User:operator", "*", AclOperation.ALTER_CONFIGS,
                    AclPermissionType.ALLOW)))).all().get();
        }
        String listed = Waits.waitFor("the operator's ACLs listed for dr-orders", () -> mirrors("--list-acls",
                "--mirror", "dr-orders"), out -> out.contains("User:operator") && out.contains("DESCRIBE"));
        assertTrue(listed.contains("Current ACLs for resource `ClusterMirror:PREFIXED:dr-`"), listed);

        try (MirrorAdmin operator = MirrorAdmin.create(destinationAdminConfigs("operator"))) {
            Waits.waitUntil("the operator may start orders", () -> {
                try {
                    return operator.startMirrorTopics("dr-orders", List.of("orders"), List.of(), List.of())
                            .isEmpty();
                } catch (MirrorException e) {
                    return false; // the ACLs are a ZooKeeper round trip away
                }
            });
            assertEquals(List.of("dr-orders"), operator.listClusterMirrors(false).stream()
                    .map(MirrorAdmin.MirrorListing::name).toList());
            // a DENY wins over the prefixed ALLOW
            mirrors("--add-acl", "--mirror", "dr-orders", "--deny-principal", "User:operator", "--operation",
                    "Alter");
            Waits.waitUntil("the DENY applied", () -> pauseRefused(operator));
            mirrors("--remove-acl", "--mirror", "dr-orders", "--deny-principal", "User:operator");
            String removed = mirrors("--remove-acl", "--mirror", "dr-", "--resource-pattern-type", "prefixed",
                    "--allow-principal", "User:operator");
            assertTrue(removed.startsWith("Removed 2 ACL(s)"), removed);
            Waits.waitUntil("the operator no longer sees dr-orders", () -> operator.listClusterMirrors(false)
                    .isEmpty());
        }
    }

    private static boolean pauseRefused(MirrorAdmin operator) throws Exception {
        try {
            operator.pauseMirrorTopics("dr-orders", List.of("orders"), List.of());
            operator.resumeMirrorTopics("dr-orders", List.of("orders"), List.of());
            return false;
        } catch (MirrorException e) {
            return e.errorCode() == MirrorErrors.CLUSTER_MIRROR_AUTHORIZATION_FAILED.code;
        }
    }

    private static Throwable outcome(Row row, String user) {
        try (MirrorAdmin admin = MirrorAdmin.create(destinationAdminConfigs(user))) {
            row.action().run(admin);
            return null;
        } catch (Throwable t) {
            return t;
        }
    }

    /** Per-topic errors of a topic call, the first thrown (a topic refused is the row's denial). */
    private static void throwFirst(Map<String, MirrorException> errors) {
        if (!errors.isEmpty()) {
            throw errors.values().iterator().next();
        }
    }

    private static Map<String, Object> destinationAdminConfigs(String user) {
        return USERS.client(user);
    }

    /** Runs twinlog-mirrors.sh against the destination as the super user; fails the test on a non-zero exit. */
    private static String mirrors(String... args) throws Exception {
        File config = new File(workDir, "admin.properties");
        if (!config.exists()) {
            Files.writeString(config.toPath(), USERS.client("admin").entrySet().stream()
                    .filter(e -> !e.getKey().equals("bootstrap.servers"))
                    .map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining("\n")));
        }
        List<String> all = new ArrayList<>(List.of("--bootstrap-server", destination.bootstrapServers(),
                "--command-config", config.getPath()));
        all.addAll(List.of(args));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine command = MirrorsCommand.newCommandLine();
        command.setOut(new PrintWriter(out));
        command.setErr(new PrintWriter(err));
        int exit = command.execute(all.toArray(new String[0]));
        assertEquals(0, exit, "twinlog-mirrors.sh " + all + ": " + err + out);
        return out.toString();
    }
}
