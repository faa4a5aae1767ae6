package io.twinlog.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Temporary directories for the systems' data; each system's is deleted when it is closed. */
final class TempDirectories {
    private TempDirectories() {
    }

    static Path create(String prefix) {
        try {
            return Files.createTempDirectory("twinlog-bench-" + prefix + "-");
        } catch (IOException e) {
            throw new UncheckedIOException("Could not create a temporary directory", e);
        }
    }

    static void deleteRecursively(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException("Could not delete " + root, e);
        }
    }
}
