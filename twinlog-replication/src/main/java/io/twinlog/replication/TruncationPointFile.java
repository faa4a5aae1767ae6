package io.twinlog.replication;

import io.twinlog.common.mirror.TruncationPoints;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The externally decided truncation points a replica applied last (a mirror partition's partition-wide truncation,
 * decisions 38 and 125), kept next to its log as {@code truncation-point}: one {@code "<id> <offset>"} line per
 * point, newest first, at most {@link #KEPT}. Newest first so the file of one point written before decision 125 reads
 * as it is, and a Twinlog from before it, which reads the first id, reads the latest. Written atomically and synced
 * before the replica says it applied the points, so a restart never applies the same point a second time (which
 * would cut records fetched after it).
 */
final class TruncationPointFile {
    static final String NAME = "truncation-point";
    /**
     * Enough to hold every point of any list a replica is shown alongside one it applied ahead of the record (the
     * leader's own point, decision 125): a record holds one point per truncation of the partition.
     */
    static final int KEPT = 64;

    private TruncationPointFile() {
    }

    /** The points recorded in {@code logDir}, oldest first; empty when none is. */
    static List<TruncationPoints.Point> read(Path logDir) throws IOException {
        Path file = logDir.resolve(NAME);
        if (!Files.exists(file)) {
            return List.of();
        }
        List<TruncationPoints.Point> newestFirst = new ArrayList<>();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            String text = line.trim();
            if (text.isEmpty()) {
                continue;
            }
            String[] parts = text.split(" ");
            try {
                // a file of the first format may lack the offset: only the id decides
                newestFirst.add(new TruncationPoints.Point(Long.parseLong(parts[0]),
                        parts.length > 1 ? Long.parseLong(parts[1]) : -1L));
            } catch (NumberFormatException e) {
                throw new IOException("Corrupt " + file + ": '" + text + "'", e);
            }
        }
        Collections.reverse(newestFirst);
        return List.copyOf(newestFirst);
    }

    /** Writes {@code points} (oldest first), the newest {@link #KEPT} of them, synced. */
    static void write(Path logDir, List<TruncationPoints.Point> points) throws IOException {
        StringBuilder text = new StringBuilder();
        for (int i = points.size() - 1; i >= Math.max(0, points.size() - KEPT); i--) {
            text.append(points.get(i).id()).append(' ').append(points.get(i).offset()).append('\n');
        }
        Path tmp = logDir.resolve(NAME + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ch.write(StandardCharsets.UTF_8.encode(text.toString()));
            ch.force(true);
        }
        Files.move(tmp, logDir.resolve(NAME), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel dir = FileChannel.open(logDir, StandardOpenOption.READ)) {
            dir.force(true);
        }
    }
}
