package io.twinlog.common;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** When a repeated warning is written, one rule at a time. */
@Timeout(10)
class RepeatedWarningTest {
    private static final long INTERVAL_MS = 60_000;
    private final RepeatedWarning warning = new RepeatedWarning(INTERVAL_MS);

    @Test
    void theFirstOccurrenceIsWrittenAndRepeatsInTheSameMillisecondAreNot() {
        assertEquals(OptionalLong.of(0), warning.onOccurrence(List.of(3, 2), 1_000));
        for (int i = 0; i < 10; i++) {
            assertEquals(OptionalLong.empty(), warning.onOccurrence(List.of(3, 2), 1_000));
        }
    }

    @Test
    void aRepeatIsWrittenAgainAfterTheIntervalWithTheCountLeftOut() {
        warning.onOccurrence(List.of(3, 2), 1_000);
        warning.onOccurrence(List.of(3, 2), 2_000);
        warning.onOccurrence(List.of(3, 2), 1_000 + INTERVAL_MS - 1);
        assertEquals(OptionalLong.of(2), warning.onOccurrence(List.of(3, 2), 1_000 + INTERVAL_MS));
        assertEquals(OptionalLong.empty(), warning.onOccurrence(List.of(3, 2), 1_000 + INTERVAL_MS));
    }

    @Test
    void aChangedStateIsWrittenAtOnceWithTheRepeatsOfTheOldOne() {
        warning.onOccurrence(List.of(3, 2), 1_000);
        warning.onOccurrence(List.of(3, 2), 1_001);
        assertEquals(OptionalLong.of(1), warning.onOccurrence(List.of(3, 1), 1_002), "a broker fewer");
        assertEquals(OptionalLong.of(0), warning.onOccurrence(List.of(3, 2), 1_003), "and back");
    }

    @Test
    void afterAResetTheNextOccurrenceIsWrittenAtOnce() {
        warning.onOccurrence(List.of(3, 2), 1_000);
        warning.reset();
        assertEquals(OptionalLong.of(0), warning.onOccurrence(List.of(3, 2), 1_001));
    }

    @Test
    void theIntervalMustBePositive() {
        assertThrows(IllegalArgumentException.class, () -> new RepeatedWarning(0));
    }
}
