package io.twinlog.controller.metadata;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.twinlog.common.Endpoint;
import io.twinlog.controller.zk.Json;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A live broker as registered (ephemerally) in ZooKeeper, with its advertised endpoints.
 *
 * @param brokerEpoch     the registration node's creation zxid: a new value for every broker incarnation, used to
 *                        fence requests from a broker's earlier life
 * @param shuttingDown    set by a broker in controlled shutdown, so the controller moves leadership away first
 * @param offlineLogDirs  log dirs of this broker that failed (absolute paths), for operators
 * @param offlineReplicas this broker's replicas whose log dir failed: they may neither lead nor be in the ISR.
 *                        Carried by the ephemeral registration, so a restart (with the dir repaired or not) starts
 *                        from none; topic IDs keep a re-created topic of the same name from being taken as offline
 * @param lostReplicas    replicas whose log this broker found missing when it started although the metadata had it
 *                        in their ISR (a disk replaced or wiped, a partition dir deleted), each with the leader epoch
 *                        of the partition then: its ISR membership is from before the loss, so it may neither lead
 *                        nor stay in the ISR (the controller takes it out at its next change of the partition), until
 *                        it is out of the ISR (the broker then drops the entry and rejoins as any follower, once
 *                        caught up) or is elected leader in a later epoch, which only an unclean election with no
 *                        other live replica does, knowingly. Without this, a controller that had not seen the
 *                        restart (a new one) elected such a broker from the ISR and the other replicas truncated to
 *                        its empty log (campaign defect 3)
 */
