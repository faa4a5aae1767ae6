package io.twinlog.tests;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/architecture.md's picture of the modules matches the build (issue 29: "the module list and the picture
 * match"): every module of the reactor has its line, no line names a module the build does not have, and what each
 * module reaches through the drawn arrows is what it reaches through its POM's dependencies on Twinlog modules
 * (compared transitively, so the picture may leave out what a module reaches through another).
 */
@Timeout(60)
class ModulesPictureTest {
    /** A module's line: its name at the start, then optionally its arrow and the modules it uses. */
    private static final Pattern LINE = Pattern.compile("^ (twinlog-[a-z0-9-]+|bench)(?: ─+> ([a-z0-9-]+(?:, "
            + "[a-z0-9-]+)*))?(?: {2,}.*)?$");
    private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
    private static final Pattern DEPENDENCY = Pattern.compile("<dependency>(.*?)</dependency>", Pattern.DOTALL);
    private static final Pattern TWINLOG_ARTIFACT = Pattern.compile("<artifactId>twinlog-([a-z0-9-]+)</artifactId>");

    @Test
    void thePictureHasEveryModuleAndTheDependenciesOfTheBuild() throws IOException {
        Path root = SourceFiles.repositoryRoot();
        Map<String, Set<String>> drawn = picture(Files.readString(root.resolve("docs/architecture.md")));
        Map<String, Set<String>> declared = build(root);
        assertTrue(declared.size() >= 20, "found only the modules " + declared.keySet());
        assertEquals(List.of(), differences(drawn, declared));
    }

    @Test
    void theCheckNamesAMissingModuleAnArrowTooManyAndOneMissing() {
        Map<String, Set<String>> declared = new LinkedHashMap<>();
        declared.put("server", Set.of("mirror", "common"));
        declared.put("mirror", Set.of("common"));
        declared.put("common", Set.of());
        declared.put("cli", Set.of());
        String doc = "## Modules\n```\n"
                + " twinlog-server ──> mirror      the broker\n"
                + "                                (a continuation line)\n"
                + " twinlog-mirror ──> cli         the mirror\n"
                + " twinlog-common                 the base\n"
                + " twinlog-cli\n"
                + "```\n";
        assertEquals(List.of(), differences(picture(doc.replace("──> cli ", "──> common")), declared),
                "server reaches common through mirror: nothing to draw twice");
        assertEquals(List.of(
                "twinlog-mirror: the picture reaches [cli], the POMs [common]",
                "twinlog-server: the picture reaches [cli, mirror], the POMs [common, mirror]"),
                differences(picture(doc), declared));
        assertEquals(List.of("twinlog-cli: in the build, not in the picture"),
                differences(picture(doc.replace(" twinlog-cli\n", "").replace("──> cli ", "──> common")),
                        declared));
    }

    /** Each module's line in the code block after "## Modules": module → the modules its arrow names. */
    static Map<String, Set<String>> picture(String architecture) {
        int section = architecture.indexOf("\n## Modules\n");
        assertTrue(section >= 0 || architecture.startsWith("## Modules\n"), "no '## Modules' section");
        int open = architecture.indexOf("```", Math.max(section, 0));
        int close = architecture.indexOf("```", open + 3);
        assertTrue(open >= 0 && close > open, "no picture under '## Modules'");
        Map<String, Set<String>> drawn = new LinkedHashMap<>();
        for (String line : architecture.substring(open + 3, close).split("\n")) {
            Matcher m = LINE.matcher(line);
            if (m.matches()) {
                Set<String> uses = new TreeSet<>();
                if (m.group(2) != null) {
                    uses.addAll(Arrays.asList(m.group(2).split(", ")));
                }
                drawn.put(name(m.group(1)), uses);
            }
        }
        return drawn;
    }

    /** The reactor's modules (and the bench profile's) → the Twinlog modules their POMs depend on. */
    private static Map<String, Set<String>> build(Path root) throws IOException {
        List<String> dirs = new ArrayList<>();
        Matcher modules = MODULE.matcher(Files.readString(root.resolve("pom.xml")));
        while (modules.find()) {
            // the older Kafka class paths are POMs of jars, not modules of ours
            if (!modules.group(1).contains("/classpaths/")) {
                dirs.add(modules.group(1));
            }
        }
        Map<String, Set<String>> declared = new LinkedHashMap<>();
        for (String dir : dirs) {
            String pom = Files.readString(root.resolve(dir).resolve("pom.xml"));
            Set<String> uses = new TreeSet<>();
            Matcher dependency = DEPENDENCY.matcher(pom);
            while (dependency.find()) {
                Matcher artifact = TWINLOG_ARTIFACT.matcher(dependency.group(1));
                if (artifact.find()) {
                    uses.add(artifact.group(1));
                }
            }
            declared.put(name(dir), uses);
        }
        return declared;
    }

    /** One line per disagreement, sorted: a module on one side only, or different reaches. */
    static List<String> differences(Map<String, Set<String>> drawn, Map<String, Set<String>> declared) {
        List<String> out = new ArrayList<>();
        for (String module : new TreeSet<>(declared.keySet())) {
            if (!drawn.containsKey(module)) {
                out.add("twinlog-" + module + ": in the build, not in the picture");
            } else {
                Set<String> drawnReach = reach(module, drawn);
                Set<String> declaredReach = reach(module, declared);
                if (!drawnReach.equals(declaredReach)) {
                    out.add("twinlog-" + module + ": the picture reaches " + drawnReach + ", the POMs "
                            + declaredReach);
                }
            }
        }
        for (String module : new TreeSet<>(drawn.keySet())) {
            if (!declared.containsKey(module)) {
                out.add("twinlog-" + module + ": in the picture, not in the build");
            }
        }
        return out;
    }

    private static Set<String> reach(String module, Map<String, Set<String>> uses) {
        Set<String> reached = new TreeSet<>();
        List<String> todo = new ArrayList<>(uses.getOrDefault(module, Set.of()));
        while (!todo.isEmpty()) {
            String next = todo.remove(todo.size() - 1);
            if (reached.add(next)) {
                todo.addAll(uses.getOrDefault(next, Set.of()));
            }
        }
        return reached;
    }

    /** "twinlog-server" and "server" → "server"; "bench" (artifact twinlog-bench) stays "bench". */
    private static String name(String moduleOrDir) {
        return moduleOrDir.startsWith("twinlog-") ? moduleOrDir.substring("twinlog-".length()) : moduleOrDir;
    }
}
