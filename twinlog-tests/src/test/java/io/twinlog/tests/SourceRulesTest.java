package io.twinlog.tests;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every module's sources keep the two rules of {@link SourceRules} (decision 117): classes named by import, not
 * inline, unless two of one simple name meet (main and test sources); broad catches that say why and do not
 * swallow (main sources: a test's broad catch is how it records a failure to assert on).
 */
@Timeout(60)
class SourceRulesTest {
    @Test
    void classesAreNamedByImportUnlessTwoOfOneNameMeet() {
        Path root = SourceFiles.repositoryRoot();
        List<Path> sources = new ArrayList<>(sources(root, "src/main/java/"));
        sources.addAll(sources(root, "src/test/java/"));
        assertTrue(sources.size() > 600, "found only " + sources.size() + " sources under " + root);
        Map<Path, Set<String>> packages = new HashMap<>();
        List<String> found = new ArrayList<>();
        for (Path path : sources) {
            Set<String> samePackage = packages.computeIfAbsent(path.getParent(), SourceRulesTest::typesIn);
            for (String finding : SourceRules.inlineQualifiedNames(JavaSource.read(path), samePackage)) {
                found.add(root.relativize(path) + ":" + finding);
            }
        }
        assertEquals(List.of(), found, "fully-qualified names an import would do");
    }

    @Test
    void broadCatchesSayWhyAndDoNotSwallow() {
        Path root = SourceFiles.repositoryRoot();
        List<Path> sources = sources(root, "src/main/java/");
        assertTrue(sources.size() > 300, "found only " + sources.size() + " sources under " + root);
        List<String> found = new ArrayList<>();
        for (Path path : sources) {
            for (String finding : SourceRules.swallowingBroadCatches(JavaSource.read(path))) {
                found.add(root.relativize(path) + ":" + finding);
            }
        }
        assertEquals(List.of(), found, "broad catches");
    }

    @Test
    void anImportWouldDoUnlessTwoClassesOfOneNameMeet() {
        String head = "package a.b;\n\nimport java.util.List;\nimport org.apache.kafka.common.errors.TimeoutException;\n"
                + "\n/** See {@link java.util.Map}; {@code java.util.Set} is not a link. */\nclass C {\n";
        assertEquals(List.of("6: java.util.Map", "8: java.util.HashMap"), inline(head
                + "  Object m = new java.util.HashMap<>(); // java.util.Deque in a comment is fine\n"
                + "  String s = \"java.util.Queue in a string is fine\";\n}\n"));
        assertEquals(List.of("6: java.util.Map"), inline(head
                + "  boolean t(Throwable e) { return e instanceof java.util.concurrent.TimeoutException; }\n}\n"),
                "another TimeoutException is imported");
        assertEquals(List.of("6: java.util.Map"), inline(head + "  Object c = new a.b.C();\n"
                + "  Object d = new org.x.C();\n  Object e = new org.y.D(); Object f = new org.z.D();\n}\n"),
                "C is declared here, two D meet");
        assertEquals(List.of("6: java.util.Map", "8: org.x.E"), inline(head + "  org.x.E e; org.x.Same s;\n}\n"),
                "Same is a class of this package");
        assertEquals(List.of("6: java.util.Map", "8: org.apache.zookeeper.KeeperException"),
                inline(head + "  void f() { try { } catch (org.apache.zookeeper.KeeperException.NoNodeException e) { } }\n}\n"),
                "a nested class: importing its outer class would do");
    }

    @Test
    void aBroadCatchSaysWhyAndHandsTheExceptionOn() {
        assertEquals(List.of(), catches("try { f(); } catch (Exception e) { // any failure of the plug-in\n"
                + "  log.error(\"plug-in failed\", e);\n}"));
        assertEquals(List.of(), catches("try { f(); } catch (IOException | RuntimeException e) {\n"
                + "  // the caller answers\n  future.completeExceptionally(e);\n}"));
        assertEquals(List.of(), catches("try { f(); } catch (Throwable t) { /* an Error too: the thread dies */\n"
                + "  throw new IllegalStateException(\"f\");\n}"));
        assertEquals(List.of(), catches("try { f(); } catch (IOException e) {\n  return null;\n}"),
                "not broad");
        assertEquals(List.of("2: catch (Exception e) says nowhere why it is broad"),
                catches("// a comment above is not on the catch\ntry { f(); } catch (Exception e) {\n"
                        + "  log.warn(\"f failed\", e);\n}"));
        assertEquals(List.of("1: catch (RuntimeException e) swallows it: no throw, and the exception itself is "
                + "passed to nothing"), catches("try { f(); } catch (RuntimeException e) { // f is a plug-in\n"
                + "  log.warn(\"f failed: \" + e + \" and \" + e.getMessage() + e.getClass().getName());\n}"));
        assertEquals(List.of("1: catch (Exception ignored) says nowhere why it is broad",
                "1: catch (Exception ignored) swallows it: no throw, and the exception itself is passed to nothing"),
                catches("try { f(); } catch (Exception ignored) {\n}"));
    }

    @Test
    void theReaderTellsCodeFromCommentsAndLiterals() {
        JavaSource s = JavaSource.of("a /* b */ \"c // d\" 'e' // f\n\"\"\"\n g \"h\" \"\"\" i");
        assertEquals("a         \"      \" ' '     \n\"\"\"\n       \"\"\" i", s.code());
        assertEquals("  /* b */              // f\n   \n            ", s.comments());
        assertEquals(2, s.lineOf(s.text().indexOf("\"\"\"")));
    }

    private static List<String> inline(String source) {
        return SourceRules.inlineQualifiedNames(JavaSource.of(source), Set.of("C", "Same"));
    }

    private static List<String> catches(String body) {
        return SourceRules.swallowingBroadCatches(JavaSource.of(body));
    }

    /** The simple names of the classes whose source sits in {@code dir}. */
    private static Set<String> typesIn(Path dir) {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(f -> f.getFileName().toString()).filter(n -> n.endsWith(".java"))
                    .map(n -> n.substring(0, n.length() - ".java".length())).collect(Collectors.toSet());
        } catch (IOException e) {
            throw new AssertionError("cannot list " + dir, e);
        }
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
