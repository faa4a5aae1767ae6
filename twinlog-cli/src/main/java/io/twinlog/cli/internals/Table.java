package io.twinlog.cli.internals;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * A table printed as Kafka's tools print theirs: an upper-case header, columns left-aligned to their widest cell and
 * separated by two spaces, no trailing blanks, "-" for a missing value. The header is printed even without rows, so
 * scripts can always find it.
 */
public final class Table {
    static final String NONE = "-";
    private static final String SEPARATOR = "  ";

    private final String[] header;
    private final List<String[]> rows = new ArrayList<>();

    public Table(String... header) {
        this.header = header.clone();
    }

    /** Adds a row; {@code null} cells print as "-", line breaks inside a cell as "\n". */
    public Table addRow(Object... cells) {
        if (cells.length != header.length) {
            throw new IllegalArgumentException("A row of " + cells.length + " cells in a table of " + header.length
                    + " columns");
        }
        String[] row = new String[cells.length];
        for (int i = 0; i < cells.length; i++) {
            row[i] = cell(cells[i]);
        }
        rows.add(row);
        return this;
    }

    public void print(PrintWriter out) {
        int[] widths = new int[header.length];
        for (int i = 0; i < header.length; i++) {
            widths[i] = header[i].length();
            for (String[] row : rows) {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        printRow(out, header, widths);
        for (String[] row : rows) {
            printRow(out, row, widths);
        }
    }

    private static void printRow(PrintWriter out, String[] cells, int[] widths) {
        StringBuilder line = new StringBuilder();
        for (int i = 0; i < cells.length; i++) {
            line.append(cells[i]);
            if (i < cells.length - 1) {
                line.append(" ".repeat(widths[i] - cells[i].length())).append(SEPARATOR);
            }
        }
        out.println(line.toString().stripTrailing());
    }

    static String cell(Object value) {
        if (value == null) {
            return NONE;
        }
        String s = oneLine(value.toString());
        return s.isEmpty() ? NONE : s;
    }

    /** A value on one line: line breaks become a visible "\n" (PEM certificates, stack traces in error texts). */
    public static String oneLine(String s) {
        return s.replace("\r\n", "\\n").replace("\n", "\\n").replace("\r", "\\n");
    }
}
