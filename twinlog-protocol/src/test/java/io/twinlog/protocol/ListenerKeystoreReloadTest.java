package io.twinlog.protocol;

import io.twinlog.common.BrokerConfig;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.network.ConnectionMode;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.security.ssl.SslFactory;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.security.GeneralSecurityException;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A listener's keystore changed live ({@code listener.name.<l>.ssl.keystore.*}): Kafka's SslFactory in each network
 * thread checks and reloads it; new TLS connections present the new certificate, open ones keep theirs, and a
 * certificate for another name is refused with SslFactory's message. The listener is the inter-broker one, so the
 * check includes Kafka's handshake between the old and new stores (the truststore trusts every certificate here).
 */
@Timeout(120)
class ListenerKeystoreReloadTest {
    private static final int BROKER_ID = 13;
    private static final String PREFIX = "listener.name.ssl.";
    private static final short VERSION = 3;

    @TempDir
    static Path stores;
    private static Path keystoreA;
    private static Path keystoreB;
    private static Path otherName;
    private static Path truststore;

    @TempDir
    Path brokerDir;
    /** The broker's keystore file, a copy of A at start, at a path a test may overwrite. */
    private Path brokerKeystore;
    private LoopbackServer broker;
    private final List<Socket> sockets = new ArrayList<>();

    @BeforeAll
    static void generateStores() throws Exception {
        keystoreA = Keystores.generate(stores.resolve("a.p12"), "CN=localhost");
        keystoreB = Keystores.generate(stores.resolve("b.p12"), "CN=localhost");
        otherName = Keystores.generate(stores.resolve("other.p12"), "CN=another-broker");
        truststore = Keystores.truststore(stores.resolve("trust.p12"), keystoreA, keystoreB, otherName);
    }

    @BeforeEach
    void start() throws IOException {
        brokerKeystore = Files.copy(keystoreA, brokerDir.resolve("broker.p12"));
        broker = LoopbackServer.start(BROKER_ID, config(brokerKeystore), 1, 2, ApiRegistry.builder()
                .add(ApiKeys.API_VERSIONS, r -> r.respond(new ApiVersionsResponse(new ApiVersionsResponseData())))
                .build());
    }

    @AfterEach
    void stop() throws Exception {
        for (Socket s : sockets) {
            s.close();
        }
        broker.close();
    }

