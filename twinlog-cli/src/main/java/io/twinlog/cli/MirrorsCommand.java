package io.twinlog.cli;

import io.twinlog.cli.internals.AdminConfigs;
import io.twinlog.cli.internals.AlterMirror;
import io.twinlog.cli.internals.BootstrapServers;
import io.twinlog.cli.internals.CommandException;
import io.twinlog.cli.internals.ConsoleProgress;
import io.twinlog.cli.internals.CreateMirror;
import io.twinlog.cli.internals.DeleteMirror;
import io.twinlog.cli.internals.DescribeMirrors;
import io.twinlog.cli.internals.ListMirrors;
import io.twinlog.cli.internals.MirrorAclsAction;
import io.twinlog.cli.internals.MirrorAction;
import io.twinlog.cli.internals.MirrorTopicsAction;
import io.twinlog.cli.internals.MirrorTopicsAction.Operation;
import io.twinlog.cli.internals.PropertiesFiles;
import io.twinlog.cli.internals.SourceConfigs;
import io.twinlog.cli.internals.Table;
import io.twinlog.cli.internals.VerifyMirror;
import io.twinlog.clients.mirror.ClusterMirrorResource;
import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.Callable;

/**
 * {@code bin/twinlog-mirrors.sh}: cluster mirrors on a Twinlog destination cluster, in the manner of Kafka's tools —
 * {@code --bootstrap-server}, exactly one action flag, the options of that action. Each action is a small class in
 * {@code internals} over {@link MirrorAdmin}; this class only parses, validates and reports.
 *
 * <p>Output contract: results on stdout, errors on stderr as one line {@code Error: ...} (a broker error as
 * {@code Error: CODE_NAME: message}), exit code 0 or 1. A wrong command line adds a second line pointing at
 * {@code --help}. A stack trace only with {@code --verbose}. The one-line form of parse errors (unknown option,
 * option without its value) needs the handler installed by {@link #newCommandLine()}, which {@link #main} uses; a
 * bare {@code new CommandLine(new MirrorsCommand())} reports them in picocli's way (message and usage), also with
 * exit code 1.
 *
 * <p>The seed's failover command parses as written: {@code --bootstrap-server :9094 --remove --topic '.*' --mirror
 * my-mirror} (an empty host means localhost).
 */
@Command(name = "twinlog-mirrors.sh", sortOptions = false, usageHelpWidth = 110, exitCodeOnInvalidInput = 1,
        exitCodeOnExecutionException = 1,
        customSynopsis = {
            "twinlog-mirrors.sh --bootstrap-server HOST:PORT[,...] ACTION [OPTIONS]",
            "  --create --mirror NAME --source-bootstrap-server HOST:PORT[,...] [--source-config KEY=VALUE]...",
            "           [--source-config-file FILE] [--include REGEX[,REGEX...]] [--exclude REGEX[,REGEX...]]",
            "           [--groups-include REGEX[,REGEX...]] [--groups-exclude REGEX[,REGEX...]]",
            "           [--groups-sync-interval-ms MS] [--replication-throttled-rate BYTES_PER_SEC]",
            "  --alter --mirror NAME [any option of --create]",
            "  --list [--mirror NAME]",
            "  --describe [--mirror NAME]",
            "  --delete --mirror NAME",
            "  --start|--add|--stop|--remove|--pause|--resume --mirror NAME --topic REGEX [--topic REGEX]...",
            "  --verify --mirror NAME [--topic REGEX]... [--full] [--source-command-config FILE]",
            "  --add-acl|--remove-acl --mirror NAME (--allow-principal P|--deny-principal P)... [--operation OP]...",
            "           [--allow-host H] [--deny-host H] [--resource-pattern-type literal|prefixed]",
            "  --list-acls [--mirror NAME]",
            "  with any action: [--command-config FILE] [--timeout-ms MS] [--verbose]",
        },
        description = {
            "",
            "Creates, lists, describes and deletes cluster mirrors on a Twinlog destination cluster. A cluster mirror",
            "pulls topics from a source cluster keeping their topic IDs, offsets and leader epochs; stopping its",
            "topics fails over to the destination."
        },
        optionListHeading = "%nOptions:%n",
        footerHeading = "%nExamples (destination cluster on 127.0.0.1:9192):%n",
        footer = {
            "  twinlog-mirrors.sh --bootstrap-server :9192 --create --mirror my-mirror \\",
            "      --source-bootstrap-server 127.0.0.1:9092 --include 'orders.*,payments'",
            "  twinlog-mirrors.sh --bootstrap-server :9192 --list",
            "  twinlog-mirrors.sh --bootstrap-server :9192 --describe --mirror my-mirror",
            "  twinlog-mirrors.sh --bootstrap-server :9192 --remove --topic '.*' --mirror my-mirror   ",
            "  twinlog-mirrors.sh --bootstrap-server :9192 --delete --mirror my-mirror",
            "  twinlog-mirrors.sh --bootstrap-server :9192 --command-config admin.properties --add-acl \\",
            "      --mirror my-mirror --allow-principal User:dr-operator --operation Alter --operation Describe",
            "",
            "Exit code 0 on success, 1 on any error (one line on stderr; --verbose adds the stack trace)."
        })
