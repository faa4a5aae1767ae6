package io.twinlog.campaign;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/** Free loopback ports for the processes the campaign starts (each keeps its port across restarts). */
final class Ports {
    private Ports() {
    }

    static int free() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
