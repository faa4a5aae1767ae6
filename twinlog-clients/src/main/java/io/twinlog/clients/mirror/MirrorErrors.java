package io.twinlog.clients.mirror;

import java.util.Arrays;
import java.util.Optional;

/**
 * Error codes of the cluster-mirror APIs that Kafka has no code for. They live at 7100+, clear of Kafka's codes
 * (136 in 4.4; KIP-1279's prototype codes 134-146 already collide with upstream Kafka). Where Kafka has a fitting
 * code it is used instead: INVALID_REQUEST, INVALID_CONFIG, UNKNOWN_TOPIC_OR_PARTITION, INCONSISTENT_TOPIC_ID,
 * INVALID_REGULAR_EXPRESSION (128), NOT_CONTROLLER.
 */
public enum MirrorErrors {
    UNKNOWN_CLUSTER_MIRROR(7101, "No cluster mirror with this name exists."),
    CLUSTER_MIRROR_ALREADY_EXISTS(7102, "A cluster mirror with this name already exists."),
    INVALID_CLUSTER_MIRROR_NAME(7103, "The cluster mirror name is not valid."),
    TOPIC_ALREADY_IN_CLUSTER_MIRROR(7104, "The topic is mirrored by another cluster mirror."),
    TOPIC_NOT_IN_CLUSTER_MIRROR(7105, "The topic is not mirrored by this cluster mirror."),
    CLUSTER_MIRROR_NOT_EMPTY(7106, "The cluster mirror still has topics that are not stopped."),
    MIRROR_TOPIC_NOT_PAUSED(7107, "The mirror topic is not paused."),
    MIRROR_TOPIC_BEING_STOPPED(7108, "The mirror topic is being stopped."),
    INVALID_MIRROR_STATE(7109, "The mirror topic's state does not allow this operation."),
    SOURCE_CLUSTER_UNREACHABLE(7110, "The source cluster could not be reached."),
    CLUSTER_MIRROR_AUTHORIZATION_FAILED(7111, "The principal is not authorized to access this cluster mirror."),
    MIRROR_LOOP(7112, "The source topic is a mirror of this cluster: mirroring it back here would form a loop.");

    public final short code;
    public final String defaultMessage;

    MirrorErrors(int code, String defaultMessage) {
        this.code = (short) code;
        this.defaultMessage = defaultMessage;
    }

    public static Optional<MirrorErrors> forCode(short code) {
        return Arrays.stream(values()).filter(e -> e.code == code).findFirst();
    }
}
