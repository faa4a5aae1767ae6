package io.twinlog.server.handlers;

import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.replication.Partition;
import org.apache.kafka.common.message.DescribeLogDirsRequestData;
import org.apache.kafka.common.message.DescribeLogDirsResponseData;
import org.apache.kafka.common.message.DescribeLogDirsResponseData.DescribeLogDirsPartition;
import org.apache.kafka.common.message.DescribeLogDirsResponseData.DescribeLogDirsResult;
import org.apache.kafka.common.message.DescribeLogDirsResponseData.DescribeLogDirsTopic;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeLogDirsRequest;
import org.apache.kafka.common.requests.DescribeLogDirsResponse;
import org.apache.kafka.storage.internals.log.UnifiedLog;

import java.io.File;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * DescribeLogDirs ({@code kafka-log-dirs}, {@code Admin.describeLogDirs}): for every configured log dir, the
 * partitions this broker holds there (leader or follower) with their size in bytes and offset lag, and the dir's
 * total and usable bytes. A request naming topics gets only those; null asks for all. Twinlog never moves a replica
 * between dirs, so no partition is a future replica. The offset lag is Kafka's: how far this replica's log end is
 * behind its high watermark, which is 0 on a leader and on a caught-up follower. A failed log dir is answered
 * {@code KAFKA_STORAGE_ERROR} with no partitions, as Kafka does.
 */
public final class DescribeLogDirsHandler implements RequestHandler {
    private final BrokerContext ctx;

    public DescribeLogDirsHandler(BrokerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void handle(Request request) {
        DescribeLogDirsRequest body = request.body();
        DescribeLogDirsRequestData data = body.data();
        // log dir -> topic -> partitions, name-ordered like Kafka's tool prints them
        Map<String, Map<String, DescribeLogDirsTopic>> byDir = new LinkedHashMap<>();
        for (File dir : ctx.config().logDirs()) {
            byDir.put(dir.getAbsolutePath(), new TreeMap<>());
        }
        for (Partition partition : ctx.replicaManager().partitions()) {
            if (!requested(data, partition.topicPartition().topic(), partition.topicPartition().partition())) {
                continue;
            }
            UnifiedLog log = partition.log();
            Map<String, DescribeLogDirsTopic> topics = byDir.get(log.parentDir());
            if (topics == null) {
                continue;
            }
            topics.computeIfAbsent(partition.topicPartition().topic(),
                    name -> new DescribeLogDirsTopic().setName(name)).partitions()
                    .add(new DescribeLogDirsPartition()
                            .setPartitionIndex(partition.topicPartition().partition())
                            .setPartitionSize(log.size())
                            .setOffsetLag(Math.max(log.highWatermark() - log.logEndOffset(), 0))
                            .setIsFutureKey(false));
        }
        DescribeLogDirsResponseData response = new DescribeLogDirsResponseData();
        for (Map.Entry<String, Map<String, DescribeLogDirsTopic>> e : byDir.entrySet()) {
            DescribeLogDirsResult result = new DescribeLogDirsResult().setLogDir(e.getKey());
            if (!ctx.logStore().isLogDirOnline(e.getKey())) {
                response.results().add(result.setErrorCode(Errors.KAFKA_STORAGE_ERROR.code()));
                continue;
            }
            result.setErrorCode(Errors.NONE.code());
            result.topics().addAll(e.getValue().values());
            File dir = new File(e.getKey());
            result.setTotalBytes(dir.getTotalSpace()).setUsableBytes(dir.getUsableSpace());
            response.results().add(result);
        }
        request.respond(new DescribeLogDirsResponse(response));
    }

    private static boolean requested(DescribeLogDirsRequestData data, String topic, int partition) {
        if (data.topics() == null) {
            return true;
        }
        for (DescribeLogDirsRequestData.DescribableLogDirTopic t : data.topics()) {
            if (t.topic().equals(topic) && t.partitions().contains(partition)) {
                return true;
            }
        }
        return false;
    }
}
