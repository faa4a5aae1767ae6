package io.twinlog.cli.internals;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.common.mirror.BatchIdentity;
import io.twinlog.common.progress.Progress;
import io.twinlog.common.progress.ProgressReporter;
import io.twinlog.protocol.client.ClusterBatches;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * {@code --verify --mirror NAME [--topic REGEX]... [--full]}: compares each partition of the mirror's topics on this
 * cluster with the same partition on the mirror's source, without stopping anything (issue 12, point 6). A batch
 * is identified by its base and last offsets, partition leader epoch and CRC; mirroring copies batches as they are,
 * so two logs agree up to where their batches stop matching. The first difference is found by binary search with
 * ordinary Fetch requests of one batch each (O(log n) per side; it works against an Apache Kafka source), over the
 * offsets both clusters hold below their high watermarks; {@code --full} compares every batch instead. One line per
 * partition:
 * <pre>
 * orders 0 identical up to 1500
 * orders 1 differ from offset 120 (here: epoch 3 crc 2712386541; source: epoch 4 crc 918273645)
 * orders 2 forked at offset 800, where it failed over (identical before it)
 * </pre>
 * A failed-over partition is expected to differ from its last mirrored offset on; anything else that differs
 * makes the exit status 1, and for a topic still mirroring a last line says how to repair it ({@code --start}).
 *
 * <p>{@code --full} reads every batch of both clusters, which takes long on a large topic: it shows its progress on
 * stderr ({@link ConsoleProgress}: in place on a terminal, a plain line every 10 s otherwise) with the percentage of
 * the offsets to compare, the batches and bytes compared, the rate and the time left, and ends with a summary line.
 */
public final class VerifyMirror implements MirrorAction {
    private static final Logger log = LoggerFactory.getLogger(VerifyMirror.class);
    private final String mirror;
    private final List<String> topicPatterns;
    private final boolean full;
    private final Map<String, Object> destinationConfigs;
    private final Map<String, String> sourceCommandConfigs;
    /** Each mirror topic's name on the source, from the describe (its own unless the mirror renamed it). */
    private final Map<String, String> sourceTopics = new HashMap<>();
    private boolean differs;
    private ConsoleProgress console;
    /** With {@code --full}: how far the comparison is, in offsets of all the partitions to compare. */
    private ProgressReporter progress;
    /** Offsets both clusters hold, summed over the partitions to compare. */
    private long offsetsToCompare;
    /** Offsets of the partitions already compared (their whole common range). */
    private long offsetsCompared;
    private long batchesCompared;

    /**
     * @param sourceCommandConfigs client configs for the source given on the command line
     *                             ({@code --source-command-config}); they override the mirror's own
     */
    public VerifyMirror(String mirror, List<String> topicPatterns, boolean full,
                        Map<String, Object> destinationConfigs, Map<String, String> sourceCommandConfigs) {
        this.mirror = mirror;
        this.topicPatterns = List.copyOf(topicPatterns);
        this.full = full;
        this.destinationConfigs = Map.copyOf(destinationConfigs);
        this.sourceCommandConfigs = Map.copyOf(sourceCommandConfigs);
    }

    /** This verification reading this cluster with {@code configs} (the command's admin client configs). */
    public VerifyMirror reading(Map<String, Object> configs) {
        return new VerifyMirror(mirror, topicPatterns, full, configs, sourceCommandConfigs);
    }

    /** Shows the progress of {@code --full} on {@code console}. */
    public VerifyMirror showingProgress(ConsoleProgress console) {
        this.console = console;
        return this;
    }

    /** Whether some partition differs where the two clusters should agree (exit status 1). */
    public boolean differs() {
        return differs;
    }

    /** The partition of the source that {@code tp} mirrors (another topic name for a renamed mirror topic). */
    private TopicPartition onSource(TopicPartition tp) {
        return new TopicPartition(sourceTopics.getOrDefault(tp.topic(), tp.topic()), tp.partition());
    }

