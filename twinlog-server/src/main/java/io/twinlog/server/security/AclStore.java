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
 *
 * <p>ClusterMirror ACLs ({@code "resourceType":"CLUSTER_MIRROR"}, a type Kafka's {@code ResourceType} lacks) go to a
 * second StandardAuthorizer that holds nothing else, with the mirror's name in place of a topic's: Kafka's own
 * matching (literal and prefixed names, deny before allow, implied DESCRIBE, super users) then decides for mirrors
 * too (decision 49). Callers see them as bindings on {@link ResourceType#TOPIC} with {@code mirror} set.
 */
public final class AclStore implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AclStore.class);
    static final String ACLS = "/acls";
    private static final String CLUSTER_MIRROR = "CLUSTER_MIRROR";

    /** One stored ACL: a Kafka ACL, or (mirror) a ClusterMirror ACL written with TOPIC in place of its type. */
    private record Stored(StandardAcl acl, boolean mirror) {
    }

    private final CuratorFramework zk;
    private final StandardAuthorizer authorizer;
    private final StandardAuthorizer mirrorAuthorizer;
    private final CuratorCache watch;
    private final Map<Uuid, Stored> acls = new ConcurrentHashMap<>();

    public AclStore(CuratorFramework zk, StandardAuthorizer authorizer, StandardAuthorizer mirrorAuthorizer) {
        this.zk = zk;
        this.authorizer = authorizer;
        this.mirrorAuthorizer = mirrorAuthorizer;
        this.watch = CuratorCache.build(zk, ACLS);
    }

    public void start() {
        watch.listenable().addListener(CuratorCacheListener.builder()
                .forCreatesAndChanges((before, after) -> onNode(after, true))
                .forDeletes(gone -> onNode(gone, false))
                .forInitialized(() -> {
                    authorizer.completeInitialLoad();
                    mirrorAuthorizer.completeInitialLoad();
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
            Stored gone = acls.remove(id);
            if (gone != null) {
                (gone.mirror() ? mirrorAuthorizer : authorizer).removeAcl(id);
            }
            return;
        }
        try {
            Stored stored = decode(Json.decode(node.getData(), node.getPath()));
            acls.put(id, stored);
            (stored.mirror() ? mirrorAuthorizer : authorizer).addAcl(id, stored.acl());
        } catch (RuntimeException e) {
            // broad: a node unreadable in any way must not stop the other ACLs loading
            log.error("Ignoring the unreadable ACL at {}", node.getPath(), e);
        }
    }

    private static Stored decode(Map<String, Object> json) {
        String type = String.valueOf(json.get("resourceType"));
        boolean mirror = type.equals(CLUSTER_MIRROR);
        StandardAcl acl = new StandardAcl(mirror ? ResourceType.TOPIC : ResourceType.fromString(type),
                String.valueOf(json.get("resourceName")),
                PatternType.fromString(String.valueOf(json.get("patternType"))),
                String.valueOf(json.get("principal")), String.valueOf(json.get("host")),
                AclOperation.fromString(String.valueOf(json.get("operation"))),
                AclPermissionType.fromString(String.valueOf(json.get("permissionType"))));
        return new Stored(acl, mirror);
    }

    private static byte[] encode(Stored stored) {
        StandardAcl acl = stored.acl();
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("version", 1);
        json.put("resourceType", stored.mirror() ? CLUSTER_MIRROR : acl.resourceType().name());
        json.put("resourceName", acl.resourceName());
        json.put("patternType", acl.patternType().name());
        json.put("principal", acl.principal());
        json.put("host", acl.host());
        json.put("operation", acl.operation().name());
        json.put("permissionType", acl.permissionType().name());
        return Json.encode(json);
    }

    /**
     * Stores {@code binding} (an ACL already present is not stored twice); with {@code mirror}, a ClusterMirror ACL
     * given as a TOPIC binding. Blocks on ZooKeeper.
     */
    public void create(AclBinding binding, boolean mirror) throws Exception {
        Stored stored = new Stored(StandardAcl.fromAclBinding(binding), mirror);
        if (acls.containsValue(stored)) {
            return;
        }
        zk.create().creatingParentsIfNeeded().forPath(ACLS + "/" + Uuid.randomUuid(), encode(stored));
    }

    /**
     * Removes every stored ACL of the kind {@code mirror} says that {@code filter} matches (for ClusterMirror ACLs a
     * filter on TOPIC); returns them. Blocks on ZooKeeper.
     */
    public List<AclBinding> delete(AclBindingFilter filter, boolean mirror) throws Exception {
        List<AclBinding> deleted = new ArrayList<>();
        for (Map.Entry<Uuid, Stored> e : acls.entrySet()) {
            if (e.getValue().mirror() != mirror) {
                continue;
            }
            AclBinding binding = e.getValue().acl().toBinding();
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
