package io.twinlog.tests;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * No class in any module's {@code src/main} is longer than {@value #MAX_LINES} lines (issue 29, decision 119): a
 * class does one job, and a newcomer can read it. It reads the sources, as {@link TestTimeoutsTest} does, so one
 * check covers every module. Two lists, each naming why:
 * <ul>
 *   <li>{@link #PORTED_FROM_KAFKA}: classes ported from Apache Kafka, kept in Kafka's shape so that a change there
 *   can be followed here line by line (none today);</li>
 *   <li>{@link #PENDING}: classes still over the limit at the end of the session that set it, each with what is
 *   to come of it (none today). An entry here is a debt, not a permission: the test also fails when a pending
 *   class is back under the limit, so the list only shrinks.</li>
 * </ul>
 */
@Timeout(60)
class ClassSizeTest {
    static final int MAX_LINES = 500;

    /** Ported from Apache Kafka, by path, with why it keeps Kafka's shape. */
    static final Map<String, String> PORTED_FROM_KAFKA = Map.of();

    /** Over the limit and not ported: to be split (by path, with what is to come of it). */
    static final Map<String, String> PENDING = Map.of();

    @Test
    void noSourceClassIsLongerThanTheLimit() throws IOException {
        Path root = SourceFiles.repositoryRoot();
        List<Path> sources = SourceFiles.under(root,
                path -> path.contains("src/main/java/") && path.endsWith(".java"));
        assertTrue(sources.size() > 300, "found only " + sources.size() + " main sources under " + root);
        Map<String, Integer> over = new TreeMap<>();
        Map<String, Integer> pendingNowUnder = new TreeMap<>();
        for (Path source : sources) {
            String path = root.relativize(source).toString();
            int lines = Files.readAllLines(source).size();
            boolean excepted = PORTED_FROM_KAFKA.containsKey(path) || PENDING.containsKey(path);
            if (lines > MAX_LINES && !excepted) {
                over.put(path, lines);
            } else if (lines <= MAX_LINES && PENDING.containsKey(path)) {
                pendingNowUnder.put(path, lines);
            }
        }
        assertEquals(Map.of(), over, "classes over " + MAX_LINES + " lines (split them along their jobs)");
        assertEquals(Map.of(), pendingNowUnder, "pending classes now under the limit: take them off PENDING");
    }

    @Test
    void everyExceptionNamesAnExistingSource() {
        Path root = SourceFiles.repositoryRoot();
        List<String> missing = new ArrayList<>();
        for (String path : PORTED_FROM_KAFKA.keySet()) {
            if (!Files.isRegularFile(root.resolve(path))) {
                missing.add(path);
            }
        }
        for (String path : PENDING.keySet()) {
            if (!Files.isRegularFile(root.resolve(path))) {
                missing.add(path);
            }
        }
        assertEquals(List.of(), missing, "exceptions naming no source (moved or deleted: update the lists)");
    }
}
