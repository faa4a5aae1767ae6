package io.twinlog.tests;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * The reactor's files as the checks that read sources and docs see them ({@link TestTimeoutsTest},
 * {@link ArchitectureDocNamesTest}): found from the repository's root, build output, packages and hidden
 * directories left out.
 */
final class SourceFiles {
    private SourceFiles() {
    }

    /** The reactor's root: the nearest directory up from here that holds the test kit's module. */
    static Path repositoryRoot() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isDirectory(dir.resolve("twinlog-testkit"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new AssertionError("no twinlog-testkit directory above " + Path.of("").toAbsolutePath());
        }
        return dir;
    }

    /** Every file under {@code root} whose path relative to it, with '/' separators, {@code matches}; sorted. */
    static List<Path> under(Path root, Predicate<String> matches) throws IOException {
        List<Path> out = new ArrayList<>();
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attributes) {
                String name = dir.getFileName() == null ? "" : dir.getFileName().toString();
                return name.equals("target") || name.equals("node_modules") || name.startsWith(".")
                        ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) {
                if (matches.test(root.relativize(file).toString().replace(file.getFileSystem().getSeparator(),
                        "/"))) {
                    out.add(file);
                }
                return FileVisitResult.CONTINUE;
            }
        });
        out.sort(null);
        return out;
    }
}
