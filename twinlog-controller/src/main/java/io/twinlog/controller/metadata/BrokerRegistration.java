package io.twinlog.controller.metadata;

import io.twinlog.common.Endpoint;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A live broker as registered (ephemerally) in ZooKeeper, with its advertised endpoints.
 *
 * @param brokerEpoch  the registration node's creation zxid: a new value for every broker incarnation, used to
 *                     fence requests from a broker's earlier life
 * @param shuttingDown set by a broker in controlled shutdown, so the controller moves leadership away first
 */
public record BrokerRegistration(int id, List<Endpoint> endpoints, Optional<String> rack, long brokerEpoch,
                                 boolean shuttingDown) {

    public BrokerRegistration(int id, List<Endpoint> endpoints, Optional<String> rack) {
        this(id, endpoints, rack, -1L, false);
    }

    public BrokerRegistration withShuttingDown(boolean value) {
        return new BrokerRegistration(id, endpoints, rack, brokerEpoch, value);
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
        return m;
    }

    @SuppressWarnings("unchecked")
    public static BrokerRegistration fromJson(int id, long brokerEpoch, Map<String, Object> json) {
        List<Endpoint> eps = new ArrayList<>();
        for (Object o : (List<Object>) json.getOrDefault("endpoints", List.of())) {
            eps.add(Endpoint.parse((String) o, "broker " + id + " registration"));
        }
        return new BrokerRegistration(id, List.copyOf(eps), Optional.ofNullable((String) json.get("rack")), brokerEpoch,
                Boolean.TRUE.equals(json.get("shuttingDown")));
    }
}
