package io.twinlog.cli.internals;

import io.twinlog.clients.mirror.ClusterMirrorResource;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import picocli.CommandLine.Option;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The options of {@code --add-acl} and {@code --remove-acl}, as picocli fills them in, and the action they make: the
 * checks kafka-acls makes (a principal is TYPE:NAME, an operation applies to the resource) as usage errors.
 */
public final class AclOptions {
    @Option(names = "--allow-principal", paramLabel = "PRINCIPAL", order = 51, description = "A principal "
            + "(e.g. User:alice) the ACLs allow; repeatable.")
    List<String> allowPrincipals = new ArrayList<>();

    @Option(names = "--deny-principal", paramLabel = "PRINCIPAL", order = 52, description = "A principal the "
            + "ACLs deny; repeatable. Deny wins over allow.")
    List<String> denyPrincipals = new ArrayList<>();

    @Option(names = "--allow-host", paramLabel = "HOST", order = 53, description = "The host the allowed "
            + "principals connect from (default *, any).")
    String allowHost = "*";

    @Option(names = "--deny-host", paramLabel = "HOST", order = 54, description = "The host the denied "
            + "principals connect from (default *, any).")
    String denyHost = "*";

    @Option(names = "--operation", paramLabel = "OPERATION", order = 55, description = "Create, Alter, "
            + "Describe, Delete, AlterConfigs, DescribeConfigs or All; repeatable.")
    List<String> operations = new ArrayList<>();

    @Option(names = "--resource-pattern-type", paramLabel = "TYPE", order = 56, description = "literal "
            + "(default) or prefixed: whether --mirror is a name or a prefix of names.")
    String patternType = "literal";

    boolean anyGiven() {
        return !allowPrincipals.isEmpty() || !denyPrincipals.isEmpty() || !operations.isEmpty()
                || !"*".equals(allowHost) || !"*".equals(denyHost) || !"literal".equals(patternType);
    }

    /** The ACL action {@code action} ({@code --add-acl} or {@code --remove-acl}) on {@code mirror}. */
    MirrorAclsAction toAction(String action, String mirror) {
        boolean add = action.equals("--add-acl");
        List<MirrorAclsAction.Grantee> grantees = new ArrayList<>();
        allowPrincipals.forEach(p -> grantees.add(new MirrorAclsAction.Grantee(principal(p),
                AclPermissionType.ALLOW, allowHost)));
        denyPrincipals.forEach(p -> grantees.add(new MirrorAclsAction.Grantee(principal(p),
                AclPermissionType.DENY, denyHost)));
        if (grantees.isEmpty()) {
            throw CommandException.usage(action + " needs --allow-principal or --deny-principal");
        }
        if (add && operations.isEmpty()) {
            throw CommandException.usage("--add-acl needs --operation");
        }
        List<AclOperation> parsed = new ArrayList<>();
        for (String op : operations) {
            AclOperation operation = AclOperation.fromString(op.replace("-", "_")
                    .replaceAll("(?<=[a-z])(?=[A-Z])", "_"));
            if (!ClusterMirrorResource.OPERATIONS.contains(operation)) {
                throw CommandException.usage("--operation " + op + " does not apply to a cluster mirror: use "
                        + "Create, Alter, Describe, Delete, AlterConfigs, DescribeConfigs or All");
            }
            parsed.add(operation);
        }
        PatternType pattern = PatternType.fromString(patternType.toUpperCase(Locale.ROOT));
        if (pattern != PatternType.LITERAL && pattern != PatternType.PREFIXED) {
            throw CommandException.usage("--resource-pattern-type must be literal or prefixed, but got "
                    + patternType);
        }
        return new MirrorAclsAction(add ? MirrorAclsAction.Kind.ADD : MirrorAclsAction.Kind.REMOVE,
                Optional.of(mirror), pattern, grantees, parsed);
    }

    /** A principal as Kafka writes one, TYPE:NAME (kafka-acls' check). */
    private static String principal(String value) {
        int colon = value.indexOf(':');
        if (colon <= 0 || colon == value.length() - 1) {
            throw CommandException.usage("A principal is TYPE:NAME, e.g. User:alice, but got '" + value + "'");
        }
        return value;
    }
}
