package io.twinlog.tests;

import io.twinlog.clients.mirror.MirrorApi;
import org.apache.kafka.common.protocol.ApiKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/architecture.md and the flow pages (docs/flows/*.md) name classes and methods in order; when a class is
 * renamed, moved or split, a page that still names the old one fails here with the page, the line and the name.
 *
 * <p>What is checked: every backticked name that looks like a class ({@code `Foo`}, {@code `Foo.bar`},
 * {@code `package.Foo`}, {@code `Foo.bar(args)`}: a CamelCase segment), and in the pictures (fenced blocks) every
 * CamelCase word with two capitals or a member ({@code MetadataWatcher}, {@code Partition.appendMirroredRecords}).
 * Each must be one of:
 * <ul>
 *   <li>a Twinlog source file {@code Foo.java} under any module's {@code src/main/java} (or {@code src/test/java},
 *       so pages can name their tests), in the package the name gives if it gives one, and holding the member
 *       named after it ({@code bar} in {@code `Foo.bar`}), so a method moved to another class fails too; or a
 *       message class generated from {@code src/main/message/<Name>.json};</li>
 *   <li>a Kafka class (in a jar of this test's classpath under {@code org/apache/kafka/}) with "Kafka" written
 *       shortly before it ("Kafka's `KafkaEventQueue`"), or in a section whose heading names Kafka ("Kafka internals
 *       we use"): a Twinlog class renamed away whose old name Kafka also has ({@code Partition},
 *       {@code ReplicaManager}) must not pass as Kafka's;</li>
 *   <li>an API's name (Kafka's {@link ApiKeys}, Twinlog's {@link MirrorApi}), or one of {@link #OTHER_NAMES}.</li>
 * </ul>
 */
@Timeout(60)
class ArchitectureDocNamesTest {
    /** Names of other libraries and of the JDK that the pages use, and words that are no class. */
    static final Set<String> OTHER_NAMES = Set.of("ZooKeeper", "CuratorCache", "CompletableFuture",
            "ScheduledExecutorService", "ExecutorService", "ConnectionState", "MirrorMaker", "JavaScript",
            "TransactionVersion", "StandardAuthorizer", "ServiceLoader");
    /** Kafka classes the pages name that are not on this test's class path (the benchmarks' Kafka test kit). */
    static final Set<String> KAFKA_NAMES_OFF_CLASS_PATH = Set.of("KafkaClusterTestKit", "TestKitNodes");
    /** How far before a Kafka name "Kafka" must appear (a list after "Kafka's" counts). */
    private static final int KAFKA_MENTION_WINDOW = 40;
    /** A backticked span: its content must be a dotted name, possibly with an argument list. */
    private static final Pattern BACKTICKED = Pattern.compile("`([^`]+)`");
    private static final Pattern DOTTED_NAME = Pattern.compile(
            "((?:[a-z][a-z0-9]*\\.)*[A-Z][A-Za-z0-9]*(?:\\.[A-Za-z_][A-Za-z0-9_]*)*)(?: ?\\([^()]*\\))?");
    /** A file named in backticks, not a class ({@code `StopMirrorTopicsRequest.json`}). */
    private static final Pattern FILE_NAME = Pattern.compile(".*\\.(json|md|java|sh|properties|xml|yaml|yml)");
    /** A type declared in a source file, nested ones included ({@code MirrorAction.AddFetcher}). */
    private static final Pattern DECLARATION = Pattern.compile("\\b(?:class|interface|record|enum) ([A-Z]\\w*)");
    /** In a picture: a capitalised word not glued to a path, a thread name or a type parameter. */
    private static final Pattern PICTURE_WORD = Pattern.compile(
            "(?<![\\w/<>.-])([A-Z][A-Za-z0-9]*(?:\\.[A-Za-z_][A-Za-z0-9_]*)*)(?![\\w<>-])");

    /** One name as written on a page, and where. */
    record Mention(Path page, int line, String written, String className, Optional<String> packagePath,
                   Optional<String> member, int offset) {
    }

    @Test
    void everyClassNamedByTheArchitecturePagesExists() throws IOException {
        Path root = SourceFiles.repositoryRoot();
        List<Path> pages = pages(root);
        assertTrue(pages.size() >= 6, "architecture.md and the five flow pages, found " + pages);
        Map<String, List<Path>> sources = sources(root);
        assertTrue(sources.size() > 300, "found only " + sources.size() + " source files under " + root);
        Set<String> kafkaClasses = new HashSet<>(kafkaClassesOnClassPath());
        kafkaClasses.addAll(KAFKA_NAMES_OFF_CLASS_PATH);
        assertTrue(kafkaClasses.contains("KafkaEventQueue") && kafkaClasses.contains("UnifiedLog"),
                "Kafka's jars are not on the test class path");
        Set<String> apiNames = apiNames();
        List<String> unknown = new ArrayList<>();
        int checked = 0;
        for (Path page : pages) {
            String text = Files.readString(page);
            for (Mention m : mentions(page, text)) {
                checked++;
                Optional<String> problem = check(m, text, sources, kafkaClasses, apiNames);
                problem.ifPresent(p -> unknown.add(root.relativize(m.page()) + ":" + m.line() + ": `"
                        + m.written() + "` " + p));
            }
        }
        assertTrue(checked > 400, "only " + checked + " names found in " + pages + ": is the pattern still right?");
        assertEquals(List.of(), unknown, "names in the architecture pages that the code does not have (rename them "
                + "in the page, or add a library's name to OTHER_NAMES)");
    }

    @Test
    void theCheckFindsTheNamesAPageMeans() {
        Path page = Path.of("x.md");
        String text = "Runs `Partition.appendMirroredRecords` and `runtime.LocalPartitions`, `MirrorAction.ComparePeer"
                + "(upTo)`;\nnot `min.insync.replicas`, `Partition.appendRecordsAs\n  Follower` but "
                + "`Partition.appendRecordsAsFollower\n  (records)`, `StopMirrorTopicsRequest.json`, `FAILED`, "
                + "`twinlog-mirror-<id>` or `/mirrors`.\n```\n"
                + " twinlog-metadata-<id> (MetadataWatcher) ──> Controller.onImage; ExpirationReaper-<id> Kafka's\n"
                + "```\n";
        List<String> found = mentions(page, text).stream()
                .map(m -> m.className() + m.member().map(s -> "." + s).orElse("") + m.packagePath().map(
                        p -> " in " + p).orElse("") + " @" + m.line()).toList();
        assertEquals(List.of("Partition.appendMirroredRecords @1", "LocalPartitions in runtime @1",
                "MirrorAction.ComparePeer @1", "Partition.appendRecordsAsFollower @3", "MetadataWatcher @6",
                "Controller.onImage @6"), found);
    }

    @Test
    void theCheckRefusesWhatTheCodeDoesNotHave(@TempDir Path dir) throws IOException {
        // a made-up class: a real one declared in this file's text would be found here by the page check
        Path widget = Files.writeString(dir.resolve("Widget.java"),
                "final class Widget {\n    void spin() {\n    }\n}\n");
        Map<String, List<Path>> sources = Map.of("Widget", List.of(widget));
        String text = "`Widget.spin`, `Widget.appendGone`, Kafka's `KafkaEventQueue`.\n"
                + "A sentence about something else entirely: `ReplicaManager`, `Missing`, `Fetch`, `ZooKeeper`\n"
                + "## What we take of Kafka\nA sentence about something else entirely: `ReplicaManager`\n";
        List<String> outcomes = new ArrayList<>();
        for (Mention m : mentions(dir.resolve("x.md"), text)) {
            outcomes.add(m.written() + ": " + check(m, text, sources, Set.of("KafkaEventQueue", "ReplicaManager"),
                    Set.of("Fetch")).map(p -> String.join(" ", List.of(p.split(" ")).subList(0, 3))).orElse("ok"));
        }
        assertEquals(List.of("Widget.spin: ok", "Widget.appendGone: names appendGone, which",
                "KafkaEventQueue: ok", "ReplicaManager: is no Twinlog", "Missing: is no class", "Fetch: ok",
                "ZooKeeper: ok", "ReplicaManager: ok"), outcomes);
    }

    /** Every name of a page that looks like a class, with its line, in page order. */
    static List<Mention> mentions(Path page, String text) {
        List<Mention> out = new ArrayList<>();
        // the page with its pictures blanked out, at the same offsets: a code span may run over a line break
        StringBuilder prose = new StringBuilder();
        boolean inPicture = false;
        int offset = 0;
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            if (line.startsWith("```")) {
                inPicture = !inPicture;
                prose.append(" ".repeat(line.length()));
            } else if (inPicture) {
                Matcher w = PICTURE_WORD.matcher(line);
                while (w.find()) {
                    String name = w.group(1);
                    if (name.contains(".") || name.chars().filter(Character::isUpperCase).count() >= 2) {
                        mention(page, i + 1, name, name, offset + w.start()).ifPresent(out::add);
                    }
                }
                prose.append(" ".repeat(line.length()));
            } else {
                prose.append(line);
            }
            prose.append('\n');
            offset += line.length() + 1;
        }
        Matcher b = BACKTICKED.matcher(prose);
        while (b.find()) {
            String written = b.group(1).replaceAll("\\s+", " ").trim();
            Matcher n = DOTTED_NAME.matcher(written);
            if (n.matches() && !FILE_NAME.matcher(written).matches()) {
                int line = 1 + (int) text.substring(0, b.start()).chars().filter(c -> c == '\n').count();
                mention(page, line, written, n.group(1), b.start()).ifPresent(out::add);
            }
        }
        out.sort(Comparator.comparingInt(Mention::offset));
        return out;
    }

    /** A dotted name split into package, class and member; empty when its class segment is not CamelCase. */
    private static Optional<Mention> mention(Path page, int line, String written, String name, int offset) {
        String[] parts = name.split("\\.");
        int c = 0;
        while (c < parts.length && !Character.isUpperCase(parts[c].charAt(0))) {
            c++;
        }
        String className = parts[c];
        if (className.chars().noneMatch(Character::isLowerCase)) {
            return Optional.empty(); // a state or an error code (FAILED, NOT_LEADER_OR_FOLLOWER), an acronym
        }
        Optional<String> pkg = c == 0 ? Optional.empty()
                : Optional.of(String.join("/", List.of(parts).subList(0, c)));
        Optional<String> member = c + 1 < parts.length ? Optional.of(parts[c + 1]) : Optional.empty();
        return Optional.of(new Mention(page, line, written, className, pkg, member, offset));
    }

    /** Why the name is unknown, or empty when it names something real. */
    private static Optional<String> check(Mention m, String text, Map<String, List<Path>> sources,
                                          Set<String> kafkaClasses, Set<String> apiNames) throws IOException {
        List<Path> files = sources.getOrDefault(m.className(), List.of()).stream()
                .filter(f -> m.packagePath().map(p -> f.toString().replace(File.separatorChar, '/')
                        .contains("/" + p + "/")).orElse(true))
                .toList();
        if (!files.isEmpty()) {
            if (m.member().isEmpty()) {
                return Optional.empty();
            }
            Pattern word = Pattern.compile("\\b" + Pattern.quote(m.member().get()) + "\\b");
            for (Path f : files) {
                if (f.toString().endsWith(".json") || word.matcher(Files.readString(f)).find()) {
                    return Optional.empty();
                }
            }
            return Optional.of("names " + m.member().get() + ", which " + files + " does not have");
        }
        if (apiNames.contains(m.className()) || OTHER_NAMES.contains(m.className())) {
            return Optional.empty();
        }
        if (kafkaClasses.contains(m.className())) {
            String before = text.substring(Math.max(0, m.offset() - KAFKA_MENTION_WINDOW), m.offset());
            return before.toLowerCase(Locale.ROOT).contains("kafka") || section(text, m.offset()).contains("Kafka")
                    ? Optional.empty()
                    : Optional.of("is no Twinlog class; Kafka has one: say so (\"Kafka's `" + m.className() + "`\")");
        }
        return Optional.of("is no class of any module" + m.packagePath().map(p -> " in package " + p).orElse(""));
    }

    /** The heading of the section {@code offset} is in ("## Kafka internals we use": every name there is Kafka's). */
    static String section(String text, int offset) {
        int heading = text.lastIndexOf("\n#", offset);
        return heading < 0 ? "" : text.substring(heading + 1, text.indexOf('\n', heading + 1));
    }

    /** architecture.md and every page under docs/flows. */
    private static List<Path> pages(Path root) throws IOException {
        List<Path> out = new ArrayList<>();
        out.add(root.resolve("docs").resolve("architecture.md"));
        try (Stream<Path> flows = Files.list(root.resolve("docs").resolve("flows"))) {
            flows.filter(p -> p.toString().endsWith(".md")).sorted().forEach(out::add);
        }
        return out;
    }

    /**
     * Every Java source of every module ({@code src/main/java} and {@code src/test/java}) under the name of each type
     * it declares (nested ones too), and the message specs the mirror APIs' classes are generated from, under the
     * generated class's name.
     */
    private static Map<String, List<Path>> sources(Path root) throws IOException {
        Map<String, List<Path>> out = new HashMap<>();
        for (Path file : SourceFiles.under(root, path -> path.endsWith(".java")
                && (path.contains("src/main/java/") || path.contains("src/test/java/")))) {
            String name = file.getFileName().toString();
            Set<String> declared = new HashSet<>();
            declared.add(name.substring(0, name.length() - ".java".length()));
            Matcher d = DECLARATION.matcher(Files.readString(file));
            while (d.find()) {
                declared.add(d.group(1));
            }
            declared.forEach(type -> out.computeIfAbsent(type, k -> new ArrayList<>()).add(file));
        }
        for (Path spec : SourceFiles.under(root,
                path -> path.endsWith(".json") && path.contains("src/main/message/"))) {
            String name = spec.getFileName().toString();
            out.computeIfAbsent(name.substring(0, name.length() - ".json".length()) + "Data", k -> new ArrayList<>())
                    .add(spec);
        }
        return out;
    }

    /** The simple names of Kafka's classes (nested ones too) in the jars of this test's class path. */
    private static Set<String> kafkaClassesOnClassPath() {
        Set<String> out = new HashSet<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (!entry.endsWith(".jar")) {
                continue;
            }
            try (JarFile jar = new JarFile(entry)) {
                for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
                    String name = e.nextElement().getName();
                    if (name.startsWith("org/apache/kafka/") && name.endsWith(".class")) {
                        String simple = name.substring(name.lastIndexOf('/') + 1, name.length() - ".class".length());
                        for (String part : simple.split("\\$")) {
                            out.add(part);
                        }
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("reading " + entry, e);
            }
        }
        return out;
    }

    /** Kafka's API names (CreateTopics, ElectLeaders, ...) and Twinlog's (LastMirroredEpochs, ...). */
    private static Set<String> apiNames() {
        Set<String> out = new HashSet<>();
        for (ApiKeys key : ApiKeys.values()) {
            out.add(key.name);
        }
        for (MirrorApi api : MirrorApi.values()) {
            out.add(api.name);
        }
        return out;
    }
}
