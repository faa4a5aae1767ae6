package io.twinlog.campaign;

import java.io.File;
import java.io.PrintStream;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * {@code bin/twinlog-fault-campaign.sh --seed S --duration 10m [--faults KIND,...] [--work-dir DIR] [--keep-data]
 * [--netns]}: runs the {@link FaultCampaign} and exits 0 when every invariant held, 1 when one broke (its seed and
 * round printed, data kept), 2 on bad arguments or a kind this machine cannot run (DISK_FULL mounts a tmpfs: root or
 * CAP_SYS_ADMIN; CLOCK_STEP preloads libfaketime); without {@code --faults} such a kind is left out with the reason.
 * {@code --netns} runs each process in a network namespace of its own ({@link NetnsHosts}: root and iproute2), and
 * is refused with the reason where it cannot; without it every process shares loopback.
 */
public final class CampaignMain {
    private CampaignMain() {
    }

    public static void main(String[] args) throws Exception {
        long seed = System.currentTimeMillis();
        Duration duration = Duration.ofMinutes(10);
        File workDir = null;
        boolean keepData = false;
        List<FaultKind> kinds = null;
        boolean netns = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--seed" -> seed = Long.parseLong(value(args, ++i, "--seed"));
                case "--duration" -> duration = parseDuration(value(args, ++i, "--duration"));
                case "--work-dir" -> workDir = new File(value(args, ++i, "--work-dir"));
                case "--keep-data" -> keepData = true;
                case "--faults" -> kinds = parseFaults(value(args, ++i, "--faults"));
                case "--netns" -> netns = true;
                case "-h", "--help" -> {
                    System.out.println(USAGE);
                    return;
                }
                default -> usage("unknown argument " + args[i]);
            }
        }
        if (kinds == null) {
            kinds = availableKinds(System.out);
        } else {
            for (FaultKind kind : kinds) {
                Optional<String> reason = FaultCampaign.unavailableReason(kind);
                if (reason.isPresent()) {
                    usage(kind + " cannot run on this machine: " + reason.get());
                }
            }
        }
        if (netns) {
            Optional<String> reason = NetnsHosts.unavailableReason();
            if (reason.isPresent()) {
                usage("--netns cannot run on this machine: " + reason.get());
            }
        }
        if (workDir == null) {
            workDir = Files.createTempDirectory("twinlog-campaign-" + seed + "-").toFile();
        }
        FaultCampaign.Result result = new FaultCampaign(seed, duration, kinds, workDir, keepData, netns,
                System.out).run();
        System.exit(result.passed() ? 0 : 1);
    }

    /** Every kind this machine can run; each one left out is named with the reason. */
    static List<FaultKind> availableKinds(PrintStream out) {
        List<FaultKind> kinds = new ArrayList<>();
        for (FaultKind kind : FaultKind.values()) {
            Optional<String> reason = FaultCampaign.unavailableReason(kind);
            if (reason.isPresent()) {
                out.println(kind + " left out: " + reason.get());
            } else {
                kinds.add(kind);
            }
        }
        return kinds;
    }

    private static final String USAGE = "Usage: bin/twinlog-fault-campaign.sh [--seed S] [--duration 10m|90s|2h] "
            + "[--faults KIND,KIND...] [--work-dir DIR] [--keep-data] [--netns]\n  kinds: " + Arrays.toString(FaultKind.values());

    /** {@code 90s}, {@code 10m}, {@code 2h}, or ISO-8601 ({@code PT10M}). */
    static Duration parseDuration(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        try {
            if (t.startsWith("pt")) {
                return Duration.parse(t.toUpperCase(Locale.ROOT));
            }
            long n = Long.parseLong(t.substring(0, t.length() - 1));
            return switch (t.charAt(t.length() - 1)) {
                case 's' -> Duration.ofSeconds(n);
                case 'm' -> Duration.ofMinutes(n);
                case 'h' -> Duration.ofHours(n);
                default -> throw new IllegalArgumentException();
            };
        } catch (RuntimeException e) {
            // broad: any parse failure of the value is the same usage error
            throw new IllegalArgumentException("--duration takes 90s, 10m, 2h or PT10M, not '" + text + "'");
        }
    }

    /** {@code BROKER_KILL,SEED_003}: the kinds to draw from, any case. */
    static List<FaultKind> parseFaults(String text) {
        List<FaultKind> out = new ArrayList<>();
        for (String name : text.split(",")) {
            try {
                out.add(FaultKind.valueOf(name.trim().toUpperCase(Locale.ROOT)));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--faults: unknown kind '" + name.trim() + "'; kinds: "
                        + Arrays.toString(FaultKind.values()));
            }
        }
        return out;
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            usage(option + " needs a value");
        }
        return args[i];
    }

    private static void usage(String problem) {
        System.err.println("twinlog-fault-campaign: " + problem + "\n" + USAGE);
        System.exit(2);
    }
}
