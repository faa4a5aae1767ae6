package io.twinlog.common;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** docs/configuration.md is the rendering of the definitions the broker enforces, not a copy that drifts. */
@Timeout(10)
class BrokerConfigDocsTest {
    private static final Path COMMITTED = Path.of("..", "docs", "configuration.md");
    private static final Path CURRENT = Path.of("target", "configuration.md");

    @Test
    void committedDocMatchesTheDefinitions() throws IOException {
        String generated = BrokerConfigDocs.markdown();
        Files.createDirectories(CURRENT.getParent());
        Files.writeString(CURRENT, generated, StandardCharsets.UTF_8);
        assertTrue(Files.exists(COMMITTED), COMMITTED.toAbsolutePath() + " is missing: copy " + CURRENT.toAbsolutePath());
        assertEquals(generated, Files.readString(COMMITTED, StandardCharsets.UTF_8),
                "docs/configuration.md differs from BrokerConfig.CONFIG_DEF: copy " + CURRENT.toAbsolutePath()
                        + " over it");
    }

    @Test
    void everyKeyHasItsSection() {
        String doc = BrokerConfigDocs.markdown();
        for (String name : BrokerConfig.CONFIG_DEF.names()) {
            assertTrue(doc.contains("\n### `" + name + "`\n"), name);
        }
    }
}
