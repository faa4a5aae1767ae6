package io.twinlog.campaign;

import io.twinlog.testkit.TestDirectories;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A filesystem of its own for one broker's second log dir, for {@link FaultKind#DISK_FULL}: a tmpfs of
 * {@link #SIZE_MIB} MiB mounted at {@code <broker dir>/small-disk}, holding the log dir {@code logs} and, while the
 * fault lasts, the file {@code filler} that takes every free byte. The broker sees what a full disk gives: its next
 * write in the dir fails with "No space left on device" (ENOSPC), the error a real disk gives; a tmpfs rather than a
 * loop-mounted image because it needs no loop device (the machine has few, shared) and is cleaned by the unmount.
 *
 * <p>Mounting needs root or CAP_SYS_ADMIN; {@link #unavailableReason()} says whether this machine allows it.
 * {@link #close()} copies the log dir to {@code <broker dir>/small-disk-logs} (a failed run's data survives the
 * unmount) and unmounts. A campaign ended by a signal (SIGTERM, Ctrl-C) unmounts what it still has mounted in a
 * shutdown hook (lazily: the broker on it may not have exited yet), so no tmpfs is left behind to keep the work
 * dir from being deleted.
 */
final class SmallDisk implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SmallDisk.class);
    /** Room for a two-hour run's share of the partitions (about 50 MB in all), with a margin. */
    static final int SIZE_MIB = 128;
    private static final int CHUNK = 1 << 20;
    private static final Set<File> MOUNTED = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(SmallDisk::unmountLeftovers, "campaign-small-disk-unmounter"));
    }

    private final File mountPoint;
    private boolean mounted;

    SmallDisk(File brokerDir) {
        this.mountPoint = new File(brokerDir, "small-disk");
    }

    /** Why no small filesystem can be mounted here (the mount's own message), or empty if one can. */
    static Optional<String> unavailableReason() {
        try {
            File probe = Files.createTempDirectory("twinlog-campaign-mount-probe").toFile();
            try {
                SmallDisk disk = new SmallDisk(probe);
                disk.mount(1);
                disk.unmount();
                return Optional.empty();
            } finally {
                TestDirectories.delete(probe);
            }
        } catch (IOException e) {
            return Optional.of(e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of("interrupted");
        }
    }

    void mount() throws IOException, InterruptedException {
        mount(SIZE_MIB);
    }

    private void mount(int sizeMib) throws IOException, InterruptedException {
        Files.createDirectories(mountPoint.toPath());
        run(List.of("mount", "-t", "tmpfs", "-o", "size=" + sizeMib + "m,mode=0755", "twinlog-campaign",
                mountPoint.getAbsolutePath()), "mounting a tmpfs of " + sizeMib + " MiB needs root or CAP_SYS_ADMIN");
        mounted = true;
        MOUNTED.add(mountPoint);
        Files.createDirectories(logDir().toPath());
    }

    File logDir() {
        return new File(mountPoint, "logs");
    }

    /** Writes the filler until the filesystem refuses a byte more (ENOSPC); returns its size. */
    long fill() throws IOException {
        File filler = filler();
        long written = 0;
        try (FileOutputStream out = new FileOutputStream(filler, true)) {
            // big chunks first, then pages, so that not even the last partial chunk's room is left
            for (int chunk : new int[] {CHUNK, 4096}) {
                byte[] bytes = new byte[chunk];
                try {
                    while (true) {
                        out.write(bytes);
                        written += chunk;
                    }
                } catch (IOException full) {
                    log.info("[Campaign] {}: {} bytes in all, then a {} byte write failed: {}", filler, written,
                            chunk, full.getMessage());
                }
            }
        }
        return written;
    }

    /** The operator frees the disk. */
    void free() throws IOException {
        Files.deleteIfExists(filler().toPath());
    }

    long usableBytes() {
        return mountPoint.getUsableSpace();
    }

    @Override
    public String toString() {
        return "tmpfs of " + SIZE_MIB + " MiB at " + mountPoint;
    }

    @Override
    public void close() throws IOException, InterruptedException {
        if (!mounted) {
            return;
        }
        File copy = new File(mountPoint.getParentFile(), "small-disk-logs");
        run(List.of("cp", "-a", logDir().getAbsolutePath(), copy.getAbsolutePath()), "copying " + logDir());
        unmount();
    }

    private void unmount() throws IOException, InterruptedException {
        run(List.of("umount", mountPoint.getAbsolutePath()), "unmounting " + mountPoint);
        mounted = false;
        MOUNTED.remove(mountPoint);
    }

    /** The shutdown hook: a signal ended the campaign before {@link #close()}. */
    private static void unmountLeftovers() {
        for (File point : MOUNTED) {
            try {
                run(List.of("umount", "-l", point.getAbsolutePath()), "unmounting " + point + " at exit");
            } catch (IOException | InterruptedException e) {
                // the JVM is exiting: stderr is all that is left to tell the operator
                System.err.println("twinlog-fault-campaign: " + e.getMessage() + "; unmount it by hand");
            }
        }
    }

    private File filler() {
        return new File(mountPoint, "filler");
    }

    private static void run(List<String> command, String what) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException(what + ": `" + String.join(" ", command) + "` did not end within 30 s");
        }
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (p.exitValue() != 0) {
            throw new IOException(what + ": `" + String.join(" ", command) + "` exited " + p.exitValue() + ": "
                    + output);
        }
    }
}
