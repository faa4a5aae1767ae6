package io.twinlog.controller.zk;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;

/** JSON encoding of ZooKeeper values. A value that does not parse is a corrupt store: an {@link IllegalStateException}. */
public final class Json {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private Json() {
    }

    public static byte[] encode(Object value) {
        try {
            return MAPPER.writeValueAsBytes(value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static Map<String, Object> decode(byte[] data, String path) {
        try {
            return MAPPER.readValue(data, new TypeReference<Map<String, Object>>() { });
        } catch (IOException e) {
            throw new IllegalStateException("Corrupt JSON at ZooKeeper path " + path + ": " + e.getMessage(), e);
        }
    }
}
