package io.twinlog.tests.connect;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.twinlog.testkit.Waits;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * A distributed Kafka Connect 4.4 worker ({@code ConnectDistributed worker.properties}) in a JVM of its own on the
 * test class path, and a REST client for it. Its own JVM because Connect ends its process with {@code Exit.exit}
 * on a startup or herder failure (which would end the surefire fork), and because a restart of the worker is meant
 * to be a process restart: SIGTERM for the graceful path (offsets flushed, group left), SIGKILL for a crash.
 *
 * <p>Every start appends to {@code worker.log} in the worker's directory, after a line naming the start, and keeps
 * the REST port, so the worker id (its URL) stays the same across restarts.
 */
final class ConnectWorker implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

    private final Path dir;
    private final Map<String, String> properties;
    private final List<Path> classPathAdditions;
    private final int port;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private Process process;
    private int starts;

    /** @param classPathAdditions appended to the test class path for the worker JVM */
    ConnectWorker(Path dir, Map<String, String> properties, List<Path> classPathAdditions) throws IOException {
        this.dir = dir;
        this.properties = Map.copyOf(properties);
        this.classPathAdditions = List.copyOf(classPathAdditions);
        this.port = freePort();
    }

    /** Starts the JVM; {@link #awaitReady} waits for the worker to have joined its group. */
    ConnectWorker start() throws Exception {
        if (isAlive()) {
            throw new IllegalStateException("The worker is already running");
        }
        Files.createDirectories(dir);
        Properties p = new Properties();
        p.putAll(properties);
        p.put("listeners", "http://127.0.0.1:" + port);
        Path config = dir.resolve("worker.properties");
        try (OutputStream out = Files.newOutputStream(config)) {
            p.store(out, "written by ConnectWorker");
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        // a small heap and a quick start: the worker moves a few thousand lines on a 2-core machine that also runs
        // three brokers in the test JVM
        cmd.addAll(List.of("-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
        cmd.add("-Dlog4j2.configurationFile="
                + Paths.get(ConnectWorker.class.getResource("/connect-log4j2.properties").toURI()));
        cmd.add("-cp");
        StringBuilder classPath = new StringBuilder(System.getProperty("java.class.path"));
        classPathAdditions.forEach(entry -> classPath.append(File.pathSeparator).append(entry));
        cmd.add(classPath.toString());
        cmd.add("org.apache.kafka.connect.cli.ConnectDistributed");
        cmd.add(config.toString());
        starts++;
        Files.writeString(log(), "===== start " + starts + " of the worker =====\n", StandardCharsets.UTF_8,
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        process = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log().toFile())).start();
        return this;
    }

    /**
     * Waits until {@code GET /health} answers 200: the REST server is up and the herder has completed startup
     * (joined the group, read the config topic). Fails at once, with the log, if the JVM exits.
     */
    void awaitReady(Duration timeout) {
        Waits.waitUntil("the Connect worker at " + url() + " to be healthy", () -> {
            if (!process.isAlive()) {
                throw new AssertionError("The Connect worker exited with " + process.exitValue() + " while starting");
            }
            return send("GET", "/health", null).statusCode() == 200;
        }, timeout);
    }

    /** SIGTERM: Connect's shutdown hook stops the connectors and tasks, commits their offsets, leaves the group. */
    int terminate() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("The Connect worker did not exit within 60 s of SIGTERM");
        }
        return process.exitValue();
    }

    /** SIGKILL: nothing flushed or committed, the group member left to expire. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new AssertionError("The Connect worker did not die within 30 s of SIGKILL");
        }
    }

    /** The exit code of a worker that is expected to stop by itself. */
    int awaitExit(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("The Connect worker still runs after " + timeout);
        }
        return process.exitValue();
    }

    boolean isAlive() {
        return process != null && process.isAlive();
    }

    String url() {
        return "http://127.0.0.1:" + port;
    }

    Path log() {
        return dir.resolve("worker.log");
    }

    String logText() throws IOException {
        return Files.exists(log()) ? Files.readString(log()) : "";
    }

    String logTail(int lines) {
        try {
            List<String> all = Files.exists(log()) ? Files.readAllLines(log()) : List.of();
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(worker log unreadable: " + e + ")";
        }
    }

    /** A REST call whose answer must have this status; returns its JSON body (null when empty). */
    JsonNode call(String method, String path, Object body, int expectedStatus) throws Exception {
        HttpResponse<String> response = send(method, path, body);
        if (response.statusCode() != expectedStatus) {
            throw new AssertionError(method + " " + path + " answered " + response.statusCode() + " (expected "
                    + expectedStatus + "): " + response.body());
        }
        return response.body().isEmpty() ? null : JSON.readTree(response.body());
    }

    HttpResponse<String> send(String method, String path, Object body) throws Exception {
        HttpRequest.BodyPublisher publisher = body == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body));
        HttpRequest request = HttpRequest.newBuilder(URI.create(url() + path)).timeout(REQUEST_TIMEOUT)
                .header("Content-Type", "application/json").header("Accept", "application/json")
                .method(method, publisher).build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    /** Kills the JVM if it still runs: a test never leaves a worker behind, whatever happened. */
    @Override
    public void close() throws InterruptedException {
        if (isAlive()) {
            kill();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
