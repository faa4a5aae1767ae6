package io.twinlog.common;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One listener endpoint, {@code NAME://host:port}, as in Kafka's {@code listeners} config. Only PLAINTEXT is served
 * today; the listener name is kept so TLS/SASL listeners fit later.
 */
public record Endpoint(String listenerName, String host, int port) {

    public static Endpoint parse(String value, String key) {
        String v = value.trim();
        int sep = v.indexOf("://");
        if (sep <= 0) {
            throw new ConfigException(key + ": expected NAME://host:port, got '" + value + "'");
        }
        String name = v.substring(0, sep).toUpperCase(Locale.ROOT);
        String hostPort = v.substring(sep + 3);
        int colon = hostPort.lastIndexOf(':');
        if (colon < 0) {
            throw new ConfigException(key + ": missing port in '" + value + "'");
        }
        String host = hostPort.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(hostPort.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new ConfigException(key + ": bad port in '" + value + "'");
        }
        if (port < 0 || port > 65535) {
            throw new ConfigException(key + ": port out of range in '" + value + "'");
        }
        return new Endpoint(name, host, port);
    }

    public static List<Endpoint> parseList(String value, String key) {
        List<Endpoint> out = new ArrayList<>();
        for (String part : value.split(",")) {
            if (!part.isBlank()) {
                out.add(parse(part, key));
            }
        }
        if (out.isEmpty()) {
            throw new ConfigException(key + " must name at least one endpoint");
        }
        return List.copyOf(out);
    }

    public Endpoint withPort(int newPort) {
        return new Endpoint(listenerName, host, newPort);
    }

    @Override
    public String toString() {
        return listenerName + "://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
}
