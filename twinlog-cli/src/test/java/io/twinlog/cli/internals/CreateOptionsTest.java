package io.twinlog.cli.internals;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** {@link CreateOptions}: the settings as mirror configs, and which option is reported first when misplaced. */
@Timeout(60)
class CreateOptionsTest {
    private final CreateOptions options = new CreateOptions();

    @Test
    void settingsBecomeTheirConfigsWithPatternsTrimmedAndEmptyOnesDropped() {
        options.groupsInclude = List.of(" g1 ", "", "g2");
        options.groupsExclude = List.of("");
        options.groupsSyncIntervalMs = 1000L;
        options.replicationThrottledRate = 5L;
        assertEquals(Map.of(CreateMirror.GROUPS_INCLUDE, "g1,g2", CreateMirror.GROUPS_EXCLUDE, "",
                CreateMirror.GROUPS_SYNC_INTERVAL_MS, "1000", CreateMirror.REPLICATION_THROTTLED_RATE, "5"),
                options.settingConfigs());
        assertEquals(Map.of(), new CreateOptions().settingConfigs());
    }

    @Test
    void aSettingMustBePositive() {
        options.groupsSyncIntervalMs = 0L;
        assertEquals("--groups-sync-interval-ms must be positive, but got 0",
                assertThrows(CommandException.class, options::settingConfigs).getMessage());
        options.groupsSyncIntervalMs = null;
        options.replicationThrottledRate = -5L;
        assertEquals("--replication-throttled-rate must be positive, but got -5",
                assertThrows(CommandException.class, options::settingConfigs).getMessage());
    }

    @Test
    void theFirstOptionGivenIsNamedInTheHelpsOrder() {
        assertEquals(Optional.empty(), options.firstGiven());
        options.replicationThrottledRate = 1L;
        assertEquals(Optional.of("--replication-throttled-rate"), options.firstGiven());
        options.sourceConfigFile = Path.of("source.properties");
        assertEquals(Optional.of("--source-config-file"), options.firstGiven());
        options.sourceBootstrapServer = "source:9092";
        assertEquals(Optional.of("--source-bootstrap-server"), options.firstGiven());
    }
}
