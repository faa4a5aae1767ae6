package io.twinlog.campaign;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * One JVM the campaign starts (a ZooKeeper server or a broker), on the campaign's own classpath, its output appended
 * to a log file that survives restarts. {@link #kill()} is SIGKILL: no shutdown hook, no flush.
 *
 * <p>Every child still running when the campaign's JVM exits is killed by a shutdown hook, so an interrupted
 * campaign leaves no process behind (a SIGKILL of the campaign itself cannot run the hook; the script then kills
 * the process group).
 */
final class ChildProcess {
    private static final Set<Process> RUNNING = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> RUNNING.forEach(Process::destroyForcibly),
                "campaign-children-reaper"));
    }

    private final String name;
    private final String mainClass;
    private final List<String> jvmOptions;
    private final List<String> arguments;
    private final File logFile;
    private final Map<String, String> environment;
    private final List<String> launcher;
    private Process process;

    /**
     * @param environment added to the campaign's own (a broker's libfaketime, for {@link FaultKind#CLOCK_STEP})
     * @param launcher    what the java command runs under ({@code ip netns exec <ns>}; empty: nothing), which
     *                    execs it, so the pid is the JVM's and a SIGKILL reaches it
     */
    ChildProcess(String name, String mainClass, List<String> jvmOptions, List<String> arguments, File logFile,
                 Map<String, String> environment, List<String> launcher) {
        this.environment = Map.copyOf(environment);
        this.launcher = List.copyOf(launcher);
        this.name = name;
        this.mainClass = mainClass;
        this.jvmOptions = List.copyOf(jvmOptions);
        this.arguments = List.copyOf(arguments);
        this.logFile = logFile;
    }

    void start() throws IOException {
        if (isAlive()) {
            throw new IllegalStateException(name + " is already running (pid " + process.pid() + ")");
        }
        List<String> command = new ArrayList<>(launcher);
        command.add(new File(System.getProperty("java.home"), "bin/java").getAbsolutePath());
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass);
        command.addAll(arguments);
        Files.createDirectories(logFile.getParentFile().toPath());
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile));
        builder.environment().putAll(environment);
        process = builder.start();
        RUNNING.add(process);
    }

    /** SIGKILL, and waits until the process is gone. */
    void kill() throws InterruptedException {
        if (process == null) {
            return;
        }
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException(name + " (pid " + process.pid() + ") still alive 30 s after SIGKILL");
        }
        RUNNING.remove(process);
    }

    /** SIGTERM (the clean shutdown path), SIGKILL after {@code timeoutSeconds}. Returns whether it exited cleanly. */
    boolean terminate(int timeoutSeconds) throws InterruptedException {
        if (process == null || !process.isAlive()) {
            return true;
        }
        process.destroy();
        boolean exited = process.waitFor(timeoutSeconds, TimeUnit.SECONDS);
        if (!exited) {
            kill();
        }
        RUNNING.remove(process);
        return exited;
    }

    boolean isAlive() {
        return process != null && process.isAlive();
    }

    /** Exit code of a process that ended by itself (a crash at start-up), for the error message. */
    String exitDescription() {
        return process == null ? "never started" : process.isAlive() ? "running" : "exited with " + process.exitValue();
    }

    long pid() {
        return process == null ? -1 : process.pid();
    }

    File logFile() {
        return logFile;
    }

    String logTail(int lines) {
        try {
            List<String> all = Files.readAllLines(logFile.toPath());
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(no log " + logFile + ": " + e + ")";
        }
    }

    @Override
    public String toString() {
        return name + (process == null ? "" : " (pid " + process.pid() + ", " + exitDescription() + ")");
    }
}
