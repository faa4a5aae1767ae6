package io.twinlog.bench;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.util.Map;
import java.util.Properties;

/**
 * The client configuration, identical for every system. Anything not set here is the kafka-clients 4.4.0 default
 * (for example {@code buffer.memory=32 MiB}, {@code max.in.flight.requests.per.connection=5},
 * {@code fetch.max.bytes=50 MiB}, {@code max.partition.fetch.bytes=1 MiB}, {@code max.poll.records=500}).
 */
final class ClientSettings {
    static final int LINGER_MS = 5;
    static final int BATCH_SIZE_BYTES = 131_072;

    private ClientSettings() {
    }

    static Properties producer(String bootstrapServers, Acks acks) {
        return producer(bootstrapServers, acks, Map.of());
    }

    /** @param security TLS and SASL settings of a secured system (empty for PLAINTEXT) */
    static Properties producer(String bootstrapServers, Acks acks, Map<String, Object> security) {
        Properties p = new Properties();
        p.putAll(security);
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "bench-producer");
        p.put(ProducerConfig.ACKS_CONFIG, acks.config());
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, Boolean.toString(acks.idempotence()));
        p.put(ProducerConfig.LINGER_MS_CONFIG, Integer.toString(LINGER_MS));
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(BATCH_SIZE_BYTES));
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "none");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return p;
    }

    /** No {@code group.id}: partitions are assigned manually, so no group coordinator is involved. */
    static Properties consumer(String bootstrapServers) {
        return consumer(bootstrapServers, Map.of());
    }

    static Properties consumer(String bootstrapServers, Map<String, Object> security) {
        Properties p = new Properties();
        p.putAll(security);
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "bench-consumer");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return p;
    }
}
