package io.twinlog.clients.mirror;

import org.apache.kafka.common.protocol.types.BoundField;
import org.apache.kafka.common.protocol.types.Field;
import org.apache.kafka.common.protocol.types.Schema;
import org.apache.kafka.common.protocol.types.Struct;

import java.nio.ByteBuffer;
import java.util.TreeMap;

/** Building, encoding and decoding mirror API messages with their {@link MirrorApi} schemas. */
public final class MirrorMessages {
    private MirrorMessages() {
    }

    /** A struct of {@code schema} with its tagged-fields section set (empty), ready for {@code set(...)}. */
    public static Struct newStruct(Schema schema) {
        Struct s = new Struct(schema);
        for (BoundField f : schema.fields()) {
            if (f.def instanceof Field.TaggedFieldsSection) {
                s.set(f, new TreeMap<Integer, Object>());
            }
        }
        return s;
    }

    /** A struct for an element of the array field {@code arrayField} of {@code parent}. */
    public static Struct element(Struct parent, String arrayField) {
        Struct child = parent.instance(arrayField);
        for (BoundField f : child.schema().fields()) {
            if (f.def instanceof Field.TaggedFieldsSection) {
                child.set(f, new TreeMap<Integer, Object>());
            }
        }
        return child;
    }

    public static ByteBuffer encode(Struct struct) {
        ByteBuffer buffer = ByteBuffer.allocate(struct.sizeOf());
        struct.writeTo(buffer);
        buffer.flip();
        return buffer;
    }

    public static Struct decode(Schema schema, ByteBuffer buffer) {
        return schema.read(buffer);
    }

    /** A response struct with throttle time 0 and the given error (null message allowed). */
    public static Struct response(MirrorApi api, short errorCode, String errorMessage) {
        Struct s = newStruct(api.responseSchema(MirrorApi.LATEST_VERSION));
        s.set("throttle_time_ms", 0);
        s.set("error_code", errorCode);
        s.set("error_message", errorMessage);
        return s;
    }
}
