package io.twinlog.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

@Timeout(10)
class QuietCloseTest {

    @Test
    void aFailingPartDoesNotStopTheStepsAfterIt() {
        List<String> closed = new ArrayList<>();
        QuietClose.close("first", () -> closed.add("first"));
        QuietClose.close("failing", () -> {
            closed.add("failing");
            throw new IllegalStateException("cannot close");
        });
        QuietClose.close("checked", () -> {
            closed.add("checked");
            throw new InterruptedException("interrupted");
        });
        QuietClose.close("never built", null);
        QuietClose.close("last", () -> closed.add("last"));
        assertEquals(List.of("first", "failing", "checked", "last"), closed);
        Thread.interrupted(); // clear nothing left behind for the next test
    }
}
