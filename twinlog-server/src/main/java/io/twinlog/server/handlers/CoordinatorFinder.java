package io.twinlog.server.handlers;

import io.twinlog.protocol.Request;

/** Finds the coordinator of one FindCoordinator key of one key type (groups, transactional ids). */
@FunctionalInterface
public interface CoordinatorFinder {
    CoordinatorLocation find(Request request, String key, String listener);
}
