package io.twinlog.bench;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;

/**
 * A large file held in the page cache so that the machine's free memory stays small while the systems run.
 *
 * <p>Why: on this machine (a VM whose balloon driver reports free pages back to the host, see
 * {@code /sys/module/page_reporting}), a page the guest has not touched since it was last free costs a fault in the
 * host when it is first written: writing into the page cache runs at about 100 MB/s while it needs such pages, and at
 * memory speed (1 GiB in a quarter of a second) when it can reuse pages that were recently in use. A broker
 * writing a few GiB therefore slowed down by a factor of 4 to 5 in whichever workload first grew the page cache into
 * free memory (measured 2026-12-06: 8-partition produce at 70,000 records/s on both systems, 400,000 without it),
 * and the ratio measured the host, not the brokers. With the free memory taken by this file's clean pages, a
 * broker's writes evict them (LRU) and reuse their memory at once, as a long-running broker's writes reuse the page
 * cache on a real machine.
 *
 * <p>A finished cluster deletes its data and so frees memory, which the host takes back within seconds;
 * {@link #topUp()} reads the file through again so that its pages fill that memory before the next system runs.
 */
final class PageCacheBallast implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PageCacheBallast.class);
    /** Left free for the JVM's native memory, thread stacks and the operating system. */
    private static final long RESERVE_BYTES = 3L << 30;
    private static final int CHUNK_BYTES = 8 << 20;
    /** Disk left free for the systems' data (the bounded topics of a run need a few GiB at a time). */
    private static final long DISK_RESERVE_BYTES = 16L << 30;

    private final Path file;
    private long size;

    private PageCacheBallast(Path file, long size) {
        this.file = file;
        this.size = size;
    }

    /** Writes a file of the memory available now minus a reserve; empty if that is nothing or not on Linux. */
    static Optional<PageCacheBallast> create(Path directory) throws IOException {
        Optional<Long> available = memAvailableBytes();
        if (available.isEmpty() || available.get() <= RESERVE_BYTES) {
            log.info("No page cache ballast: available memory {}", available.map(b -> (b >> 20) + " MiB")
                    .orElse("unknown"));
            return Optional.empty();
        }
        long wanted = available.get() - RESERVE_BYTES;
        long diskRoom = Files.getFileStore(directory).getUsableSpace() - DISK_RESERVE_BYTES;
        long size = Math.min(wanted, diskRoom) / CHUNK_BYTES * CHUNK_BYTES;
        if (size <= 0) {
            log.warn("No page cache ballast: {} MiB of disk usable in {}, {} MiB kept for the systems' data; the "
                    + "throughput figures may then measure this VM's first touch of memory (see bench/README.md)",
                    Files.getFileStore(directory).getUsableSpace() >> 20, directory, DISK_RESERVE_BYTES >> 20);
            return Optional.empty();
        }
        if (size < wanted / CHUNK_BYTES * CHUNK_BYTES) {
            log.warn("Page cache ballast cut to {} MiB of the {} MiB wanted, to leave {} MiB of disk for the "
                    + "systems' data", size >> 20, wanted >> 20, DISK_RESERVE_BYTES >> 20);
        }
        Path file = directory.resolve("page-cache-ballast");
        long startNanos = System.nanoTime();
        log.info("Writing a page cache ballast of {} MiB to {} (about 10 s per GiB the host has to back again)",
                size >> 20, file);
        ByteBuffer chunk = filledChunk();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            long nextReport = 1L << 30;
            for (long written = 0; written < size; ) {
                chunk.clear();
                written += channel.write(chunk);
                if (written >= nextReport) {
                    log.info("Ballast: {} of {} MiB written", written >> 20, size >> 20);
                    nextReport += 1L << 30;
                }
            }
            channel.force(false);   // clean pages, so the brokers' writes can evict them without writing back
        }
        log.info("Page cache ballast written in {} s", String.format("%.1f", (System.nanoTime() - startNanos) / 1e9));
        return Optional.of(new PageCacheBallast(file, size));
    }

    /**
     * Reads the file through, bringing its evicted pages back into memory other data freed; then, if free memory
     * is still larger than the reserve (a closed cluster freed more than its run had evicted of the file: seen as a
     * first workload at 70,000 records/s after a top-up that only read), writes that much more to the file.
     */
    void topUp() throws IOException {
        long startNanos = System.nanoTime();
        ByteBuffer chunk = filledChunk();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            for (long position = 0; position < size; ) {
                chunk.clear();
                int read = channel.read(chunk, position);
                if (read < 0) {
                    break;
                }
                position += read;
            }
        }
        long grown = 0;
        Optional<Long> free = memFreeBytes();
        if (free.isPresent() && free.get() > RESERVE_BYTES + CHUNK_BYTES) {
            long diskRoom = Files.getFileStore(file).getUsableSpace() - DISK_RESERVE_BYTES;
            long more = Math.max(0, Math.min(free.get() - RESERVE_BYTES, diskRoom)) / CHUNK_BYTES * CHUNK_BYTES;
            chunk = filledChunk();
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
                for (long written = 0; written < more; ) {
                    chunk.clear();
                    written += channel.write(chunk, size + written);
                }
                channel.force(false);
            }
            size += more;
            grown = more;
        }
        log.info("Page cache ballast topped up in {} s{}", String.format("%.1f",
                (System.nanoTime() - startNanos) / 1e9), grown == 0 ? "" : ", grown by " + (grown >> 20) + " MiB");
    }

    private static ByteBuffer filledChunk() {
        ByteBuffer chunk = ByteBuffer.allocateDirect(CHUNK_BYTES);
        for (int i = 0; i < CHUNK_BYTES; i += 8) {
            chunk.putLong(i, i * 0x9E3779B97F4A7C15L);    // not zeros, so no layer below can skip them
        }
        return chunk;
    }

    @Override
    public void close() throws IOException {
        Files.deleteIfExists(file);
    }

    private static Optional<Long> memAvailableBytes() {
        return meminfo("MemAvailable:");
    }

    private static Optional<Long> memFreeBytes() {
        return meminfo("MemFree:");
    }

    private static Optional<Long> meminfo(String key) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith(key)) {
                    return Optional.of(Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024);
                }
            }
        } catch (IOException | RuntimeException e) {
            // broad: /proc/meminfo missing or in another format only means no ballast
            log.warn("Could not read /proc/meminfo", e);
        }
        return Optional.empty();
    }
}
