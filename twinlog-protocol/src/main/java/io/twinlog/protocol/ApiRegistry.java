package io.twinlog.protocol;

import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The APIs this broker serves: for each API key, the handler and the version range advertised in ApiVersions.
 * Built once at start-up and read-only afterwards, so it is shared by all handler threads without locking.
 */
public final class ApiRegistry {
    private final Map<ApiKeys, Registration> registrations;
    private final Map<Short, CustomRegistration> customRegistrations;

    private ApiRegistry(Map<ApiKeys, Registration> registrations, Map<Short, CustomRegistration> custom) {
        this.registrations = Collections.unmodifiableMap(new EnumMap<>(registrations));
        this.customRegistrations = Map.copyOf(custom);
    }

    /** A Twinlog API (an API key Kafka does not define), or null. */
    public CustomRegistration customRegistration(short apiKey) {
        return customRegistrations.get(apiKey);
    }

    public boolean isCustomApi(short apiKey) {
        return customRegistrations.containsKey(apiKey);
    }

    /** One served Twinlog API. */
    public record CustomRegistration(short apiKey, String name, short minVersion, short maxVersion,
                                     RequestHandler handler) {
    }

    public static Builder builder() {
        return new Builder();
    }

    public Registration registration(ApiKeys key) {
        return registrations.get(key);
    }

    public boolean supports(ApiKeys key, short version) {
        Registration r = registrations.get(key);
        return r != null && version >= r.minVersion && version <= r.maxVersion;
    }

    /** ApiVersions entries for every served API, sorted by key. */
    public List<ApiVersionsResponseData.ApiVersion> advertisedVersions() {
        List<ApiVersionsResponseData.ApiVersion> out = new ArrayList<>();
        for (Registration r : registrations.values()) {
            out.add(new ApiVersionsResponseData.ApiVersion().setApiKey(r.key.id)
                    .setMinVersion(r.minVersion).setMaxVersion(r.maxVersion));
        }
        customRegistrations.values().stream().sorted((a, b) -> Short.compare(a.apiKey(), b.apiKey()))
                .forEach(r -> out.add(new ApiVersionsResponseData.ApiVersion().setApiKey(r.apiKey())
                        .setMinVersion(r.minVersion()).setMaxVersion(r.maxVersion())));
        return out;
    }

    /** One served API. */
    public record Registration(ApiKeys key, short minVersion, short maxVersion, RequestHandler handler) {
    }

    public static final class Builder {
        private final Map<ApiKeys, Registration> registrations = new EnumMap<>(ApiKeys.class);
        private final Map<Short, CustomRegistration> custom = new HashMap<>();

        /** Registers a Twinlog API under a key Apache Kafka does not use. */
        public Builder addCustom(short apiKey, String name, short minVersion, short maxVersion, RequestHandler handler) {
            if (ApiKeys.hasId(apiKey)) {
                throw new IllegalArgumentException("API key " + apiKey + " belongs to Apache Kafka");
            }
            if (custom.put(apiKey, new CustomRegistration(apiKey, name, minVersion, maxVersion, handler)) != null) {
                throw new IllegalStateException("API key " + apiKey + " registered twice");
            }
            return this;
        }

        /**
         * Registers every stable version kafka-clients knows for this key: what a production Kafka 4.4 broker
         * advertises (unstable versions, such as InitProducerId v6, only with {@code unstable.api.versions.enable}).
         */
        public Builder add(ApiKeys key, RequestHandler handler) {
            return add(key, key.oldestVersion(), key.latestVersion(false), handler);
        }

        public Builder add(ApiKeys key, short minVersion, short maxVersion, RequestHandler handler) {
            if (registrations.containsKey(key)) {
                throw new IllegalStateException("API " + key + " registered twice");
            }
            registrations.put(key, new Registration(key, minVersion, maxVersion, handler));
            return this;
        }

        public ApiRegistry build() {
            return new ApiRegistry(registrations, custom);
        }
    }
}
