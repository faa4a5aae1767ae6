package io.twinlog.mirror.acl;

import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(10)
class AclSyncPlanTest {
    private static final String KEY = "mirror.acls.include";
    private static final AclBinding APP_READS_ORDERS = acl(ResourceType.TOPIC, "orders", PatternType.LITERAL,
            "User:app", AclOperation.READ, AclPermissionType.ALLOW);
    private static final AclBinding APP_WRITES_ORDERS = acl(ResourceType.TOPIC, "orders", PatternType.LITERAL,
            "User:app", AclOperation.WRITE, AclPermissionType.ALLOW);
    private static final AclBinding EVE_DENIED_PAY = acl(ResourceType.TOPIC, "pay", PatternType.PREFIXED,
            "User:eve", AclOperation.ALL, AclPermissionType.DENY);
    private static final AclBinding APP_GROUP = acl(ResourceType.GROUP, "billing", PatternType.LITERAL,
            "User:app", AclOperation.READ, AclPermissionType.ALLOW);
    /** A ClusterMirror ACL as Kafka's admin client reads it from a Twinlog source (type code 8 = UNKNOWN). */
    private static final AclBinding MIRROR_ACL = acl(ResourceType.UNKNOWN, "dr", PatternType.LITERAL,
            "User:ops", AclOperation.ALTER, AclPermissionType.ALLOW);
    private static final List<AclBinding> SOURCE = List.of(APP_READS_ORDERS, APP_WRITES_ORDERS, EVE_DENIED_PAY,
            APP_GROUP, MIRROR_ACL);

    private static AclBinding acl(ResourceType type, String name, PatternType pattern, String principal,
                                  AclOperation operation, AclPermissionType permission) {
        return new AclBinding(new ResourcePattern(type, name, pattern),
                new AccessControlEntry(principal, "*", operation, permission));
    }

    @Test
    void noRulesSyncNothingAndStarSyncsEveryKafkaAclButClusterMirrorOnes() {
        assertTrue(AclSyncRule.parse(KEY, "").isEmpty());
        assertTrue(AclSyncPlan.toCreate(SOURCE, List.of(), AclSyncRule.parse(KEY, null)).isEmpty());
        assertEquals(List.of(APP_READS_ORDERS, APP_WRITES_ORDERS, EVE_DENIED_PAY, APP_GROUP),
                AclSyncPlan.toCreate(SOURCE, List.of(), AclSyncRule.parse(KEY, "*")));
    }

    @Test
    void rulesSelectByTypeNameOperationPermissionAndPrincipal() {
        assertEquals(List.of(APP_READS_ORDERS), AclSyncPlan.toCreate(SOURCE, List.of(),
                AclSyncRule.parse(KEY, "Topic;orders;Read;Allow;User:app")));
        assertEquals(List.of(APP_READS_ORDERS, APP_WRITES_ORDERS, EVE_DENIED_PAY), AclSyncPlan.toCreate(SOURCE,
                List.of(), AclSyncRule.parse(KEY, "TOPIC;*;*;*;*")));
        assertEquals(List.of(EVE_DENIED_PAY, APP_GROUP), AclSyncPlan.toCreate(SOURCE, List.of(),
                AclSyncRule.parse(KEY, "*;*;*;deny;*, group;billing;*;*;User:app")));
        assertEquals(List.of(APP_READS_ORDERS, APP_WRITES_ORDERS, APP_GROUP), AclSyncPlan.toCreate(SOURCE,
                List.of(), AclSyncRule.parse(KEY, "*;*;*;*;User:app")));
    }

    @Test
    void onlyWhatTheDestinationLacksAndNeverADeletion() {
        AclBinding destinationOnly = acl(ResourceType.TOPIC, "local", PatternType.LITERAL, "User:ops",
                AclOperation.READ, AclPermissionType.ALLOW);
        List<AclBinding> create = AclSyncPlan.toCreate(SOURCE, List.of(APP_READS_ORDERS, destinationOnly),
                AclSyncRule.parse(KEY, "*"));
        assertEquals(List.of(APP_WRITES_ORDERS, EVE_DENIED_PAY, APP_GROUP), create,
                "what is there already is not created again; the destination's own ACL is left alone");
    }

