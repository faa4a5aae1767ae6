package io.twinlog.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The two tables of docs/status.md that tests hold against the code, read as the file lays them out, so that the
 * document cannot drift from what the broker serves (decision 107):
 * <ul>
 *   <li>"Kafka APIs served": a row per API or per group of APIs, its first cell kafka-clients' names
 *       ({@code ApiKeys#name}, e.g. {@code InitProducerId}) separated by {@code " / "} or {@code ", "}, with notes in
 *       parentheses ({@code (v0-5)}, {@code (transactional)}); Twinlog's own APIs as one row
 *       {@code Twinlog APIs FIRST-LAST} (API keys);</li>
 *   <li>the differences from Kafka 4.4 ("Protocol guarantees and differences"): rows {@code Kafka only: A, B},
 *       {@code Twinlog only: A (v2-3)}, {@code Twinlog only: API keys FIRST-LAST} and
 *       {@code A, B: Kafka vMIN-MAX, Twinlog vMIN[-MAX]}.</li>
 * </ul>
 * A row the reader cannot make sense of fails with the row, rather than being skipped.
 */
public final class StatusDoc {
    private static final String SERVED_HEADING = "## Kafka APIs served";
    private static final String DIFFERENCES_HEADING = "## Protocol guarantees and differences from Kafka 4.4";
    private static final Pattern KEY_RANGE = Pattern.compile("(\\d+)-(\\d+)");
    private static final Pattern VERSIONS = Pattern.compile("(.+): Kafka v(\\d+)-(\\d+), Twinlog v(\\d+)(?:-(\\d+))?");

    private final Path path;
    private final List<String> lines;

    private StatusDoc(Path path, List<String> lines) {
        this.path = path;
        this.lines = lines;
    }

    /** docs/status.md of this checkout, found from the working directory up (a module's tests run in the module). */
    public static StatusDoc read() throws IOException {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null) {
            Path candidate = dir.resolve("docs").resolve("status.md");
            if (Files.isRegularFile(candidate)) {
                return new StatusDoc(candidate, Files.readAllLines(candidate, StandardCharsets.UTF_8));
            }
            dir = dir.getParent();
        }
        throw new IOException("docs/status.md not found above " + Path.of("").toAbsolutePath());
    }

    public Path path() {
        return path;
    }

    /** The API names the served table's rows name (each once), in the table's order; Twinlog's own row left out. */
    public Set<String> servedApiNames() {
        Set<String> names = new LinkedHashSet<>();
        for (String cell : firstCells(SERVED_HEADING)) {
            if (!cell.startsWith("Twinlog APIs ")) {
                names.addAll(apiNames(cell));
            }
        }
        return names;
    }

    /** The API keys of the served table's {@code Twinlog APIs FIRST-LAST} row, or empty without such a row. */
    public Optional<KeyRange> servedTwinlogKeys() {
        return firstCells(SERVED_HEADING).stream().filter(cell -> cell.startsWith("Twinlog APIs "))
                .map(cell -> keyRange(cell, cell.substring("Twinlog APIs ".length()))).findFirst();
    }

    /** The rows of the differences table. */
    public List<Difference> differences() {
        List<Difference> out = new ArrayList<>();
        for (String cell : firstCells(DIFFERENCES_HEADING)) {
            if (cell.startsWith("Kafka only: ")) {
                out.add(new Difference(Kind.KAFKA_ONLY, apiNames(cell.substring("Kafka only: ".length())), null,
                        null, null));
            } else if (cell.startsWith("Twinlog only: API keys ")) {
                out.add(new Difference(Kind.TWINLOG_KEYS, List.of(), null, null,
                        keyRange(cell, cell.substring("Twinlog only: API keys ".length()))));
            } else if (cell.startsWith("Twinlog only: ")) {
                out.add(new Difference(Kind.TWINLOG_ONLY, apiNames(cell.substring("Twinlog only: ".length())), null,
                        null, null));
            } else {
                Matcher m = VERSIONS.matcher(cell);
                if (!m.matches()) {
                    throw new IllegalStateException(path + ": a difference row that is none of 'Kafka only: ...', "
                            + "'Twinlog only: ...', '...: Kafka vA-B, Twinlog vC-D': " + cell);
                }
                short twinlogMin = Short.parseShort(m.group(4));
                short twinlogMax = m.group(5) == null ? twinlogMin : Short.parseShort(m.group(5));
                out.add(new Difference(Kind.VERSIONS, apiNames(m.group(1)),
                        new VersionRange(Short.parseShort(m.group(2)), Short.parseShort(m.group(3))),
                        new VersionRange(twinlogMin, twinlogMax), null));
            }
        }
        return out;
    }

    /** What a difference row says. */
    public enum Kind { KAFKA_ONLY, TWINLOG_ONLY, TWINLOG_KEYS, VERSIONS }

    /** One row of the differences table; the fields a kind does not use are null. */
    public record Difference(Kind kind, List<String> apiNames, VersionRange kafka, VersionRange twinlog,
                             KeyRange twinlogKeys) {
    }

    /** Inclusive. */
    public record VersionRange(short min, short max) {
        @Override
        public String toString() {
            return "v" + min + "-" + max;
        }
    }

    /** API keys, inclusive. */
    public record KeyRange(int first, int last) {
        public boolean contains(int key) {
            return key >= first && key <= last;
        }
    }

    /** {@code A / B, C (note)} → [A, B, C]. */
    private List<String> apiNames(String cell) {
        List<String> names = new ArrayList<>();
        for (String part : cell.replaceAll("\\s*\\([^)]*\\)", "").split(" / |, ")) {
            String name = part.strip();
            if (!name.matches("[A-Z][A-Za-z]+")) {
                throw new IllegalStateException(path + ": '" + name + "' in row '" + cell + "' is not an API name "
                        + "(write each API by its full name, separated by ' / ' or ', ')");
            }
            names.add(name);
        }
        return names;
    }

    private KeyRange keyRange(String cell, String range) {
        Matcher m = KEY_RANGE.matcher(range.strip());
        if (!m.matches()) {
            throw new IllegalStateException(path + ": expected API keys FIRST-LAST in row '" + cell + "'");
        }
        return new KeyRange(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)));
    }

    /**
     * The first cells of the first table in the section whose heading starts with {@code heading} (the header row and
     * the separator skipped, up to the first line that is not a row).
     */
    private List<String> firstCells(String heading) {
        int at = 0;
        while (at < lines.size() && !lines.get(at).startsWith(heading)) {
            at++;
        }
        int row = at + 1;
        while (row < lines.size() && !lines.get(row).startsWith("|") && !lines.get(row).startsWith("## ")) {
            row++;
        }
        if (row >= lines.size() || !lines.get(row).startsWith("|")) {
            throw new IllegalStateException(path + ": no table under a heading '" + heading + "'");
        }
        List<String> cells = new ArrayList<>();
        for (row += 2; row < lines.size() && lines.get(row).startsWith("|"); row++) {
            String line = lines.get(row);
            int end = line.indexOf(" |", 1);
            if (end < 0) {
                throw new IllegalStateException(path + ": a table row without cells: " + line);
            }
            cells.add(line.substring(1, end).strip());
        }
        return cells;
    }
}
