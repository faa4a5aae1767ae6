package io.twinlog.mirror.store;

import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.PBEKeySpec;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Encrypts a mirror's secret configs (passwords, JAAS configs, keys) before they are written to ZooKeeper, with the
 * brokers' {@code password.encoder.secret} — Kafka's name for the secret its ZooKeeper brokers encrypted dynamic
 * passwords with (issue 13, point 6; decision 51). AES-256-GCM, the key derived from the secret with
 * PBKDF2-HMAC-SHA512 and a random salt per value; a value is {@code v1:salt:iv:ciphertext} in Base64. A value that
 * does not decrypt with the secret is tried with {@code password.encoder.old.secret}, so the secret can be rotated.
 */
public final class SecretCodec {
    private static final String VERSION = "v1";
    private static final String KEY_DERIVATION = "PBKDF2WithHmacSHA512";
    private static final String CIPHER = "AES/GCM/NoPadding";
    private static final int ITERATIONS = 4096;
    private static final int KEY_BITS = 256;
    private static final int SALT_BYTES = 16;
    private static final int IV_BYTES = 12;
    private static final int TAG_BITS = 128;

    private final char[] secret;
    private final Optional<char[]> oldSecret;
    private final SecureRandom random = new SecureRandom();
    /**
     * Values already decrypted: brokers read mirror definitions every half second, and each key derivation costs
     * milliseconds. Bounded (cleared when full); the values are in memory in the definitions anyway.
     */
    private final Map<String, String> decrypted = new ConcurrentHashMap<>();
    private static final int MAX_CACHED = 1024;

    public SecretCodec(String secret, Optional<String> oldSecret) {
        if (secret == null || secret.isEmpty()) {
            throw new IllegalArgumentException("The encoder secret must not be empty");
        }
        this.secret = secret.toCharArray();
        this.oldSecret = oldSecret.filter(s -> !s.isEmpty()).map(String::toCharArray);
    }

    public String encrypt(String plain) {
        try {
            byte[] salt = new byte[SALT_BYTES];
            byte[] iv = new byte[IV_BYTES];
            random.nextBytes(salt);
            random.nextBytes(iv);
            Cipher cipher = Cipher.getInstance(CIPHER);
            cipher.init(Cipher.ENCRYPT_MODE, key(secret, salt), new GCMParameterSpec(TAG_BITS, iv));
            byte[] encrypted = cipher.doFinal(plain.getBytes(StandardCharsets.UTF_8));
            Base64.Encoder b64 = Base64.getEncoder();
            return String.join(":", VERSION, b64.encodeToString(salt), b64.encodeToString(iv),
                    b64.encodeToString(encrypted));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Could not encrypt a mirror secret: " + e.getMessage(), e);
        }
    }

    /**
     * @throws IllegalArgumentException when the value is not one this codec wrote, or neither secret decrypts it
     *         (brokers with different {@code password.encoder.secret}s)
     */
    public String decrypt(String encoded) {
        String cached = decrypted.get(encoded);
        if (cached != null) {
            return cached;
        }
        String plain = decryptNow(encoded);
        if (decrypted.size() >= MAX_CACHED) {
            decrypted.clear();
        }
        decrypted.put(encoded, plain);
        return plain;
    }

    private String decryptNow(String encoded) {
        String[] parts = encoded.split(":");
        if (parts.length != 4 || !parts[0].equals(VERSION)) {
            throw new IllegalArgumentException("Not an encrypted mirror secret (expected " + VERSION
                    + ":salt:iv:ciphertext)");
        }
        Base64.Decoder b64 = Base64.getDecoder();
        byte[] salt = b64.decode(parts[1]);
        byte[] iv = b64.decode(parts[2]);
        byte[] encrypted = b64.decode(parts[3]);
        for (char[] candidate : oldSecret.map(old -> List.of(secret, old)).orElse(List.of(secret))) {
            try {
                Cipher cipher = Cipher.getInstance(CIPHER);
                cipher.init(Cipher.DECRYPT_MODE, key(candidate, salt), new GCMParameterSpec(TAG_BITS, iv));
                return new String(cipher.doFinal(encrypted), StandardCharsets.UTF_8);
            } catch (AEADBadTagException e) {
                // the authentication tag does not match: another secret encrypted it (or the value was altered)
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("Could not decrypt a mirror secret: " + e.getMessage(), e);
            }
        }
        throw new IllegalArgumentException("A mirror secret does not decrypt with this broker's "
                + "password.encoder.secret" + (oldSecret.isPresent() ? " nor password.encoder.old.secret" : "")
                + ": every broker needs the secret the value was written with");
    }

    private static SecretKeySpec key(char[] secret, byte[] salt) throws GeneralSecurityException {
        byte[] key = SecretKeyFactory.getInstance(KEY_DERIVATION)
                .generateSecret(new PBEKeySpec(secret, salt, ITERATIONS, KEY_BITS)).getEncoded();
        return new SecretKeySpec(key, "AES");
    }
}