public final class MirrorsCommand implements Callable<Integer> {
    static final String USAGE_HINT = "Run 'twinlog-mirrors.sh --help' for usage.";
    private static final String TOPIC_ACTIONS = "--start/--add, --stop/--remove, --pause or --resume";

    @Spec
    private CommandSpec spec;

    @Option(names = "--bootstrap-server", paramLabel = "HOST:PORT[,...]", order = 1,
            description = "Brokers of the destination cluster, where the mirrors live (required). An empty host "
                    + "(:9192) means localhost.")
    private String bootstrapServer;

    @Option(names = "--timeout-ms", paramLabel = "MS", defaultValue = "" + AdminConfigs.DEFAULT_TIMEOUT_MS, order = 2,
            description = "How long a call may take, and a broker to answer (default ${DEFAULT-VALUE}, or "
                    + "default.api.timeout.ms and request.timeout.ms from --command-config).")
    private int timeoutMs;

    @Option(names = "--command-config", paramLabel = "FILE", order = 3,
            description = "A properties file of Kafka client configs for the connection to the destination cluster: "
                    + "security.protocol, ssl.*, sasl.*, client.id, timeouts (as Kafka's tools take it).")
    private Path commandConfig;

    @Option(names = "--verbose", order = 4, description = "Print the stack trace of an error.")
    private boolean verbose;

    @Option(names = {"-h", "--help"}, usageHelp = true, order = 5, description = "Print this help and exit.")
    private boolean help;

    @ArgGroup(validate = false, heading = "%nActions (exactly one):%n", order = 10)
    private Actions actions = new Actions();

    @ArgGroup(validate = false, heading = "%nWhich mirror and topics:%n", order = 20)
    private Selection selection = new Selection();

    @ArgGroup(validate = false, heading = "%nOptions of --create:%n", order = 30)
    private CreateOptions createOptions = new CreateOptions();

    @ArgGroup(validate = false, heading = "%nOptions of --add-acl and --remove-acl:%n", order = 50)
    private AclOptions aclOptions = new AclOptions();

    static final class Actions {
        @Option(names = "--create", order = 11, description = "Create a cluster mirror --mirror NAME from the source "
                + "cluster --source-bootstrap-server.")
        boolean create;

        @Option(names = "--list", order = 12, description = "List the cluster mirrors (only --mirror NAME if given): "
                + "MIRROR STATE TOPICS SOURCE-CLUSTER-ID SOURCE-BOOTSTRAP-SERVER.")
        boolean list;

        @Option(names = "--describe", order = 13, description = "Describe every cluster mirror, or --mirror NAME: "
                + "state, source, patterns, configs (credentials shown as [hidden]), then one line per mirror "
                + "partition: MIRROR TOPIC PARTITION STATE SOURCE-END DESTINATION-END LAG LAST-MIRRORED-EPOCH "
                + "OUT-OF-SYNC TRUNCATION CONSISTENT-FROM ERROR (OUT-OF-SYNC: destination replicas outside the ISR; "
                + "CONSISTENT-FROM: the offset from which records are consistent with the source even through "
                + "unclean elections, set by a truncation every replica applied with "
                + "mirror.support.unclean.leader.election; TRUNCATION: "
                + "the partition's latest truncation point, the offsets truncations removed (their records are kept "
                + "in the topic __twinlog_quarantine), and the replicas a truncation still waits for), and "
                + "one line per consumer or share group whose offsets it syncs: MIRROR GROUP TYPE LAST-SYNC "
                + "OFFSETS-SYNCED OFFSETS-CLAMPED.")
        boolean describe;

