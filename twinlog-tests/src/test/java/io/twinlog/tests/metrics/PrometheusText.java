package io.twinlog.tests.metrics;

import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A strict reader of Prometheus' text exposition format (version 0.0.4): every line must be a well-formed HELP,
 * TYPE or sample line; a family's TYPE comes once, before its samples, which are contiguous; a sample's name belongs
 * to its family's type (a counter's {@code _total}, a summary's quantiles, {@code _count} and {@code _sum}); no
 * series repeats. Anything else throws with the line, so a test that parses an endpoint's output checks its format.
 */
final class PrometheusText {
    private static final String NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
    private static final Pattern HELP = Pattern.compile("# HELP (" + NAME + ") (.*)");
    private static final Pattern TYPE = Pattern.compile("# TYPE (" + NAME
            + ") (counter|gauge|summary|histogram|untyped)");
    private static final Pattern SAMPLE = Pattern.compile("(" + NAME + ")(\\{(.*)})? (\\S+)( -?\\d+)?");
    /** {@code name="value"}: a value escapes backslash, double quote and newline, and holds no raw newline. */
    private static final Pattern LABEL = Pattern.compile(
            "([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\\\n]|\\\\[\\\\\"n])*)\"(,|$)");

    private PrometheusText() {
    }

    /** Every series by its text ({@code name{a="b"}}, labels in the order given), with its value. */
    static Map<String, Double> parse(String text) {
        Map<String, Double> series = new LinkedHashMap<>();
        Map<String, String> types = new HashMap<>();
        Set<String> closedFamilies = new HashSet<>();
        String currentFamily = null;
        int lineNo = 0;
        for (String line : text.split("\n", -1)) {
            lineNo++;
            if (line.isEmpty()) {
                continue;
            }
            String where = "line " + lineNo + ": '" + line + "'";
            if (line.startsWith("#")) {
                Matcher help = HELP.matcher(line);
                Matcher type = TYPE.matcher(line);
                if (type.matches()) {
                    String family = type.group(1);
                    if (types.put(family, type.group(2)) != null) {
                        throw new AssertionError("second TYPE for " + family + " at " + where);
                    }
                    startFamily(family, currentFamily, closedFamilies, where);
                    currentFamily = family;
                } else if (!help.matches() && (line.startsWith("# HELP") || line.startsWith("# TYPE"))) {
                    throw new AssertionError("malformed " + where);
                }
                continue;
            }
            Matcher m = SAMPLE.matcher(line);
            if (!m.matches()) {
                throw new AssertionError("malformed sample at " + where);
            }
            String name = m.group(1);
            String family = familyOf(name, types);
            if (family == null) {
                throw new AssertionError("sample without a TYPE for its family at " + where);
            }
            if (!family.equals(currentFamily)) {
                startFamily(family, currentFamily, closedFamilies, where);
                currentFamily = family;
            }
            String labels = m.group(3) == null ? "" : m.group(3);
            checkLabels(labels, where);
            double value = parseValue(m.group(4), where);
            String key = name + (labels.isEmpty() ? "" : "{" + labels.replaceAll(",$", "") + "}");
            if (series.put(key, value) != null) {
                throw new AssertionError("series repeated at " + where);
            }
        }
        return series;
    }

    private static void startFamily(String family, String current, Set<String> closed, String where) {
        if (current != null) {
            closed.add(current);
        }
        if (closed.contains(family)) {
            throw new AssertionError("samples of " + family + " are not contiguous at " + where);
        }
    }

    /** The declared family a sample name belongs to, given the family's type; null if none. */
    private static String familyOf(String name, Map<String, String> types) {
        if ("gauge".equals(types.get(name)) || "untyped".equals(types.get(name))
                || "counter".equals(types.get(name)) && name.endsWith("_total")
                || "summary".equals(types.get(name))) {
            return name;
        }
        for (String suffix : new String[] {"_total", "_count", "_sum", "_bucket", "_created"}) {
            if (name.endsWith(suffix)) {
                String base = name.substring(0, name.length() - suffix.length());
                String type = types.get(base);
                boolean fits = switch (suffix) {
                    case "_total" -> "counter".equals(type);
                    case "_count", "_sum" -> "summary".equals(type) || "histogram".equals(type);
                    case "_bucket" -> "histogram".equals(type);
                    default -> type != null;
                };
                if (fits) {
                    return base;
                }
            }
        }
        return null;
    }

    private static void checkLabels(String labels, String where) {
        int pos = 0;
        Set<String> names = new HashSet<>();
        Matcher m = LABEL.matcher(labels);
        while (pos < labels.length()) {
            if (!m.find(pos) || m.start() != pos) {
                throw new AssertionError("malformed labels at " + where);
            }
            if (!names.add(m.group(1))) {
                throw new AssertionError("label " + m.group(1) + " repeated at " + where);
            }
            pos = m.end();
        }
    }

    private static double parseValue(String v, String where) {
        switch (v) {
            case "NaN": return Double.NaN;
            case "+Inf": return Double.POSITIVE_INFINITY;
            case "-Inf": return Double.NEGATIVE_INFINITY;
            default:
                try {
                    return Double.parseDouble(v);
                } catch (NumberFormatException e) {
                    throw new AssertionError("value is not a number at " + where);
                }
        }
    }
}
