package io.twinlog.controller.zk;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * JSON encoding of ZooKeeper values, by one shared Jackson mapper. Records are bound to Java records (each stored
 * type has a document record with its exact field names and order); a value that does not parse or bind is a corrupt
 * store: an {@link IllegalStateException}.
 *
 * <p>Unknown fields are ignored, so a broker reads records written by a newer version that added fields (rolling
 * upgrades; every record carries {@code "version"} for changes that are not additions).
 */
public final class Json {
    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    private Json() {
    }

    public static byte[] encode(Object value) {
        try {
            return MAPPER.writeValueAsBytes(value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A value as a plain map, for records not bound to a type. */
    public static Map<String, Object> decode(byte[] data, String path) {
        try {
            return MAPPER.readValue(data, new TypeReference<Map<String, Object>>() { });
        } catch (IOException e) {
            throw corrupt(path, e);
        }
    }

    /** A value bound to its document type. */
    public static <T> T decode(byte[] data, String path, Class<T> type) {
        try {
            return MAPPER.readValue(data, type);
        } catch (IOException e) {
            throw corrupt(path, e);
        }
    }

    /** A value already read as a map (e.g. carried by the metadata image) bound to its document type. */
    public static <T> T convert(Map<String, Object> json, String what, Class<T> type) {
        try {
            return MAPPER.convertValue(json, type);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("Corrupt JSON of " + what + ": " + e.getMessage(), e);
        }
    }

    private static IllegalStateException corrupt(String path, IOException e) {
        return new IllegalStateException("Corrupt JSON at ZooKeeper path " + path + ": " + e.getMessage(), e);
    }
}
