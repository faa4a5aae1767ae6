package io.twinlog.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a MirrorMaker 2 log written by slf4j-simple ({@code HH:mm:ss.SSS [thread] LEVEL logger - message}) after
 * a run and sums it up for the report: how many WARN and ERROR lines, and the distinct ERROR messages (at most
 * {@link #MAX_DISTINCT}, each cut to {@link #MAX_MESSAGE_CHARS}), so that a failing request shows up in the results
 * and not only in a log file that the next run overwrites.
 */
final class MirrorMakerLog {
    static final int MAX_DISTINCT = 5;
    static final int MAX_MESSAGE_CHARS = 300;
    private static final Pattern LINE = Pattern.compile("^\\S+ \\[[^\\]]*\\] (WARN|ERROR) (\\S+) - (.*)$");

    private MirrorMakerLog() {
    }

    static List<String> summary(MirrorSetup setup, int round, Path logFile) {
        List<String> lines;
        try {
            lines = Files.readAllLines(logFile, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return List.of(setup.displayName() + ", round " + round + ": could not read the MM2 log " + logFile
                    + ": " + e);
        }
        int warnings = 0;
        int errors = 0;
        Map<String, Integer> distinctErrors = new LinkedHashMap<>();
        for (String line : lines) {
            Matcher m = LINE.matcher(line);
            if (!m.matches()) {
                continue;
            }
            if (m.group(1).equals("WARN")) {
                warnings++;
                continue;
            }
            errors++;
            String logger = m.group(2).substring(m.group(2).lastIndexOf('.') + 1);
            String message = logger + ": " + m.group(3);
            if (message.length() > MAX_MESSAGE_CHARS) {
                message = message.substring(0, MAX_MESSAGE_CHARS) + "...";
            }
            if (distinctErrors.containsKey(message) || distinctErrors.size() < MAX_DISTINCT) {
                distinctErrors.merge(message, 1, Integer::sum);
            }
        }
        List<String> out = new ArrayList<>();
        out.add(setup.displayName() + ", round " + round + ": MM2 logged " + warnings + " WARN and " + errors
                + " ERROR lines (" + logFile.getFileName() + ")");
        distinctErrors.forEach((message, count) -> out.add(setup.displayName() + ", round " + round + ": MM2 ERROR ("
                + count + "x) `" + message.replace('`', '\'') + "`"));
        return out;
    }
}
