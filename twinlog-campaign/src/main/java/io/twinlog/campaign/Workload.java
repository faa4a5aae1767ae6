package io.twinlog.campaign;

import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The steady load on the writable cluster: one idempotent {@code acks=all} producer thread writing unique values
 * round-robin over the topic's partitions, and one consumer-group member reading them. At a failover the campaign
 * {@link #pause()}s the producer (every send answered), points both at the other cluster ({@link #switchTo}) and
 * {@link #resume()}s; every acknowledged value is remembered for the invariant check.
 *
 * <p>Threads: the producer thread, the consumer thread, the producer's callbacks (which only record); the
 * campaign's thread calls pause/resume/switchTo.
 */
final class Workload implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Workload.class);
    static final String GROUP = "campaign-consumers";
    /** At most this many sends waiting for their answer; a limit on what a fault can leave in doubt. */
    private static final int IN_FLIGHT = 50;
    /** The producer's pace: about 100 records/s, so a round's records stay countable on a shared 2-core machine. */
    private static final long SEND_INTERVAL_MS = 10;

    private final String topic;
    private final int partitions;
    /** Acknowledged value → the cluster that acknowledged it. */
    private final Map<String, String> acknowledged = new ConcurrentHashMap<>();
    private final Set<String> failedSends = ConcurrentHashMap.newKeySet();
    private final AtomicLong consumed = new AtomicLong();
    private final Semaphore inFlight = new Semaphore(IN_FLIGHT);
    private final Object lock = new Object();
    private volatile ProcessCluster target;
    private boolean paused = true;
    private boolean producing;
    private volatile boolean closed;
    private long sequence;
    private Thread producerThread;
    private Thread consumerThread;

    Workload(String topic, int partitions) {
        this.topic = topic;
        this.partitions = partitions;
    }

    void start(ProcessCluster cluster) {
        target = cluster;
        producerThread = new Thread(this::produceLoop, "campaign-producer");
        consumerThread = new Thread(this::consumeLoop, "campaign-consumer");
        producerThread.start();
        consumerThread.start();
        resume();
    }

    /** Stops sending and returns once every send has its answer (acknowledged or failed). */
    void pause() {
        synchronized (lock) {
            paused = true;
            lock.notifyAll();
        }
        Waits.waitUntil("the producer to stop sending", () -> {
            synchronized (lock) {
                return !producing;
            }
        }, Duration.ofSeconds(120));
    }

    void resume() {
        synchronized (lock) {
            paused = false;
            lock.notifyAll();
        }
    }

    /** The producer and the consumer group move to {@code cluster} (call while paused). */
    void switchTo(ProcessCluster cluster) {
        log.info("[Campaign] producer and consumer group move to {}", cluster);
        target = cluster;
    }

    /** Records one value acknowledged outside the steady producer (a seed scenario's acks=1 records). */
    void recordAcknowledged(String value, String cluster) {
        acknowledged.put(value, cluster);
    }

    Map<String, String> acknowledged() {
        return acknowledged;
    }

    int failedSends() {
        return failedSends.size();
    }

    long consumed() {
        return consumed.get();
    }

    /** A new producer per writable period: a producer never outlives the cluster it was made for. */
    private void produceLoop() {
        while (!closed) {
            ProcessCluster cluster;
            synchronized (lock) {
                while (paused && !closed) {
                    try {
                        lock.wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                producing = true;
                cluster = target;
            }
            try (KafkaProducer<String, String> producer = producer(cluster)) {
                while (!closed && cluster == target && !isPaused()) {
                    String value = "v" + (sequence++);
                    int partition = (int) (sequence % partitions);
                    inFlight.acquire();
                    producer.send(new ProducerRecord<>(topic, partition, null, value), (metadata, error) -> {
                        inFlight.release();
                        if (error == null) {
                            acknowledged.put(value, cluster.name());
                        } else {
                            failedSends.add(value);
                        }
                    });
                    // the producer's pace, not a wait for state
                    Thread.sleep(SEND_INTERVAL_MS);
                }
                producer.flush();
                inFlight.acquire(IN_FLIGHT); // every callback has run
                inFlight.release(IN_FLIGHT);
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                // broad: whatever the producer failed with, a new one is made; the campaign's checks judge the data
                log.warn("[Campaign] producer on {} failed; a new one is made", cluster, e);
            } finally {
                synchronized (lock) {
                    producing = false;
                    lock.notifyAll();
                }
            }
        }
    }

    private boolean isPaused() {
        synchronized (lock) {
            return paused;
        }
    }

    private void consumeLoop() {
        while (!closed) {
            ProcessCluster cluster = target;
            try (KafkaConsumer<String, String> consumer = consumer(cluster)) {
                consumer.subscribe(List.of(topic));
                while (!closed && cluster == target) {
                    ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                    consumed.addAndGet(records.count());
                }
            } catch (RuntimeException e) {
                // broad: whatever the consumer failed with, a new one joins; the campaign's checks judge the data
                if (!closed) {
                    log.warn("[Campaign] consumer on {} failed; a new one joins", cluster, e);
                }
            }
        }
    }

    private static KafkaProducer<String, String> producer(ProcessCluster cluster) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 60_000);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 15_000);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        return new KafkaProducer<>(p);
    }

    private KafkaConsumer<String, String> consumer(ProcessCluster cluster) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        p.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        return new KafkaConsumer<>(p);
    }

    @Override
    public void close() throws InterruptedException {
        closed = true;
        synchronized (lock) {
            lock.notifyAll();
        }
        for (Thread t : new Thread[] {producerThread, consumerThread}) {
            if (t != null) {
                t.interrupt();
                t.join(TimeUnit.SECONDS.toMillis(30));
            }
        }
    }
}
