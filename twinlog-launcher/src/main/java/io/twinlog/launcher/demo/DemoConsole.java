package io.twinlog.launcher.demo;

import java.io.PrintStream;

/**
 * What the demo prints, for a reader who has never seen Twinlog: a numbered heading per step, the command an
 * operator would type for it, results in plain sentences, and each check held ({@code ok: ...}) or not
 * ({@code FAILED: ...}). Counts the checks so the demo can end with its verdict. Used by the demo's one thread.
 */
final class DemoConsole {
    private final PrintStream out;
    private final int steps;
    private int checks;
    private int failures;

    DemoConsole(PrintStream out, int steps) {
        this.out = out;
        this.steps = steps;
    }

    void heading(int step, String title) {
        out.println();
        out.println("=== Step " + step + " of " + steps + ": " + title + " ===");
    }

    /** The command-line equivalent of what the step does next. */
    void command(String command) {
        out.println("  $ " + command);
    }

    void say(String text) {
        out.println("  " + text);
    }

    /** A line of a table or a list under the last sentence. */
    void detail(String text) {
        out.println("    " + text);
    }

    /** Records a check: {@code ok: what} when it held, {@code FAILED: what} otherwise. Returns {@code held}. */
    boolean check(boolean held, String what) {
        checks++;
        if (held) {
            out.println("  ok: " + what);
        } else {
            failures++;
            out.println("  FAILED: " + what);
        }
        return held;
    }

    /** A step that could not go on. */
    void failed(String what) {
        checks++;
        failures++;
        out.println("  FAILED: " + what);
    }

    int checks() {
        return checks;
    }

    int failures() {
        return failures;
    }

    void blank() {
        out.println();
    }

    void line(String text) {
        out.println(text);
    }
}
