package io.twinlog.tests.connect;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * The class that lets connect-file 4.3.1 run in a Connect 4.4 worker (see the resource
 * {@code connect-file-bridge/AppInfoParser.java} for why). It is compiled here, into a directory that only the worker
 * JVM's class path gets, so that no other test of this module sees a class in Kafka's package that Kafka 4.4 does not
 * have.
 */
final class FileConnectorBridge {
    private FileConnectorBridge() {
    }

    /** Compiles the bridge into {@code dir}; returns the directory to add to the worker's class path. */
    static Path compile(Path dir) throws Exception {
        Path source = Paths.get(FileConnectorBridge.class.getResource("/connect-file-bridge/AppInfoParser.java")
                .toURI());
        Path classes = Files.createDirectories(dir.resolve("connect-file-bridge"));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        if (javac == null) {
            throw new IllegalStateException("The test JVM has no Java compiler (a JRE, not a JDK): " +
                    System.getProperty("java.home"));
        }
        ByteArrayOutputStream messages = new ByteArrayOutputStream();
        int rc = javac.run(null, messages, messages, "--release", "17", "-cp", System.getProperty("java.class.path"),
                "-d", classes.toString(), source.toString());
        if (rc != 0) {
            throw new IllegalStateException("javac " + source + " failed (" + rc + "):\n"
                    + messages.toString(StandardCharsets.UTF_8));
        }
        return classes;
    }
}
