package io.twinlog.controller.metadata;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.twinlog.common.Endpoint;
import io.twinlog.controller.zk.Json;

import java.util.ArrayList;
import java.util.List;
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

    /**
     * The registration as stored at {@code /brokers/ids/<id>}:
     * {@code {"version":1,"endpoints":["PLAINTEXT://host:9092"],"rack":"r1","shuttingDown":true}}, where
     * {@code rack} is absent without a rack and {@code shuttingDown} absent unless true.
     */
    @JsonPropertyOrder({"version", "endpoints", "rack", "shuttingDown"})
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Document(@JsonProperty("version") int version, @JsonProperty("endpoints") List<String> endpoints,
                           @JsonProperty("rack") String rack, @JsonProperty("shuttingDown") Boolean shuttingDown) {
    }

    public BrokerRegistration withShuttingDown(boolean value) {
        return new BrokerRegistration(id, endpoints, rack, brokerEpoch, value);
    }

    public Optional<Endpoint> endpoint(String listenerName) {
        return endpoints.stream().filter(e -> e.listenerName().equals(listenerName)).findFirst();
    }

    public Document toJson() {
        return new Document(1, endpoints.stream().map(Endpoint::toString).toList(), rack.orElse(null),
                shuttingDown ? Boolean.TRUE : null);
    }

    /** @param path where the registration was read, for the error if it is corrupt */
    public static BrokerRegistration fromJson(int id, long brokerEpoch, byte[] data, String path) {
        Document d = Json.decode(data, path, Document.class);
        List<Endpoint> eps = new ArrayList<>();
        for (String endpoint : d.endpoints() == null ? List.<String>of() : d.endpoints()) {
            eps.add(Endpoint.parse(endpoint, "broker " + id + " registration"));
        }
        return new BrokerRegistration(id, List.copyOf(eps), Optional.ofNullable(d.rack()), brokerEpoch,
                Boolean.TRUE.equals(d.shuttingDown()));
    }
}
