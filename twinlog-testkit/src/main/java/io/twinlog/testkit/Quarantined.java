package io.twinlog.testkit;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A record of a cluster's quarantine topic as a consumer reads it: its value and its headers. */
public record Quarantined(String value, Map<String, String> headers) {
    public static final String TOPIC = "__twinlog_quarantine";

    /** The quarantine's first {@code count} records, read with a plain consumer. */
    public static List<Quarantined> read(TestCluster cluster, int count) {
        List<Quarantined> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = cluster.consumer(Map.of())) {
            c.assign(List.of(new TopicPartition(TOPIC, 0)));
            c.seekToBeginning(List.of(new TopicPartition(TOPIC, 0)));
            Waits.waitUntil(count + " records in " + TOPIC, () -> {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(100))) {
                    Map<String, String> headers = new LinkedHashMap<>();
                    for (Header h : r.headers()) {
                        headers.put(h.key(), new String(h.value(), StandardCharsets.UTF_8));
                    }
                    out.add(new Quarantined(r.value() == null ? null : new String(r.value(), StandardCharsets.UTF_8),
                            headers));
                }
                return out.size() >= count;
            });
        }
        return out;
    }

    /** The {@code twinlog.quarantine.*} headers named. */
    public Map<String, String> origin(String... names) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String n : names) {
            out.put("twinlog.quarantine." + n, headers.get("twinlog.quarantine." + n));
        }
        return out;
    }
}
