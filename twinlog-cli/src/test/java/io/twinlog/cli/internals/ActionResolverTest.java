package io.twinlog.cli.internals;

import io.twinlog.cli.internals.MirrorTopicsAction.Operation;
import io.twinlog.clients.mirror.MirrorAdmin;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link ActionResolver}: which command lines are refused, with which one-line usage error, in which order, and the
 * action the others make. The option groups are filled here as picocli fills them.
 */
@Timeout(60)
class ActionResolverTest {
    private static final String BOOTSTRAP = ":9192";

    private final ActionFlags flags = new ActionFlags();
    private final MirrorSelection selection = new MirrorSelection();
    private final CreateOptions create = new CreateOptions();
    private final AclOptions acl = new AclOptions();

    private MirrorAction resolve() {
        return ActionResolver.resolve(BOOTSTRAP, 30_000, flags, selection, create, acl);
    }

    /** The action flag named (without its dashes) set, as picocli sets it. */
    private static ActionFlags only(String flag) {
        ActionFlags flags = new ActionFlags();
        switch (flag) {
            case "create" -> flags.create = true;
            case "alter" -> flags.alter = true;
            case "delete" -> flags.delete = true;
            case "start" -> flags.start = true;
            case "add" -> flags.add = true;
            case "stop" -> flags.stop = true;
            case "pause" -> flags.pause = true;
            case "resume" -> flags.resume = true;
            case "verify" -> flags.verify = true;
            case "add-acl" -> flags.addAcl = true;
            default -> throw new IllegalArgumentException(flag);
        }
        return flags;
    }

    private void assertUsageError(String message) {
        CommandException e = assertThrows(CommandException.class, this::resolve);
        assertTrue(e.isUsageError(), e.getMessage());
        assertEquals(message, e.getMessage());
    }

    @Test
    void aCommandLineWithoutAnActionIsRefused() {
        assertUsageError("Exactly one action is needed: --create, --alter, --list, --describe, --delete, "
                + "--start/--add, --stop/--remove, --pause, --resume, --verify, --add-acl, --remove-acl or "
                + "--list-acls");
    }

    @Test
    void twoActionsAreRefusedNamedInAFixedOrder() {
        flags.describe = true;
        flags.list = true;
        assertUsageError("Only one action at a time, but got --list and --describe");
    }

    @Test
    void theDestinationAndAPositiveTimeoutAreNeeded() {
        flags.list = true;
        CommandException missing = assertThrows(CommandException.class, () -> ActionResolver.resolve(null, 30_000,
                flags, selection, create, acl));
        assertEquals("Missing required option --bootstrap-server HOST:PORT[,...]", missing.getMessage());
        assertThrows(CommandException.class, () -> ActionResolver.resolve("no-port", 30_000, flags, selection, create,
                acl));
        CommandException timeout = assertThrows(CommandException.class, () -> ActionResolver.resolve(BOOTSTRAP, 0,
                flags, selection, create, acl));
        assertEquals("--timeout-ms must be positive, but got 0", timeout.getMessage());
    }

    @Test
    void anOptionOfAnotherActionIsRefusedNamingWhereItBelongs() {
        flags.list = true;
        create.include = List.of("orders");
        assertUsageError("--include is only valid with --create");
        create.include = List.of();
        selection.topics = List.of("orders");
        assertUsageError("--topic is only valid with --start/--add, --stop/--remove, --pause, --resume or --verify");
        selection.topics = List.of();
        flags.full = true;
        assertUsageError("--full is only valid with --verify");
        flags.full = false;
        flags.sourceCommandConfig = Path.of("source.properties");
        assertUsageError("--source-command-config is only valid with --verify");
        flags.sourceCommandConfig = null;
        acl.denyHost = "10.0.0.1";
        assertUsageError("--allow-principal, --deny-principal, --allow-host, --deny-host, --operation and "
                + "--resource-pattern-type are only valid with --add-acl or --remove-acl");
    }

