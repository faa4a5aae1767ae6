package io.twinlog.controller.store;

/**
 * A claimed controllership: the epoch, and the version of the epoch record ({@code /controller_epoch}) that every
 * write of this controller checks.
 */
public record ControllerEpoch(int epoch, int zkVersion) {
}
