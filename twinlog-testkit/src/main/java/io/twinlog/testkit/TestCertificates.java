package io.twinlog.testkit;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A broker key pair and certificate made by the test with the JDK's own {@code keytool} (never checked in): a
 * PKCS12 keystore for the broker, valid for 127.0.0.1 and localhost, and a truststore holding its certificate for
 * clients (and for brokers that connect to each other over TLS).
 *
 * @param keystore   the broker's keystore (PKCS12)
 * @param truststore a truststore with the broker's certificate (PKCS12)
 * @param password   the password of both stores and of the key
 */
public record TestCertificates(File keystore, File truststore, String password) {

    /** Generates a fresh key pair and certificate under {@code dir} (about a second). */
    public static TestCertificates generate(Path dir) throws IOException, InterruptedException {
        String password = "test-store-password";
        File keystore = dir.resolve("broker.p12").toFile();
        File certificate = dir.resolve("broker.pem").toFile();
        File truststore = dir.resolve("trust.p12").toFile();
        keytool("-genkeypair", "-alias", "broker", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2",
                "-dname", "CN=localhost", "-ext", "SAN=IP:127.0.0.1,DNS:localhost", "-keystore",
                keystore.getPath(), "-storetype", "PKCS12", "-storepass", password, "-keypass", password);
        keytool("-exportcert", "-rfc", "-alias", "broker", "-keystore", keystore.getPath(), "-storepass", password,
                "-file", certificate.getPath());
        keytool("-importcert", "-noprompt", "-alias", "broker", "-file", certificate.getPath(), "-keystore",
                truststore.getPath(), "-storetype", "PKCS12", "-storepass", password);
        return new TestCertificates(keystore, truststore, password);
    }

    /**
     * A broker certificate that expired yesterday (valid for one day from 3 days ago), signed by a test CA that is
     * still valid; the truststore holds the CA only. (A self-signed certificate would not do: a trust anchor's own
     * dates are not checked, so clients trusting it directly accept it expired.)
     */
    public static TestCertificates generateExpired(Path dir) throws IOException, InterruptedException {
        String password = "test-store-password";
        File ca = dir.resolve("ca.p12").toFile();
        File caPem = dir.resolve("ca.pem").toFile();
        File keystore = dir.resolve("broker.p12").toFile();
        File request = dir.resolve("broker.csr").toFile();
        File signed = dir.resolve("broker-signed.pem").toFile();
        File truststore = dir.resolve("trust.p12").toFile();
        keytool("-genkeypair", "-alias", "ca", "-keyalg", "RSA", "-keysize", "2048", "-validity", "10",
                "-ext", "bc:c", "-dname", "CN=twinlog-test-ca", "-keystore", ca.getPath(), "-storetype", "PKCS12",
                "-storepass", password, "-keypass", password);
        keytool("-exportcert", "-rfc", "-alias", "ca", "-keystore", ca.getPath(), "-storepass", password, "-file",
                caPem.getPath());
        keytool("-genkeypair", "-alias", "broker", "-keyalg", "RSA", "-keysize", "2048", "-validity", "10",
                "-dname", "CN=localhost", "-keystore", keystore.getPath(), "-storetype", "PKCS12", "-storepass",
                password, "-keypass", password);
        keytool("-certreq", "-alias", "broker", "-keystore", keystore.getPath(), "-storepass", password, "-file",
                request.getPath());
        keytool("-gencert", "-rfc", "-alias", "ca", "-keystore", ca.getPath(), "-storepass", password, "-infile",
                request.getPath(), "-outfile", signed.getPath(), "-startdate", "-3d", "-validity", "1", "-ext",
                "SAN=IP:127.0.0.1,DNS:localhost");
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", caPem.getPath(), "-keystore",
                keystore.getPath(), "-storepass", password);
        keytool("-importcert", "-alias", "broker", "-file", signed.getPath(), "-keystore", keystore.getPath(),
                "-storepass", password);
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", caPem.getPath(), "-keystore",
                truststore.getPath(), "-storetype", "PKCS12", "-storepass", password);
        return new TestCertificates(keystore, truststore, password);
    }

    private static void keytool(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException("keytool did not finish within 60 s: " + command);
        }
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            throw new IOException("keytool failed (" + p.exitValue() + "): " + command + "\n" + output);
        }
    }
}
