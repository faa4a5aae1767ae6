package io.twinlog.common;

import org.apache.kafka.common.config.ConfigDef;

import java.util.Comparator;
import java.util.Locale;

/**
 * Renders {@link BrokerConfig#CONFIG_DEF} as Markdown: the text of {@code docs/configuration.md}, which a test keeps
 * equal to the definitions (so the documented keys, defaults and bounds are the ones the broker enforces).
 */
public final class BrokerConfigDocs {
    private BrokerConfigDocs() {
    }

    public static String markdown() {
        StringBuilder out = new StringBuilder();
        out.append("# Broker configuration\n\n")
                .append("<!-- Generated from BrokerConfig.CONFIG_DEF by BrokerConfigDocs; do not edit by hand. ")
                .append("BrokerConfigDocsTest fails when this file and the definitions differ and writes the ")
                .append("current text to twinlog-common/target/configuration.md. -->\n\n")
                .append("Every key the broker reads from its properties file (`config/server.properties`), with its ")
                .append("type, default, valid values and importance. Keys with Kafka's name have Kafka's meaning ")
                .append("and Kafka's documentation; an invalid value stops the broker at start-up with one line ")
                .append("naming the key, the value and why.\n\n")
                .append("Kafka's group coordinator runs inside the broker and reads its own keys (`offsets.*`, ")
                .append("`group.*`, such as `offsets.topic.replication.factor`) with Kafka's names, defaults and ")
                .append("checks, and so do Kafka's share-group classes (KIP-932: `group.share.*`, ")
                .append("`share.coordinator.*`, `share.fetch.purgatory.purge.interval.requests`), which are used ")
                .append("only once the `share.version` feature is finalized at 1 (docs/status.md); see Kafka's ")
                .append("broker configuration reference for them. Any other key is ignored and named in one WARN ")
                .append("at start-up.\n\n")
                .append("Per group, the `consumer.*` and `share.*` group configs (KIP-848, KIP-932) override the ")
                .append("broker's `group.consumer.*` and `group.share.*` keys for that group; they are set live ")
                .append("with `kafka-configs --entity-type groups`, not in this file (docs/consumer-groups.md, ")
                .append("\"Group configs\").\n");
        BrokerConfig.CONFIG_DEF.configKeys().values().stream()
                .sorted(Comparator.comparing(key -> key.name))
                .forEach(key -> appendKey(out, key));
        return out.toString();
    }

    private static void appendKey(StringBuilder out, ConfigDef.ConfigKey key) {
        out.append("\n### `").append(key.name).append("`\n\n")
                .append(key.documentation.strip().replaceAll("\\s*\\n\\s*", " ")).append("\n\n")
                .append("| Type | Default | Valid values | Importance |\n")
                .append("|---|---|---|---|\n")
                .append("| ").append(key.type.name().toLowerCase(Locale.ROOT))
                .append(" | ").append(defaultText(key))
                .append(" | ").append(cell(key.validator == null ? "" : key.validator.toString()))
                .append(" | ").append(key.importance.name().toLowerCase(Locale.ROOT)).append(" |\n");
    }

    private static String defaultText(ConfigDef.ConfigKey key) {
        if (!key.hasDefault() || key.defaultValue == null) {
            return "(none)";
        }
        String text = ConfigDef.convertToString(key.defaultValue, key.type);
        return text.isEmpty() ? "(empty)" : cell(text);
    }

    private static String cell(String text) {
        return text.isEmpty() ? "" : "`" + text.replace("|", "\\|") + "`";
    }
}
