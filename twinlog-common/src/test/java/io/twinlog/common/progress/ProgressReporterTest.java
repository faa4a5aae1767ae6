package io.twinlog.common.progress;

import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.event.EventRecordingLogger;
import org.slf4j.event.Level;
import org.slf4j.event.SubstituteLoggingEvent;
import org.slf4j.helpers.MessageFormatter;
import org.slf4j.helpers.SubstituteLogger;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentLinkedQueue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The progress line's format, and the reporter's rate limit, rate and time left on a fake clock. */
@Timeout(10)
class ProgressReporterTest {
    private final MockTime time = new MockTime();
    private final ConcurrentLinkedQueue<SubstituteLoggingEvent> events = new ConcurrentLinkedQueue<>();
    private final EventRecordingLogger log = new EventRecordingLogger(
            new SubstituteLogger("test", events, false), events);

    @Test
    void formatsPercentCountsRateAndTimeLeft() {
        Progress p = new Progress("records", 4_520, 10_000, 1_203.4, OptionalLong.of(5_000), 3_000);
        assertEquals("45.2% (4,520 of 10,000 records), 1,203 records/s, about 5 s left", p.format());
    }

    @Test
    void saysWhenTheTimeLeftIsUnknownAndWhenDone() {
        assertEquals("12.0% (1,200 of 10,000 records), 2.5 records/s, time left unknown (the work left is not "
                + "shrinking)", new Progress("records", 1_200, 10_000, 2.5, OptionalLong.empty(), 1).format());
        assertEquals("100.0% (10 of 10 batches), 0 batches/s, done in 850 ms",
                new Progress("batches", 10, 10, 0, OptionalLong.of(0), 850).format());
        assertEquals(100.0, new Progress("records", 0, 0, 0, OptionalLong.of(0), 0).percent());
    }

    @Test
    void durationsAndSizesForPeople() {
        assertEquals("999 ms", Progress.formatDuration(999));
        assertEquals("42 s", Progress.formatDuration(42_999));
        assertEquals("3 min 20 s", Progress.formatDuration(200_000));
        assertEquals("2 h 05 min", Progress.formatDuration(2 * 3_600_000 + 5 * 60_000 + 59_000));
        assertEquals("512 B", Progress.formatBytes(512));
        assertEquals("3.4 MB", Progress.formatBytes(3_565_158));
    }

    @Test
    void logsAtMostOncePerIntervalAndNothingForShortWork() {
        ProgressReporter r = new ProgressReporter(log, "[Mirror m1 t-0] catching up", "records", time, 30_000);
        assertFalse(r.update(0, 1_000));
        time.sleep(29_999);
        assertFalse(r.update(100, 1_000));
        time.sleep(1);
        assertTrue(r.update(200, 1_000));
        time.sleep(10_000);
        assertFalse(r.update(300, 1_000), "within 30 s of the last line");
        time.sleep(20_000);
        assertTrue(r.update(400, 1_000));
        assertEquals(List.of(
                "[Mirror m1 t-0] catching up: 20.0% (200 of 1,000 records), 6.7 records/s, about 2 min 00 s left",
                "[Mirror m1 t-0] catching up: 40.0% (400 of 1,000 records), 6.7 records/s, about 1 min 30 s left"),
                lines());

        ProgressReporter quick = new ProgressReporter(log, "quick", "records", time, 30_000);
        quick.update(0, 10);
        time.sleep(5_000);
        quick.update(10, 10);
        quick.finish("caught up");
        assertFalse(quick.reported());
        assertEquals(2, lines().size(), "work done within the first interval logs nothing");
    }

    @Test
    void countsFromTheFirstPositionAndFollowsAMovingTarget() {
        ProgressReporter r = new ProgressReporter(log, "re-mirroring", "records", time, 30_000);
        r.update(1_000_000, 1_100_000); // after a truncation: 100,000 records to copy again
        time.sleep(10_000);
        r.update(1_050_000, 1_120_000); // copied 50,000 while the source grew by 20,000
        Progress p = r.snapshot();
        assertEquals(50_000, p.done());
        assertEquals(120_000, p.total());
        assertEquals(5_000.0, p.perSecond(), 0.01);
        // the work left shrank by 30,000 in 10 s: 70,000 left take about 23 s
        assertEquals(OptionalLong.of(23_333), p.remainingMs());

        time.sleep(10_000);
        r.update(1_070_000, 1_200_000); // the source outran the copy: more work left than at the start
        assertEquals(OptionalLong.empty(), r.snapshot().remainingMs());
    }

    @Test
    void finishLogsOnceAfterReportedWork() {
        ProgressReporter r = new ProgressReporter(log, "[Partition t-0 broker=2] catching up with leader 1",
                "records", time, 30_000);
        r.update(0, 10_000);
        time.sleep(30_000);
        r.update(5_000, 10_000);
        time.sleep(30_000);
        r.update(10_000, 10_000);
        r.finish("caught up, in the ISR soon");
        r.finish("again");
        time.sleep(60_000);
        assertFalse(r.update(10_000, 10_000), "nothing after the end");
        List<String> lines = lines();
        assertEquals(3, lines.size(), String.valueOf(lines));
        assertEquals("[Partition t-0 broker=2] catching up with leader 1: caught up, in the ISR soon "
                + "(10,000 records in 1 min 00 s)", lines.get(2));
        assertTrue(lines.get(1).endsWith("done in 1 min 00 s"), lines.get(1));
    }

    private List<String> lines() {
        List<String> out = new ArrayList<>();
        for (SubstituteLoggingEvent e : events) {
            assertEquals(Level.INFO, e.getLevel());
            out.add(MessageFormatter.arrayFormat(e.getMessage(), e.getArgumentArray()).getMessage());
        }
        return out;
    }
}
