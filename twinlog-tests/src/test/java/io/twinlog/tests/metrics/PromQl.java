package io.twinlog.tests.metrics;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * What a PromQL expression (or a Grafana {@code label_values(...)} variable query) reads, for checking a dashboard
 * against what an endpoint serves: its metric names, and each selector's label matchers. Not a PromQL parser: for
 * the names it removes everything that holds identifiers other than metric names (string literals, label matchers,
 * ranges, grouping label lists, dashboard variables), then keeps the identifiers that are neither called (functions,
 * aggregations) nor keywords. Whatever it gets wrong shows up as a "name" that is no metric, which the dashboard test
 * refuses by its prefix, so a miss fails instead of passing.
 */
final class PromQl {
    /** Grouping and matching modifiers whose parenthesised list holds label names, not metrics. */
    private static final Pattern LABEL_LIST = Pattern.compile(
            "\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^()]*\\)");
    /** Grafana's variable query: the label after the selector is a label name; one argument is a label name only. */
    private static final Pattern LABEL_VALUES = Pattern.compile("^\\s*label_values\\s*\\((.*)\\)\\s*$",
            Pattern.DOTALL);
    /** Grafana variables: {@code $name}, {@code ${name}}, {@code ${name:format}}, {@code [[name]]}. */
    private static final Pattern VARIABLE = Pattern.compile("\\$\\{[^}]*}|\\$\\w+|\\[\\[[^\\]]*]]");
    private static final Set<String> KEYWORDS = Set.of("and", "or", "unless", "bool", "offset", "by", "without",
            "on", "ignoring", "group_left", "group_right", "atan2", "inf", "nan");

    /** {@code label op "value"}; {@code op} is one of {@code = != =~ !~}. */
    private static final Pattern MATCHER = Pattern.compile(
            "\\s*([a-zA-Z_][a-zA-Z0-9_]*)\\s*(=~|!~|!=|=)\\s*\"((?:[^\"\\\\]|\\\\.)*)\"\\s*(,|$)");

    private PromQl() {
    }

    /** One label matcher of a selector, its value unescaped. */
    record LabelMatcher(String label, String op, String value) {
        /** Whether a series whose label has {@code actual} (null when it has no such label) is selected. */
        boolean matches(String actual) {
            String v = actual == null ? "" : actual;
            return switch (op) {
                case "=" -> v.equals(value);
                case "!=" -> !v.equals(value);
                // PromQL anchors its regular expressions at both ends, as matches() does
                case "=~" -> Pattern.compile(value).matcher(v).matches();
                default -> !Pattern.compile(value).matcher(v).matches();
            };
        }

        @Override
        public String toString() {
            return label + op + '"' + value.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
        }
    }

    /** A metric read with its label matchers ({@code name{a="b"}}; none for a bare name). */
    record Selector(String metric, List<LabelMatcher> matchers) {
        /** As PromQL writes it, for messages. */
        @Override
        public String toString() {
            return matchers.isEmpty() ? metric
                    : metric + matchers.stream().map(LabelMatcher::toString).collect(Collectors.joining(",", "{", "}"));
        }
    }

    /** The metric names {@code expr} reads, in order of appearance. */
    static Set<String> metricNames(String expr) {
        String text = stripStrings(expr);
        Matcher labelValues = LABEL_VALUES.matcher(text);
        if (labelValues.matches()) {
            // label_values(selector, label) or label_values(label): keep the selector only
            String args = labelValues.group(1);
            int comma = topLevelComma(args);
            text = comma < 0 ? "" : args.substring(0, comma);
        }
        // variables first: ${...} would otherwise look like a matcher, [[...]] like a range
        text = VARIABLE.matcher(text).replaceAll(" ");
        text = removeBracketed(text, '{', '}');
        text = removeBracketed(text, '[', ']');
        String before;
        do {
            before = text;
            text = LABEL_LIST.matcher(text).replaceAll(" ");
        } while (!text.equals(before));
        return identifiers(text);
    }

