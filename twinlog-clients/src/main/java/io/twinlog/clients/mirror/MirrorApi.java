package io.twinlog.clients.mirror;

import org.apache.kafka.common.protocol.types.CompactArrayOf;
import org.apache.kafka.common.protocol.types.Field;
import org.apache.kafka.common.protocol.types.Schema;
import org.apache.kafka.common.protocol.types.Type;

import java.util.Arrays;
import java.util.Optional;

/**
 * Twinlog's cluster-mirror APIs: Kafka-style requests with their own API keys (7000+, clear of Apache Kafka's
 * range, which reaches 94 in 4.4 and keeps growing), every version flexible (compact strings and arrays, tagged
 * fields), framed with Kafka's request header v2 and response header v1. Brokers advertise them in ApiVersions like
 * any API; unmodified Kafka clients ignore keys they do not know.
 *
 * <p>Schemas are defined with Kafka's runtime schema types, so encoding is Kafka's own. Every response starts with
 * {@code throttle_time_ms, error_code, error_message}.
 */
public enum MirrorApi {
    CREATE_CLUSTER_MIRROR(7000, "CreateClusterMirror",
            schema(str("mirror_name"), array("configs", schema(str("name"), nullableStr("value")))),
            response()),
    DELETE_CLUSTER_MIRROR(7001, "DeleteClusterMirror",
            schema(str("mirror_name")),
            response()),
    LIST_CLUSTER_MIRRORS(7002, "ListClusterMirrors",
            schema(new Field("include_topic_names", Type.BOOLEAN)),
            response(array("mirrors", schema(str("mirror_name"), str("source_bootstrap"),
                    nullableStr("source_cluster_id"), str("state"), new Field("topic_count", Type.INT32),
                    array("topic_names", Type.COMPACT_STRING))))),
    DESCRIBE_CLUSTER_MIRRORS(7003, "DescribeClusterMirrors",
            schema(array("mirror_names", Type.COMPACT_STRING)),
            response(array("mirrors", schema(new Field("error_code", Type.INT16), nullableStr("error_message"),
                    str("mirror_name"), str("state"), nullableStr("state_reason"), str("source_bootstrap"),
                    nullableStr("source_cluster_id"),
                    array("configs", schema(str("name"), nullableStr("value"), new Field("sensitive", Type.BOOLEAN))),
                    array("include_patterns", Type.COMPACT_STRING), array("exclude_patterns", Type.COMPACT_STRING),
                    array("topics", schema(str("topic_name"), new Field("topic_id", Type.UUID),
                            str("desired_state"),
                            array("partitions", schema(new Field("partition_index", Type.INT32), str("state"),
                                    new Field("source_log_end_offset", Type.INT64),
                                    new Field("destination_log_end_offset", Type.INT64),
                                    new Field("lag", Type.INT64), new Field("retry_attempt", Type.INT16),
                                    nullableStr("last_error"), new Field("last_mirrored_epoch", Type.INT32),
                                    new Field("last_mirrored_offset", Type.INT64),
                                    // replicas outside the ISR, e.g. one that cannot converge with its leader
                                    // (appended to version 0 before any release; see docs/decisions.md)
                                    array("out_of_sync_replicas", Type.INT32),
                                    // the partition-wide truncation point (-1: none) and, while LOG_TRUNCATION waits
                                    // for them, the replicas that have not applied it (appended to version 0 before
                                    // any release; decision 38)
                                    new Field("truncation_offset", Type.INT64),
                                    array("truncation_pending_replicas", Type.INT32),
                                    // offsets the leaders' truncations removed, their records kept in the
                                    // quarantine topic (issue 12, point 5; appended to version 0 before any release)
                                    new Field("truncated_offsets", Type.INT64),
                                    // records from this offset on are consistent across clusters even through
                                    // unclean elections (-1: none yet; mirror.support.unclean.leader.election)
                                    new Field("consistent_from_offset", Type.INT64))))),
                    // consumer group offset sync: one entry per group the mirror syncs (appended to version 0 before
                    // any release; see docs/decisions.md)
                    array("groups", schema(str("group_id"), new Field("last_sync_time_ms", Type.INT64),
                            new Field("offsets_synced", Type.INT32), new Field("offsets_clamped", Type.INT32),
                            // CONSUMER or SHARE (appended to version 0 before any release, as decision 23)
                            str("group_type"))))))),
    START_MIRROR_TOPICS(7004, "StartMirrorTopics", topicsRequest(), topicsResponse()),
    STOP_MIRROR_TOPICS(7005, "StopMirrorTopics", topicsRequest(), topicsResponse()),
    PAUSE_MIRROR_TOPICS(7006, "PauseMirrorTopics", topicsRequest(), topicsResponse()),
    RESUME_MIRROR_TOPICS(7007, "ResumeMirrorTopics", topicsRequest(), topicsResponse()),
    ALTER_CLUSTER_MIRROR(7009, "AlterClusterMirror",
            schema(str("mirror_name"), array("configs", schema(str("name"), nullableStr("value")))),
            response()),
    LAST_MIRRORED_EPOCHS(7008, "LastMirroredEpochs",
            schema(nullableStr("requester_cluster_id"),
                    array("topics", schema(str("topic_name"), new Field("topic_id", Type.UUID),
                            array("partitions", Type.INT32)))),
            response(array("topics", schema(str("topic_name"), new Field("topic_id", Type.UUID),
                    array("partitions", schema(new Field("partition_index", Type.INT32),
                            new Field("error_code", Type.INT16), new Field("last_mirrored_epoch", Type.INT32),
                            new Field("last_mirrored_offset", Type.INT64)))))));

