package io.twinlog.campaign;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free loopback ports for the processes the campaign starts (each keeps its port across restarts). They are taken
 * below Linux's ephemeral range (32768-60999), from which the kernel hands out the ports of the proxies, of every
 * outgoing connection and of any other test's {@code ServerSocket(0)}: a port found free there could be taken again
 * in the seconds before the broker binds it, or while it is down between a kill and its restart (seen: a broker
 * slowed by libfaketime failed to start with "Address already in use" on its MIRROR port).
 */
final class Ports {
    private static final int FIRST = 10_000;
    private static final int LAST = 32_767;
    private static final Set<Integer> GIVEN = ConcurrentHashMap.newKeySet();

    private Ports() {
    }

    static int free() throws IOException {
        int span = LAST - FIRST + 1;
        int start = ThreadLocalRandom.current().nextInt(span);
        for (int i = 0; i < span; i++) {
            int port = FIRST + (start + i) % span;
            if (!GIVEN.contains(port) && bindable(port)) {
                GIVEN.add(port);
                return port;
            }
        }
        throw new IOException("No free loopback port between " + FIRST + " and " + LAST);
    }

    private static boolean bindable(int port) {
        try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