    /**
     * {@code text} with every string literal ("...", '...', `...`) blanked: each of its characters replaced by a
     * space, so that positions still match the original text.
     */
    private static String stripStrings(String text) {
        StringBuilder out = new StringBuilder(text.length());
        int i = 0;
        while (i < text.length()) {
            char c = text.charAt(i);
            if (c == '"' || c == '\'' || c == '`') {
                int j = i + 1;
                while (j < text.length() && text.charAt(j) != c) {
                    // a backtick string has no escapes; the others escape with a backslash
                    j += c != '`' && text.charAt(j) == '\\' ? 2 : 1;
                }
                if (j >= text.length()) {
                    throw new IllegalArgumentException("unterminated string in " + text);
                }
                out.append(" ".repeat(j + 1 - i));
                i = j + 1;
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }

    /** {@code text} with every {@code open...close} span replaced by a space; strings are already gone. */
    private static String removeBracketed(String text, char open, char close) {
        StringBuilder out = new StringBuilder(text.length());
        int depth = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == open) {
                depth++;
            } else if (c == close) {
                if (depth == 0) {
                    throw new IllegalArgumentException("unbalanced '" + close + "' in " + text);
                }
                if (--depth == 0) {
                    out.append(' ');
                }
            } else if (depth == 0) {
                out.append(c);
            }
        }
        if (depth != 0) {
            throw new IllegalArgumentException("unbalanced '" + open + "' in " + text);
        }
        return out.toString();
    }

    /**
     * Every selector of {@code expr}: each occurrence of one of its metric names, with the matchers in the braces
     * that follow it, if any.
     */
    static List<Selector> selectors(String expr) {
        String blanked = stripStrings(expr);
        List<Selector> selectors = new ArrayList<>();
        for (String name : metricNames(expr)) {
            Matcher m = Pattern.compile("(?<![\\w:])" + Pattern.quote(name) + "(?![\\w:])\\s*").matcher(blanked);
            while (m.find()) {
                List<LabelMatcher> matchers = new ArrayList<>();
                if (m.end() < blanked.length() && blanked.charAt(m.end()) == '{') {
                    int close = blanked.indexOf('}', m.end());
                    matchers = matchers(expr.substring(m.end() + 1, close));
                }
                selectors.add(new Selector(name, matchers));
            }
        }
        return selectors;
    }

    private static List<LabelMatcher> matchers(String list) {
        List<LabelMatcher> matchers = new ArrayList<>();
        Matcher m = MATCHER.matcher(list);
        int pos = 0;
        while (pos < list.length() && !list.substring(pos).isBlank()) {
            if (!m.find(pos) || m.start() != pos) {
                throw new IllegalArgumentException("malformed label matchers at '" + list.substring(pos) + "'");
            }
            matchers.add(new LabelMatcher(m.group(1), m.group(2), m.group(3).replaceAll("\\\\(.)", "$1")));
            pos = m.end();
        }
        return matchers;
    }

    private static int topLevelComma(String args) {
        int depth = 0;
        for (int i = 0; i < args.length(); i++) {
            char c = args.charAt(i);
            if (c == '(' || c == '{' || c == '[') {
                depth++;
            } else if (c == ')' || c == '}' || c == ']') {
                depth--;
            } else if (c == ',' && depth == 0) {
                return i;
            }
        }
        return -1;
    }

    /** Identifiers not followed by '(' and not keywords; numbers and durations (5m, 1e3, 0x1f) are skipped whole. */
    private static Set<String> identifiers(String text) {
        Set<String> names = new LinkedHashSet<>();
        int i = 0;
        while (i < text.length()) {
            char c = text.charAt(i);
            if (Character.isDigit(c) || c == '.' && i + 1 < text.length() && Character.isDigit(text.charAt(i + 1))) {
                while (i < text.length() && (Character.isLetterOrDigit(text.charAt(i)) || text.charAt(i) == '.'
                        || text.charAt(i) == '_')) {
                    i++;
                }
            } else if (Character.isLetter(c) || c == '_' || c == ':') {
                int start = i;
                while (i < text.length() && (Character.isLetterOrDigit(text.charAt(i)) || text.charAt(i) == '_'
                        || text.charAt(i) == ':')) {
                    i++;
                }
                String word = text.substring(start, i);
                int next = i;
                while (next < text.length() && Character.isWhitespace(text.charAt(next))) {
                    next++;
                }
                boolean called = next < text.length() && text.charAt(next) == '(';
                if (!called && !KEYWORDS.contains(word.toLowerCase(Locale.ROOT))) {
                    names.add(word);
                }
            } else {
                i++;
            }
        }
        return names;
    }
}
