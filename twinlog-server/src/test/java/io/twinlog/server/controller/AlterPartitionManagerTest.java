package io.twinlog.server.controller;

import io.twinlog.controller.decisions.IsrChange;
import io.twinlog.controller.metadata.MetadataImage;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ISR changes go to the controller in batches: one request outstanding, everything proposed meanwhile in the next
 * one; each partition is told once when its change ends, whatever happened to the others.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class AlterPartitionManagerTest {
    private static final long WAIT_MS = 10_000;
    private static final int PARTITIONS = 500;

    private final List<List<IsrChange>> requests = new CopyOnWriteArrayList<>();
    private final Map<TopicPartition, Integer> completions = new ConcurrentHashMap<>();
    private AlterPartitionManager manager;

    private final List<TopicPartition> awaitedInMetadata = new CopyOnWriteArrayList<>();

    /** Starts the manager against a fake controller; accepted changes are "applied" at once. */
    private void start(Function<List<IsrChange>, Map<TopicPartition, Errors>> controller) {
        manager = new AlterPartitionManager(0, () -> MetadataImage.EMPTY, batch -> {
            requests.add(batch);
            return controller.apply(batch);
        }, accepted -> {
            awaitedInMetadata.add(accepted.partition());
            return CompletableFuture.completedFuture(null);
        });
        manager.start();
    }

    @AfterEach
    void close() throws InterruptedException {
        if (manager != null) {
            manager.close();
        }
    }

    private void submitAll(int count) {
        for (int p = 0; p < count; p++) {
            TopicPartition tp = new TopicPartition("t", p);
            manager.submit(new IsrChange(tp, 1, 1, List.of(0, p % 2 == 0 ? 1 : 2)),
                    () -> completions.merge(tp, 1, Integer::sum));
        }
    }

    private static Map<TopicPartition, Errors> allAccepted(List<IsrChange> batch) {
        Map<TopicPartition, Errors> out = new HashMap<>();
        batch.forEach(c -> out.put(c.partition(), Errors.NONE));
        return out;
    }

    @Test
    void changesProposedWhileARequestIsOutstandingGoTogetherInTheNext() throws Exception {
        CountDownLatch firstSent = new CountDownLatch(1);
        CountDownLatch releaseFirst = new CountDownLatch(1);
        start(batch -> {
            if (requests.size() == 1) {
                firstSent.countDown();
                await(releaseFirst);
            }
            return allAccepted(batch);
        });
        manager.submit(new IsrChange(new TopicPartition("first", 0), 1, 1, List.of(0)),
                () -> completions.merge(new TopicPartition("first", 0), 1, Integer::sum));
        assertTrue(firstSent.await(WAIT_MS, TimeUnit.MILLISECONDS));

        submitAll(PARTITIONS); // many leaders shrink or expand their ISRs while the first request is out
        releaseFirst.countDown();

        waitUntil("every change completed", () -> completions.size() == PARTITIONS + 1);
        assertEquals(2, requests.size(), "one request outstanding, then everything queued meanwhile at once");
        assertEquals(PARTITIONS, requests.get(1).size());
        assertTrue(completions.values().stream().allMatch(n -> n == 1), "each partition told exactly once");
        assertEquals(requests.size(), manager.requestsSent());
    }

    @Test
    void anErrorForOnePartitionDoesNotFailTheOthers() {
        TopicPartition fenced = new TopicPartition("t", 7);
        TopicPartition unanswered = new TopicPartition("t", 8);
        start(batch -> {
            Map<TopicPartition, Errors> out = allAccepted(batch);
            out.put(fenced, Errors.FENCED_LEADER_EPOCH);
            out.remove(unanswered);
            return out;
        });
        submitAll(20);
        waitUntil("every change completed", () -> completions.size() == 20);
        assertEquals(18, awaitedInMetadata.size(), "the accepted changes wait for the metadata, the others not");
        assertTrue(!awaitedInMetadata.contains(fenced) && !awaitedInMetadata.contains(unanswered));
        assertTrue(completions.values().stream().allMatch(n -> n == 1), "each partition told exactly once");
    }

    @Test
    void aFailedRequestCompletesEveryChangeOfItsBatchAndTheNextBatchStillGoesOut() {
        start(batch -> {
            if (requests.size() == 1) {
                throw new UncheckedIo(new IOException("controller unreachable"));
            }
            return allAccepted(batch);
        });
        submitAll(10);
        waitUntil("every change completed", () -> completions.size() == 10);
        manager.submit(new IsrChange(new TopicPartition("later", 0), 1, 1, List.of(0)),
                () -> completions.merge(new TopicPartition("later", 0), 1, Integer::sum));
        waitUntil("the later change completed", () -> completions.containsKey(new TopicPartition("later", 0)));
        assertTrue(requests.size() >= 2);
        assertEquals(Set.of(new TopicPartition("later", 0)),
                Set.copyOf(requests.get(requests.size() - 1).stream().map(IsrChange::partition).toList()));
    }

    /** A checked failure through the test's Function-shaped controller. */
    private static final class UncheckedIo extends RuntimeException {
        UncheckedIo(IOException cause) {
            super(cause);
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            assertTrue(latch.await(WAIT_MS, TimeUnit.MILLISECONDS));
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    private static void waitUntil(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("Timed out after " + WAIT_MS + " ms waiting until " + what);
            }
            try {
                Thread.sleep(5); // poll interval of a deadline-bounded wait, not a wait for state
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }
}
