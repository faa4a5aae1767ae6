package io.twinlog.campaign;

/** An invariant the campaign found broken: what it saw, in one message. Stops the campaign. */
final class CampaignViolation extends RuntimeException {
    enum Invariant { ACKNOWLEDGED_RECORD_LOST, DIVERGENT_REPLICAS, PARTITION_STUCK }

    private final Invariant invariant;

    CampaignViolation(Invariant invariant, String message) {
        super(invariant + ": " + message);
        this.invariant = invariant;
    }

    Invariant invariant() {
        return invariant;
    }
}
