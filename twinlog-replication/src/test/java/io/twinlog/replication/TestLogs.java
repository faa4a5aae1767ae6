package io.twinlog.replication;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;

/** Real Kafka logs (1 MiB segments) in one directory for this module's tests, with their scheduler; closed together. */
final class TestLogs implements AutoCloseable {
    private final File dir;
    private final KafkaScheduler scheduler = new KafkaScheduler(1, true, "test-");
    private final List<UnifiedLog> opened = new ArrayList<>();

    TestLogs(File dir) {
        this.dir = dir;
        scheduler.startup();
    }

    /** Opens (or creates) the log of {@code tp}; {@code cleanShutdown} false replays it as after a crash. */
    UnifiedLog open(TopicPartition tp, Uuid topicId, boolean cleanShutdown) throws IOException {
        Properties props = new Properties();
        props.put("segment.bytes", String.valueOf(1 << 20));
        UnifiedLog log = UnifiedLog.create(new File(dir, tp.toString()), new LogConfig(props), 0L, 0L, scheduler,
                new BrokerTopicStats(), Time.SYSTEM, 60_000, new ProducerStateManagerConfig(86_400_000, false),
                600_000, new LogDirFailureChannel(1), cleanShutdown, Optional.of(topicId));
        opened.add(log);
        return log;
    }

    /** A log the test closed itself (a restart): not closed again. */
    void closed(UnifiedLog log) {
        opened.remove(log);
    }

    @Override
    public void close() throws Exception {
        for (UnifiedLog l : opened) {
            l.close();
        }
        scheduler.shutdown();
    }
}
