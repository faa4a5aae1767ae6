package io.twinlog.cli.internals;

import io.twinlog.cli.internals.MirrorTopicsAction.Operation;
import org.apache.kafka.common.resource.PatternType;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Checks a {@code twinlog-mirrors.sh} command line as picocli parsed it and builds its one action: exactly one action
 * flag, the destination's address and a positive timeout, no option of another action, each action's required
 * options. A wrong command line is a usage {@link CommandException}, the first fault found in this order: the order
 * is the CLI's contract (its tests name the messages). Pure: nothing is read but the files the options name.
 */
public final class ActionResolver {
    private ActionResolver() {
    }

    /** The action the command line asks for; option groups picocli left unset (none of theirs given) may be null. */
    public static MirrorAction resolve(String bootstrapServer, int timeoutMs, ActionFlags flags,
                                       MirrorSelection selection, CreateOptions createOptions, AclOptions aclOptions) {
        ActionFlags a = flags == null ? new ActionFlags() : flags;
        MirrorSelection s = selection == null ? new MirrorSelection() : selection;
        CreateOptions c = createOptions == null ? new CreateOptions() : createOptions;
        AclOptions acl = aclOptions == null ? new AclOptions() : aclOptions;
        List<String> given = a.given();
        if (given.isEmpty()) {
            throw CommandException.usage("Exactly one action is needed: --create, --alter, --list, --describe, "
                    + "--delete, --start/--add, --stop/--remove, --pause, --resume, --verify, --add-acl, --remove-acl "
                    + "or --list-acls");
        }
        if (given.size() > 1) {
            throw CommandException.usage("Only one action at a time, but got " + String.join(" and ", given));
        }
        String action = given.get(0);
        if (bootstrapServer == null) {
            throw CommandException.usage("Missing required option --bootstrap-server HOST:PORT[,...]");
        }
        BootstrapServers.validate("--bootstrap-server", bootstrapServer, true);
        if (timeoutMs <= 0) {
            throw CommandException.usage("--timeout-ms must be positive, but got " + timeoutMs);
        }
        checkOptionsBelongTo(action, a, s, c, acl);
        switch (action) {
            case "--create": {
                Map<String, String> configs = SourceConfigs.build(Optional.ofNullable(c.sourceConfigFile),
                        c.sourceConfigs, Optional.ofNullable(c.sourceBootstrapServer), c.include, c.exclude);
                configs.putAll(c.settingConfigs());
                return new CreateMirror(requireMirror(action, s), configs);
            }
            case "--alter": {
                Map<String, String> changes = SourceConfigs.build(Optional.ofNullable(c.sourceConfigFile),
                        c.sourceConfigs, Optional.ofNullable(c.sourceBootstrapServer), c.include, c.exclude, false);
                changes.putAll(c.settingConfigs());
                if (changes.isEmpty()) {
                    throw CommandException.usage("--alter needs at least one of the --create options to change");
                }
                return new AlterMirror(requireMirror(action, s), changes);
            }
            case "--list":
                return new ListMirrors(Optional.ofNullable(s.mirror));
            case "--describe":
                return new DescribeMirrors(Optional.ofNullable(s.mirror));
            case "--delete":
                return new DeleteMirror(requireMirror(action, s));
            case "--verify":
                return new VerifyMirror(requireMirror(action, s), s.topics, a.full, Map.of(),
                        a.sourceCommandConfig == null ? Map.of()
                                : PropertiesFiles.read("--source-command-config", a.sourceCommandConfig));
            case "--list-acls":
                return new MirrorAclsAction(MirrorAclsAction.Kind.LIST, Optional.ofNullable(s.mirror),
                        PatternType.ANY, List.of(), List.of());
            case "--add-acl":
            case "--remove-acl":
                return acl.toAction(action, requireMirror(action, s));
            default:
                String mirror = requireMirror(action, s);
                if (s.topics.isEmpty()) {
                    throw CommandException.usage(action + " needs --topic REGEX");
                }
                if (a.dryRun) {
                    return PointInTimeFailover.dryRun(mirror, s.topics, a.at == null ? Optional.empty()
                            : Optional.of(PointInTimeFailover.parseAt(a.at)), timeoutMs);
                }
                if (a.at != null) {
                    return new PointInTimeFailover(mirror, s.topics, PointInTimeFailover.parseAt(a.at), timeoutMs);
                }
                return new MirrorTopicsAction(topicOperation(action).orElseThrow(), action, mirror, s.topics);
        }
    }

    /** No option of another action: each names the actions it is valid with. */
    private static void checkOptionsBelongTo(String action, ActionFlags a, MirrorSelection s, CreateOptions c,
                                             AclOptions acl) {
        if (!action.equals("--create") && !action.equals("--alter")) {
            c.firstGiven().ifPresent(option -> {
                throw CommandException.usage(option + " is only valid with --create");
            });
        }
        if (topicOperation(action).isEmpty() && !s.topics.isEmpty() && !action.equals("--verify")) {
            throw CommandException.usage("--topic is only valid with --start/--add, --stop/--remove, --pause, "
                    + "--resume or --verify");
        }
        if ((a.at != null || a.dryRun) && topicOperation(action).orElse(null) != Operation.STOP) {
            throw CommandException.usage((a.at != null ? "--at" : "--dry-run") + " is only valid with --stop/--remove");
        }
        if (a.full && !action.equals("--verify")) {
            throw CommandException.usage("--full is only valid with --verify");
        }
        if (a.sourceCommandConfig != null && !action.equals("--verify")) {
            throw CommandException.usage("--source-command-config is only valid with --verify");
        }
        if (acl.anyGiven() && !action.equals("--add-acl") && !action.equals("--remove-acl")) {
            throw CommandException.usage("--allow-principal, --deny-principal, --allow-host, --deny-host, --operation "
                    + "and --resource-pattern-type are only valid with --add-acl or --remove-acl");
        }
    }

    private static String requireMirror(String action, MirrorSelection s) {
        if (s.mirror == null || s.mirror.isBlank()) {
            throw CommandException.usage(action + " needs --mirror NAME");
        }
        return s.mirror;
    }

    /** What a topic action flag asks of the mirror's topics; empty for the other actions. */
    private static Optional<Operation> topicOperation(String action) {
        return switch (action) {
            case "--start", "--add" -> Optional.of(Operation.START);
            case "--stop", "--remove" -> Optional.of(Operation.STOP);
            case "--pause" -> Optional.of(Operation.PAUSE);
            case "--resume" -> Optional.of(Operation.RESUME);
            default -> Optional.empty();
        };
    }
}
