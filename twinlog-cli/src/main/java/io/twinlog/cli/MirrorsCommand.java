package io.twinlog.cli;

import io.twinlog.cli.internals.AclOptions;
import io.twinlog.cli.internals.ActionFlags;
import io.twinlog.cli.internals.ActionResolver;
import io.twinlog.cli.internals.AdminConfigs;
import io.twinlog.cli.internals.CommandException;
import io.twinlog.cli.internals.ConsoleProgress;
import io.twinlog.cli.internals.CreateOptions;
import io.twinlog.cli.internals.ErrorOutput;
import io.twinlog.cli.internals.MirrorAction;
import io.twinlog.cli.internals.MirrorSelection;
import io.twinlog.cli.internals.PointInTimeFailover;
import io.twinlog.cli.internals.VerifyMirror;
import io.twinlog.clients.mirror.MirrorAdmin;
import org.apache.kafka.common.KafkaException;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.Callable;

/**
 * {@code bin/twinlog-mirrors.sh}: cluster mirrors on a Twinlog destination cluster, in the manner of Kafka's tools —
 * {@code --bootstrap-server}, exactly one action flag, the options of that action. This class holds the command's
 * help and its flow; the jobs are classes of {@code internals}: the option groups picocli fills ({@link ActionFlags},
 * {@link MirrorSelection}, {@link CreateOptions}, {@link AclOptions}), the checks that turn them into one action
 * ({@link ActionResolver}), each action over {@link MirrorAdmin} ({@link MirrorAction}), and the error lines
 * ({@link ErrorOutput}).
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
            "           [--topic-prefix PREFIX [--topic-prefix-separator SEP]]",
            "  --alter --mirror NAME [any option of --create]",
            "  --list [--mirror NAME]",
            "  --describe [--mirror NAME]",
            "  --delete --mirror NAME",
            "  --start|--add|--stop|--remove|--pause|--resume --mirror NAME --topic REGEX [--topic REGEX]...",
            "  --stop|--remove --mirror NAME --topic REGEX... [--at TIMESTAMP|common] [--dry-run] [--timeout-ms MS]",
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
            "  twinlog-mirrors.sh --bootstrap-server :9192 --stop --topic orders --mirror my-mirror \\",
            "      --at 2026-12-07T10:14:00Z --timeout-ms 60000",
            "  twinlog-mirrors.sh --bootstrap-server :9192 --delete --mirror my-mirror",
            "  twinlog-mirrors.sh --bootstrap-server :9192 --command-config admin.properties --add-acl \\",
            "      --mirror my-mirror --allow-principal User:dr-operator --operation Alter --operation Describe",
            "",
            "Exit code 0 on success, 1 on any error (one line on stderr; --verbose adds the stack trace)."
        })
public final class MirrorsCommand implements Callable<Integer> {
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
    private ActionFlags actions = new ActionFlags();

    @ArgGroup(validate = false, heading = "%nWhich mirror and topics:%n", order = 20)
    private MirrorSelection selection = new MirrorSelection();

    @ArgGroup(validate = false, heading = "%nOptions of --create:%n", order = 30)
    private CreateOptions createOptions = new CreateOptions();

    @ArgGroup(validate = false, heading = "%nOptions of --add-acl and --remove-acl:%n", order = 50)
    private AclOptions aclOptions = new AclOptions();

    public static void main(String[] args) {
        System.exit(newCommandLine().execute(args));
    }

    /** The command as {@link #main} runs it: parse errors reported on one line plus a usage hint, exit code 1. */
    public static CommandLine newCommandLine() {
        CommandLine commandLine = new CommandLine(new MirrorsCommand());
        commandLine.setParameterExceptionHandler((e, args) -> {
            ErrorOutput.parseError(e.getCommandLine().getErr(), e.getMessage());
            return 1;
        });
        return commandLine;
    }

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        // --verify answers 0 (nothing differs), 1 (something does) or 2 (it could not tell); the others 0 or 1
        int errorStatus = actions != null && actions.isVerify() ? 2 : 1;
        try {
            MirrorAction action = ActionResolver.resolve(bootstrapServer, timeoutMs, actions, selection,
                    createOptions, aclOptions);
            Map<String, Object> adminConfigs = AdminConfigs.build(Optional.ofNullable(commandConfig),
                    bootstrapServer.trim(), timeoutGiven() ? OptionalInt.of(timeoutMs) : OptionalInt.empty());
            if (action instanceof PointInTimeFailover f && !f.isDryRun()) {
                // --timeout-ms bounds the wait for the time; the answer comes after it and the failover
                adminConfigs.put(AdminConfigs.REQUEST_TIMEOUT_MS, (int) f.answerTimeoutMs());
                adminConfigs.put(AdminConfigs.DEFAULT_API_TIMEOUT_MS, (int) f.answerTimeoutMs());
            }
            if (action instanceof PointInTimeFailover f) {
                action = f.reading(adminConfigs);
            }
            if (action instanceof VerifyMirror v) {
                action = v.reading(adminConfigs).showingProgress(ConsoleProgress.on(err));
            }
            try (MirrorAdmin admin = newAdmin(adminConfigs)) {
                action.run(admin, out);
            }
            return action instanceof VerifyMirror v && v.differs() ? 1 : 0;
        } catch (IOException | RuntimeException e) {
            // broad: every error of the command, its own, the broker's, the network's or a bug, is reported as
            // one line (ErrorOutput tells them apart), with the stack trace under --verbose
            new ErrorOutput(err, verbose).report(e);
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
}
