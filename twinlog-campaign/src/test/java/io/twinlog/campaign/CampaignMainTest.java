package io.twinlog.campaign;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

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
}
