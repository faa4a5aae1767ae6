package io.twinlog.mirror.partition;

/**
 * Why a mirror partition cannot be mirrored from its source now, as the mirror fetcher or the manager sees it on
 * its own (not a report about one fetch): the state machine acts on it at every pass, whatever the partition is
 * doing, so the outcome does not depend on which fetch happened to fail first.
 *
 * @param reason what the operator reads in describe's ERROR column, stable while the cause lasts (no durations or
 *               counts that change from one pass to the next, or every pass would write a new record)
 * @param kind   what the state machine does about it
 */
public record SourceProblem(String reason, Kind kind) {
    public enum Kind {
        /**
         * The source no longer holds what this partition mirrors: its topic was deleted, or created again with
         * another topic ID. FAILED, not retried: the operator decides (fail over to keep the topic, or delete it
         * and mirror the new source topic).
         */
        GONE,
        /**
         * The source address answers for another cluster than the recorded source cluster (a DNS entry or proxy
         * pointing elsewhere, a source rebuilt): a doubt, not an answer. A MIRRORING partition goes FAILED with
         * this reason at once (nothing of that cluster is fetched), a FAILED one stays FAILED, each retry that falls
         * due meanwhile counted, and mirroring resumes by itself once the recorded cluster answers again; a
         * failback's truncation asks the peer itself and waits (decisions 55, 68).
         */
        WRONG_CLUSTER,
        /**
         * No source broker has answered for longer than the bound ({@code mirror.state.timeout.ms}): a MIRRORING
         * partition goes FAILED with this reason; a FAILED one stays FAILED, each retry that falls due while the
         * source is still away counted as an attempt.
         */
        UNREACHABLE,
        /**
         * The last attempt to reach the source failed, within the bound: nothing is failed for it yet, but a
         * FAILED partition does not retry into MIRRORING (where it would show a lag of a source it cannot see, and
         * fail again a few seconds later) until the source answers.
         */
        UNANSWERED
    }

    public static SourceProblem gone(String reason) {
        return new SourceProblem(reason, Kind.GONE);
    }

    public static SourceProblem unreachable(String reason) {
        return new SourceProblem(reason, Kind.UNREACHABLE);
    }

    public static SourceProblem wrongCluster(String reason) {
        return new SourceProblem(reason, Kind.WRONG_CLUSTER);
    }

    public static SourceProblem unanswered(String reason) {
        return new SourceProblem(reason, Kind.UNANSWERED);
    }

    public boolean retriable() {
        return kind != Kind.GONE;
    }
}
