package io.twinlog.controller.zk;

/**
 * The ZooKeeper paths of cluster metadata (the whole layout, with every node's fields and who writes and watches it:
 * docs/zookeeper-layout.md). Names follow Apache Kafka's ZooKeeper-mode layout so operators recognise them; values
 * are JSON.
 *
 * <pre>
 * /cluster/id                                         {"version":1,"id":"&lt;base64 uuid&gt;"}
 * /brokers/ids/&lt;brokerId&gt;                              ephemeral {"version":1,"endpoints":[..],"rack":..}
 * /brokers/topics/&lt;topic&gt;                              {"version":1,"topicId":..,"partitions":{"0":[1,2],..}}
 * /brokers/topics/&lt;topic&gt;/partitions/&lt;p&gt;/state        {"version":1,"leader":1,"leaderEpoch":0,"isr":[1,2],..}
 * /config/topics/&lt;topic&gt;                               {"version":1,"config":{"retention.ms":"..."}}
 * /config/groups/&lt;group&gt;                               {"version":1,"config":{"share.auto.offset.reset":"earliest"}}
 * /latest_producer_id_block                           {"version":1,"broker":1,"blockStart":0,"blockEnd":999}
 * /controller                                         ephemeral {"version":1,"brokerId":1}
 * /controller_epoch                                   {"version":1,"epoch":3}   (its ZooKeeper version fences writes)
 * </pre>
 *
 * <p>The controller's epoch is only in {@code /controller_epoch}: the winner of {@code /controller} claims the next
 * one there afterwards, so the ephemeral node carries the broker id alone.
 */
public final class ZkPaths {
    public static final String CLUSTER_ID = "/cluster/id";
    public static final String BROKER_IDS = "/brokers/ids";
    public static final String BROKERS = "/brokers";
    public static final String TOPICS = "/brokers/topics";
    public static final String TOPIC_CONFIGS = "/config/topics";
    /**
     * SCRAM credentials and client quotas per user, in Kafka's ZooKeeper layout: {@code /config/users/<sanitized
     * user>}, and a user's quotas per client id under {@code /config/users/<user>/clients/<sanitized client id>}.
     */
    public static final String USER_CONFIGS = "/config/users";
    /** Client quotas per client id (Kafka's layout): {@code /config/clients/<sanitized client id>}. */
    public static final String CLIENT_CONFIGS = "/config/clients";
    /** Connection-rate quotas per client address (Kafka's layout): {@code /config/ips/<ip>}. */
    public static final String IP_CONFIGS = "/config/ips";
    /** Dynamic broker configs (Kafka's layout): {@code /config/brokers/<broker id>} and {@code /config/brokers/<default>}. */
    public static final String BROKER_CONFIGS = "/config/brokers";
    /** Per-group configs (KIP-848/KIP-932): {@code /config/groups/<sanitized group id>}. */
    public static final String GROUP_CONFIGS = "/config/groups";
    /** The node name of an entity's default (all users, all client ids), as in Kafka's ZooKeeper layout. */
    public static final String DEFAULT_ENTITY = "<default>";
    public static final String PRODUCER_ID_BLOCK = "/latest_producer_id_block";
    public static final String CONTROLLER = "/controller";
    public static final String CONTROLLER_EPOCH = "/controller_epoch";
    public static final String MIRRORS = "/mirrors";
    public static final String MIRROR_STATES = "/mirror_states";
    /** Mirror partitions' progress (source high watermark, destination log end): written often, watched by none. */
    public static final String MIRROR_PROGRESS = "/mirror_progress";
    /** Per broker, the mirror truncation points its replicas applied (decision 38): written rarely, watched by all. */
    public static final String MIRROR_TRUNCATIONS = "/mirror_truncations";
    /** Topics whose deletion began and has not finished (Kafka's path): what the controller completes. */
    public static final String DELETE_TOPICS = "/admin/delete_topics";
    /** The finalized feature levels (Kafka's ZooKeeper-mode node): {@code {"version":1,"features":{name:level}}}. */
    public static final String FEATURE = "/feature";

    private ZkPaths() {
    }

    public static String topicDeletion(String topic) {
        return DELETE_TOPICS + "/" + topic;
    }

    public static String mirrorTruncations(int brokerId) {
        return MIRROR_TRUNCATIONS + "/" + brokerId;
    }

    public static String broker(int brokerId) {
        return BROKER_IDS + "/" + brokerId;
    }

    public static String topic(String topic) {
        return TOPICS + "/" + topic;
    }

    public static String partitions(String topic) {
        return topic(topic) + "/partitions";
    }

    public static String partition(String topic, int partition) {
        return partitions(topic) + "/" + partition;
    }

    public static String partitionState(String topic, int partition) {
        return partition(topic, partition) + "/state";
    }

    /** The mirror state records of a topic's partitions (parent of {@link #mirrorState}). */
    public static String mirrorStates(String topic) {
        return MIRROR_STATES + "/" + topic;
    }

    /** The progress records of a topic's partitions (parent of {@link #mirrorProgress}). */
    public static String mirrorProgress(String topic) {
        return MIRROR_PROGRESS + "/" + topic;
    }

    public static String mirrorState(String topic, int partition) {
        return mirrorStates(topic) + "/" + partition;
    }

    public static String mirrorProgress(String topic, int partition) {
        return mirrorProgress(topic) + "/" + partition;
    }

    public static String topicConfig(String topic) {
        return TOPIC_CONFIGS + "/" + topic;
    }

    /** {@code entity} is a broker id or {@link #DEFAULT_ENTITY}. */
    public static String brokerConfig(String entity) {
        return BROKER_CONFIGS + "/" + entity;
    }

    /** {@code sanitizedUser}: the user name as Kafka's {@code Sanitizer} writes it in a path. */
    public static String userConfig(String sanitizedUser) {
        return USER_CONFIGS + "/" + sanitizedUser;
    }
}
