package io.twinlog.tests.security;

import io.twinlog.common.BrokerConfig;
import io.twinlog.controller.zk.ZkPaths;
import io.twinlog.tests.KafkaTools;
import io.twinlog.tests.ToolResult;
import io.twinlog.testkit.TestCertificates;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import java.io.FileInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A TLS listener's keystore replaced live with {@code kafka-configs --entity-type brokers --entity-name 0 --alter
 * --add-config listener.name.ssl.ssl.keystore.location=...} (issue 28, point 5): new connections get the new
 * certificate at once, the password is stored encrypted with {@code password.encoder.secret} and described as
 * sensitive, and a keystore whose certificate names another host is refused with Kafka's SslFactory message.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class DynamicListenerKeystoreTest {
    @TempDir
    Path dir;

    @Test
    void aNewKeystoreServesNewConnectionsAndItsPasswordIsStoredEncrypted() throws Exception {
        TestCertificates first = TestCertificates.generate(Files.createDirectory(dir.resolve("first")));
        TestCertificates second = TestCertificates.generate(Files.createDirectory(dir.resolve("second")));
        try (TestCluster cluster = TestCluster.builder().brokers(1)
                .brokerProperty(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0")
                .brokerProperty(BrokerConfig.INTER_BROKER_LISTENER_NAME, "PLAINTEXT")
                .brokerProperty("password.encoder.secret", "the-cluster-secret")
                .brokerProperty("listener.name.ssl." + SslConfigs.SSL_KEYSTORE_LOCATION_CONFIG,
                        first.keystore().getPath())
                .brokerProperty("listener.name.ssl." + SslConfigs.SSL_KEYSTORE_PASSWORD_CONFIG, first.password())
                .brokerProperty("listener.name.ssl." + SslConfigs.SSL_KEY_PASSWORD_CONFIG, first.password())
                .brokerProperty("listener.name.ssl." + SslConfigs.SSL_KEYSTORE_TYPE_CONFIG, "PKCS12")
                .build().start()) {
            int port = cluster.broker(0).boundPort("SSL");
            Certificate before = presented(port);
            assertTrue(Arrays.equals(certificate(first).getEncoded(), before.getEncoded()), "serves the first");

            configs(cluster, "--entity-type", "brokers", "--entity-name", "0", "--alter", "--add-config",
                    "listener.name.ssl.ssl.keystore.location=" + second.keystore().getPath()
                            + ",listener.name.ssl.ssl.keystore.password=" + second.password()
                            + ",listener.name.ssl.ssl.key.password=" + second.password()).assertSuccess();
            byte[] expected = certificate(second).getEncoded();
            Waits.waitUntil("new TLS connections get the second certificate",
                    () -> Arrays.equals(expected, presented(port).getEncoded()));

            String stored = node(cluster, ZkPaths.brokerConfig("0"));
            assertTrue(stored.contains(second.keystore().getPath()), stored);
            assertFalse(stored.contains(second.password()), "the password is stored encrypted: " + stored);
            ToolResult described = configs(cluster, "--entity-type", "brokers", "--entity-name", "0", "--describe");
            assertTrue(described.stdout().contains("listener.name.ssl.ssl.keystore.password=null sensitive=true"),
                    described.all());

            // another host's certificate for this listener: Kafka's SslFactory refuses it, nothing changes
            Path otherDir = Files.createDirectory(dir.resolve("other"));
            Path other = otherDir.resolve("other.p12");
            keytool("-genkeypair", "-alias", "broker", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2",
                    "-dname", "CN=elsewhere", "-keystore", other.toString(), "-storetype", "PKCS12",
                    "-storepass", second.password(), "-keypass", second.password());
            ToolResult refused = configs(cluster, "--entity-type", "brokers", "--entity-name", "0", "--alter",
                    "--add-config", "listener.name.ssl.ssl.keystore.location=" + other);
            assertNotEquals(0, refused.exitCode(), refused.all());
            assertTrue(refused.all().contains("Invalid dynamic configuration"), refused.all());
            assertTrue(Arrays.equals(expected, presented(port).getEncoded()), "still the second certificate");
        }
    }

    private static ToolResult configs(TestCluster cluster, String... args) throws Exception {
        return KafkaTools.configs(Files.createTempDirectory("configs").toFile(), cluster.bootstrapServers(), args);
    }

    /** The certificate a new TLS connection to {@code port} is shown (trusted whatever it is: it is what we check). */
    private static Certificate presented(int port) throws Exception {
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, new TrustManager[] {new X509TrustManager() {
            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType) {
            }

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType) {
            }

            @Override
            public X509Certificate[] getAcceptedIssuers() {
                return new X509Certificate[0];
            }
        }}, null);
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            socket.startHandshake();
            return socket.getSession().getPeerCertificates()[0];
        }
    }

    private static Certificate certificate(TestCertificates certificates) throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (FileInputStream in = new FileInputStream(certificates.keystore())) {
            store.load(in, certificates.password().toCharArray());
        }
        return store.getCertificate("broker");
    }

    private static String node(TestCluster cluster, String path) throws Exception {
        try (ZooKeeper zk = new ZooKeeper(cluster.zookeeperConnect(), 10_000, event -> { })) {
            return new String(zk.getData(path, false, null), StandardCharsets.UTF_8);
        }
    }

    private static void keytool(String... args) throws Exception {
        String[] command = new String[args.length + 1];
        command[0] = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        System.arraycopy(args, 0, command, 1, args.length);
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, "keytool failed");
    }
}
