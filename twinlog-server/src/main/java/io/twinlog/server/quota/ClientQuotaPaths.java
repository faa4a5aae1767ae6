package io.twinlog.server.quota;

import io.twinlog.controller.zk.ZkPaths;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.utils.internals.Sanitizer;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Where a client quota entity's configs live in ZooKeeper, in Apache Kafka's ZooKeeper-mode layout (so an operator
 * who knew it finds them):
 * <pre>
 * /config/users/&lt;user&gt;                     {user}
 * /config/users/&lt;user&gt;/clients/&lt;client&gt;    {user, client-id}
 * /config/clients/&lt;client&gt;                 {client-id}
 * /config/ips/&lt;ip&gt;                         {ip}
 * </pre>
 * Users and client ids are {@link Sanitizer sanitized} (a {@code /} cannot be in a node name); an entity's default
 * (a null name) is the node {@value ZkPaths#DEFAULT_ENTITY}, which no sanitized name can be.
 */
final class ClientQuotaPaths {
    private ClientQuotaPaths() {
    }

    static String path(ClientQuotaEntity entity) {
        Map<String, String> e = entity.entries();
        if (e.containsKey(ClientQuotaEntity.IP)) {
            String ip = e.get(ClientQuotaEntity.IP);
            return ZkPaths.IP_CONFIGS + "/" + (ip == null ? ZkPaths.DEFAULT_ENTITY : ip);
        }
        if (e.containsKey(ClientQuotaEntity.USER)) {
            String user = ZkPaths.userConfig(name(e.get(ClientQuotaEntity.USER)));
            return e.containsKey(ClientQuotaEntity.CLIENT_ID)
                    ? user + "/clients/" + name(e.get(ClientQuotaEntity.CLIENT_ID)) : user;
        }
        return ZkPaths.CLIENT_CONFIGS + "/" + name(e.get(ClientQuotaEntity.CLIENT_ID));
    }

    /** The entity whose configs are at {@code path}; empty for the containers ({@code /config/users/u/clients}). */
    static Optional<ClientQuotaEntity> entity(String path) {
        String[] parts = path.split("/");
        Map<String, String> entity = new HashMap<>();
        if (parts.length == 4 && ZkPaths.USER_CONFIGS.equals("/" + parts[1] + "/" + parts[2])) {
            entity.put(ClientQuotaEntity.USER, unname(parts[3]));
        } else if (parts.length == 6 && ZkPaths.USER_CONFIGS.equals("/" + parts[1] + "/" + parts[2])
                && "clients".equals(parts[4])) {
            entity.put(ClientQuotaEntity.USER, unname(parts[3]));
            entity.put(ClientQuotaEntity.CLIENT_ID, unname(parts[5]));
        } else if (parts.length == 4 && ZkPaths.CLIENT_CONFIGS.equals("/" + parts[1] + "/" + parts[2])) {
            entity.put(ClientQuotaEntity.CLIENT_ID, unname(parts[3]));
        } else if (parts.length == 4 && ZkPaths.IP_CONFIGS.equals("/" + parts[1] + "/" + parts[2])) {
            entity.put(ClientQuotaEntity.IP, ZkPaths.DEFAULT_ENTITY.equals(parts[3]) ? null : parts[3]);
        } else {
            return Optional.empty();
        }
        return Optional.of(new ClientQuotaEntity(entity));
    }

    private static String name(String raw) {
        return raw == null ? ZkPaths.DEFAULT_ENTITY : Sanitizer.sanitize(raw);
    }

    private static String unname(String node) {
        return ZkPaths.DEFAULT_ENTITY.equals(node) ? null : Sanitizer.desanitize(node);
    }
}
