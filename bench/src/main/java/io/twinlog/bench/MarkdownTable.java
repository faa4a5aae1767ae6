package io.twinlog.bench;

import java.util.ArrayList;
import java.util.List;

/** A markdown table with padded columns, so it reads well both on a terminal and rendered. */
final class MarkdownTable {
    private final List<String> headers;
    private final List<Boolean> rightAligned;
    private final List<List<String>> rows = new ArrayList<>();

    private MarkdownTable(List<String> headers, List<Boolean> rightAligned) {
        this.headers = headers;
        this.rightAligned = rightAligned;
    }

    /** The first column is left-aligned (labels), the others right-aligned (numbers). */
    static MarkdownTable withColumns(String... headers) {
        List<Boolean> right = new ArrayList<>();
        for (int i = 0; i < headers.length; i++) {
            right.add(i > 1 || (i == 1 && !headers[1].equalsIgnoreCase("system")
                    && !headers[1].equalsIgnoreCase("setup")));
        }
        return new MarkdownTable(List.of(headers), right);
    }

    MarkdownTable row(String... cells) {
        if (cells.length != headers.size()) {
            throw new IllegalArgumentException("Expected " + headers.size() + " cells, got " + cells.length);
        }
        rows.add(List.of(cells));
        return this;
    }

    String render() {
        int[] widths = new int[headers.size()];
        for (int c = 0; c < widths.length; c++) {
            widths[c] = Math.max(3, headers.get(c).length());
            for (List<String> row : rows) {
                widths[c] = Math.max(widths[c], row.get(c).length());
            }
        }
        StringBuilder out = new StringBuilder();
        appendRow(out, headers, widths);
        out.append('|');
        for (int c = 0; c < widths.length; c++) {
            out.append(rightAligned.get(c) ? " " + "-".repeat(widths[c] - 1) + ": |" : " " + "-".repeat(widths[c]) + " |");
        }
        out.append('\n');
        for (List<String> row : rows) {
            appendRow(out, row, widths);
        }
        return out.toString();
    }

    private void appendRow(StringBuilder out, List<String> cells, int[] widths) {
        out.append('|');
        for (int c = 0; c < widths.length; c++) {
            String cell = cells.get(c);
            String padding = " ".repeat(widths[c] - cell.length());
            out.append(' ').append(rightAligned.get(c) ? padding + cell : cell + padding).append(" |");
        }
        out.append('\n');
    }
}