    /**
     * Every API is at version 0 today (one version for all of them); new versions append fields or tagged fields.
     * Until the first release, version 0 itself may still grow (DescribeClusterMirrors gained {@code groups}).
     */
    public static final short LATEST_VERSION = 0;

    public final short id;
    public final String name;
    private final Schema request;
    private final Schema response;

    MirrorApi(int id, String name, Schema request, Schema response) {
        this.id = (short) id;
        this.name = name;
        this.request = request;
        this.response = response;
    }

    public Schema requestSchema(short version) {
        checkVersion(version);
        return request;
    }

    public Schema responseSchema(short version) {
        checkVersion(version);
        return response;
    }

    public boolean isVersionSupported(short version) {
        return version >= 0 && version <= LATEST_VERSION;
    }

    private void checkVersion(short version) {
        if (!isVersionSupported(version)) {
            throw new IllegalArgumentException(name + " has no version " + version);
        }
    }

    public static Optional<MirrorApi> forId(short id) {
        return Arrays.stream(values()).filter(a -> a.id == id).findFirst();
    }

    // ----- schema helpers: every struct ends with an empty tagged-fields section (flexible versions) -----

    static Schema schema(Field... fields) {
        Field[] withTags = Arrays.copyOf(fields, fields.length + 1);
        withTags[fields.length] = Field.TaggedFieldsSection.of();
        return new Schema(withTags);
    }

    private static Field str(String name) {
        return new Field(name, Type.COMPACT_STRING);
    }

    private static Field nullableStr(String name) {
        return new Field(name, Type.COMPACT_NULLABLE_STRING);
    }

    private static Field array(String name, Type element) {
        return new Field(name, new CompactArrayOf(element));
    }

    private static Schema response(Field... fields) {
        Field[] all = new Field[fields.length + 3];
        all[0] = new Field("throttle_time_ms", Type.INT32);
        all[1] = new Field("error_code", Type.INT16);
        all[2] = new Field("error_message", Type.COMPACT_NULLABLE_STRING);
        System.arraycopy(fields, 0, all, 3, fields.length);
        return schema(all);
    }

    private static Schema topicsRequest() {
        return schema(str("mirror_name"), array("topics", Type.COMPACT_STRING), array("patterns", Type.COMPACT_STRING),
                array("exclude_patterns", Type.COMPACT_STRING));
    }

    private static Schema topicsResponse() {
        return response(array("topics", schema(str("name"), new Field("error_code", Type.INT16),
                nullableStr("error_message"))));
    }
}
