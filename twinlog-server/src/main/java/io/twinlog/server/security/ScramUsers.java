package io.twinlog.server.security;

import io.twinlog.controller.zk.EntityConfigNode;
import io.twinlog.controller.zk.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.kafka.common.security.authenticator.CredentialCache;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.internals.ScramCredentialUtils;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.apache.kafka.common.utils.internals.Sanitizer;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * SCRAM credentials (issue 13, point 2), kept where Kafka's ZooKeeper brokers kept them: one node per user,
 * {@code /config/users/<sanitized user>} = {@code {"version":1,"config":{"SCRAM-SHA-256":"salt=...,stored_key=...,
 * server_key=...,iterations=8192"}}} — salted and hashed by Kafka's own {@code ScramCredentialUtils}, never the
 * password. Every broker watches the nodes and keeps Kafka's SASL server's credential cache in step, so a change
 * takes effect on every broker without a restart. Reads are in memory; writes go to ZooKeeper (callers keep them
 * off request threads).
 */
public final class ScramUsers implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ScramUsers.class);

    private final CuratorFramework zk;
    private final CredentialCache cache;
    private final CuratorCache watch;
    /** user → mechanism name → credential, as the nodes say. */
    private final Map<String, Map<String, ScramCredential>> users = new ConcurrentHashMap<>();

    public ScramUsers(CuratorFramework zk, CredentialCache cache) {
        this.zk = zk;
        this.cache = cache;
        this.watch = CuratorCache.build(zk, ZkPaths.USER_CONFIGS);
    }

    public void start() {
        watch.listenable().addListener(CuratorCacheListener.builder()
                .forCreatesAndChanges((before, after) -> onNode(after.getPath(), Optional.of(after)))
                .forDeletes(gone -> onNode(gone.getPath(), Optional.empty()))
                .build());
        watch.start();
    }

    private void onNode(String path, Optional<ChildData> data) {
        String[] parts = path.split("/");
        if (parts.length != 4) {
            return; // /config/users itself
        }
        String user = Sanitizer.desanitize(parts[3]);
        Map<String, ScramCredential> next = new HashMap<>();
        try {
            byte[] bytes = data.map(ChildData::getData).orElse(null);
            if (bytes != null && bytes.length > 0) {
                next.putAll(decode(bytes, path));
            }
        } catch (RuntimeException e) {
            // broad: a node unreadable in any way keeps the credentials read before
            log.error("Ignoring the unreadable SCRAM credentials of user {} at {}; the user keeps the credentials "
                    + "read before", user, path, e);
            return;
        }
        if (asStrings(next).equals(asStrings(users.getOrDefault(user, Map.of())))) {
            return; // the node changed for a client quota of the user (ClientQuotaStore), not its credentials
        }
        for (String mechanism : ScramMechanism.mechanismNames()) {
            CredentialCache.Cache<ScramCredential> byUser = cache.cache(mechanism, ScramCredential.class);
            ScramCredential credential = next.get(mechanism);
            if (credential == null) {
                byUser.remove(user);
            } else {
                byUser.put(user, credential);
            }
        }
        if (next.isEmpty()) {
            users.remove(user);
        } else {
            users.put(user, Map.copyOf(next));
        }
        log.info("SCRAM credentials of user {} now: {}", user, next.isEmpty() ? "none" : next.keySet());
    }

    /** Credentials as stored ({@link ScramCredential} has no equals). */
    private static Map<String, String> asStrings(Map<String, ScramCredential> credentials) {
        Map<String, String> out = new HashMap<>();
        credentials.forEach((mechanism, c) -> out.put(mechanism, ScramCredentialUtils.credentialToString(c)));
        return out;
    }

    private static Map<String, ScramCredential> decode(byte[] bytes, String path) {
        Map<String, ScramCredential> out = new HashMap<>();
        EntityConfigNode.config(bytes, path).forEach((key, value) -> {
            if (ScramMechanism.isScram(key)) {
                out.put(key, ScramCredentialUtils.credentialFromString(value));
            }
        });
        return out;
    }

    /** Every user with credentials: user → mechanism name → iterations (what DescribeUserScramCredentials shows). */
    public Map<String, Map<String, Integer>> describe() {
        Map<String, Map<String, Integer>> out = new TreeMap<>();
        users.forEach((user, creds) -> {
            Map<String, Integer> iterations = new TreeMap<>();
            creds.forEach((mechanism, c) -> iterations.put(mechanism, c.iterations()));
            out.put(user, iterations);
        });
        return out;
    }

    /**
     * Sets ({@code credential} present) or removes one user's credential for {@code mechanism} in ZooKeeper,
     * read-modify-write with the node's version (a concurrent change to the same user is retried). Blocks on
     * ZooKeeper.
     *
     * @return false when removing a credential that does not exist
     */
    public boolean write(String user, String mechanism, Optional<ScramCredential> credential) throws Exception {
        String path = ZkPaths.userConfig(Sanitizer.sanitize(user));
        while (true) {
            EntityConfigNode.Read node = EntityConfigNode.read(zk, path);
            Map<String, String> config = node.config();
            if (credential.isPresent()) {
                config.put(mechanism, ScramCredentialUtils.credentialToString(credential.get()));
            } else if (config.remove(mechanism) == null) {
                return false;
            }
            byte[] next = EntityConfigNode.encode(config);
            try {
                if (!node.exists()) {
                    zk.create().creatingParentsIfNeeded().forPath(path, next);
                } else {
                    zk.setData().withVersion(node.version()).forPath(path, next);
                }
                return true;
            } catch (KeeperException.NodeExistsException | KeeperException.BadVersionException e) {
                log.debug("SCRAM credentials of user {} changed concurrently; reading them again", user);
            }
        }
    }

    @Override
    public void close() {
        watch.close();
    }
}
