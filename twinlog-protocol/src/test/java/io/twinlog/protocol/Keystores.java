package io.twinlog.protocol;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Self-signed PKCS12 keystores made with the JDK's {@code keytool} while the test runs (twinlog-protocol's tests
 * cannot use twinlog-testkit's certificates: the testkit depends on this module), and a truststore over them.
 */
final class Keystores {
    static final String PASSWORD = "keystore-test-password";
    private static final String ALIAS = "broker";

    private Keystores() {
    }

    /** A new EC key pair with a certificate for {@code dn}, valid for 127.0.0.1 and localhost. */
    static Path generate(Path file, String dn) throws IOException, InterruptedException {
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        List<String> command = new ArrayList<>(List.of(keytool.toString(), "-genkeypair", "-alias", ALIAS,
                "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2", "-dname", dn,
                "-ext", "SAN=DNS:localhost,IP:127.0.0.1", "-keystore", file.toString(), "-storetype", "PKCS12",
                "-storepass", PASSWORD, "-keypass", PASSWORD));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IOException("keytool failed: " + output);
        }
        return file;
    }

    static X509Certificate certificate(Path keystore) throws IOException, GeneralSecurityException {
        return (X509Certificate) load(keystore).getCertificate(ALIAS);
    }

    /** A PKCS12 truststore holding the certificate of each keystore. */
    static Path truststore(Path file, Path... keystores) throws IOException, GeneralSecurityException {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        for (int i = 0; i < keystores.length; i++) {
            trust.setCertificateEntry("trusted-" + i, certificate(keystores[i]));
        }
        try (OutputStream out = Files.newOutputStream(file)) {
            trust.store(out, PASSWORD.toCharArray());
        }
        return file;
    }

    static KeyStore load(Path store) throws IOException, GeneralSecurityException {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            ks.load(in, PASSWORD.toCharArray());
        }
        return ks;
    }
}
