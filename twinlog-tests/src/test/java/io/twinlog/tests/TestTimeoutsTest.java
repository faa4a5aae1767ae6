package io.twinlog.tests;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every test class of every module carries a class-level {@code @Timeout} (decision 110), so a test run from an IDE,
 * which does not read the build's default timeout, cannot hang. It reads the test sources, not classes: one check
 * here covers the modules this one cannot depend on (a module's tests cannot see the test kit, which sits above
 * it). The class-level annotation covers test methods only; the lifecycle methods ({@code @BeforeAll} starting a
 * cluster) are bounded by {@code junit.jupiter.execution.timeout.default}, which surefire sets and the end-to-end
 * modules' {@code junit-platform.properties} sets for an IDE too.
 */
@Timeout(60)
class TestTimeoutsTest {
    /** A method JUnit runs as a test (each of these is meta-annotated {@code @Testable}). */
    private static final Pattern TEST_METHOD = Pattern.compile(
            "^\\s*@(Test|ParameterizedTest|RepeatedTest|TestFactory|TestTemplate)\\b", Pattern.MULTILINE);
    /** The top-level type: the first declaration that starts a line. */
    private static final Pattern TOP_LEVEL_TYPE = Pattern.compile(
            "^(?:public |abstract |final |sealed )*(?:class|interface|record|enum) (\\w+)", Pattern.MULTILINE);

    @Test
    void everyTestClassCarriesAClassLevelTimeout() throws IOException {
        Path root = SourceFiles.repositoryRoot();
        List<Path> sources = testSources(root);
        assertTrue(sources.size() > 200, "found only " + sources.size() + " test sources under " + root);
        List<String> missing = new ArrayList<>();
        for (Path source : sources) {
            if (!hasClassLevelTimeout(Files.readString(source))) {
                missing.add(root.relativize(source).toString());
            }
        }
        assertEquals(List.of(), missing, "test classes without a class-level @Timeout");
    }

    @Test
    void theCheckTellsAnnotatedClassesFromOthers() {
        String javadoc = "package p;\n\nimport org.junit.jupiter.api.Test;\n\n/** Why; not {@code @Timeout}. */\n";
        String test = " {\n    @Test\n    void t() {\n    }\n}\n";
        assertTrue(hasClassLevelTimeout(javadoc + "@Timeout(60)\nclass ATest" + test));
        assertTrue(hasClassLevelTimeout(javadoc + "@Timeout(value = 3, unit = TimeUnit.MINUTES)\n@Tag(\"x\")\n"
                + "public final class ATest" + test));
        assertTrue(hasClassLevelTimeout(javadoc + "class Helper {\n}\n"), "no tests: nothing to bound");
        assertTrue(!hasClassLevelTimeout(javadoc + "class ATest" + test), "none at all");
        assertTrue(!hasClassLevelTimeout(javadoc + "class ATest {\n    @Test\n    @Timeout(5)\n    void t() {\n"
                + "    }\n}\n"), "only on a method");
    }

    /** True when the source declares no test, or its top-level type carries {@code @Timeout}. */
    static boolean hasClassLevelTimeout(String source) {
        if (!TEST_METHOD.matcher(source).find()) {
            return true;
        }
        Matcher type = TOP_LEVEL_TYPE.matcher(source);
        if (!type.find()) {
            return false;
        }
        // the annotations of the type: after the end of its Javadoc (or of the last import), before its declaration
        String before = source.substring(0, type.start());
        int from = Math.max(before.lastIndexOf("*/"), before.lastIndexOf(';'));
        return Pattern.compile("^@Timeout\\b", Pattern.MULTILINE).matcher(before.substring(from + 1)).find();
    }

    /** Every {@code .java} file under a {@code src/test/java} of any module; build output and packages left out. */
    private static List<Path> testSources(Path root) throws IOException {
        return SourceFiles.under(root, path -> path.endsWith(".java") && path.contains("src/test/java/"));
    }
}
