package io.twinlog.replication;

import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The ISR check goes over every partition, whatever fails, and fails once, naming the first failure. */
@Timeout(60)
class IsrExpirationTest {
    @Test
    void everyPartitionIsCheckedAndTheRunFailsWithTheFirstFailure() {
        List<Integer> checked = new ArrayList<>();
        IllegalStateException first = new IllegalStateException("first");
        IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> IsrExpiration.checkEach(
                List.of(0, 1, 2, 3), p -> {
                    checked.add(p);
                    if (p == 1) {
                        throw first;
                    }
                    if (p == 3) {
                        throw new IllegalArgumentException("second");
                    }
                }, p -> new TopicPartition("t", p)));
        assertEquals(List.of(0, 1, 2, 3), checked);
        assertSame(first, thrown.getCause());
        assertEquals("The ISR check of 2 partitions failed, the first of them t-1", thrown.getMessage());
    }

    @Test
    void aRunWithoutFailuresPasses() {
        List<Integer> checked = new ArrayList<>();
        IsrExpiration.checkEach(List.of(4, 5), checked::add, p -> new TopicPartition("t", p));
        assertEquals(List.of(4, 5), checked);
    }
}
