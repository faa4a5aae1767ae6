package io.twinlog.campaign;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.LocalDate;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(10)
class CampaignMainTest {
    @Test
    void durationsInTheScriptsUnitsOrIso() {
        assertEquals(Duration.ofSeconds(90), CampaignMain.parseDuration("90s"));
        assertEquals(Duration.ofMinutes(10), CampaignMain.parseDuration("10m"));
        assertEquals(Duration.ofHours(2), CampaignMain.parseDuration("2h"));
        assertEquals(Duration.ofMinutes(5), CampaignMain.parseDuration("PT5M"));
    }

    @Test
    void aBadDurationSaysWhatItTakes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CampaignMain.parseDuration("ten minutes"));
        assertEquals("--duration takes 90s, 10m, 2h or PT10M, not 'ten minutes'", e.getMessage());
    }

    @Test
    void theTotalsAreARowOfTheResultsTable() {
        CampaignStats stats = new CampaignStats();
        stats.rounds = 3;
        stats.countFault(FaultKind.BROKER_KILL);
        stats.countFault(FaultKind.TWO_AT_ONCE);
        stats.countFault(FaultKind.BROKER_KILL);
        stats.countFault(FaultKind.CLUSTER_PARTITION);
        stats.acknowledged = 10_077;
        stats.quarantined = 417;
        assertEquals("| 2026-12-03 | 7 | 150 s | 3 | BROKER_KILL 2, CLUSTER_PARTITION 1, TWO_AT_ONCE 1 | 10,077 | 0 | 0 "
                + "| 0 | passed (417 quarantined, 0 operator restarts) |",
                stats.tableRow(LocalDate.of(2026, 12, 3), 7, Duration.ofSeconds(150), "passed"));
        assertTrue(stats.tableRow(LocalDate.of(2026, 12, 3), 7, Duration.ofHours(2), "passed").contains(" | 2 h | "));
    }

    @Test
    void aKindTheMachineCannotRunIsLeftOutWithTheReason() {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        List<FaultKind> kinds = CampaignMain.availableKinds(new PrintStream(printed, true, StandardCharsets.UTF_8));
        assertTrue(kinds.contains(FaultKind.BROKER_KILL), kinds.toString());
        for (FaultKind kind : FaultKind.values()) {
            assertEquals(FaultCampaign.unavailableReason(kind).isEmpty(), kinds.contains(kind), kind.name());
        }
        assertEquals(kinds.size() == FaultKind.values().length, printed.size() == 0, printed.toString());
    }

    @Test
    void faultsByNameInAnyCase() {
        assertEquals(List.of(FaultKind.SEED_003, FaultKind.BROKER_KILL), CampaignMain.parseFaults("seed_003, BROKER_KILL"));
        assertEquals(List.of(FaultKind.DISK_FULL, FaultKind.CLOCK_STEP, FaultKind.TWO_AT_ONCE),
                CampaignMain.parseFaults("disk_full,clock_step,two_at_once"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CampaignMain.parseFaults("DISK_FILLS"));
        assertTrue(e.getMessage().startsWith("--faults: unknown kind 'DISK_FILLS'; kinds: [BROKER_KILL,"),
                e.getMessage());
    }
}
