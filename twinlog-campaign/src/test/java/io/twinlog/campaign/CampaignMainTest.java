package io.twinlog.campaign;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
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
    void faultsByNameInAnyCase() {
        assertEquals(List.of(FaultKind.SEED_003, FaultKind.BROKER_KILL), CampaignMain.parseFaults("seed_003, BROKER_KILL"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CampaignMain.parseFaults("DISK_FULL"));
        assertTrue(e.getMessage().startsWith("--faults: unknown kind 'DISK_FULL'; kinds: [BROKER_KILL,"),
                e.getMessage());
    }
}
