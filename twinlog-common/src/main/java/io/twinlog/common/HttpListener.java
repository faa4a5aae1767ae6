package io.twinlog.common;

import org.apache.kafka.common.config.ConfigException;

import java.net.URI;
import java.net.URISyntaxException;

/**
 * An HTTP address a broker serves besides its Kafka listeners ({@code metrics.prometheus.listener},
 * {@code dashboard.listener}): {@code http://host:port}, port 0 for any free port. A path, if given, is ignored:
 * each server has its own fixed paths ({@code /metrics}, {@code /}). An IPv6 address is written in brackets
 * ({@code http://[::1]:8080}) and held without them ({@code host} is {@code ::1}, as {@code InetSocketAddress} takes
 * it); {@link #url} puts them back.
 */
public record HttpListener(String host, int port) {

    /** Parses {@code value} of config {@code name}; a {@link ConfigException} naming the key otherwise. */
    public static HttpListener parse(String name, String value) {
        URI uri;
        try {
            uri = new URI(value.trim());
        } catch (URISyntaxException e) {
            throw new ConfigException(name, value, "expected http://host:port");
        }
        if (!"http".equalsIgnoreCase(uri.getScheme()) || uri.getHost() == null || uri.getPort() < 0
                || uri.getPort() > 65_535) {
            throw new ConfigException(name, value, "expected http://host:port (for example http://127.0.0.1:9404)");
        }
        // URI.getHost() keeps an IPv6 literal's brackets; url() adds them back
        String host = uri.getHost();
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        return new HttpListener(host, uri.getPort());
    }

    /** The URL of {@code path} on this listener, once bound to {@code boundPort}. */
    public String url(int boundPort, String path) {
        String h = host.contains(":") ? "[" + host + "]" : host;
        return "http://" + h + ":" + boundPort + path;
    }
}
