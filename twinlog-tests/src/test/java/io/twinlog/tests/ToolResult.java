package io.twinlog.tests;

import java.util.List;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** What a command-line tool printed and how it exited. */
public record ToolResult(String command, int exitCode, String stdout, String stderr) {
    public List<String> stdoutLines() {
        return stdout.lines().filter(l -> !l.isBlank()).collect(Collectors.toList());
    }

    public String all() {
        return stdout + stderr;
    }

    public void assertSuccess() {
        assertEquals(0, exitCode, "exit code of " + this);
    }

    @Override
    public String toString() {
        return command + " -> exit " + exitCode + "\n--- stdout ---\n" + stdout + "--- stderr ---\n" + stderr;
    }
}
