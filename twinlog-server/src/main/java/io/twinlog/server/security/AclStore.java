package io.twinlog.server.security;

import io.twinlog.controller.zk.Json;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.metadata.authorizer.StandardAcl;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * ACLs in ZooKeeper, one node per ACL, {@code /acls/<id>} = {@code {"version":1,"resourceType":"TOPIC",
 * "resourceName":"orders","patternType":"LITERAL","principal":"User:alice","host":"*","operation":"READ",
 * "permissionType":"ALLOW"}} (issue 13, point 3). Every broker watches them and feeds Kafka's
 * {@link StandardAuthorizer} exactly as a KRaft broker's metadata publisher does (addAcl / removeAcl by id, then
 * completeInitialLoad once the first read is done), so a change applies on every broker within a ZooKeeper round
 * trip. Writes block on ZooKeeper: callers keep them off request threads.
 */
public final class AclStore implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AclStore.class);
    static final String ACLS = "/acls";

    private final CuratorFramework zk;
    private final StandardAuthorizer authorizer;
    private final CuratorCache watch;
    private final Map<Uuid, StandardAcl> acls = new ConcurrentHashMap<>();

    public AclStore(CuratorFramework zk, StandardAuthorizer authorizer) {
        this.zk = zk;
        this.authorizer = authorizer;
        this.watch = CuratorCache.build(zk, ACLS);
    }

    public void start() {
        watch.listenable().addListener(CuratorCacheListener.builder()
                .forCreatesAndChanges((before, after) -> onNode(after, true))
                .forDeletes(gone -> onNode(gone, false))
                .forInitialized(() -> {
                    authorizer.completeInitialLoad();
                    log.info("ACLs loaded from ZooKeeper: {}", acls.size());
                })
                .build());
        watch.start();
    }

    private void onNode(ChildData node, boolean present) {
        String[] parts = node.getPath().split("/");
        if (parts.length != 3) {
            return; // /acls itself
        }
        Uuid id;
        try {
            id = Uuid.fromString(parts[2]);
        } catch (IllegalArgumentException e) {
            log.warn("Ignoring {}: not an ACL id", node.getPath());
            return;
        }
        if (!present) {
            if (acls.remove(id) != null) {
                authorizer.removeAcl(id);
            }
            return;
        }
        try {
            StandardAcl acl = decode(Json.decode(node.getData(), node.getPath()));
            acls.put(id, acl);
            authorizer.addAcl(id, acl);
        } catch (RuntimeException e) {
            log.error("Ignoring the unreadable ACL at {}", node.getPath(), e);
        }
    }

    private static StandardAcl decode(Map<String, Object> json) {
        return new StandardAcl(ResourceType.fromString(String.valueOf(json.get("resourceType"))),
                String.valueOf(json.get("resourceName")),
                PatternType.fromString(String.valueOf(json.get("patternType"))),
                String.valueOf(json.get("principal")), String.valueOf(json.get("host")),
                AclOperation.fromString(String.valueOf(json.get("operation"))),
                AclPermissionType.fromString(String.valueOf(json.get("permissionType"))));
    }

    private static byte[] encode(StandardAcl acl) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("version", 1);
        json.put("resourceType", acl.resourceType().name());
        json.put("resourceName", acl.resourceName());
        json.put("patternType", acl.patternType().name());
        json.put("principal", acl.principal());
        json.put("host", acl.host());
        json.put("operation", acl.operation().name());
        json.put("permissionType", acl.permissionType().name());
        return Json.encode(json);
    }

    /** Stores {@code binding} (an ACL already present is not stored twice). Blocks on ZooKeeper. */
    public void create(AclBinding binding) throws Exception {
        StandardAcl acl = StandardAcl.fromAclBinding(binding);
        if (acls.containsValue(acl)) {
            return;
        }
        zk.create().creatingParentsIfNeeded().forPath(ACLS + "/" + Uuid.randomUuid(), encode(acl));
    }

    /** Removes every stored ACL {@code filter} matches; returns them. Blocks on ZooKeeper. */
    public List<AclBinding> delete(AclBindingFilter filter) throws Exception {
        List<AclBinding> deleted = new ArrayList<>();
        for (Map.Entry<Uuid, StandardAcl> e : acls.entrySet()) {
            AclBinding binding = e.getValue().toBinding();
            if (filter.matches(binding)) {
                try {
                    zk.delete().forPath(ACLS + "/" + e.getKey());
                } catch (KeeperException.NoNodeException gone) {
                    continue; // deleted meanwhile by another request
                }
                deleted.add(binding);
            }
        }
        return deleted;
    }

    @Override
    public void close() {
        watch.close();
    }
}
