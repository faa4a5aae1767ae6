package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorException;
import io.twinlog.protocol.AdminDeadline;
import io.twinlog.testkit.MirrorSteps;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The mirror topic APIs have deadlines, as the other admin requests (issue 25, point 7; decisions 60 and 69): a
 * resume still queued for the broker's mirror admin thread when its client's default request timeout passes is
 * answered REQUEST_TIMED_OUT when the thread takes it, and is not executed: the topic stays paused.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class MirrorTopicDeadlinesTest {

    @Test
    void aResumeQueuedPastItsDeadlineIsAnsweredTimedOutAndNotExecuted() throws Exception {
        try (TestCluster source = TestCluster.builder().brokers(1).build().start();
             // a session that outlives the blackhole below: a read waits for its answer up to 40 s (two thirds)
             TestCluster destination = TestCluster.builder().brokers(1).withFaultProxies()
                     .brokerProperty("zookeeper.session.timeout.ms", "60000").build().start();
             Admin sourceAdmin = source.admin();
             MirrorAdmin setup = MirrorAdmin.create(destination.bootstrapServers(), Duration.ofSeconds(90));
             MirrorAdmin pauser = MirrorAdmin.create(destination.bootstrapServers(), Duration.ofSeconds(90));
             MirrorAdmin resumer = MirrorAdmin.create(destination.bootstrapServers(), Duration.ofSeconds(90))) {
            sourceAdmin.createTopics(List.of(new NewTopic("orders", 1, (short) 1))).all().get();
            try (KafkaProducer<byte[], byte[]> producer = source.producer(Map.of())) {
                producer.send(new ProducerRecord<>("orders", "o-1".getBytes(StandardCharsets.UTF_8))).get();
            }
            MirrorSteps.startMirroring(setup, "m", source, "orders");
            TopicPartition orders = new TopicPartition("orders", 0);
            Waits.waitUntil("orders mirrored", () -> destination.broker(0).logStore().log(orders)
                    .map(l -> l.logEndOffset() == 1).orElse(false));

            // the mirror admin thread waits on ZooKeeper with a pause; a resume queues behind it
            destination.blackholeZooKeeper(0);
            CompletableFuture<Object> pause = call(() -> pauser.pauseMirrorTopics("m", List.of("orders"), List.of()));
            Waits.waitUntil("the mirror admin thread waits on ZooKeeper with the pause",
                    MirrorTopicDeadlinesTest::adminThreadSetsADesiredState);
            long resumeSent = System.nanoTime();
            CompletableFuture<Object> resume = call(() -> resumer.resumeMirrorTopics("m", List.of("orders"),
                    List.of()));
            Waits.waitUntil("the resume's deadline passed while it was queued", () -> TimeUnit.NANOSECONDS
                    .toMillis(System.nanoTime() - resumeSent) > AdminDeadline.DEFAULT_TIMEOUT_MS + 1_000,
                    Duration.ofSeconds(60));
            assertTrue(!resume.isDone() && !pause.isDone(), "both wait for the admin thread: " + pause + " "
                    + resume);
            destination.healZooKeeper(0);

            assertEquals(Map.of(), pause.get(90, TimeUnit.SECONDS), "the pause that held the thread is executed");
            Object resumed = resume.get(90, TimeUnit.SECONDS);
            assertTrue(resumed instanceof MirrorException, "the late resume is refused: " + resumed);
            MirrorException refused = (MirrorException) resumed;
            assertEquals(Errors.REQUEST_TIMED_OUT.code(), refused.errorCode(), refused.toString());
            assertTrue(refused.getMessage().contains("not executed"), refused.getMessage());
            assertEquals("PAUSED", setup.describeClusterMirrors(List.of("m")).get("m").topics().get("orders")
                    .desiredState(), "a resume whose client gave up was executed later");
        }
    }

    /** The destination's mirror admin thread (it runs in this JVM) is setting a desired state. */
    private static boolean adminThreadSetsADesiredState() {
        return Thread.getAllStackTraces().entrySet().stream().anyMatch(e -> e.getKey().getName()
                .equals("twinlog-mirror-admin") && Arrays.stream(e.getValue()).anyMatch(f -> f.getClassName()
                .endsWith("MirrorTopicHandlers") && f.getMethodName().equals("setDesiredNow")));
    }

    /** A call on another thread; its outcome, or the exception it threw. */
    private static CompletableFuture<Object> call(IoCall call) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return call.run();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (MirrorException e) {
                return e;
            }
        });
    }

    @FunctionalInterface
    private interface IoCall {
        Object run() throws IOException;
    }
}
