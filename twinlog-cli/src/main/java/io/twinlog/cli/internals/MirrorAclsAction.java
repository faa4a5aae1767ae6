package io.twinlog.cli.internals;

import io.twinlog.clients.mirror.MirrorAcl;
import io.twinlog.clients.mirror.MirrorAdmin;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code --add-acl}, {@code --remove-acl} and {@code --list-acls}: ACLs on cluster mirrors (KIP-1279's ClusterMirror
 * resource), which Kafka's {@code kafka-acls} cannot name. The options and the output follow {@code kafka-acls}:
 * principals allowed or denied operations from hosts, on a mirror named literally or by prefix.
 */
public record MirrorAclsAction(Kind kind, Optional<String> mirror, PatternType patternType, List<Grantee> grantees,
                               List<AclOperation> operations) implements MirrorAction {
    /** Which of the three. */
    public enum Kind { ADD, REMOVE, LIST }

    /** One principal with its permission and host. */
    public record Grantee(String principal, AclPermissionType permission, String host) {
    }

    @Override
    public void run(MirrorAdmin admin, PrintWriter out) throws IOException {
        switch (kind) {
            case ADD -> {
                List<MirrorAcl> acls = new ArrayList<>();
                for (Grantee g : grantees) {
                    for (AclOperation op : operations) {
                        acls.add(new MirrorAcl(mirror.orElseThrow(), patternType, g.principal(), g.host(), op,
                                g.permission()));
                    }
                }
                admin.createMirrorAcls(acls);
                out.println("Adding ACLs for resource `ClusterMirror:" + patternType + ":" + mirror.orElseThrow()
                        + "`:");
                acls.forEach(acl -> out.println("\t" + entry(acl)));
            }
            case REMOVE -> {
                List<MirrorAcl> removed = new ArrayList<>();
                for (Grantee g : grantees) {
                    List<AclOperation> ops = operations.isEmpty() ? List.of(AclOperation.ANY) : operations;
                    for (AclOperation op : ops) {
                        removed.addAll(admin.deleteMirrorAcls(mirror.orElseThrow(), patternType, g.principal(),
                                g.host(), op, g.permission()));
                    }
                }
                out.println("Removed " + removed.size() + " ACL(s) for resource `ClusterMirror:" + patternType + ":"
                        + mirror.orElseThrow() + "`" + (removed.isEmpty() ? "." : ":"));
                removed.forEach(acl -> out.println("\t" + entry(acl)));
            }
            case LIST -> {
                List<MirrorAcl> acls = admin.describeMirrorAcls(mirror);
                if (acls.isEmpty()) {
                    out.println("No ClusterMirror ACLs" + mirror.map(m -> " apply to '" + m + "'").orElse("") + ".");
                }
                String resource = null;
                for (MirrorAcl acl : acls) {
                    String r = "ClusterMirror:" + acl.patternType() + ":" + acl.mirror();
                    if (!r.equals(resource)) {
                        out.println("Current ACLs for resource `" + r + "`:");
                        resource = r;
                    }
                    out.println("\t" + entry(acl));
                }
            }
            default -> throw new IllegalStateException("Unknown ACL action " + kind);
        }
    }

    /** One line per ACL, as {@code kafka-acls} prints an access control entry. */
    private static String entry(MirrorAcl acl) {
        return "(principal=" + acl.principal() + ", host=" + acl.host() + ", operation=" + acl.operation()
                + ", permissionType=" + acl.permission() + ")";
    }
}
