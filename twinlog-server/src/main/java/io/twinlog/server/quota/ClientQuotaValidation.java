package io.twinlog.server.quota;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.server.config.QuotaConfig;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The rules of AlterClientQuotas, with Apache Kafka 4.4's error codes and messages (its controller's checks, as
 * {@code kafka-configs} users see them): which entities may carry quotas, which keys each may set, which values.
 * Every error is INVALID_REQUEST. Pure: no state, no I/O but the name lookup Kafka does for an ip entity.
 */
public final class ClientQuotaValidation {
    private static final Set<String> ENTITY_TYPES = Set.of(ClientQuotaEntity.USER, ClientQuotaEntity.CLIENT_ID,
            ClientQuotaEntity.IP);
    /** An integral quota's value may be off by this much from a whole number (a double went over the wire). */
    private static final double FRACTION_TOLERANCE = 1e-6;

    private ClientQuotaValidation() {
    }

    /** One entity's valid change: key → new value, null to remove. */
    public record Change(ClientQuotaEntity entity, Map<String, Double> values) {
    }

    /**
     * Sorts {@code alterations} into the valid changes and the errors, one result per entity. An entity named twice,
     * or a key named twice for one entity, is refused as a whole (Kafka writes nothing for it).
     */
    public static Map<ClientQuotaEntity, ApiError> validate(List<ClientQuotaAlteration> alterations,
                                                             Map<ClientQuotaEntity, Change> valid) {
        Map<ClientQuotaEntity, ApiError> results = new LinkedHashMap<>();
        for (ClientQuotaAlteration alteration : alterations) {
            ClientQuotaEntity entity = alteration.entity();
            if (results.containsKey(entity)) {
                valid.remove(entity);
                results.put(entity, new ApiError(Errors.INVALID_REQUEST, "Ignoring duplicate entity " + entity));
                continue;
            }
            ApiError error = validate(alteration);
            results.put(entity, error);
            if (error.isSuccess()) {
                Map<String, Double> values = new LinkedHashMap<>();
                alteration.ops().forEach(op -> values.put(op.key(), op.value()));
                valid.put(entity, new Change(entity, values));
            }
        }
        return results;
    }

    private static ApiError validate(ClientQuotaAlteration alteration) {
        ClientQuotaEntity entity = alteration.entity();
        ApiError entityError = entityError(entity);
        if (!entityError.isSuccess()) {
            return entityError;
        }
        Map<String, ConfigDef.ConfigKey> keys = new HashMap<>();
        ApiError keysError = keysFor(entity.entries(), keys);
        if (!keysError.isSuccess()) {
            return keysError;
        }
        Set<String> seen = new HashSet<>();
        for (ClientQuotaAlteration.Op op : alteration.ops()) {
            if (!seen.add(op.key())) {
                return new ApiError(Errors.INVALID_REQUEST, "Duplicate quota key " + op.key()
                        + " not updating quota for this entity " + entity);
            }
            if (op.value() == null) {
                continue; // a removal: any key may be removed, whether set or not
            }
            ApiError valueError = valueError(keys, op.key(), op.value());
            if (!valueError.isSuccess()) {
                return valueError;
            }
        }
        return ApiError.NONE;
    }

    /** The entity's types: known ones only, named; ip on its own. */
    static ApiError entityError(ClientQuotaEntity entity) {
        if (entity.entries().isEmpty()) {
            return new ApiError(Errors.INVALID_REQUEST, "Invalid empty client quota entity");
        }
        for (Map.Entry<String, String> e : entity.entries().entrySet()) {
            if (!ENTITY_TYPES.contains(e.getKey())) {
                return new ApiError(Errors.INVALID_REQUEST, "Unhandled client quota entity type: " + e.getKey());
            }
            if (e.getValue() != null && e.getValue().isEmpty()) {
                return new ApiError(Errors.INVALID_REQUEST, "Empty " + e.getKey() + " not supported");
            }
        }
        return ApiError.NONE;
    }

    /** The keys an entity may set: the user/client-id quotas, or the ip's connection rate. */
    private static ApiError keysFor(Map<String, String> entity, Map<String, ConfigDef.ConfigKey> out) {
        boolean ip = entity.containsKey(ClientQuotaEntity.IP);
        if (ip && (entity.containsKey(ClientQuotaEntity.USER) || entity.containsKey(ClientQuotaEntity.CLIENT_ID))) {
            // Kafka's message, missing space included: clients and scripts may match on it
            return new ApiError(Errors.INVALID_REQUEST, "Invalid quota entity combination, IP entity should"
                    + "not be combined with User or ClientId");
        }
        if (ip) {
            String address = entity.get(ClientQuotaEntity.IP);
            if (address != null && !resolvable(address)) {
                return new ApiError(Errors.INVALID_REQUEST, address + " is not a valid IP or resolvable host.");
            }
            out.putAll(QuotaConfig.ipConfigs().configKeys());
        } else {
            out.putAll(QuotaConfig.userAndClientQuotaConfigs().configKeys());
        }
        return ApiError.NONE;
    }

    private static boolean resolvable(String address) {
        try {
            InetAddress.getByName(address);
            return true;
        } catch (UnknownHostException e) {
            return false;
        }
    }

    static ApiError valueError(Map<String, ConfigDef.ConfigKey> keys, String key, double value) {
        ConfigDef.ConfigKey definition = keys.get(key);
        if (definition == null) {
            return new ApiError(Errors.INVALID_REQUEST, "Invalid configuration key " + key);
        }
        // NaN fails this too: a rate that compares to nothing is no rate
        if (!(value > 0.0)) {
            return new ApiError(Errors.INVALID_REQUEST, "Quota " + key + " must be greater than 0");
        }
        return switch (definition.type) {
            case DOUBLE -> Double.isFinite(value) ? ApiError.NONE
                    : new ApiError(Errors.INVALID_REQUEST, "Quota " + key + " must be a finite number");
            case SHORT -> integral(key, value, Short.MAX_VALUE, "a SHORT");
            case INT -> integral(key, value, Integer.MAX_VALUE, "an INT");
            case LONG -> integral(key, value, Long.MAX_VALUE, "a LONG");
            default -> new ApiError(Errors.UNKNOWN_SERVER_ERROR, "Unexpected config type " + definition.type
                    + " should be Long or Double");
        };
    }

    private static ApiError integral(String key, double value, double max, String typeName) {
        if (value > max) {
            return new ApiError(Errors.INVALID_REQUEST, "Proposed value for " + key + " is too large for "
                    + typeName + ".");
        }
        if (Math.abs(value % 1.0) > FRACTION_TOLERANCE) {
            return new ApiError(Errors.INVALID_REQUEST, key + " cannot be a fractional value.");
        }
        return ApiError.NONE;
    }
}
