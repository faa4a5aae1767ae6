package io.twinlog.cli.internals;

import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link AclOptions}: kafka-acls' checks on the ACL options, and the action they make. */
@Timeout(60)
class AclOptionsTest {
    private final AclOptions options = new AclOptions();

    private void assertUsageError(String action, String message) {
        CommandException e = assertThrows(CommandException.class, () -> options.toAction(action, "m"));
        assertTrue(e.isUsageError());
        assertEquals(message, e.getMessage());
    }

    @Test
    void nothingIsGivenUntilAnOptionDiffersFromItsDefault() {
        assertFalse(options.anyGiven());
        options.patternType = "prefixed";
        assertTrue(options.anyGiven());
    }

    @Test
    void aPrincipalIsNeededAndIsTypeColonName() {
        assertUsageError("--remove-acl", "--remove-acl needs --allow-principal or --deny-principal");
        options.allowPrincipals = List.of("alice");
        assertUsageError("--add-acl", "A principal is TYPE:NAME, e.g. User:alice, but got 'alice'");
        options.allowPrincipals = List.of("User:");
        assertUsageError("--add-acl", "A principal is TYPE:NAME, e.g. User:alice, but got 'User:'");
    }

    @Test
    void addingNeedsAnOperationThatAppliesToAMirror() {
        options.allowPrincipals = List.of("User:alice");
        assertUsageError("--add-acl", "--add-acl needs --operation");
        options.operations = List.of("Read");
        assertUsageError("--add-acl", "--operation Read does not apply to a cluster mirror: use Create, Alter, "
                + "Describe, Delete, AlterConfigs, DescribeConfigs or All");
    }

    @Test
    void thePatternTypeIsLiteralOrPrefixed() {
        options.allowPrincipals = List.of("User:alice");
        options.patternType = "match";
        assertUsageError("--remove-acl", "--resource-pattern-type must be literal or prefixed, but got match");
    }

    @Test
    void operationsAreReadInKafkasSpellingsAndEachPrincipalKeepsItsHost() {
        options.allowPrincipals = List.of("User:alice");
        options.denyPrincipals = List.of("User:bob");
        options.denyHost = "10.0.0.1";
        options.operations = List.of("AlterConfigs", "describe-configs", "Alter");
        options.patternType = "PREFIXED";
        MirrorAclsAction action = options.toAction("--add-acl", "dr-");
        assertEquals(new MirrorAclsAction(MirrorAclsAction.Kind.ADD, Optional.of("dr-"), PatternType.PREFIXED,
                List.of(new MirrorAclsAction.Grantee("User:alice", AclPermissionType.ALLOW, "*"),
                        new MirrorAclsAction.Grantee("User:bob", AclPermissionType.DENY, "10.0.0.1")),
                List.of(AclOperation.ALTER_CONFIGS, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER)), action);
    }

    @Test
    void removingWithoutOperationsRemovesEveryOperation() {
        options.denyPrincipals = List.of("User:bob");
        MirrorAclsAction action = options.toAction("--remove-acl", "m");
        assertEquals(MirrorAclsAction.Kind.REMOVE, action.kind());
        assertEquals(List.of(), action.operations());
        assertEquals(PatternType.LITERAL, action.patternType());
    }
}
