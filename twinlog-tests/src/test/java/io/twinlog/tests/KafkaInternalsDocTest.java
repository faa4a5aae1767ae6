package io.twinlog.tests;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/architecture.md's "Kafka internals we use" lists every internal Kafka package that {@code src/main} of any
 * module imports, and only those, each with tests that exist (issue 29 point 5, decision 117). The table is the one
 * list: this test reads it, so a new internal import fails here until the doc says why and what catches a change.
 *
 * <p>Public is what Kafka's Javadoc publishes ({@link #PUBLIC_PACKAGES}, the packages Kafka's build gives its
 * Javadoc task) for a class that ships in {@code kafka-clients}, and Kafka Streams outside {@code internals}; a
 * {@code kafka-server} class in a package named like a public one ({@code server.quota.ClientQuotaManager}) is
 * internal. A class this module cannot load is judged by its package alone.
 */
@Timeout(60)
class KafkaInternalsDocTest {
    private static final String PREFIX = "org.apache.kafka.";
    static final Set<String> PUBLIC_PACKAGES = Set.of("clients.admin", "clients.consumer", "clients.producer",
            "common", "common.acl", "common.annotation", "common.config", "common.config.provider", "common.errors",
            "common.header", "common.metrics", "common.metrics.stats", "common.quota", "common.resource",
            "common.serialization", "common.security.auth", "common.security.plain", "common.security.scram",
            "common.security.token.delegation", "common.security.oauthbearer", "common.security.oauthbearer.secured",
            "server.authorizer", "server.policy", "server.quota", "server.telemetry");
    private static final String SECTION = "## Kafka internals we use";
    /** A Kafka class named in code or an import: its package, then its outermost class (or {@code *}). */
    private static final Pattern KAFKA_NAME = Pattern.compile(
            "(?<![\\w.])org\\.apache\\.kafka\\.((?:[a-z_][a-z0-9_]*\\.)*[a-z_][a-z0-9_]*)\\.([A-Z]\\w*|\\*)");
    private static final Pattern TABLE_ROW = Pattern.compile("^\\| `([a-z0-9_.]+)` \\|(.*)\\|(.*)\\|\\s*$");
    private static final Pattern TEST_NAME = Pattern.compile("`(\\w+Test)`");

    @Test
    void theDocListsEveryInternalPackageImportedAndOnlyThose() throws IOException {
        Path root = SourceFiles.repositoryRoot();
        Map<String, Set<String>> used = internalPackagesUsed(root); // package -> the sources using it
        Map<String, List<String>> rows = table(Files.readString(root.resolve("docs/architecture.md")));
        List<String> problems = new ArrayList<>();
        used.forEach((pkg, sources) -> {
            if (!rows.containsKey(pkg)) {
                problems.add("`" + pkg + "` is imported by " + sources + " but has no row");
            }
        });
        rows.keySet().stream().filter(pkg -> !used.containsKey(pkg))
                .forEach(pkg -> problems.add("`" + pkg + "` has a row but no source in src/main uses it"));
        Set<String> tests = new TreeSet<>();
        for (Path p : sources(root, "src/test/java/")) {
            String name = p.getFileName().toString();
            tests.add(name.substring(0, name.length() - ".java".length()));
        }
        rows.forEach((pkg, named) -> {
            for (String test : named) {
                if (!tests.contains(test)) {
                    problems.add("`" + pkg + "` names " + test + ", which is no test class");
                }
            }
        });
        assertEquals(List.of(), problems, "docs/architecture.md, " + SECTION);
        assertTrue(rows.size() > 30, "read only " + rows.size() + " rows");
    }

    @Test
    void publicIsWhatKafkaPublishes() {
        assertTrue(isPublic("clients.admin", "Admin"));
        assertTrue(isPublic("server.quota", "ClientQuotaCallback"), "kafka-clients' public interface");
        assertFalse(isPublic("server.quota", "ClientQuotaManager"), "kafka-server's class in that package");
        assertFalse(isPublic("common.utils.internals", "LogContext"));
        assertFalse(isPublic("common.requests", "ProduceRequest"));
        assertFalse(isPublic("storage.internals.log", "UnifiedLog"));
        assertTrue(isPublic("streams.kstream", "KStream"));
        assertFalse(isPublic("streams.processor.internals", "StreamThread"));
    }

