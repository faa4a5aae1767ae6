package io.twinlog.controller.metadata;

import io.twinlog.common.Endpoint;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
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
 */
public record BrokerRegistration(int id, List<Endpoint> endpoints, Optional<String> rack, long brokerEpoch,
                                 boolean shuttingDown, List<String> offlineLogDirs,
                                 Set<TopicIdPartition> offlineReplicas) {

    public BrokerRegistration {
        offlineLogDirs = List.copyOf(offlineLogDirs);
        offlineReplicas = Set.copyOf(offlineReplicas);
    }

    public BrokerRegistration(int id, List<Endpoint> endpoints, Optional<String> rack) {
        this(id, endpoints, rack, -1L, false, List.of(), Set.of());
    }

    public BrokerRegistration withShuttingDown(boolean value) {
        return new BrokerRegistration(id, endpoints, rack, brokerEpoch, value, offlineLogDirs, offlineReplicas);
    }

    public BrokerRegistration withOffline(List<String> logDirs, Set<TopicIdPartition> replicas) {
        return new BrokerRegistration(id, endpoints, rack, brokerEpoch, shuttingDown, logDirs, replicas);
    }

    /** Whether this broker's replica of the partition is in a failed log dir. */
    public boolean isReplicaOffline(TopicIdPartition partition) {
        return !offlineReplicas.isEmpty() && offlineReplicas.contains(partition);
    }

    public Optional<Endpoint> endpoint(String listenerName) {
        return endpoints.stream().filter(e -> e.listenerName().equals(listenerName)).findFirst();
    }

    public Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("version", 1);
        List<String> eps = new ArrayList<>();
        endpoints.forEach(e -> eps.add(e.toString()));
        m.put("endpoints", eps);
        rack.ifPresent(r -> m.put("rack", r));
        if (shuttingDown) {
            m.put("shuttingDown", true);
        }
        if (!offlineLogDirs.isEmpty()) {
            m.put("offlineLogDirs", offlineLogDirs);
        }
        if (!offlineReplicas.isEmpty()) {
            m.put("offlineReplicas", offlineReplicasJson());
        }
        return m;
    }

    /** [{"topic":"t","topicId":"..","partitions":[0,2]}, ...], by topic name. */
    private List<Map<String, Object>> offlineReplicasJson() {
        Map<String, Map<String, Object>> byTopic = new TreeMap<>();
        for (TopicIdPartition p : offlineReplicas) {
            Map<String, Object> t = byTopic.computeIfAbsent(p.topic() + "/" + p.topicId(), k -> {
                Map<String, Object> v = new LinkedHashMap<>();
                v.put("topic", p.topic());
                v.put("topicId", p.topicId().toString());
                v.put("partitions", new TreeSet<Integer>());
                return v;
            });
            @SuppressWarnings("unchecked")
            Set<Integer> partitions = (Set<Integer>) t.get("partitions");
            partitions.add(p.partition());
        }
        return new ArrayList<>(byTopic.values());
    }

    @SuppressWarnings("unchecked")
    public static BrokerRegistration fromJson(int id, long brokerEpoch, Map<String, Object> json) {
        List<Endpoint> eps = new ArrayList<>();
        for (Object o : (List<Object>) json.getOrDefault("endpoints", List.of())) {
            eps.add(Endpoint.parse((String) o, "broker " + id + " registration"));
        }
        List<String> offlineLogDirs = new ArrayList<>();
        for (Object o : (List<Object>) json.getOrDefault("offlineLogDirs", List.of())) {
            offlineLogDirs.add((String) o);
        }
        Set<TopicIdPartition> offlineReplicas = new HashSet<>();
        for (Object o : (List<Object>) json.getOrDefault("offlineReplicas", List.of())) {
            Map<String, Object> t = (Map<String, Object>) o;
            Uuid topicId = Uuid.fromString((String) t.get("topicId"));
            for (Object p : (List<Object>) t.getOrDefault("partitions", List.of())) {
                offlineReplicas.add(new TopicIdPartition(topicId, ((Number) p).intValue(), (String) t.get("topic")));
            }
        }
        return new BrokerRegistration(id, List.copyOf(eps), Optional.ofNullable((String) json.get("rack")), brokerEpoch,
                Boolean.TRUE.equals(json.get("shuttingDown")), offlineLogDirs, offlineReplicas);
    }
}
