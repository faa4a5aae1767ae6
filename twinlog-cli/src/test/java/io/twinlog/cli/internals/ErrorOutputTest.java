package io.twinlog.cli.internals;

import io.twinlog.clients.mirror.MirrorException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link ErrorOutput}: every error is one line on stderr, with the usage hint or the stack trace where they belong. */
@Timeout(60)
class ErrorOutputTest {
    private static final String HINT = "Run 'twinlog-mirrors.sh --help' for usage.";

    private static List<String> report(Exception e, boolean verbose) {
        StringWriter written = new StringWriter();
        PrintWriter err = new PrintWriter(written);
        new ErrorOutput(err, verbose).report(e);
        err.flush();
        return written.toString().lines().toList();
    }

    @Test
    void aWrongCommandLineAddsTheUsageHint() {
        assertEquals(List.of("Error: --mirror is missing", HINT),
                report(CommandException.usage("--mirror is missing"), false));
    }

    @Test
    void aCommandThatCannotDoWhatItAsksIsOneLine() {
        assertEquals(List.of("Error: 2 topic(s) failed"), report(CommandException.failed("2 topic(s) failed"), false));
    }

    @Test
    void aBrokerErrorIsItsCodeNameAndMessage() {
        MirrorException e = new MirrorException((short) 7002, "no such mirror");
        assertEquals(List.of("Error: " + e.getMessage()), report(e, false));
    }

    @Test
    void aNetworkErrorWithoutMessageIsNamedByItsClass() {
        assertEquals(List.of("Error: java.io.IOException"), report(new IOException(), false));
        assertEquals(List.of("Error: closed"), report(new IOException("closed"), false));
    }

    @Test
    void aBugIsUnexpectedAndPointsAtVerbose() {
        assertEquals(List.of("Error: Unexpected java.lang.IllegalStateException: bug (--verbose prints the stack "
                + "trace)"), report(new IllegalStateException("bug"), false));
    }

    @Test
    void verbosePrintsTheStackTraceAfterTheLineAndBeforeTheHint() {
        List<String> lines = report(CommandException.usage("bad"), true);
        assertEquals("Error: bad", lines.get(0));
        assertTrue(lines.get(1).startsWith(CommandException.class.getName() + ": bad"), lines.get(1));
        assertTrue(lines.get(2).trim().startsWith("at "), lines.get(2));
        assertEquals(HINT, lines.get(lines.size() - 1));
        assertEquals("Error: Unexpected java.lang.IllegalStateException: bug",
                report(new IllegalStateException("bug"), true).get(0));
    }

    @Test
    void aMessageOfManyLinesStaysOnOne() {
        assertEquals(List.of("Error: first\\nsecond"), report(CommandException.failed("first\nsecond"), false));
    }

    @Test
    void aParseErrorIsOneLineAndTheHint() {
        StringWriter written = new StringWriter();
        ErrorOutput.parseError(new PrintWriter(written), "Unknown option: '--bogus'");
        assertEquals(List.of("Error: Unknown option: '--bogus'", HINT), written.toString().lines().toList());
    }
}