public record BrokerRegistration(int id, List<Endpoint> endpoints, Optional<String> rack, long brokerEpoch,
                                 boolean shuttingDown, List<String> offlineLogDirs,
                                 Set<TopicIdPartition> offlineReplicas, Map<TopicIdPartition, Integer> lostReplicas) {

    public BrokerRegistration {
        offlineLogDirs = List.copyOf(offlineLogDirs);
        offlineReplicas = Set.copyOf(offlineReplicas);
        lostReplicas = Map.copyOf(lostReplicas);
    }

    /** A registration without lost replicas. */
    public BrokerRegistration(int id, List<Endpoint> endpoints, Optional<String> rack, long brokerEpoch,
                              boolean shuttingDown, List<String> offlineLogDirs,
                              Set<TopicIdPartition> offlineReplicas) {
        this(id, endpoints, rack, brokerEpoch, shuttingDown, offlineLogDirs, offlineReplicas, Map.of());
    }

    public BrokerRegistration(int id, List<Endpoint> endpoints, Optional<String> rack) {
        this(id, endpoints, rack, -1L, false);
    }

    /** A registration with every log dir online. */
    public BrokerRegistration(int id, List<Endpoint> endpoints, Optional<String> rack, long brokerEpoch,
                              boolean shuttingDown) {
        this(id, endpoints, rack, brokerEpoch, shuttingDown, List.of(), Set.of());
    }

    /**
     * The registration as stored at {@code /brokers/ids/<id>}:
     * {@code {"version":1,"endpoints":["PLAINTEXT://host:9092"],"rack":"r1","shuttingDown":true,
     * "offlineLogDirs":["/d2"],"offlineReplicas":[{"topic":"t","topicId":"..","partitions":[0,2]}],
     * "lostReplicas":[{"topic":"t","topicId":"..","partitions":[1],"leaderEpochs":[4]}]}}, where {@code rack} is
     * absent without a
     * rack, {@code shuttingDown} absent unless true, the offline fields absent while every log dir is online, and
     * {@code lostReplicas} absent when none is lost.
     */
    @JsonPropertyOrder({"version", "endpoints", "rack", "shuttingDown", "offlineLogDirs", "offlineReplicas",
            "lostReplicas"})
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Document(@JsonProperty("version") int version, @JsonProperty("endpoints") List<String> endpoints,
                           @JsonProperty("rack") String rack, @JsonProperty("shuttingDown") Boolean shuttingDown,
                           @JsonProperty("offlineLogDirs") List<String> offlineLogDirs,
                           @JsonProperty("offlineReplicas") List<TopicReplicas> offlineReplicas,
                           @JsonProperty("lostReplicas") List<TopicReplicas> lostReplicas) {
    }

    /**
     * One topic's replicas of a kind (offline, lost) on this broker; lost ones with the leader epoch each was
     * found at ({@code leaderEpochs}, as long as {@code partitions}).
     */
    @JsonPropertyOrder({"topic", "topicId", "partitions", "leaderEpochs"})
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record TopicReplicas(@JsonProperty("topic") String topic, @JsonProperty("topicId") String topicId,
                               @JsonProperty("partitions") List<Integer> partitions,
                               @JsonProperty("leaderEpochs") List<Integer> leaderEpochs) {
        TopicReplicas(String topic, String topicId, List<Integer> partitions) {
            this(topic, topicId, partitions, null);
        }
    }

    public BrokerRegistration withShuttingDown(boolean value) {
        return new BrokerRegistration(id, endpoints, rack, brokerEpoch, value, offlineLogDirs, offlineReplicas,
                lostReplicas);
    }

    public BrokerRegistration withOffline(List<String> logDirs, Set<TopicIdPartition> replicas) {
        return new BrokerRegistration(id, endpoints, rack, brokerEpoch, shuttingDown, logDirs, replicas,
                lostReplicas);
    }

    public BrokerRegistration withLost(Map<TopicIdPartition, Integer> replicas) {
        return new BrokerRegistration(id, endpoints, rack, brokerEpoch, shuttingDown, offlineLogDirs,
                offlineReplicas, replicas);
    }

    /** Whether this broker's replica of the partition is in a failed log dir. */
    public boolean isReplicaOffline(TopicIdPartition partition) {
        return !offlineReplicas.isEmpty() && offlineReplicas.contains(partition);
    }

    /**
     * Whether this broker's replica of the partition, in {@code state}, is lost ({@code lostReplicas}): it lost its
     * log while in the ISR, and has not been elected leader since (a leader epoch above the one it was found at).
     */
    public boolean isReplicaLost(TopicIdPartition partition, PartitionState state) {
        if (lostReplicas.isEmpty()) {
            return false;
        }
        Integer foundAt = lostReplicas.get(partition);
        return foundAt != null && !(state != null && state.leader() == id && state.leaderEpoch() > foundAt);
    }

    public Optional<Endpoint> endpoint(String listenerName) {
        return endpoints.stream().filter(e -> e.listenerName().equals(listenerName)).findFirst();
    }

    public Document toJson() {
        return new Document(1, endpoints.stream().map(Endpoint::toString).toList(), rack.orElse(null),
                shuttingDown ? Boolean.TRUE : null, offlineLogDirs.isEmpty() ? null : offlineLogDirs,
                offlineReplicas.isEmpty() ? null : byTopic(offlineReplicas),
                lostReplicas.isEmpty() ? null : lostByTopic(lostReplicas));
    }

    /** Replicas grouped by topic (name, then ID), partitions in order. */
    public static List<TopicReplicas> byTopic(Set<TopicIdPartition> replicas) {
        Map<String, TreeSet<Integer>> partitions = new TreeMap<>();
        Map<String, TopicIdPartition> first = new TreeMap<>();
        for (TopicIdPartition p : replicas) {
            String key = p.topic() + "/" + p.topicId();
            partitions.computeIfAbsent(key, k -> new TreeSet<>()).add(p.partition());
            first.putIfAbsent(key, p);
        }
        List<TopicReplicas> out = new ArrayList<>();
        partitions.forEach((key, ps) -> out.add(new TopicReplicas(first.get(key).topic(),
                first.get(key).topicId().toString(), List.copyOf(ps))));
        return out;
    }

    /** @param path where the registration was read, for the error if it is corrupt */
    public static BrokerRegistration fromJson(int id, long brokerEpoch, byte[] data, String path) {
        Document d = Json.decode(data, path, Document.class);
        List<Endpoint> eps = new ArrayList<>();
        for (String endpoint : d.endpoints() == null ? List.<String>of() : d.endpoints()) {
            eps.add(Endpoint.parse(endpoint, "broker " + id + " registration"));
        }
        return new BrokerRegistration(id, List.copyOf(eps), Optional.ofNullable(d.rack()), brokerEpoch,
                Boolean.TRUE.equals(d.shuttingDown()),
                d.offlineLogDirs() == null ? List.of() : d.offlineLogDirs(), replicas(d.offlineReplicas()),
                lostReplicas(d.lostReplicas(), path));
    }

    /** Lost replicas grouped by topic (name, then ID), partitions in order, each with its leader epoch. */
    public static List<TopicReplicas> lostByTopic(Map<TopicIdPartition, Integer> replicas) {
        List<TopicReplicas> out = new ArrayList<>();
        for (TopicReplicas t : byTopic(replicas.keySet())) {
            Uuid topicId = Uuid.fromString(t.topicId());
            out.add(new TopicReplicas(t.topic(), t.topicId(), t.partitions(), t.partitions().stream()
                    .map(p -> replicas.get(new TopicIdPartition(topicId, p, t.topic()))).toList()));
        }
        return out;
    }

    /**
     * The lost replicas listed by {@link #lostByTopic} (none for null).
     *
     * @param where what was read, for the error if a topic's partitions and epochs differ in number
     */
    public static Map<TopicIdPartition, Integer> lostReplicas(List<TopicReplicas> topics, String where) {
        Map<TopicIdPartition, Integer> out = new HashMap<>();
        for (TopicReplicas t : topics == null ? List.<TopicReplicas>of() : topics) {
            List<Integer> partitions = t.partitions() == null ? List.of() : t.partitions();
            List<Integer> epochs = t.leaderEpochs() == null ? List.of() : t.leaderEpochs();
            if (partitions.size() != epochs.size()) {
                throw new IllegalStateException("Corrupt lost replicas in " + where + ": " + t.topic() + " lists "
                        + partitions.size() + " partitions and " + epochs.size() + " leader epochs");
            }
            Uuid topicId = Uuid.fromString(t.topicId());
            for (int i = 0; i < partitions.size(); i++) {
                out.put(new TopicIdPartition(topicId, partitions.get(i), t.topic()), epochs.get(i));
            }
        }
        return out;
    }

    /** The replicas listed by {@link #byTopic} (none for null). */
    public static Set<TopicIdPartition> replicas(List<TopicReplicas> topics) {
        Set<TopicIdPartition> out = new HashSet<>();
        for (TopicReplicas t : topics == null ? List.<TopicReplicas>of() : topics) {
            Uuid topicId = Uuid.fromString(t.topicId());
            for (Integer p : t.partitions() == null ? List.<Integer>of() : t.partitions()) {
                out.add(new TopicIdPartition(topicId, p, t.topic()));
            }
        }
        return out;
    }
}