        @Option(names = "--alter", order = 13, description = "Change configs of the cluster mirror --mirror NAME "
                + "(the options of --create; only those given change).")
        boolean alter;

        @Option(names = "--delete", order = 14, description = "Delete the cluster mirror --mirror NAME (refused "
                + "while any of its topics is not stopped).")
        boolean delete;

        @Option(names = "--start", order = 15, description = "Start mirroring the source topics matching --topic "
                + "(created here with the source's topic IDs).")
        boolean start;

        @Option(names = "--add", order = 16, description = "Same as --start.")
        boolean add;

        @Option(names = "--stop", order = 17, description = "Stop the mirror topics matching --topic and make them "
                + "writable: failover (works with the source down).")
        boolean stop;

        @Option(names = "--remove", order = 18, description = "Same as --stop.")
        boolean remove;

        @Option(names = "--pause", order = 19, description = "Pause the mirror topics matching --topic (they stay "
                + "read-only).")
        boolean pause;

        @Option(names = "--resume", order = 20, description = "Resume the paused mirror topics matching --topic.")
        boolean resume;

        @Option(names = "--verify", order = 21, description = "Compare each partition of the mirror --mirror NAME's "
                + "topics (or those matching --topic) on this cluster with the same partition on the source, without "
                + "stopping anything: one line per partition, 'TOPIC PARTITION identical up to OFFSET' or 'TOPIC "
                + "PARTITION differ from offset OFFSET (here: epoch E crc C; source: epoch E crc C)'; a failed-over "
                + "partition shows where it forked. Batches are compared by offsets, leader epoch and CRC, the first "
                + "difference found by binary search (--full: every batch). Exit status 0 when nothing differs where "
                + "the clusters should agree, 1 when something does, 2 on an error.")
        boolean verify;

        @Option(names = "--full", order = 22, description = "With --verify: compare every batch, not a binary search.")
        boolean full;

        @Option(names = "--source-command-config", paramLabel = "FILE", order = 22, description = "With --verify: "
                + "Kafka client configs for reading the source (security.protocol, sasl.*, ssl.*), needed when the "
                + "mirror's own source credentials are secret (they are never shown back, so the tool cannot reuse "
                + "them); they override the mirror's source configs.")
        Path sourceCommandConfig;

        @Option(names = "--add-acl", order = 23, description = "Add ACLs on the cluster mirror --mirror NAME (or, "
                + "with --resource-pattern-type prefixed, on the mirrors whose names start with NAME): "
                + "--allow-principal/--deny-principal with --operation, as kafka-acls does for Kafka's resources.")
        boolean addAcl;

        @Option(names = "--remove-acl", order = 24, description = "Remove the ACLs on --mirror NAME of the given "
                + "principals (and --operation, else every operation).")
        boolean removeAcl;

        @Option(names = "--list-acls", order = 25, description = "List the cluster-mirror ACLs, or those that apply "
                + "to --mirror NAME.")
        boolean listAcls;

        /** The action flags given, in a fixed order. */
        List<String> given() {
            List<String> given = new ArrayList<>();
            addIf(given, create, "--create");
            addIf(given, alter, "--alter");
            addIf(given, list, "--list");
            addIf(given, describe, "--describe");
            addIf(given, delete, "--delete");
            addIf(given, start, "--start");
            addIf(given, add, "--add");
            addIf(given, stop, "--stop");
            addIf(given, remove, "--remove");
            addIf(given, pause, "--pause");
            addIf(given, resume, "--resume");
            addIf(given, verify, "--verify");
            addIf(given, addAcl, "--add-acl");
            addIf(given, removeAcl, "--remove-acl");
            addIf(given, listAcls, "--list-acls");
            return given;
        }
    }

    static final class Selection {
        @Option(names = "--mirror", paramLabel = "NAME", order = 21, description = "The cluster mirror (needed by "
                + "every action but --list and --describe).")
        String mirror;