    @Test
    void badRulesAreRefusedWithTheReason() {
        assertTrue(assertThrows(ConfigException.class, () -> AclSyncRule.parse(KEY, "Topic;orders;Read"))
                .getMessage().contains("has 3 fields"));
        assertTrue(assertThrows(ConfigException.class, () -> AclSyncRule.parse(KEY, "Table;*;*;*;*"))
                .getMessage().contains("unknown resource type 'Table'"));
        assertTrue(assertThrows(ConfigException.class, () -> AclSyncRule.parse(KEY, "Topic;*;Fly;*;*"))
                .getMessage().contains("unknown operation 'Fly'"));
        assertTrue(assertThrows(ConfigException.class, () -> AclSyncRule.parse(KEY, "Topic;*;*;Maybe;*"))
                .getMessage().contains("neither Allow nor Deny"));
        assertEquals(ResourceType.TRANSACTIONAL_ID, AclSyncRule.parse(KEY, "TransactionalId;*;*;*;*").get(0)
                .resourceType().orElseThrow());
    }

    @Test
    void aPrefixedMirrorCreatesTopicAclsOnItsTopicsNamesHere() {
        AclBinding everyTopic = acl(ResourceType.TOPIC, "*", PatternType.LITERAL, "User:ops", AclOperation.DESCRIBE,
                AclPermissionType.ALLOW);
        List<AclBinding> source = List.of(APP_READS_ORDERS, EVE_DENIED_PAY, APP_GROUP, everyTopic);
        List<AclBinding> create = AclSyncPlan.toCreate(source, List.of(), AclSyncRule.parse(KEY,
                "Topic;orders;*;*;*,Topic;pay;*;*;*,Group;*;*;*;*,Topic;*;Describe;*;*"), "west.", Map.of());
        assertEquals(List.of(acl(ResourceType.TOPIC, "west.orders", PatternType.LITERAL, "User:app",
                        AclOperation.READ, AclPermissionType.ALLOW),
                acl(ResourceType.TOPIC, "west.pay", PatternType.PREFIXED, "User:eve", AclOperation.ALL,
                        AclPermissionType.DENY), APP_GROUP, everyTopic), create,
                "the rules select by the source's names; literal and prefixed topic ACLs are renamed, a group's and "
                        + "the every-topic wildcard are not");
        assertTrue(AclSyncPlan.toCreate(source, create, AclSyncRule.parse(KEY, "*"), "west.", Map.of()).isEmpty(),
                "renamed ACLs already there are not created again");
    }

    @Test
    void aLiteralTopicAclFollowsTheTopicsNameHereAsTheGroupOffsetsDo() {
        // A's mirror from B (prefix east.) failed B's west.orders back into A's own orders; B's west.payments is
        // mirrored as east.west.payments; B's own audit topic is not mirrored (yet)
        AclBinding readsWestOrders = acl(ResourceType.TOPIC, "west.orders", PatternType.LITERAL, "User:app",
                AclOperation.READ, AclPermissionType.ALLOW);
        AclBinding readsWestPayments = acl(ResourceType.TOPIC, "west.payments", PatternType.LITERAL, "User:app",
                AclOperation.READ, AclPermissionType.ALLOW);
        AclBinding readsAudit = acl(ResourceType.TOPIC, "audit", PatternType.LITERAL, "User:app",
                AclOperation.READ, AclPermissionType.ALLOW);
        AclBinding readsWestPrefix = acl(ResourceType.TOPIC, "west.", PatternType.PREFIXED, "User:app",
                AclOperation.READ, AclPermissionType.ALLOW);
        List<AclBinding> create = AclSyncPlan.toCreate(List.of(readsWestOrders, readsWestPayments, readsAudit,
                readsWestPrefix), List.of(), AclSyncRule.parse(KEY, "*"), "east.", Map.of("west.orders", "orders",
                "west.payments", "east.west.payments"));
        assertEquals(List.of(acl(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:app", AclOperation.READ,
                        AclPermissionType.ALLOW),
                acl(ResourceType.TOPIC, "east.west.payments", PatternType.LITERAL, "User:app", AclOperation.READ,
                        AclPermissionType.ALLOW),
                acl(ResourceType.TOPIC, "east.audit", PatternType.LITERAL, "User:app", AclOperation.READ,
                        AclPermissionType.ALLOW),
                acl(ResourceType.TOPIC, "east.west.", PatternType.PREFIXED, "User:app", AclOperation.READ,
                        AclPermissionType.ALLOW)), create,
                "the failed-back topic's ACL lands on orders, not east.west.orders; the rest get the prefix");
        assertEquals(List.of(acl(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:app", AclOperation.READ,
                AclPermissionType.ALLOW)), AclSyncPlan.toCreate(List.of(readsWestOrders), List.of(),
                AclSyncRule.parse(KEY, "*"), "", Map.of("west.orders", "orders")),
                "an unprefixed mirror's failback into another name too");
    }
}