    @Override
    public void run(MirrorAdmin admin, PrintWriter out) throws IOException {
        MirrorAdmin.MirrorDescription d = admin.describeClusterMirrors(List.of(mirror)).get(mirror);
        Map<String, Object> sourceConfigs = new HashMap<>();
        d.configs().forEach((k, v) -> {
            if (!k.startsWith("mirror.") && v != null && !d.sensitiveConfigs().contains(k)) {
                sourceConfigs.put(k, v);
            }
        });
        List<String> secretsMissing = d.sensitiveConfigs().stream()
                .filter(k -> !sourceCommandConfigs.containsKey(k)).sorted().toList();
        if (!secretsMissing.isEmpty()) {
            throw CommandException.failed("--verify needs the source's credentials: the mirror's "
                    + String.join(", ", secretsMissing) + " are never shown back; give them with "
                    + "--source-command-config FILE");
        }
        sourceConfigs.putAll(sourceCommandConfigs);
        sourceConfigs.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, d.sourceBootstrap());
        List<String> topics = d.topics().keySet().stream()
                .filter(t -> topicPatterns.isEmpty() || topicPatterns.stream().anyMatch(p -> Pattern.matches(p, t)))
                .sorted().toList();
        if (topics.isEmpty()) {
            throw CommandException.failed("Mirror '" + mirror + "' has no topic matching " + topicPatterns);
        }
        d.topics().values().forEach(t -> sourceTopics.put(t.name(), t.sourceTopic()));
        Set<String> toRepair = new TreeSet<>();
        try (ClusterBatches here = new ClusterBatches("this cluster", destinationConfigs);
             ClusterBatches source = new ClusterBatches("the source", sourceConfigs)) {
            // every partition's offsets first: the total a --full comparison reports its progress against
            Map<TopicPartition, Ranges> ranges = new LinkedHashMap<>();
            for (String topic : topics) {
                for (MirrorAdmin.PartitionDescription p : d.topics().get(topic).partitions()) {
                    TopicPartition tp = new TopicPartition(topic, p.partition());
                    ranges.put(tp, new Ranges(here.range(tp), source.range(onSource(tp))));
                }
            }
            if (full) {
                progress = new ProgressReporter(log, "[Verify " + mirror + "] comparing every batch", "offsets",
                        Time.SYSTEM);
                offsetsToCompare = ranges.values().stream().mapToLong(Ranges::inCommon).sum();
                progress.update(0, offsetsToCompare);
            }
            for (String topic : topics) {
                MirrorAdmin.TopicDescription t = d.topics().get(topic);
                for (MirrorAdmin.PartitionDescription p : t.partitions()) {
                    TopicPartition tp = new TopicPartition(topic, p.partition());
                    long failedOverAt = p.state().equals("STOPPED") ? p.lastMirroredOffset() : -1;
                    boolean before = differs;
                    differs = false;
                    Ranges r = ranges.get(tp);
                    String line = compare(tp, here, source, r, failedOverAt);
                    offsetsCompared += r.inCommon(); // the rest of a partition that differs is not read
                    if (console != null) {
                        console.clear();
                    }
                    out.println(line);
                    out.flush();
                    if (differs && p.state().equals("MIRRORING")) {
                        toRepair.add(topic);
                    }
                    differs |= before;
                }
            }
            if (progress != null) {
                Progress p = progress.finish("done");
                if (console != null) {
                    console.done("Compared " + ranges.size() + " partition(s): " + String.format(Locale.ROOT,
                            "%,d", batchesCompared) + " batches, " + Progress.formatBytes(here.bytesFetched()
                            + source.bytesFetched()) + " read from both clusters, in "
                            + Progress.formatDuration(p.elapsedMs()));
                }
            }
        }
        for (String topic : toRepair) {
            // a start of a mirroring topic has its leaders compare again and repair (issue 12 point 4c)
            // a name with '.' is escaped: --topic takes a regular expression, and 'a.b' would also start 'a-b'
            String topicArg = topic.contains(".") ? "'" + topic.replace(".", "\\.") + "'" : topic;
            out.println("To repair " + topic + ": twinlog-mirrors.sh --start --mirror " + mirror + " --topic "
                    + topicArg + " (its leaders compare again, cut what differs into the quarantine and mirror it "
                    + "again)");
        }
    }

    /** One partition's readable offsets on both clusters; [lo, hi) is what both hold. */
    private record Ranges(ClusterBatches.Range here, ClusterBatches.Range source) {
        long lo() {
            return Math.max(here.start(), source.start());
        }

        long hi() {
            return Math.min(here.end(), source.end());
        }

        long inCommon() {
            return Math.max(0, hi() - lo());
        }
    }

    private String compare(TopicPartition tp, ClusterBatches here, ClusterBatches source, Ranges r,
                           long failedOverAt) throws IOException {
        long lo = r.lo();
        long hi = r.hi();
        String name = tp.topic() + " " + tp.partition();
        if (hi <= lo) {
            return name + " identical up to " + lo + " (no offset in common to compare)";
        }
        Optional<Long> firstDifference = full ? linear(tp, here, source, lo, hi) : search(tp, here, source, lo, hi);
        if (firstDifference.isEmpty()) {
            return name + " identical up to " + hi;
        }
        long at = firstDifference.get();
        if (failedOverAt >= 0 && at >= failedOverAt) {
            return name + " forked at offset " + at + ", where it failed over (identical before it)";
        }
        differs = true;
        BatchIdentity mine = here.batchAt(tp, at).orElse(null);
        BatchIdentity theirs = source.batchAt(onSource(tp), at).orElse(null);
        return name + " differ from offset " + at + " (here: " + describe(mine) + "; source: " + describe(theirs) + ")";
    }

    private static String describe(BatchIdentity b) {
        return b == null ? "none" : "epoch " + b.epoch() + " crc " + b.crc();
    }

    /** Binary search for the first offset in [lo, hi) whose batch differs; empty when none does. */
    private Optional<Long> search(TopicPartition tp, ClusterBatches here, ClusterBatches source, long lo,
                                  long hi) throws IOException {
        try {
            OptionalLong first = BatchIdentity.firstDifference(lo, hi, offset -> {
                try {
                    return same(tp, here, source, offset);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            return first.isPresent() ? Optional.of(first.getAsLong()) : Optional.empty();
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /** Every batch in [lo, hi), one after the other; the first that differs. Reports its progress per batch. */
    private Optional<Long> linear(TopicPartition tp, ClusterBatches here, ClusterBatches source, long lo, long hi)
            throws IOException {
        long offset = lo;
        while (offset < hi) {
            Optional<BatchIdentity> a = here.batchAt(tp, offset);
            Optional<BatchIdentity> b = source.batchAt(onSource(tp), offset);
            if (a.isEmpty() || !a.equals(b)) {
                return Optional.of(offset);
            }
            offset = a.get().lastOffset() + 1;
            batchesCompared++;
            progress.update(offsetsCompared + Math.min(offset, hi) - lo, offsetsToCompare);
            if (console != null) {
                console.show("Comparing " + tp + ": " + progress.snapshot().format() + ", "
                        + String.format(Locale.ROOT, "%,d", batchesCompared) + " batches, "
                        + Progress.formatBytes(here.bytesFetched() + source.bytesFetched()) + " read");
            }
        }
        return Optional.empty();
    }

    private boolean same(TopicPartition tp, ClusterBatches here, ClusterBatches source, long offset) throws IOException {
        Optional<BatchIdentity> a = here.batchAt(tp, offset);
        return a.isPresent() && a.equals(source.batchAt(onSource(tp), offset));
    }
}
