package io.twinlog.cli.internals;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Progress on a terminal (redrawn in place) and in a pipe (a plain line per interval), on a fake clock. */
@Timeout(10)
class ConsoleProgressTest {
    private final StringWriter written = new StringWriter();
    private final AtomicLong nowMs = new AtomicLong(5_000);

    @Test
    void onATerminalOneLineIsRedrawnInPlace() {
        ConsoleProgress progress = new ConsoleProgress(new PrintWriter(written), true, nowMs::get, 10_000);
        progress.show("10.0% long line");
        nowMs.addAndGet(100);
        progress.show("11.0% skipped: within 250 ms");
        nowMs.addAndGet(150);
        progress.show("20.0% short");
        progress.clear();
        progress.done("Compared 1 partition(s)");
        assertEquals("\r10.0% long line" + "\r20.0% short    " + "\r" + " ".repeat(11) + "\r"
                + "\rCompared 1 partition(s)" + System.lineSeparator(), written.toString());
    }

    @Test
    void inAPipePlainLinesAtMostOncePerInterval() {
        ConsoleProgress progress = new ConsoleProgress(new PrintWriter(written), false, nowMs::get, 10_000);
        progress.show("1% not within the first interval");
        nowMs.addAndGet(9_999);
        progress.show("2% still not");
        nowMs.addAndGet(1);
        progress.show("3% shown");
        nowMs.addAndGet(5_000);
        progress.show("4% not");
        progress.clear();
        nowMs.addAndGet(5_000);
        progress.show("5% shown");
        progress.done("done");
        String nl = System.lineSeparator();
        assertEquals("3% shown" + nl + "5% shown" + nl + "done" + nl, written.toString());
    }
}
