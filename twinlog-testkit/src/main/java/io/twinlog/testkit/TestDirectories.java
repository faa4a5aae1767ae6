package io.twinlog.testkit;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Temporary directories for brokers and ZooKeeper, removed by {@link #delete}. */
public final class TestDirectories {
    private TestDirectories() {
    }

    public static File create(String prefix) {
        try {
            return Files.createTempDirectory("twinlog-" + prefix + "-").toFile();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static void delete(File dir) {
        if (dir == null || !dir.exists()) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir.toPath())) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort: the OS cleans /tmp eventually
        }
    }
}
