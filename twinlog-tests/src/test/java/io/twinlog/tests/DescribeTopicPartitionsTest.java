package io.twinlog.tests;

import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.TestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.message.DescribeTopicPartitionsRequestData;
import org.apache.kafka.common.message.DescribeTopicPartitionsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeTopicPartitionsRequest;
import org.apache.kafka.common.requests.DescribeTopicPartitionsResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** DescribeTopicPartitions pages through topics in name order with a cursor, as the 4.4 admin expects. */
@Timeout(300)
class DescribeTopicPartitionsTest {

    @Test
    void pagesWithACursorAndReportsUnknownTopics() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(1).build().start();
             Admin admin = cluster.admin();
             RawKafkaConnection conn = RawKafkaConnection.to(cluster.bootstrapServers())) {
            admin.createTopics(List.of(new NewTopic("b-topic", 3, (short) 1), new NewTopic("a-topic", 2, (short) 1)))
                    .all().get();
            List<String> seen = new ArrayList<>();
            DescribeTopicPartitionsRequestData.Cursor cursor = null;
            int pages = 0;
            do {
                DescribeTopicPartitionsRequestData req = new DescribeTopicPartitionsRequestData()
                        .setResponsePartitionLimit(2).setCursor(cursor);
                DescribeTopicPartitionsResponse r = conn.send(new DescribeTopicPartitionsRequest.Builder(req).build());
                for (DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponseTopic t : r.data().topics()) {
                    t.partitions().forEach(p -> seen.add(t.name() + "-" + p.partitionIndex() + "@" + p.leaderId()));
                }
                DescribeTopicPartitionsResponseData.Cursor next = r.data().nextCursor();
                cursor = next == null ? null : new DescribeTopicPartitionsRequestData.Cursor()
                        .setTopicName(next.topicName()).setPartitionIndex(next.partitionIndex());
                pages++;
            } while (cursor != null && pages < 10);
            assertEquals(List.of("a-topic-0@0", "a-topic-1@0", "b-topic-0@0", "b-topic-1@0", "b-topic-2@0"), seen);
            assertEquals(3, pages, "2 + 2 + 1 partitions");

            DescribeTopicPartitionsRequestData unknown = new DescribeTopicPartitionsRequestData()
                    .setResponsePartitionLimit(100);
            unknown.topics().add(new DescribeTopicPartitionsRequestData.TopicRequest().setName("missing"));
            DescribeTopicPartitionsResponse r = conn.send(new DescribeTopicPartitionsRequest.Builder(unknown).build());
            assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION.code(), r.data().topics().find("missing").errorCode());
            assertNull(r.data().nextCursor());
        }
    }
}
