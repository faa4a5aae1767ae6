package io.twinlog.replication;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.OptionalLong;

/**
 * The id of the last externally decided truncation point a replica applied (a mirror partition's partition-wide
 * truncation, decision 38), kept next to its log as {@code truncation-point}: {@code "<id> <offset>"}. Written
 * atomically and synced before the replica says it applied the point, so a restart never applies the same point a
 * second time (which would cut records fetched after it).
 */
final class TruncationPointFile {
    static final String NAME = "truncation-point";

    private TruncationPointFile() {
    }

    /** The id recorded in {@code logDir}, or empty when none is (or the file is unreadable, which is logged). */
    static OptionalLong read(Path logDir) throws IOException {
        Path file = logDir.resolve(NAME);
        if (!Files.exists(file)) {
            return OptionalLong.empty();
        }
        String text = Files.readString(file, StandardCharsets.UTF_8).trim();
        String[] parts = text.split(" ");
        try {
            return OptionalLong.of(Long.parseLong(parts[0]));
        } catch (NumberFormatException e) {
            throw new IOException("Corrupt " + file + ": '" + text + "'", e);
        }
    }

    static void write(Path logDir, long id, long offset) throws IOException {
        Path tmp = logDir.resolve(NAME + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ch.write(StandardCharsets.UTF_8.encode(id + " " + offset + "\n"));
            ch.force(true);
        }
        Files.move(tmp, logDir.resolve(NAME), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel dir = FileChannel.open(logDir, StandardOpenOption.READ)) {
            dir.force(true);
        }
    }
}
