package io.twinlog.campaign;

import java.util.EnumMap;
import java.util.Map;

/** What the campaign counted: printed after every round and at the end (docs/reliability.md's table). */
final class CampaignStats {
    int rounds;
    final Map<FaultKind, Integer> faults = new EnumMap<>(FaultKind.class);
    long acknowledged;
    long lost;
    long quarantined;
    int divergentReplicas;
    int stuckPartitions;
    /** Mirror partitions FAILED for good that the campaign restarted with --start, as an operator would. */
    int operatorRestarts;
    long failedSends;
    long consumed;

    void countFault(FaultKind kind) {
        faults.merge(kind, 1, Integer::sum);
    }

    String line() {
        return "rounds " + rounds + ", faults " + faults + ", records acknowledged " + acknowledged + ", lost " + lost
                + ", quarantined " + quarantined + ", divergent replicas " + divergentReplicas + ", stuck partitions "
                + stuckPartitions + ", operator restarts " + operatorRestarts + ", sends failed (not acknowledged) "
                + failedSends + ", consumed " + consumed;
    }
}
