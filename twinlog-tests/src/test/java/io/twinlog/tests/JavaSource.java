package io.twinlog.tests;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One Java source file split into what the compiler reads and what it skips, for the checks that read the
 * repository's sources (imports, inline names, catches). {@link #code()} is the text with every comment, string,
 * text block and character literal blanked to spaces, so a brace, a {@code catch} or a dotted name inside one is
 * not mistaken for code; {@link #comments()} is the opposite. Both keep every character's position and every line
 * break, so an index found in one is the same place in the other and in the original.
 *
 * <p>A tolerant reader, not a parser: it assumes a source that compiles.
 */
final class JavaSource {
    private final Path path;
    private final String text;
    private final String code;
    private final String comments;

    private JavaSource(Path path, String text) {
        this.path = path;
        this.text = text;
        StringBuilder codeOut = new StringBuilder(text.length());
        StringBuilder commentOut = new StringBuilder(text.length());
        split(text, codeOut, commentOut);
        this.code = codeOut.toString();
        this.comments = commentOut.toString();
    }

    /** Reads {@code path} (UTF-8). */
    static JavaSource read(Path path) {
        try {
            return new JavaSource(path, Files.readString(path));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A source held in a string, for the checks' own tests. */
    static JavaSource of(String text) {
        return new JavaSource(Path.of("Example.java"), text);
    }

    Path path() {
        return path;
    }

    String text() {
        return text;
    }

    /** The text with comments and literals blanked: what the compiler reads, positions kept. */
    String code() {
        return code;
    }

    /** Only the comments, everything else blanked, positions kept. */
    String comments() {
        return comments;
    }

    /** The 1-based line of a character index. */
    int lineOf(int index) {
        int line = 1;
        for (int i = 0; i < index && i < text.length(); i++) {
            if (text.charAt(i) == '\n') {
                line++;
            }
        }
        return line;
    }

    private enum Mode { CODE, LINE_COMMENT, BLOCK_COMMENT, STRING, TEXT_BLOCK, CHAR }

    private static void split(String text, StringBuilder code, StringBuilder comments) {
        Mode mode = Mode.CODE;
        int i = 0;
        while (i < text.length()) {
            char c = text.charAt(i);
            char next = i + 1 < text.length() ? text.charAt(i + 1) : '\0';
            int width = 1; // characters consumed this step
            boolean isComment = false;
            switch (mode) {
                case CODE -> {
                    if (c == '/' && next == '/') {
                        mode = Mode.LINE_COMMENT;
                        width = 2;
                        isComment = true;
                    } else if (c == '/' && next == '*') {
                        mode = Mode.BLOCK_COMMENT;
                        width = 2;
                        isComment = true;
                    } else if (text.startsWith("\"\"\"", i)) {
                        mode = Mode.TEXT_BLOCK;
                        width = 3;
                    } else if (c == '"') {
                        mode = Mode.STRING;
                    } else if (c == '\'') {
                        mode = Mode.CHAR;
                    } else {
                        code.append(c);
                        comments.append(blank(c));
                        i++;
                        continue;
                    }
                    // the opening delimiter of a literal stays in the code, so "a" + b still reads as an operand
                    if (!isComment) {
                        code.append(text, i, i + width);
                        comments.append(" ".repeat(width));
                        i += width;
                        continue;
                    }
                }
                case LINE_COMMENT -> {
                    if (c == '\n') {
                        mode = Mode.CODE;
                        code.append('\n');
                        comments.append('\n');
                        i++;
                        continue;
                    }
                    isComment = true;
                }
                case BLOCK_COMMENT -> {
                    isComment = true;
                    if (c == '*' && next == '/') {
                        mode = Mode.CODE;
                        width = 2;
                    }
                }
                case STRING, CHAR -> {
                    char quote = mode == Mode.STRING ? '"' : '\'';
                    if (c == '\\') {
                        width = 2;
                    } else if (c == quote) {
                        mode = Mode.CODE;
                        code.append(c);
                        comments.append(' ');
                        i++;
                        continue;
                    }
                }
                case TEXT_BLOCK -> {
                    if (c == '\\') {
                        width = 2;
                    } else if (text.startsWith("\"\"\"", i)) {
                        mode = Mode.CODE;
                        code.append("\"\"\"");
                        comments.append("   ");
                        i += 3;
                        continue;
                    }
                }
                default -> throw new IllegalStateException(mode.name());
            }
            int end = Math.min(i + width, text.length());
            for (int k = i; k < end; k++) {
                char each = text.charAt(k);
                code.append(blank(each));
                comments.append(isComment ? each : blank(each));
            }
            i = end;
        }
    }

    /** A space in place of a character, a line break kept. */
    private static char blank(char c) {
        return c == '\n' ? '\n' : ' ';
    }
}
