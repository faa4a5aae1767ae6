package io.twinlog.bench;

/**
 * One figure of one system in one round, for the phases that report named figures rather than workloads (consumer
 * groups, fetch sessions); {@code higherIsBetter} tells how to read the Twinlog / Kafka ratio.
 */
record SystemFigure(String system, int round, String name, double value, String unit, boolean higherIsBetter) {
}