    @Test
    void theMirrorIsNeededByEveryActionButListingOnes() {
        for (String action : List.of("create", "alter", "delete", "stop", "verify", "add-acl")) {
            // create and alter check their options first: they have what they need but the mirror
            CreateOptions options = new CreateOptions();
            if (action.equals("create") || action.equals("alter")) {
                options.sourceBootstrapServer = "source:9092";
            }
            CommandException e = assertThrows(CommandException.class, () -> ActionResolver.resolve(BOOTSTRAP, 1,
                    only(action), selection, options, new AclOptions()));
            assertEquals("--" + action + " needs --mirror NAME", e.getMessage());
        }
        flags.list = true;
        assertEquals(ListMirrors.class, resolve().getClass());
    }

    @Test
    void createSendsTheSourceAndTheSettingsAsConfigs() {
        flags.create = true;
        selection.mirror = "m";
        create.sourceBootstrapServer = "source:9092";
        create.include = List.of("orders.*");
        create.groupsInclude = List.of("");
        create.replicationThrottledRate = 1000L;
        CreateMirror action = assertInstanceOf(CreateMirror.class, resolve());
        assertEquals("m", action.mirror());
        assertEquals(Map.of(CreateMirror.BOOTSTRAP_SERVERS, "source:9092", CreateMirror.TOPIC_INCLUDE, "orders.*",
                CreateMirror.GROUPS_INCLUDE, "", CreateMirror.REPLICATION_THROTTLED_RATE, "1000"), action.configs());
    }

    @Test
    void alterNeedsSomethingToChangeAndSendsOnlyThat() {
        flags.alter = true;
        selection.mirror = "m";
        assertUsageError("--alter needs at least one of the --create options to change");
        create.groupsSyncIntervalMs = 5000L;
        AlterMirror action = assertInstanceOf(AlterMirror.class, resolve());
        assertEquals(Map.of(CreateMirror.GROUPS_SYNC_INTERVAL_MS, "5000"), action.changes());
    }

    @Test
    void aTopicActionNeedsTopicsAndKeepsTheSpellingItWasGiven() {
        flags.remove = true;
        selection.mirror = "m";
        assertUsageError("--remove needs --topic REGEX");
        selection.topics = List.of(".*");
        MirrorTopicsAction action = assertInstanceOf(MirrorTopicsAction.class, resolve());
        assertEquals(Operation.STOP, action.operation());
        assertEquals("m", action.mirror());
        assertEquals(List.of(".*"), action.topicPatterns());
    }

    @Test
    void atMakesAStopAFailoverToAPointInTimeAndIsRefusedElsewhere() {
        selection.mirror = "m";
        selection.topics = List.of("orders");
        flags.stop = true;
        flags.at = "2026-12-07T10:14:00Z";
        PointInTimeFailover action = assertInstanceOf(PointInTimeFailover.class, resolve());
        assertEquals(OptionalLong.of(1796638440000L), action.atMs());
        flags.at = "2026-12-07T11:14:00+01:00";
        assertEquals(OptionalLong.of(1796638440000L), ((PointInTimeFailover) resolve()).atMs());
        flags.at = "1796638440000";
        assertEquals(OptionalLong.of(1796638440000L), ((PointInTimeFailover) resolve()).atMs());
        flags.at = "common";
        assertEquals(OptionalLong.empty(), ((PointInTimeFailover) resolve()).atMs());
        flags.at = "2026-12-07T10:14:00";
        assertUsageError("--at takes epoch milliseconds, an ISO-8601 time with a zone (such as 2026-12-07T10:14:00Z "
                + "or 2026-12-07T11:14:00+01:00) or 'common', but got '2026-12-07T10:14:00'");
        flags.at = null;
        flags.dryRun = true;
        assertTrue(((PointInTimeFailover) resolve()).isDryRun(), "a plain failover's dry run");
        flags.at = "1796638440000";
        PointInTimeFailover dryRun = (PointInTimeFailover) resolve();
        assertTrue(dryRun.isDryRun());
        assertEquals(OptionalLong.of(1796638440000L), dryRun.atMs());
        flags.stop = false;
        flags.pause = true;
        assertUsageError("--at is only valid with --stop/--remove");
        flags.at = null;
        assertUsageError("--dry-run is only valid with --stop/--remove");
    }