    @Test
    void aRowNamesItsPackageAndItsTests() {
        String doc = "# A\n\n" + SECTION + "\nText.\n\n| Package | What | Tests |\n|---|---|---|\n"
                + "| `common.requests` | `AbstractRequest`: parsing | `KafkaProtocolParityTest`, `BadInputTest` |\n"
                + "| `common.test` | the benchmarks | none: compile with `-Pbench` |\n\n## Next\n| `image` | x | `ATest` |\n";
        Map<String, List<String>> expected = new TreeMap<>();
        expected.put("common.requests", List.of("KafkaProtocolParityTest", "BadInputTest"));
        expected.put("common.test", List.of());
        assertEquals(expected, table(doc));
        assertThrows(AssertionError.class, () -> table(doc.replace(" none: compile with `-Pbench` ", " none ")),
                "a row naming no test and not saying why");
    }

    /** The internal packages (relative to {@code org.apache.kafka.}) that {@code src/main} names, with who names them. */
    private static Map<String, Set<String>> internalPackagesUsed(Path root) {
        Map<String, Set<String>> used = new TreeMap<>();
        List<Path> sources = sources(root, "src/main/java/");
        assertTrue(sources.size() > 300, "found only " + sources.size() + " sources under " + root);
        for (Path path : sources) {
            Matcher m = KAFKA_NAME.matcher(JavaSource.read(path).code());
            while (m.find()) {
                if (!isPublic(m.group(1), m.group(2))) {
                    String name = path.getFileName().toString();
                    used.computeIfAbsent(m.group(1), k -> new TreeSet<>())
                            .add(name.substring(0, name.length() - ".java".length()));
                }
            }
        }
        return used;
    }

    static boolean isPublic(String pkg, String simpleName) {
        if (pkg.equals("streams") || pkg.startsWith("streams.")) {
            return !List.of(pkg.split("\\.")).contains("internals");
        }
        if (!PUBLIC_PACKAGES.contains(pkg)) {
            return false;
        }
        if (simpleName.equals("*")) {
            return true;
        }
        URL where = KafkaInternalsDocTest.class.getClassLoader()
                .getResource((PREFIX + pkg).replace('.', '/') + "/" + simpleName + ".class");
        return where == null || where.toString().contains("/kafka-clients-");
    }

    /**
     * The rows of {@link #SECTION}: package -> the tests named in its last column. A row naming no test must say
     * why with {@code -Pbench} (code only the benchmarks use, which no test runs).
     */
    static Map<String, List<String>> table(String doc) {
        int start = doc.indexOf("\n" + SECTION + "\n");
        assertTrue(start >= 0, "no section '" + SECTION + "'");
        int end = doc.indexOf("\n## ", start + 1);
        Map<String, List<String>> rows = new TreeMap<>();
        for (String line : doc.substring(start, end < 0 ? doc.length() : end).split("\n")) {
            Matcher row = TABLE_ROW.matcher(line);
            if (!row.matches()) {
                continue;
            }
            List<String> tests = new ArrayList<>();
            Matcher test = TEST_NAME.matcher(row.group(3));
            while (test.find()) {
                tests.add(test.group(1));
            }
            if (tests.isEmpty() && !row.group(3).contains("`-Pbench`")) {
                throw new AssertionError("the row of `" + row.group(1) + "` names no test");
            }
            if (rows.put(row.group(1), tests) != null) {
                throw new AssertionError("two rows for `" + row.group(1) + "`");
            }
        }
        return rows;
    }

    /** Every {@code .java} file under a {@code sourceSet} directory (such as {@code src/main/java/}) of any module. */
    private static List<Path> sources(Path root, String sourceSet) {
        try {
            return SourceFiles.under(root, path -> path.endsWith(".java") && path.contains(sourceSet));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
