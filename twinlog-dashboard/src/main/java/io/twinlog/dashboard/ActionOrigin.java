package io.twinlog.dashboard;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Whether an action's request comes to this dashboard by its own address, from its own page: a defence against DNS
 * rebinding, where a page of another site has its host name re-resolved to this listener and POSTs to it (its
 * requests then carry that site's name in {@code Host} and {@code Origin}, and pass the Content-Type check as the
 * site's own). Matters most on a PLAINTEXT cluster without an authorizer, where an action needs no login.
 *
 * <p>Accepted {@code Host}s, with the bound port: the listener's host; for a loopback listener also
 * {@code localhost}, {@code 127.0.0.1} and {@code [::1]}; for a wildcard listener ({@code 0.0.0.0}, {@code ::}) any
 * IP address and {@code localhost} (a rebinding page has a name, never an address). An {@code Origin}, when sent,
 * must be {@code http://} and that {@code Host}. Pure: the listener and two headers in, a refusal or none out.
 *
 * @param listenerHost the listener's host as configured (an IPv6 address without brackets)
 * @param boundPort    the port the listener is bound to
 */
record ActionOrigin(String listenerHost, int boundPort) {
    private static final Pattern IPV4 = Pattern.compile("[0-9]{1,3}(\\.[0-9]{1,3}){3}");
    private static final Set<String> LOOPBACK_NAMES = Set.of("localhost", "127.0.0.1", "::1");
    private static final int DEFAULT_HTTP_PORT = 80;

    /** Why a request with these headers is refused (a one-line message for a 403); empty when it is accepted. */
    Optional<String> refusal(String hostHeader, String originHeader) {
        String expected = "this dashboard's address (" + hostAndPort(listenerHost) + ")";
        if (hostHeader == null || hostHeader.isBlank()) {
            return Optional.of("Actions need a Host header naming " + expected);
        }
        if (!acceptedHost(hostHeader.trim())) {
            return Optional.of("Refused: Host '" + hostHeader.trim() + "' is not " + expected + ": a page of "
                    + "another site may be reaching the dashboard by DNS rebinding; open the dashboard by its address");
        }
        if (originHeader != null && !originHeader.trim().equalsIgnoreCase("http://" + hostHeader.trim())) {
            return Optional.of("Refused: the request comes from the page of " + originHeader.trim() + ", not from "
                    + "the dashboard's own (http://" + hostHeader.trim() + ")");
        }
        return Optional.empty();
    }

    private boolean acceptedHost(String hostHeader) {
        String host;
        String port;
        if (hostHeader.startsWith("[")) {
            int end = hostHeader.indexOf(']');
            if (end < 0) {
                return false;
            }
            host = hostHeader.substring(1, end);
            port = hostHeader.substring(end + 1);
        } else {
            int colon = hostHeader.indexOf(':');
            host = colon < 0 ? hostHeader : hostHeader.substring(0, colon);
            port = colon < 0 ? "" : hostHeader.substring(colon);
        }
        if (!(port.isEmpty() ? boundPort == DEFAULT_HTTP_PORT : port.equals(":" + boundPort))) {
            return false;
        }
        host = host.toLowerCase(Locale.ROOT);
        Optional<InetAddress> listenerAddress = ipLiteral(listenerHost);
        if (host.equals(listenerHost.toLowerCase(Locale.ROOT))
                || listenerAddress.isPresent() && listenerAddress.equals(ipLiteral(host))) {
            return true;
        }
        if (listenerHost.equalsIgnoreCase("localhost")
                || listenerAddress.map(InetAddress::isLoopbackAddress).orElse(false)) {
            return LOOPBACK_NAMES.contains(host);
        }
        if (listenerAddress.map(InetAddress::isAnyLocalAddress).orElse(false)) {
            return host.equals("localhost") || ipLiteral(host).isPresent();
        }
        return false;
    }

    /** The address {@code host} spells, if it is an IP address; a name is never looked up. */
    private static Optional<InetAddress> ipLiteral(String host) {
        String literal;
        if (IPV4.matcher(host).matches()) {
            for (String octet : host.split("\\.")) {
                if (Integer.parseInt(octet) > 255) {
                    return Optional.empty();
                }
            }
            literal = host;
        } else if (host.contains(":")) {
            literal = "[" + host + "]"; // in brackets InetAddress takes only an IPv6 literal, never a name
        } else {
            return Optional.empty();
        }
        try {
            return Optional.of(InetAddress.getByName(literal));
        } catch (UnknownHostException e) {
            return Optional.empty();
        }
    }

    private String hostAndPort(String host) {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + boundPort;
    }
}