        @Option(names = "--topic", paramLabel = "REGEX", order = 22, description = "Source topics, by name or "
                + "regular expression; repeatable (with " + TOPIC_ACTIONS + ").")
        List<String> topics = new ArrayList<>();
    }

    static final class AclOptions {
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
    }

    static final class CreateOptions {
        @Option(names = "--source-bootstrap-server", paramLabel = "HOST:PORT[,...]", order = 31,
                description = "Brokers of the source cluster as the destination brokers reach them (the mirror's "
                        + "bootstrap.servers).")
        String sourceBootstrapServer;

        @Option(names = "--source-config", paramLabel = "KEY=VALUE", order = 32, description = "A Kafka client "
                + "config for connections to the source, e.g. security.protocol=SASL_SSL; repeatable.")
        List<String> sourceConfigs = new ArrayList<>();

        @Option(names = "--source-config-file", paramLabel = "FILE", order = 33, description = "A properties file "
                + "of such configs; --source-config and the other options of --create override it.")
        Path sourceConfigFile;

        @Option(names = "--include", paramLabel = "REGEX[,REGEX...]", split = ",", hideParamSyntax = true, order = 34,
                description = "Source topics the mirror covers (mirror.topic.include).")
        List<String> include = new ArrayList<>();

        @Option(names = "--exclude", paramLabel = "REGEX[,REGEX...]", split = ",", hideParamSyntax = true, order = 35,
                description = "Source topics it never covers (mirror.topic.exclude).")
        List<String> exclude = new ArrayList<>();

        @Option(names = "--groups-include", paramLabel = "REGEX[,REGEX...]", split = ",", hideParamSyntax = true,
                order = 36, description = "Consumer groups whose offsets are synced from the source "
                + "(mirror.groups.include; default every group, '' turns the sync off).")
        List<String> groupsInclude;

        @Option(names = "--groups-exclude", paramLabel = "REGEX[,REGEX...]", split = ",", hideParamSyntax = true,
                order = 37, description = "Consumer groups never synced (mirror.groups.exclude).")
        List<String> groupsExclude;

        @Option(names = "--groups-sync-interval-ms", paramLabel = "MS", order = 38, description = "How often group "
                + "offsets are synced (mirror.groups.sync.interval.ms; default 30000).")
        Long groupsSyncIntervalMs;

        @Option(names = "--replication-throttled-rate", paramLabel = "BYTES_PER_SEC", order = 39, description =
                "The most bytes per second each destination broker's fetchers of the mirror take from the source "
                + "(mirror.replication.throttled.rate; default unlimited; changed live with --alter).")
        Long replicationThrottledRate;

        /**
         * The mirror settings given (group sync, bandwidth cap), as mirror configs ({@code --groups-include ''} as an
         * empty value).
         */
        Map<String, String> settingConfigs() {
            Map<String, String> out = new LinkedHashMap<>();
            if (groupsInclude != null) {
                out.put(CreateMirror.GROUPS_INCLUDE, joined(groupsInclude));
            }
            if (groupsExclude != null) {
                out.put(CreateMirror.GROUPS_EXCLUDE, joined(groupsExclude));
            }
            if (groupsSyncIntervalMs != null) {
                if (groupsSyncIntervalMs <= 0) {
                    throw CommandException.usage("--groups-sync-interval-ms must be positive, but got "
                            + groupsSyncIntervalMs);
                }
                out.put(CreateMirror.GROUPS_SYNC_INTERVAL_MS, Long.toString(groupsSyncIntervalMs));
            }
            if (replicationThrottledRate != null) {
                if (replicationThrottledRate <= 0) {
                    throw CommandException.usage("--replication-throttled-rate must be positive, but got "
                            + replicationThrottledRate);
                }
                out.put(CreateMirror.REPLICATION_THROTTLED_RATE, Long.toString(replicationThrottledRate));
            }
            return out;
        }

        private static String joined(List<String> patterns) {
            return String.join(",", patterns.stream().map(String::trim).filter(p -> !p.isEmpty()).toList());
        }

