package io.twinlog.common;

import org.apache.kafka.common.config.ConfigDef;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The rendering of the broker's own keys and of hosted ones. That docs/configuration.md is this rendering is checked
 * by ConfigurationDocTest in twinlog-server, which has the hosted coordinators' definitions.
 */
@Timeout(10)
class BrokerConfigDocsTest {

    @Test
    void everyKeyHasItsSection() {
        String doc = BrokerConfigDocs.markdown(new ConfigDef(), Map.of());
        for (String name : BrokerConfig.CONFIG_DEF.names()) {
            assertTrue(doc.contains("\n### `" + name + "`\n"), name);
        }
    }

    @Test
    void hostedKeysFollowWithTheBrokersDefaultBesideKafkas() {
        ConfigDef hosted = new ConfigDef()
                .define("hosted.threads", ConfigDef.Type.INT, 4, ConfigDef.Importance.LOW, "Threads.")
                .define("hosted.size", ConfigDef.Type.INT, 10, ConfigDef.Importance.LOW, "Size.")
                .defineInternal("hosted.internal", ConfigDef.Type.INT, 1, ConfigDef.Importance.LOW)
                // also the broker's own key: documented once, with the broker's definition
                .define(BrokerConfig.BROKER_ID, ConfigDef.Type.INT, 7, ConfigDef.Importance.LOW, "Hosted id.");
        String doc = BrokerConfigDocs.markdown(hosted, Map.of("hosted.threads", "1"));
        String section = doc.substring(doc.indexOf("\n## Keys of Kafka's hosted coordinators\n"));
        assertTrue(section.contains("### `hosted.threads`\n\nThreads.\n\n| Type | Default | Valid values | Importance |\n"
                + "|---|---|---|---|\n| int | `1` (Kafka's: `4`) |  | low |\n"), section);
        assertTrue(section.contains("### `hosted.size`\n\nSize.\n\n| Type | Default | Valid values | Importance |\n"
                + "|---|---|---|---|\n| int | `10` |  | low |\n"), section);
        assertFalse(section.contains("hosted.internal"), section);
        assertFalse(section.contains("### `" + BrokerConfig.BROKER_ID + "`"), section);
    }
}
