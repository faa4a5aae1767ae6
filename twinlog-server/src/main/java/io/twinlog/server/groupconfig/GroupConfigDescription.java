package io.twinlog.server.groupconfig;

import io.twinlog.server.metadata.TopicConfigs;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.message.DescribeConfigsRequestData.DescribeConfigsResource;
import org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsResourceResult;
import org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsResult;
import org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsSynonym;
import org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigSource;
import org.apache.kafka.coordinator.group.GroupConfig;
import org.apache.kafka.server.ConfigHelperUtils;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * DescribeConfigs of a group as Kafka 4.4 answers it: every non-internal group config (internal ones when set) with
 * its effective value; source {@code GROUP_CONFIG} when the group sets it, else the broker's synonym's level
 * ({@code group.share.heartbeat.interval.ms} in server.properties: {@code STATIC_BROKER_CONFIG}) or the default;
 * synonyms the group's own value, then the broker key's levels, else the group key's default. Unlike Kafka, the keys
 * Twinlog refuses ({@link GroupConfigPolicy#unsupported}) are answered read-only, with their defaults.
 */
public final class GroupConfigDescription {
    private GroupConfigDescription() {
    }

    /**
     * @param overrides      what the group sets
     * @param brokerSynonyms a broker key's synonyms at each level it is set, highest first, as broker describes list
     *                       them
     */
    public static DescribeConfigsResult describe(DescribeConfigsResource resource, GroupConfigPolicy policy,
                                                 Map<String, String> overrides, boolean includeSynonyms,
                                                 boolean includeDocumentation,
                                                 Function<String, List<DescribeConfigsSynonym>> brokerSynonyms) {
        GroupConfig config = policy.effective(overrides);
        return ConfigHelperUtils.createResponseConfig(resource, config, config.originals().keySet(),
                (name, value) -> entry(config, name, value, overrides, includeSynonyms, includeDocumentation,
                        brokerSynonyms));
    }

    private static DescribeConfigsResourceResult entry(GroupConfig config, String name, Object value,
                                                       Map<String, String> overrides, boolean includeSynonyms,
                                                       boolean includeDocumentation,
                                                       Function<String, List<DescribeConfigsSynonym>> brokerSynonyms) {
        Optional<ConfigDef.Type> type = GroupConfig.configType(name);
        // Kafka hides the value of a key without a known type, as possibly secret; every group key has one
        boolean sensitive = type.isEmpty() || type.get() == ConfigDef.Type.PASSWORD;
        String shown = sensitive ? null : ConfigDef.convertToString(value, type.get());
        List<DescribeConfigsSynonym> synonyms = new ArrayList<>();
        if (overrides.containsKey(name)) {
            synonyms.add(new DescribeConfigsSynonym().setName(name).setValue(shown)
                    .setSource(ConfigSource.GROUP_CONFIG.id()));
        }
        Optional<String> brokerKey = GroupConfig.brokerSynonym(name);
        if (brokerKey.isPresent()) {
            brokerSynonyms.apply(brokerKey.get()).forEach(s -> synonyms.add(s.duplicate()
                    .setValue(sensitive ? null : s.value())));
        } else {
            Object defaultValue = GroupConfig.CONFIG_DEF.defaultValues().get(name);
            if (defaultValue != null) {
                synonyms.add(new DescribeConfigsSynonym().setName(name)
                        .setValue(sensitive ? null : ConfigDef.convertToString(defaultValue, type.get()))
                        .setSource(ConfigSource.DEFAULT_CONFIG.id()));
            }
        }
        byte source = synonyms.isEmpty() ? ConfigSource.DEFAULT_CONFIG.id() : synonyms.get(0).source();
        return new DescribeConfigsResourceResult()
                .setName(name)
                .setValue(shown)
                .setConfigSource(source)
                .setIsSensitive(sensitive)
                .setReadOnly(GroupConfigPolicy.unsupported(name).isPresent())
                .setSynonyms(includeSynonyms ? synonyms : new ArrayList<>())
                .setDocumentation(includeDocumentation ? config.documentationOf(name) : null)
                .setConfigType(type.map(t -> TopicConfigs.configType(t).id()).orElse((byte) 0));
    }
}