    private static BrokerConfig config(Path keystore) {
        Map<String, String> props = new HashMap<>();
        props.put(BrokerConfig.LISTENERS, "SSL://127.0.0.1:0");
        props.put("inter.broker.listener.name", "SSL");
        props.put(PREFIX + SslConfigs.SSL_KEYSTORE_LOCATION_CONFIG, keystore.toString());
        props.put(PREFIX + SslConfigs.SSL_KEYSTORE_TYPE_CONFIG, "PKCS12");
        props.put(PREFIX + SslConfigs.SSL_KEYSTORE_PASSWORD_CONFIG, Keystores.PASSWORD);
        props.put(PREFIX + SslConfigs.SSL_KEY_PASSWORD_CONFIG, Keystores.PASSWORD);
        props.put(PREFIX + SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, truststore.toString());
        props.put(PREFIX + SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PKCS12");
        props.put(PREFIX + SslConfigs.SSL_TRUSTSTORE_PASSWORD_CONFIG, Keystores.PASSWORD);
        return new BrokerConfig(props);
    }

    /** What the reconfigure thread passes: the listener's effective configs, its prefix applied. */
    private static Map<String, Object> listenerConfigs(Path keystore) {
        return config(keystore).values().valuesWithPrefixOverride(PREFIX);
    }

    @Test
    void newConnectionsGetTheNewCertificateAndOpenOnesKeepTheirs() throws Exception {
        SSLSocket before = connect();
        assertEquals(Keystores.certificate(keystoreA), peerCertificate(before));
        ask(before);

        broker.server.validateReconfiguration(listenerConfigs(keystoreB));
        broker.server.reconfigure(listenerConfigs(keystoreB));

        X509Certificate b = Keystores.certificate(keystoreB);
        assertNotEquals(Keystores.certificate(keystoreA), b);
        for (int i = 0; i < broker.server.processorCount(); i++) {
            SSLSocket after = connect(); // round-robin: one on each network thread
            assertEquals(b, peerCertificate(after));
            ask(after);
        }
        ask(before);
        assertEquals(Keystores.certificate(keystoreA), peerCertificate(before));

        broker.server.resizeProcessors(3);
        for (int i = 0; i < 3; i++) {
            assertEquals(b, peerCertificate(connect()), "a network thread added later has the new keystore too");
        }
    }

    @Test
    void theSameValuesReloadAKeystoreReplacedInPlace() throws Exception {
        FileTime loaded = Files.getLastModifiedTime(brokerKeystore);
        Files.copy(keystoreB, brokerKeystore, StandardCopyOption.REPLACE_EXISTING);
        Files.setLastModifiedTime(brokerKeystore, FileTime.fromMillis(loaded.toMillis() + 10_000));
        // as text this time, as a caller might hold them: the passwords must still reach Kafka as passwords
        Map<String, Object> sameValues = new HashMap<>();
        config(brokerKeystore).values().originalsWithPrefix(PREFIX).forEach(sameValues::put);

        broker.server.reconfigure(sameValues);

        for (int i = 0; i < broker.server.processorCount(); i++) {
            assertEquals(Keystores.certificate(keystoreB), peerCertificate(connect()));
        }
    }

    @Test
    void aCertificateForAnotherNameIsRefusedWithKafkasMessage() throws Exception {
        String expected = kafkasRefusal(listenerConfigs(brokerKeystore), listenerConfigs(otherName));
        assertTrue(expected.startsWith("Validation of dynamic config update of SSLFactory failed:")
                && expected.contains("DistinguishedName"), expected);

        ConfigException refused = assertThrows(ConfigException.class,
                () -> broker.server.validateReconfiguration(listenerConfigs(otherName)));
        assertEquals(expected, refused.getMessage());
        assertThrows(ConfigException.class, () -> broker.server.reconfigure(listenerConfigs(otherName)));

        for (int i = 0; i < broker.server.processorCount(); i++) {
            assertEquals(Keystores.certificate(keystoreA), peerCertificate(connect()), "nothing changed");
        }
    }

    @Test
    void aListenerWithoutTlsIgnoresKeystoreChanges() throws Exception {
        try (LoopbackServer plaintext = LoopbackServer.plaintext(BROKER_ID + 1, 1, 1, ApiRegistry.builder()
                .build())) {
            plaintext.server.validateReconfiguration(listenerConfigs(otherName));
            plaintext.server.reconfigure(listenerConfigs(otherName));
        }
    }

    @Test
    void connectionsThisBrokerOpensToOthersPresentTheNewCertificate() throws Exception {
        ListenerChannels channels = new ListenerChannels(config(brokerKeystore), ListenerChannels.newCredentialCache(),
                version -> null, Time.SYSTEM);
        ChannelBuilder before = channels.interBroker("fetcher-made-before");
        try (MutualTlsPeer peer = new MutualTlsPeer(keystoreA, truststore)) {
            assertEquals(Keystores.certificate(keystoreA), peer.clientCertificateOf(before));

            channels.reconfigureInterBroker(listenerConfigs(keystoreB));

            X509Certificate b = Keystores.certificate(keystoreB);
            assertEquals(b, peer.clientCertificateOf(before), "a builder made before the reload");
            assertEquals(b, peer.clientCertificateOf(channels.interBroker("fetcher-made-after")),
                    "a builder made after it");
            ConfigException refused = assertThrows(ConfigException.class,
                    () -> channels.reconfigureInterBroker(listenerConfigs(otherName)));
            assertTrue(refused.getMessage().contains("DistinguishedName"), refused.getMessage());
            assertEquals(b, peer.clientCertificateOf(channels.interBroker("fetcher-after-refusal")),
                    "a refused keystore changes nothing");
        }
    }

    /** What Kafka's own SslFactory (a broker listener's, inter-broker) says to {@code next} over {@code current}. */
    private static String kafkasRefusal(Map<String, ?> current, Map<String, ?> next) {
        try (SslFactory factory = new SslFactory(ConnectionMode.SERVER, null, true)) {
            factory.configure(current);
            ConfigException e = assertThrows(ConfigException.class, () -> factory.validateReconfiguration(next));
            return e.getMessage();
        }
    }

    private SSLSocket connect() throws IOException, GeneralSecurityException {
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(Keystores.load(truststore));
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trust.getTrustManagers(), null);
        SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket(broker.connect(), "127.0.0.1",
                broker.server.boundPort(), true);
        sockets.add(socket);
        socket.startHandshake();
        return socket;
    }

    private static X509Certificate peerCertificate(SSLSocket socket) throws IOException {
        Certificate[] chain = socket.getSession().getPeerCertificates();
        return (X509Certificate) chain[0];
    }

    private static void ask(Socket socket) throws IOException {
        Frames.send(socket, new ApiVersionsRequest.Builder().build(VERSION), "keystore-test", 1);
        assertEquals(1, Frames.receive(socket, ApiKeys.API_VERSIONS, VERSION).correlationId());
    }
}
