package io.twinlog.protocol;

import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.memory.MemoryPool;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.network.ChannelMetadataRegistry;
import org.apache.kafka.common.network.KafkaChannel;
import org.apache.kafka.common.network.Selector;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.nio.channels.SelectionKey;
import java.security.cert.X509Certificate;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A TLS server on loopback that requires a client certificate and reports the one each connection presented: what
 * another broker sees of the connections this broker's client channel builders open.
 */
final class MutualTlsPeer implements AutoCloseable {
    private static final long HANDSHAKE_TIMEOUT_MS = 20_000;
    private final SSLServerSocket server;

    MutualTlsPeer(Path keystore, Path truststore) throws IOException,
            GeneralSecurityException {
        KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keys.init(Keystores.load(keystore), Keystores.PASSWORD.toCharArray());
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(Keystores.load(truststore));
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(keys.getKeyManagers(), trust.getTrustManagers(), null);
        server = (SSLServerSocket) context.getServerSocketFactory().createServerSocket(0, 5,
                InetAddress.getLoopbackAddress());
        server.setNeedClientAuth(true);
        server.setSoTimeout((int) HANDSHAKE_TIMEOUT_MS);
    }

    /** Opens one connection with {@code builder} (driven by Kafka's Selector) and returns the certificate it showed. */
    X509Certificate clientCertificateOf(ChannelBuilder builder) throws Exception {
        CompletableFuture<X509Certificate> shown = CompletableFuture.supplyAsync(() -> {
            try (SSLSocket accepted = (SSLSocket) server.accept()) {
                accepted.setSoTimeout((int) HANDSHAKE_TIMEOUT_MS);
                accepted.startHandshake();
                return (X509Certificate) accepted.getSession().getPeerCertificates()[0];
            } catch (IOException e) {
                throw new IllegalStateException("the TLS handshake with the client failed", e);
            }
        });
        try (Metrics metrics = new Metrics();
             Selector selector = new Selector(10_000, metrics, Time.SYSTEM, "mutual-tls-peer",
                     new KeptOpen(builder), new LogContext())) {
            selector.connect("peer", new InetSocketAddress("127.0.0.1", server.getLocalPort()), 65536, 65536);
            long deadline = System.currentTimeMillis() + HANDSHAKE_TIMEOUT_MS;
            while (!shown.isDone() && System.currentTimeMillis() < deadline) {
                selector.poll(100);
            }
            return shown.get(1, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new AssertionError("no client certificate within " + HANDSHAKE_TIMEOUT_MS + " ms", e);
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
    }

    /** The builder for one Selector, which closes its builder with it: the caller's builder lives on. */
    private record KeptOpen(ChannelBuilder builder) implements ChannelBuilder {
        @Override
        public void configure(Map<String, ?> configs) throws KafkaException {
            builder.configure(configs);
        }

        @Override
        public KafkaChannel buildChannel(String id, SelectionKey key, int maxReceiveSize, MemoryPool memoryPool,
                                         ChannelMetadataRegistry metadataRegistry) throws KafkaException {
            return builder.buildChannel(id, key, maxReceiveSize, memoryPool, metadataRegistry);
        }

        @Override
        public void close() {
        }
    }
}
