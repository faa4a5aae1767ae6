package io.twinlog.tests;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The two house rules of issue 29 point 6 that a reader can check (decision 117), each a function of one source
 * that returns what breaks it, as {@code line: what}:
 * <ul>
 *   <li>{@link #inlineQualifiedNames}: a class is named by import; a fully-qualified name in code or in a Javadoc
 *       {@code {@link}}, {@code @throws} or {@code @see} only where another class of the same simple name meets it
 *       in that file (imported, declared, named fully-qualified too, or a class of the file's own package).</li>
 *   <li>{@link #swallowingBroadCatches}: a {@code catch} of {@code Exception}, {@code Throwable},
 *       {@code RuntimeException} or {@code Error} (alone or in a multi-catch) says why it is broad in a comment on
 *       its line or in its block, and does not swallow: it throws, or hands the exception itself on (a log call
 *       with it as the last argument, so the stack trace is printed, a future completed with it, an error answer
 *       built from it). Naming it only in a message ({@code e.getMessage()}, {@code "..." + e}) is swallowing.</li>
 * </ul>
 */
final class SourceRules {
    private static final Pattern PACKAGE = Pattern.compile("^\\s*package\\s+([\\w.]+)\\s*;", Pattern.MULTILINE);
    private static final Pattern IMPORT = Pattern.compile("^\\s*import\\s+([\\w.]+)\\s*;", Pattern.MULTILINE);
    private static final Pattern IMPORT_OR_PACKAGE = Pattern.compile("^\\s*(import|package)\\s[^;]*;",
            Pattern.MULTILINE);
    private static final Pattern DECLARED_TYPE = Pattern.compile("\\b(?:class|interface|record|enum)\\s+([A-Z]\\w*)");
    /** A qualified name: a package (first segment one of the usual roots, then lower-case segments), then a class. */
    private static final String QUALIFIED =
            "(?<![\\w.$])((?:java|javax|jdk|sun|com|org|io|kafka|scala)(?:\\.[a-z_][a-z0-9_]*)+)\\.([A-Z]\\w*)";
    private static final Pattern QUALIFIED_IN_CODE = Pattern.compile(QUALIFIED);
    private static final Pattern QUALIFIED_IN_JAVADOC = Pattern.compile(
            "(?:\\{@link(?:plain)?|@throws|@exception|@see)\\s+" + QUALIFIED);
    private static final Pattern CATCH = Pattern.compile(
            "\\bcatch\\s*\\(\\s*(?:final\\s+)?([\\w.\\s|]+?)\\s+(\\w+)\\s*\\)\\s*\\{");
    private static final Set<String> BROAD = Set.of("Exception", "Throwable", "RuntimeException", "Error");

    private SourceRules() {
    }

    /** One fully-qualified name as written: its package, its (outermost) class, and where. */
    private record Qualified(String packageName, String simpleName, int index) {
        String name() {
            return packageName + "." + simpleName;
        }
    }

    /**
     * The fully-qualified names in {@code source} that an import would do.
     *
     * @param samePackageTypes the simple names of the classes in the source's own package (its directory)
     */
    static List<String> inlineQualifiedNames(JavaSource source, Set<String> samePackageTypes) {
        String code = source.code();
        Matcher packageMatch = PACKAGE.matcher(code);
        String ownPackage = packageMatch.find() ? packageMatch.group(1) : "";
        Map<String, Set<String>> imported = new HashMap<>(); // simple name -> the names imported with it
        Matcher imports = IMPORT.matcher(code);
        while (imports.find()) {
            String name = imports.group(1);
            imported.computeIfAbsent(name.substring(name.lastIndexOf('.') + 1), k -> new HashSet<>()).add(name);
        }
        Set<String> declared = new HashSet<>();
        Matcher types = DECLARED_TYPE.matcher(code);
        while (types.find()) {
            declared.add(types.group(1));
        }
        String body = blankImportsAndPackage(code);
        List<Qualified> found = new ArrayList<>();
        collect(QUALIFIED_IN_CODE.matcher(body), found);
        collect(QUALIFIED_IN_JAVADOC.matcher(source.comments()), found);
        Map<String, Set<String>> packagesBySimpleName = new HashMap<>();
        for (Qualified q : found) {
            packagesBySimpleName.computeIfAbsent(q.simpleName(), k -> new HashSet<>()).add(q.packageName());
        }
        found.sort((x, y) -> Integer.compare(x.index(), y.index()));
        List<String> out = new ArrayList<>();
        for (Qualified q : found) {
            String simple = q.simpleName();
            boolean meets = imported.getOrDefault(simple, Set.of()).stream().anyMatch(n -> !n.equals(q.name()))
                    || declared.contains(simple)
                    || packagesBySimpleName.get(simple).size() > 1
                    || (samePackageTypes.contains(simple) && !q.packageName().equals(ownPackage));
            if (!meets) {
                out.add(source.lineOf(q.index()) + ": " + q.name());
            }
        }
        return out;
    }

    private static void collect(Matcher matcher, List<Qualified> into) {
        while (matcher.find()) {
            into.add(new Qualified(matcher.group(1), matcher.group(2), matcher.start(1)));
        }
    }

    private static String blankImportsAndPackage(String code) {
        StringBuilder out = new StringBuilder(code);
        Matcher m = IMPORT_OR_PACKAGE.matcher(code);
        while (m.find()) {
            for (int i = m.start(); i < m.end(); i++) {
                if (out.charAt(i) != '\n') {
                    out.setCharAt(i, ' ');
                }
            }
        }
        return out.toString();
    }

    /** The broad catches of {@code source} that swallow what they catch or do not say why they are broad. */
    static List<String> swallowingBroadCatches(JavaSource source) {
        String code = source.code();
        List<String> out = new ArrayList<>();
        Matcher m = CATCH.matcher(code);
        while (m.find()) {
            List<String> caught = new ArrayList<>();
            for (String type : m.group(1).split("\\|")) {
                String name = type.strip();
                caught.add(name.substring(name.lastIndexOf('.') + 1));
            }
            if (caught.stream().noneMatch(BROAD::contains)) {
                continue;
            }
            String variable = m.group(2);
            int open = m.end() - 1;
            int close = matchingBrace(code, open);
            int lineStart = code.lastIndexOf('\n', m.start()) + 1;
            String where = source.lineOf(m.start()) + ": catch (" + String.join(" | ", caught) + " " + variable + ")";
            if (source.comments().substring(lineStart, close + 1).isBlank()) {
                out.add(where + " says nowhere why it is broad");
            }
            if (!handsOn(code.substring(open + 1, close), variable)) {
                out.add(where + " swallows it: no throw, and the exception itself is passed to nothing");
            }
        }
        return out;
    }

    /** True if the block throws, or passes the caught exception itself to something (not only its message). */
    static boolean handsOn(String block, String variable) {
        if (Pattern.compile("\\bthrow\\b").matcher(block).find()) {
            return true;
        }
        String v = Pattern.quote(variable);
        String onlyNamed = block
                .replaceAll("\\b" + v + "\\s*\\.\\s*(?:getMessage|getLocalizedMessage|toString|getClass)\\s*\\(\\s*\\)"
                        + "(?:\\s*\\.\\s*\\w+\\s*\\(\\s*\\))*", "")
                .replaceAll("\\+\\s*\\b" + v + "\\b(?!\\s*\\.)", "")
                .replaceAll("\\b" + v + "\\s*\\+", "");
        return Pattern.compile("(?<![\\w.])" + v + "\\b").matcher(onlyNamed).find();
    }

    private static int matchingBrace(String code, int open) {
        int depth = 0;
        for (int i = open; i < code.length(); i++) {
            char c = code.charAt(i);
            if (c == '{') {
                depth++;
            } else if (c == '}' && --depth == 0) {
                return i;
            }
        }
        return code.length() - 1;
    }
}
