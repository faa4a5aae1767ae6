package io.twinlog.tests.streams;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueStore;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;

/**
 * The exactly-once word count the Streams tests run: sentences from {@code sentences} split into words, regrouped
 * by word through the {@code by-word} repartition topic, counted in the {@code word-counts} store (caching off, so
 * every update is emitted, and the store's changelog holds every count) and written to {@code counts}.
 */
final class WordCount {
    static final List<String> WORDS = List.of("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf",
            "hotel", "india", "juliett", "kilo", "lima", "mike", "november", "oscar", "papa");

    private WordCount() {
    }

    static StreamsBuilder topology() {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream("sentences", Consumed.with(Serdes.String(), Serdes.String()))
                .flatMapValues(sentence -> Arrays.asList(sentence.split(" ")))
                .groupBy((key, word) -> word, Grouped.with("by-word", Serdes.String(), Serdes.String()))
                .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("word-counts")
                        .withCachingDisabled())
                .toStream()
                .to("counts", Produced.with(Serdes.String(), Serdes.Long()));
        return builder;
    }

    /** exactly_once_v2, commits every 200 ms, input from the earliest offset. */
    static Properties config(String applicationId, String bootstrapServers, Path stateDir, int replicationFactor,
                             int threads) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, replicationFactor);
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, threads);
        p.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");
        return p;
    }

    /** A seeded sentence of 3 to 5 words; {@code written} counts how often each word was written. */
    static String sentence(Random random, Map<String, Long> written) {
        int n = 3 + random.nextInt(3);
        String[] words = new String[n];
        for (int w = 0; w < n; w++) {
            words[w] = WORDS.get(random.nextInt(WORDS.size()));
            written.merge(words[w], 1L, Long::sum);
        }
        return String.join(" ", words);
    }

    /** The counts an exact word count emits for a word written {@code n} times: 1, 2, ..., n. */
    static List<Long> exactCounts(long n) {
        List<Long> exact = new ArrayList<>();
        for (long i = 1; i <= n; i++) {
            exact.add(i);
        }
        return exact;
    }
}
