package io.twinlog.mirror.acl;

import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.resource.ResourceType;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;

/**
 * One rule of {@code mirror.acls.include}, KIP-1279's form {@code resourceType;resourceName;operation;
 * permissionType;principal}, each field a value or {@code *} (any): {@code Topic;orders;Read;Allow;User:app}, or
 * {@code Topic;*;*;*;*} for every topic ACL. Several rules are separated by commas; {@code *} alone means every ACL.
 * Types, operations and permissions are Kafka's names, in any case; names and principals match exactly.
 */
public record AclSyncRule(Optional<ResourceType> resourceType, Optional<String> resourceName,
                          Optional<AclOperation> operation, Optional<AclPermissionType> permission,
                          Optional<String> principal) {
    private static final String ANY = "*";

    /**
     * The rules of a {@code mirror.acls.include} value (empty: ACLs are not synced).
     *
     * @throws ConfigException naming the rule and the field that is not valid
     */
    public static List<AclSyncRule> parse(String key, String value) {
        List<AclSyncRule> rules = new ArrayList<>();
        if (value == null || value.isBlank()) {
            return rules;
        }
        if (value.trim().equals(ANY)) {
            rules.add(new AclSyncRule(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                    Optional.empty()));
            return rules;
        }
        for (String rule : value.split(",")) {
            String[] f = rule.trim().split(";", -1);
            if (f.length != 5) {
                throw new ConfigException(key, value, "a rule is resourceType;resourceName;operation;permissionType;"
                        + "principal (each a value or *), but '" + rule.trim() + "' has " + f.length + " fields");
            }
            rules.add(new AclSyncRule(field(f[0], s -> resourceType(key, value, s)), field(f[1], s -> s),
                    field(f[2], s -> operation(key, value, s)), field(f[3], s -> permission(key, value, s)),
                    field(f[4], s -> s)));
        }
        return rules;
    }

    private static <T> Optional<T> field(String raw, Function<String, T> parse) {
        String s = raw.trim();
        return s.equals(ANY) ? Optional.empty() : Optional.of(parse.apply(s));
    }

    private static ResourceType resourceType(String key, String value, String s) {
        ResourceType t = ResourceType.fromString(s.replaceAll("(?<=[a-z])(?=[A-Z])", "_").toUpperCase(Locale.ROOT));
        if (t == ResourceType.UNKNOWN || t == ResourceType.ANY) {
            throw new ConfigException(key, value, "unknown resource type '" + s + "' (Topic, Group, Cluster, "
                    + "TransactionalId, DelegationToken, User)");
        }
        return t;
    }

    private static AclOperation operation(String key, String value, String s) {
        AclOperation o = AclOperation.fromString(s.replaceAll("(?<=[a-z])(?=[A-Z])", "_").toUpperCase(Locale.ROOT));
        if (o == AclOperation.UNKNOWN || o == AclOperation.ANY) {
            throw new ConfigException(key, value, "unknown operation '" + s + "'");
        }
        return o;
    }

    private static AclPermissionType permission(String key, String value, String s) {
        AclPermissionType p = AclPermissionType.fromString(s.toUpperCase(Locale.ROOT));
        if (p != AclPermissionType.ALLOW && p != AclPermissionType.DENY) {
            throw new ConfigException(key, value, "permission type '" + s + "' is neither Allow nor Deny");
        }
        return p;
    }

    public boolean matches(AclBinding acl) {
        return resourceType.map(t -> t == acl.pattern().resourceType()).orElse(true)
                && resourceName.map(n -> n.equals(acl.pattern().name())).orElse(true)
                && operation.map(o -> o == acl.entry().operation()).orElse(true)
                && permission.map(p -> p == acl.entry().permissionType()).orElse(true)
                && principal.map(p -> p.equals(acl.entry().principal())).orElse(true);
    }
}
