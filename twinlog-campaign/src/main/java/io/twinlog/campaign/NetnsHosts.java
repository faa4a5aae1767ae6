package io.twinlog.campaign;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Each process in a network namespace of its own ({@code tlc-<name>}), with its own address on {@value #SUBNET}.0/24
 * behind a veth pair on a bridge ({@value #BRIDGE}, {@value #SUBNET}.1, in the campaign's namespace): brokers and
 * ZooKeeper nodes talk to each other across the bridge, through the campaign's proxies (which listen on the bridge
 * address), as separate hosts on one network would. Needs root (or CAP_NET_ADMIN and CAP_SYS_ADMIN) and iproute2.
 * Leftovers of a campaign that died are removed first, so only one {@code --netns} campaign runs on a machine at a
 * time.
 */
final class NetnsHosts implements Hosts {
    private static final Logger log = LoggerFactory.getLogger(NetnsHosts.class);
    static final String SUBNET = "10.77.0";
    static final String BRIDGE = "tlc-br0";
    private static final String PREFIX = "tlc-";

    private final Map<String, String> addresses = new HashMap<>();
    private final List<String> namespaces = new ArrayList<>();

    /** Sets up a namespace per name, in order ({@value #SUBNET}.11, .12, ...). */
    NetnsHosts(List<String> names) throws IOException, InterruptedException {
        removeLeftovers();
        run("ip", "link", "add", BRIDGE, "type", "bridge");
        run("ip", "addr", "add", SUBNET + ".1/24", "dev", BRIDGE);
        run("ip", "link", "set", BRIDGE, "up");
        for (int i = 0; i < names.size(); i++) {
            String ns = PREFIX + names.get(i);
            String veth = "tlcv" + i;
            String address = SUBNET + "." + (11 + i);
            run("ip", "netns", "add", ns);
            namespaces.add(ns);
            run("ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns);
            run("ip", "link", "set", veth, "master", BRIDGE, "up");
            run("ip", "netns", "exec", ns, "ip", "addr", "add", address + "/24", "dev", "eth0");
            run("ip", "netns", "exec", ns, "ip", "link", "set", "eth0", "up");
            run("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up");
            addresses.put(names.get(i), address);
        }
        log.info("[Campaign] network namespaces: {} on bridge {} ({}.1)", addresses, BRIDGE, SUBNET);
    }

    /** Why namespaces cannot be made here, if they cannot. */
    static Optional<String> unavailableReason() {
        try {
            Process id = new ProcessBuilder("id", "-u").redirectErrorStream(true).start();
            String uid = new String(id.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
            if (!id.waitFor(10, TimeUnit.SECONDS) || !uid.equals("0")) {
                return Optional.of("it needs root for `ip netns` and `ip link` (running as uid " + uid + ")");
            }
            Process ip = new ProcessBuilder("ip", "netns", "list").redirectErrorStream(true).start();
            String out = new String(ip.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!ip.waitFor(10, TimeUnit.SECONDS) || ip.exitValue() != 0) {
                return Optional.of("`ip netns list` failed: " + out);
            }
            return Optional.empty();
        } catch (IOException e) {
            return Optional.of("iproute2's `ip` cannot be run: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of("interrupted");
        }
    }

    @Override
    public String address(String name) {
        String address = addresses.get(name);
        if (address == null) {
            throw new IllegalArgumentException("No network namespace for " + name + " (have " + addresses.keySet()
                    + ")");
        }
        return address;
    }

    @Override
    public String proxyAddress() {
        return SUBNET + ".1";
    }

    @Override
    public List<String> launcher(String name) {
        address(name);
        return List.of("ip", "netns", "exec", PREFIX + name);
    }

    @Override
    public void close() {
        try {
            for (String ns : namespaces) {
                runQuietly("ip", "netns", "del", ns); // its end of the veth pair goes with it, and so the pair
            }
            runQuietly("ip", "link", "del", BRIDGE);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void removeLeftovers() throws IOException, InterruptedException {
        Process list = new ProcessBuilder("ip", "netns", "list").redirectErrorStream(true).start();
        String out = new String(list.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        list.waitFor(10, TimeUnit.SECONDS);
        for (String line : out.split("\n")) {
            String ns = line.trim().split("\\s+")[0];
            if (ns.startsWith(PREFIX)) {
                log.info("[Campaign] removing network namespace {} left by an earlier campaign", ns);
                runQuietly("ip", "netns", "del", ns);
            }
        }
        runQuietly("ip", "link", "del", BRIDGE);
    }

    private static void run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("`" + String.join(" ", command) + "` failed: " + out);
        }
    }

    private static void runQuietly(String... command) throws InterruptedException {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            p.waitFor(30, TimeUnit.SECONDS);
        } catch (IOException e) {
            log.warn("[Campaign] `{}` failed: {}", String.join(" ", command), e.getMessage());
        }
    }
}
