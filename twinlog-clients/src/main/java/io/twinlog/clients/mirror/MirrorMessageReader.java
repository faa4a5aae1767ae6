package io.twinlog.clients.mirror;

import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Readable;

/**
 * Reads one mirror API message of a given version: a generated message class's {@code (Readable, short)}
 * constructor, e.g. {@code ListClusterMirrorsResponseData::new}.
 *
 * @param <M> the generated message class
 */
@FunctionalInterface
public interface MirrorMessageReader<M extends ApiMessage> {
    /**
     * @throws RuntimeException when the bytes are not a message of this version (the generated readers throw
     *         plain {@code RuntimeException}s, Kafka's {@code BufferUnderflowException} among them)
     */
    M read(Readable readable, short version);
}
