package io.twinlog.launcher.demo;

import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.PrintStream;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * {@code bin/twinlog-quickstart.sh --demo}: a guided first run over the quickstart's two clusters (issue 15 point
 * 3). Nine steps, each printed as a numbered heading with the command an operator would type and its result in
 * plain sentences, each ending in checks: create a topic on the source, produce, mirror it (topic ID, offsets and
 * epochs side by side), a consumer group commits partway on the source, failover with KIP-1279's
 * RemoveTopicsFromMirror, the group resumes on the destination, writes there (and stray writes on the old source),
 * failback (the source truncates to the last mirrored epoch, catches up, fails over back, and the destination
 * mirrors it again), and a batch-by-batch and record-by-record comparison of both clusters.
 *
 * <p>Each step needs the one before: a step that cannot go on (a wait runs out, a call is refused) ends the demo;
 * a check that does not hold is printed as {@code FAILED: ...} and the demo goes on. {@link #run} answers whether
 * every check held. Runs on the caller's thread; clients are made and closed here. A topic name already used on
 * either cluster (an earlier demo in the same data directory) makes it use {@code demo-2}, {@code demo-3}, ...
 *
 * <p>This class runs the walk-through; the steps are {@link MirroringSteps} (1-4) and {@link FailoverSteps} (5-9),
 * over the demo topic and what they recorded of it ({@link DemoTopic}).
 */
public final class QuickstartDemo {
    private static final Logger log = LoggerFactory.getLogger(QuickstartDemo.class);
    private static final int STEPS = 9;

    /** One step: prints its heading, acts, checks; throws when it cannot go on. */
    @FunctionalInterface
    private interface Step {
        void run() throws Exception;
    }

    private final ClusterView source;
    private final ClusterView destination;
    private final String mirror;
    private final short replicationFactor;
    private final DemoConsole console;
    private final Polls polls;
    private final Time time;

    private QuickstartDemo(ClusterView source, ClusterView destination, String mirror, short replicationFactor,
                           DemoConsole console, Time time) {
        this.source = source;
        this.destination = destination;
        this.mirror = mirror;
        this.replicationFactor = replicationFactor;
        this.console = console;
        this.time = time;
        this.polls = new Polls(time);
    }

    /**
     * Runs the demo against running clusters: {@code mirror} exists on the destination and pulls from the source.
     *
     * @param replicationFactor of the demo topic (at most the brokers per cluster)
     * @return whether every check held
     */
    public static boolean run(String sourceBootstrap, String destinationBootstrap, String mirror,
                              int replicationFactor, PrintStream out) {
        try (ClusterView source = new ClusterView("source", sourceBootstrap, shortAddress(sourceBootstrap));
             ClusterView destination = new ClusterView("destination", destinationBootstrap,
                     shortAddress(destinationBootstrap))) {
            return new QuickstartDemo(source, destination, mirror, (short) replicationFactor,
                    new DemoConsole(out, STEPS), Time.SYSTEM).walkThrough();
        }
    }

    /** {@code 127.0.0.1:9092,127.0.0.1:9093} as an operator types it on the same machine: {@code :9092}. */
    static String shortAddress(String bootstrap) {
        String first = bootstrap.split(",")[0];
        return first.startsWith("127.0.0.1:") || first.startsWith("localhost:")
                ? first.substring(first.indexOf(':')) : first;
    }

    private boolean walkThrough() {
        long startMs = time.milliseconds();
        console.line("Twinlog guided demo: cluster mirroring as in KIP-1279, in " + STEPS + " steps.");
        console.line("  source cluster " + source.address() + " (" + source.bootstrap() + ")");
        console.line("  destination cluster " + destination.address() + " (" + destination.bootstrap()
                + "), with the cluster mirror '" + mirror + "' pulling from the source");
        console.line("Each step shows the command an operator would type for it ($ ...), what happened, and the checks "
                + "it makes (ok: / FAILED:).");
        int step = 0;
        try {
            DemoTopic demo = new DemoTopic(topicName(), polls, time);
            MirroringSteps mirroring = new MirroringSteps(source, destination, mirror, replicationFactor, console,
                    polls, demo);
            FailoverSteps failover = new FailoverSteps(source, destination, mirror, console, polls, demo);
            List<Step> steps = List.of(mirroring::createTopic, mirroring::produce, mirroring::mirrorTopic,
                    mirroring::commitOnSource, failover::failOver, failover::resumeOnDestination,
                    failover::writeOnDestination, failover::failBack, failover::compareClusters);
            for (Step s : steps) {
                step++;
                s.run();
            }
        } catch (DemoFailure e) {
            log.error("Demo step {} could not go on", step, e);
            console.failed("step " + step + ": " + e.getMessage());
        } catch (Exception e) {
            // broad: any step's failure ends the demo with a FAILED line and its trace in the log, and the demo
            // still prints its summary and exits 1
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            log.error("Demo step {} failed", step, e);
            console.failed("step " + step + ": " + e);
        }
        if (step < STEPS) {
            console.say("Steps " + (step + 1) + " to " + STEPS + " skipped: each needs the one before.");
        }
        long seconds = (time.milliseconds() - startMs + 500) / 1000;
        console.blank();
        if (console.failures() == 0) {
            console.line("=== Demo done in " + seconds + " s: all " + console.checks() + " checks held. ===");
        } else {
            console.line("=== Demo FAILED in " + seconds + " s: " + console.failures() + " of " + console.checks()
                    + " checks did not hold (the FAILED lines above). ===");
        }
        return console.failures() == 0;
    }

    /** The first of demo, demo-2, demo-3, ... that neither cluster has. */
    private String topicName() throws Exception {
        Set<String> taken = new HashSet<>(source.topics());
        taken.addAll(destination.topics());
        String topic = "demo";
        for (int i = 2; taken.contains(topic); i++) {
            topic = "demo-" + i;
        }
        return topic;
    }
}
