package io.twinlog.campaign;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * CI's short fault campaign (issue 25, point 11): five minutes of rounds with a fixed seed over real ZooKeeper and
 * broker processes. {@code -Dtwinlog.campaign.duration=2m} (or {@code 0s} to skip) and
 * {@code -Dtwinlog.campaign.seed=S} change the run, {@code -Dtwinlog.campaign.faults=KIND,...} the faults drawn; a
 * failure names its seed and round and keeps the data dirs.
 *
 * <p>By default the first ten kinds (SEED_000_UNCLEAN again since defect 1 of docs/reliability.md is fixed).
 * DISK_FULL, CLOCK_STEP and TWO_AT_ONCE are left out until a five-minute run with them has been measured (a new kind
 * changes the whole seeded sequence), and CLOCK_STEP needs libfaketime, which CI's machine does not install.
 * Rounds start until the duration is up, so the test takes the duration plus the set-up (~1 min) and one round.
 */
@Timeout(300)
class FaultCampaignTest {
    @Test
    @Timeout(value = 15, unit = TimeUnit.MINUTES)
    void everyInvariantHoldsForTheFixedSeed() throws Exception {
        Duration duration = CampaignMain.parseDuration(System.getProperty("twinlog.campaign.duration", "5m"));
        assumeTrue(!duration.isZero(), "twinlog.campaign.duration=0: the campaign is skipped");
        long seed = Long.getLong("twinlog.campaign.seed", 20261203L);
        File workDir = Files.createTempDirectory("twinlog-campaign-" + seed + "-").toFile();
        List<FaultKind> kinds = CampaignMain.parseFaults(System.getProperty("twinlog.campaign.faults",
                "BROKER_KILL,ZOOKEEPER_FOLLOWER_KILL,ZOOKEEPER_LEADER_KILL,BROKER_PARTITION,ZOOKEEPER_PARTITION,"
                        + "CLUSTER_PARTITION,FAILOVER_FAILBACK,SEED_000_CLEAN,SEED_000_UNCLEAN,SEED_003"));
        FaultCampaign.Result result = new FaultCampaign(seed, duration, kinds, workDir, false, System.out).run();
        assertTrue(result.passed(), "Fault campaign failed: " + result.failure() + "; replay with "
                + "-Dtwinlog.campaign.seed=" + seed + " or bin/twinlog-fault-campaign.sh --seed " + seed + " --faults "
                + String.join(",", kinds.stream().map(Enum::name).toList())
                + "; data kept in " + result.workDir() + "; " + result.stats().line());
    }
}