    @Test
    void aPartitionsOutcomeIsOneLine() {
        assertEquals("orders-0: kept up to offset 120 (newest kept batch 2026-12-07T10:13:59.512Z), quarantined 35 "
                + "records, offsets [120,155)", PointInTimeFailover.line(new MirrorAdmin.PointInTimeResult("orders", 0,
                "REACHED", 120, 1796638439512L, 120, 155, 35)));
        assertEquals("orders-1: not reached (the timeout passed): stopped short of the time at "
                + "2026-12-07T10:13:59.512Z; kept up to offset 80 (newest kept batch 2026-12-07T10:13:59.512Z), "
                + "nothing after the time to quarantine", PointInTimeFailover.line(new MirrorAdmin.PointInTimeResult(
                "orders", 1, "TIMED_OUT", 80, 1796638439512L, -1, -1, 0)));
        // a broker counts the quarantined records no more (-1): the offsets say what went
        assertEquals("orders-0: kept up to offset 120 (newest kept batch 2026-12-07T10:13:59.512Z), quarantined "
                + "offsets [120,155)", PointInTimeFailover.line(new MirrorAdmin.PointInTimeResult("orders", 0,
                "REACHED", 120, 1796638439512L, 120, 155, -1)));
    }

    @Test
    void aPartitionsDryRunIsOneLineWithItsRpo() {
        long at = 1796638440000L;
        MirrorAdmin.FailoverPreview cut = new MirrorAdmin.FailoverPreview("orders", 0, (short) 0, 155, 120,
                at - 488, 35, at + 60_000, at + 120_000);
        assertEquals("would keep up to offset 120 (newest kept batch 2026-12-07T10:13:59.512Z), quarantine 35 records, "
                + "offsets [120,155); RPO 120.0 s", FailoverDryRun.line(cut, at, at + 60_000));
        // not there yet: it would wait; the RPO is how far it got
        MirrorAdmin.FailoverPreview behind = new MirrorAdmin.FailoverPreview("orders", 1, (short) 0, 80, 80,
                at - 47_999, 0, -1, at + 120_000);
        assertEquals("would keep up to offset 80 (newest kept batch 2026-12-07T10:13:12.001Z), nothing after the time "
                + "to quarantine; not reached yet (mirrored up to 2026-12-07T10:13:12.001Z): the failover would wait "
                + "for it up to --timeout-ms; RPO 168.0 s", FailoverDryRun.line(behind, at, at - 47_999));
        // a plain failover keeps everything
        assertEquals("would keep up to offset 80 (newest kept batch 2026-12-07T10:13:12.001Z); RPO 168.0 s",
                FailoverDryRun.line(behind, -1, at - 47_999));
    }

    @Test
    void eachTopicFlagIsItsOperation() {
        selection.mirror = "m";
        selection.topics = List.of("t");
        Map<String, Operation> expected = Map.of("start", Operation.START, "add", Operation.START,
                "stop", Operation.STOP, "pause", Operation.PAUSE, "resume", Operation.RESUME);
        expected.forEach((flag, operation) -> {
            MirrorAction action = ActionResolver.resolve(BOOTSTRAP, 1, only(flag), selection, create, acl);
            assertEquals(operation, ((MirrorTopicsAction) action).operation(), flag);
        });
    }

    @Test
    void listAclsNeedsNoMirrorAndOptionGroupsPicocliLeftUnsetReadAsEmpty() {
        flags.listAcls = true;
        MirrorAclsAction action = assertInstanceOf(MirrorAclsAction.class, ActionResolver.resolve(BOOTSTRAP, 1,
                flags, null, null, null));
        assertEquals(MirrorAclsAction.Kind.LIST, action.kind());
        assertEquals(Optional.empty(), action.mirror());
    }

    @Test
    void verifyTakesItsTopicsAndFull() {
        flags.verify = true;
        flags.full = true;
        selection.mirror = "m";
        selection.topics = List.of("orders");
        assertInstanceOf(VerifyMirror.class, resolve());
    }
}
