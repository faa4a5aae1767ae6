package io.twinlog.storage;

import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.metadata.properties.MetaProperties;
import org.apache.kafka.metadata.properties.MetaPropertiesEnsemble;
import org.apache.kafka.metadata.properties.MetaPropertiesVersion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The cluster and broker a broker's log dirs belong to: the {@code meta.properties} in each dir, read and written with
 * Kafka's own classes ({@link MetaPropertiesEnsemble}), in the version a ZooKeeper-mode Kafka broker writes
 * (version 0: {@code broker.id} and {@code cluster.id}; docs/decisions.md 54).
 *
 * <p>Checked at start-up before any log is loaded: a dir recorded for another broker id or for a cluster other than
 * the one ZooKeeper holds makes the broker refuse to start with a one-line {@link ConfigException} naming both ids
 * and the dir; nothing on disk is touched. Dirs without the file (new dirs, and dirs written before Twinlog recorded
 * its identity) get it once the cluster id is known ({@link #writeMissing}).
 *
 * <p>Used by the thread that starts the broker only.
 */
public final class LogDirIdentity {
    private static final Logger log = LoggerFactory.getLogger(LogDirIdentity.class);
    static final String HINT = "Check zookeeper.connect (its hosts and its chroot): an empty or rebuilt ensemble, a "
            + "wrong chroot, or the embedded ZooKeeper a broker starts when zookeeper.connect is left out is another "
            + "cluster. Nothing was deleted (docs/operator-guide.md, \"Cluster identity\").";

    /**
     * Kafka's view of the dirs: each dir (absolute path) with what its meta.properties says, or among the empty ones
     * when it has none (absent, or written before Twinlog recorded its identity).
     */
    private MetaPropertiesEnsemble ensemble;

    private LogDirIdentity(MetaPropertiesEnsemble ensemble) {
        this.ensemble = ensemble;
    }

    /**
     * Reads every dir's {@code meta.properties}. A file that exists but cannot be read or parsed refuses the start
     * (Kafka's loader logs why with the stack trace): a dir whose owner is unknown is never loaded.
     */
    public static LogDirIdentity load(List<File> logDirs) throws IOException {
        MetaPropertiesEnsemble ensemble = new MetaPropertiesEnsemble.Loader()
                .addLogDirs(logDirs.stream().map(File::getAbsolutePath).toList()).load();
        if (!ensemble.errorLogDirs().isEmpty()) {
            throw new ConfigException("Cannot read " + MetaPropertiesEnsemble.META_PROPERTIES_NAME + " in log dir(s) "
                    + ensemble.errorLogDirs() + " (see the error above): refusing to start, nothing deleted. Repair "
                    + "the file or the disk, or take the dir out of log.dirs.");
        }
        return new LogDirIdentity(ensemble);
    }

    /** The cluster id the dirs record, if any dir records one; refuses dirs that record different clusters. */
    public Optional<String> clusterId() {
        Optional<Map.Entry<String, MetaProperties>> first = Optional.empty();
        for (Map.Entry<String, MetaProperties> e : ensemble.logDirProps().entrySet()) {
            Optional<String> id = e.getValue().clusterId();
            if (id.isEmpty()) {
                continue;
            }
            if (first.isEmpty()) {
                first = Optional.of(e);
            } else if (!first.get().getValue().clusterId().equals(id)) {
                throw new ConfigException("Log dir " + e.getKey() + " belongs to cluster " + id.get() + " but log dir "
                        + first.get().getKey() + " to cluster " + first.get().getValue().clusterId().get()
                        + ": refusing to start, nothing deleted. Every log dir of a broker must come from the same "
                        + "cluster; take the foreign dir out of log.dirs.");
            }
        }
        return first.flatMap(e -> e.getValue().clusterId());
    }

    /** Refuses a dir recorded for another broker id (Kafka's check, with its advice). */
    public void checkBrokerId(int brokerId) {
        for (Map.Entry<String, MetaProperties> e : ensemble.logDirProps().entrySet()) {
            OptionalInt stored = e.getValue().nodeId();
            if (stored.isPresent() && stored.getAsInt() != brokerId) {
                throw new ConfigException("Log dir " + e.getKey() + " belongs to broker " + stored.getAsInt()
                        + " (its " + MetaPropertiesEnsemble.META_PROPERTIES_NAME + "), but broker.id is " + brokerId
                        + ": refusing to start, nothing deleted. If the data was moved here, set broker.id="
                        + stored.getAsInt() + "; to start a new broker, give it empty log dirs.");
            }
        }
    }

    /**
     * Refuses to start when the dirs record a cluster id and ZooKeeper holds another one, or none.
     *
     * @param zooKeeperClusterId what {@code /cluster/id} holds, empty if absent (nothing was created)
     * @param zooKeeper          which ZooKeeper, for the message ("ZooKeeper at host:2181/chroot")
     */
    public void checkClusterId(Optional<String> zooKeeperClusterId, String zooKeeper) {
        Optional<String> stored = clusterId();
        if (stored.isEmpty() || stored.equals(zooKeeperClusterId)) {
            return;
        }
        String dir = ensemble.logDirProps().entrySet().stream().filter(e -> e.getValue().clusterId().equals(stored))
                .map(Map.Entry::getKey).findFirst().orElseThrow();
        String found = zooKeeperClusterId.map(id -> "holds cluster " + id)
                .orElse("holds no cluster id (/cluster/id is absent; none was created)");
        throw new ConfigException("Log dir " + dir + " belongs to cluster " + stored.get() + " (its "
                + MetaPropertiesEnsemble.META_PROPERTIES_NAME + "), but " + zooKeeper + " " + found
                + ": refusing to start. " + HINT);
    }

    /** The dirs without a meta.properties. */
    public Set<String> missingDirs() {
        return ensemble.emptyLogDirs();
    }

    /**
     * Writes {@code meta.properties} (version 0) into every dir that has none, after {@link #checkBrokerId} and
     * {@link #checkClusterId} passed. A dir that already holds partition logs is one from before Twinlog recorded
     * its identity: it is adopted by the cluster the broker has just joined, and said so at INFO.
     */
    public void writeMissing(String clusterId, int brokerId) throws IOException {
        if (ensemble.emptyLogDirs().isEmpty()) {
            return;
        }
        MetaProperties props = new MetaProperties.Builder().setVersion(MetaPropertiesVersion.V0)
                .setClusterId(clusterId).setNodeId(brokerId).build();
        MetaPropertiesEnsemble.Copier copier = new MetaPropertiesEnsemble.Copier(ensemble);
        for (String dir : ensemble.emptyLogDirs()) {
            Files.createDirectories(new File(dir).toPath());
            copier.setLogDirProps(dir, props);
        }
        copier.setPreWriteHandler((dir, isNew, meta) -> {
            List<String> partitionDirs = partitionDirs(new File(dir));
            if (partitionDirs.isEmpty()) {
                log.info("Recording cluster {} and broker {} in the {} of log dir {}", clusterId, brokerId,
                        MetaPropertiesEnsemble.META_PROPERTIES_NAME, dir);
            } else {
                log.info("Log dir {} holds {} partition logs ({}) but no {}: written before Twinlog recorded its "
                                + "identity; recording cluster {} and broker {} in it now", dir, partitionDirs.size(),
                        summary(partitionDirs), MetaPropertiesEnsemble.META_PROPERTIES_NAME, clusterId, brokerId);
            }
        });
        copier.writeLogDirChanges();
        ensemble = copier.copy();
    }

    private static List<String> partitionDirs(File dir) {
        File[] children = dir.listFiles(File::isDirectory);
        return children == null ? List.of()
                : Arrays.stream(children).map(File::getName).sorted().toList();
    }

    private static String summary(List<String> names) {
        String shown = names.stream().limit(5).collect(Collectors.joining(", "));
        return names.size() > 5 ? shown + ", ..." : shown;
    }
}
