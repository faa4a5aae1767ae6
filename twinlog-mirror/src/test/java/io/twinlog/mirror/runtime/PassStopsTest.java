package io.twinlog.mirror.runtime;

import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** A pass's stops are control flow: they name their partition and carry no stack trace (none is ever printed). */
@Timeout(10)
class PassStopsTest {
    private static final TopicPartition TP = new TopicPartition("orders", 3);

    @Test
    void eachStopNamesItsPartition() {
        assertEquals("the state record of orders-3 changed concurrently",
                new PassStops.ConcurrentRecordChange(TP).getMessage());
        assertEquals("the record of orders-3 is written before its next action",
                new PassStops.WriteFirst(TP).getMessage());
        assertEquals("the failover steps of orders-3 are queued", new PassStops.FailoverStepsQueued(TP).getMessage());
    }

    @Test
    void noStopCarriesAStackTraceOrCause() {
        for (Exception stop : List.of(new PassStops.ConcurrentRecordChange(TP), new PassStops.WriteFirst(TP),
                new PassStops.FailoverStepsQueued(TP))) {
            assertEquals(0, stop.getStackTrace().length, stop.getClass().getSimpleName() + " has a stack trace");
            assertNull(stop.getCause(), stop.getClass().getSimpleName());
        }
    }
}