        Optional<String> firstGiven() {
            if (sourceBootstrapServer != null) {
                return Optional.of("--source-bootstrap-server");
            }
            if (!sourceConfigs.isEmpty()) {
                return Optional.of("--source-config");
            }
            if (sourceConfigFile != null) {
                return Optional.of("--source-config-file");
            }
            if (!include.isEmpty()) {
                return Optional.of("--include");
            }
            if (!exclude.isEmpty()) {
                return Optional.of("--exclude");
            }
            if (groupsInclude != null) {
                return Optional.of("--groups-include");
            }
            if (groupsExclude != null) {
                return Optional.of("--groups-exclude");
            }
            if (groupsSyncIntervalMs != null) {
                return Optional.of("--groups-sync-interval-ms");
            }
            return replicationThrottledRate == null ? Optional.empty() : Optional.of("--replication-throttled-rate");
        }
    }

    public static void main(String[] args) {
        System.exit(newCommandLine().execute(args));
    }

    /** The command as {@link #main} runs it: parse errors reported on one line plus a usage hint, exit code 1. */
    public static CommandLine newCommandLine() {
        CommandLine commandLine = new CommandLine(new MirrorsCommand());
        commandLine.setParameterExceptionHandler((e, args) -> {
            PrintWriter err = e.getCommandLine().getErr();
            err.println("Error: " + Table.oneLine(String.valueOf(e.getMessage())));
            err.println(USAGE_HINT);
            err.flush();
            return 1;
        });
        return commandLine;
    }

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        // --verify answers 0 (nothing differs), 1 (something does) or 2 (it could not tell); the others 0 or 1
        int errorStatus = actions != null && actions.verify ? 2 : 1;
        try {
            MirrorAction action = toAction();
            Map<String, Object> adminConfigs = AdminConfigs.build(Optional.ofNullable(commandConfig),
                    bootstrapServer.trim(), timeoutGiven() ? OptionalInt.of(timeoutMs) : OptionalInt.empty());
            if (action instanceof VerifyMirror v) {
                action = v.reading(adminConfigs).showingProgress(ConsoleProgress.on(err));
            }
            try (MirrorAdmin admin = newAdmin(adminConfigs)) {
                action.run(admin, out);
            }
            return action instanceof VerifyMirror v && v.differs() ? 1 : 0;
        } catch (CommandException e) {
            fail(err, e.getMessage(), e);
            if (e.isUsageError()) {
                err.println(USAGE_HINT);
            }
        } catch (MirrorException e) {
            fail(err, e.getMessage(), e); // already "CODE_NAME: message"
        } catch (IOException e) {
            fail(err, e.getMessage() == null ? e.toString() : e.getMessage(), e);
        } catch (RuntimeException e) {
            // A bug here or an answer the client could not read: still one line, the trace with --verbose.
            fail(err, "Unexpected " + e + (verbose ? "" : " (--verbose prints the stack trace)"), e);
        } finally {
            out.flush();
            err.flush();
        }
        return errorStatus;
    }

    private boolean timeoutGiven() {
        return spec.commandLine().getParseResult().hasMatchedOption("--timeout-ms");
    }

    /** The admin client; a config it rejects (a bad value, unreadable TLS or SASL settings) is a usage error. */
    private static MirrorAdmin newAdmin(Map<String, Object> configs) {
        try {
            return MirrorAdmin.create(configs);
        } catch (IllegalArgumentException | KafkaException e) {
            throw CommandException.failed("Invalid client configs for the destination cluster: "
                    + (e.getMessage() == null ? e.toString() : e.getMessage()));
        }
    }

    private void fail(PrintWriter err, String message, Exception e) {
        err.println("Error: " + Table.oneLine(message));
        if (verbose) {
            e.printStackTrace(err);
        }
    }

    /** Checks the command line and builds its action; a wrong command line is a usage {@link CommandException}. */
    private MirrorAction toAction() {
        Actions a = actions == null ? new Actions() : actions;
        Selection s = selection == null ? new Selection() : selection;
        CreateOptions c = createOptions == null ? new CreateOptions() : createOptions;
        List<String> given = a.given();
        if (given.isEmpty()) {
            throw CommandException.usage("Exactly one action is needed: --create, --alter, --list, --describe, --delete, "
                    + "--start/--add, --stop/--remove, --pause, --resume, --verify, --add-acl, --remove-acl or "
                    + "--list-acls");
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
        if (!action.equals("--create") && !action.equals("--alter")) {
            c.firstGiven().ifPresent(option -> {
                throw CommandException.usage(option + " is only valid with --create");
            });
        }
        Optional<Operation> operation = operation(action);
        if (operation.isEmpty() && !s.topics.isEmpty() && !action.equals("--verify")) {
            throw CommandException.usage("--topic is only valid with --start/--add, --stop/--remove, --pause, "
                    + "--resume or --verify");
        }
        if (a.full && !action.equals("--verify")) {
            throw CommandException.usage("--full is only valid with --verify");
        }
        if (a.sourceCommandConfig != null && !action.equals("--verify")) {
            throw CommandException.usage("--source-command-config is only valid with --verify");
        }
        AclOptions acl = aclOptions == null ? new AclOptions() : aclOptions;
        if (acl.anyGiven() && !action.equals("--add-acl") && !action.equals("--remove-acl")) {
            throw CommandException.usage("--allow-principal, --deny-principal, --allow-host, --deny-host, --operation "
                    + "and --resource-pattern-type are only valid with --add-acl or --remove-acl");
        }
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
                return aclAction(action, requireMirror(action, s), acl);
            default:
                String mirror = requireMirror(action, s);
                if (s.topics.isEmpty()) {
                    throw CommandException.usage(action + " needs --topic REGEX");
                }
                return new MirrorTopicsAction(operation.orElseThrow(), action, mirror, s.topics);
        }
    }

    private static MirrorAclsAction aclAction(String action, String mirror, AclOptions acl) {
        boolean add = action.equals("--add-acl");
        List<MirrorAclsAction.Grantee> grantees = new ArrayList<>();
        acl.allowPrincipals.forEach(p -> grantees.add(new MirrorAclsAction.Grantee(principal(p),
                AclPermissionType.ALLOW, acl.allowHost)));
        acl.denyPrincipals.forEach(p -> grantees.add(new MirrorAclsAction.Grantee(principal(p),
                AclPermissionType.DENY, acl.denyHost)));
        if (grantees.isEmpty()) {
            throw CommandException.usage(action + " needs --allow-principal or --deny-principal");
        }
        if (add && acl.operations.isEmpty()) {
            throw CommandException.usage("--add-acl needs --operation");
        }
        List<AclOperation> operations = new ArrayList<>();
        for (String op : acl.operations) {
            AclOperation parsed = AclOperation.fromString(op.replace("-", "_").replaceAll("(?<=[a-z])(?=[A-Z])", "_"));
            if (!ClusterMirrorResource.OPERATIONS.contains(parsed)) {
                throw CommandException.usage("--operation " + op + " does not apply to a cluster mirror: use "
                        + "Create, Alter, Describe, Delete, AlterConfigs, DescribeConfigs or All");
            }
            operations.add(parsed);
        }
        PatternType pattern = PatternType.fromString(acl.patternType.toUpperCase(Locale.ROOT));
        if (pattern != PatternType.LITERAL && pattern != PatternType.PREFIXED) {
            throw CommandException.usage("--resource-pattern-type must be literal or prefixed, but got "
                    + acl.patternType);
        }
        return new MirrorAclsAction(add ? MirrorAclsAction.Kind.ADD : MirrorAclsAction.Kind.REMOVE,
                Optional.of(mirror), pattern, grantees, operations);
    }

    /** A principal as Kafka writes one, TYPE:NAME (kafka-acls' check). */
    private static String principal(String value) {
        int colon = value.indexOf(':');
        if (colon <= 0 || colon == value.length() - 1) {
            throw CommandException.usage("A principal is TYPE:NAME, e.g. User:alice, but got '" + value + "'");
        }
        return value;
    }

    private static String requireMirror(String action, Selection s) {
        if (s.mirror == null || s.mirror.isBlank()) {
            throw CommandException.usage(action + " needs --mirror NAME");
        }
        return s.mirror;
    }

    private static Optional<Operation> operation(String action) {
        return switch (action) {
            case "--start", "--add" -> Optional.of(Operation.START);
            case "--stop", "--remove" -> Optional.of(Operation.STOP);
            case "--pause" -> Optional.of(Operation.PAUSE);
            case "--resume" -> Optional.of(Operation.RESUME);
            default -> Optional.empty();
        };
    }

    private static void addIf(List<String> list, boolean condition, String value) {
        if (condition) {
            list.add(value);
        }
    }
}
