package io.twinlog.cli.internals;

import org.apache.kafka.common.utils.Utils;

/** Checks {@code HOST:PORT[,HOST:PORT...]} lists before anything is sent, so a typo is a usage error. */
public final class BootstrapServers {
    private static final int MAX_PORT = 65_535;

    private BootstrapServers() {
    }

    /**
     * @param option         the option the list came from, for the message
     * @param allowEmptyHost whether {@code :9092} is accepted (it means localhost to the admin client; it means
     *                       nothing to destination brokers that connect to a source)
     * @return the list, trimmed
     * @throws CommandException (usage) naming the first bad entry
     */
    public static String validate(String option, String value, boolean allowEmptyHost) {
        String trimmed = value.trim();
        int entries = 0;
        for (String entry : trimmed.split(",", -1)) {
            String hostPort = entry.trim();
            if (hostPort.isEmpty()) {
                continue;
            }
            entries++;
            // read as Kafka's clients read bootstrap.servers, so what passes here also parses there
            String host = Utils.getHost(hostPort);
            Integer port = port(hostPort);
            if (host == null || port == null) {
                throw CommandException.usage("Invalid " + option + " '" + hostPort + "': expected HOST:PORT");
            }
            if (port < 1 || port > MAX_PORT) {
                throw CommandException.usage("Invalid " + option + " '" + hostPort
                        + "': the port must be a number from 1 to 65535");
            }
            if (host.isEmpty() && !allowEmptyHost) {
                throw CommandException.usage("Invalid " + option + " '" + hostPort
                        + "': a host is needed, the destination brokers connect to it");
            }
        }
        if (entries == 0) {
            throw CommandException.usage(option + " needs at least one HOST:PORT");
        }
        return trimmed;
    }

    /** The port, null without one, -1 when it is digits beyond an int (Kafka's helper would throw). */
    private static Integer port(String hostPort) {
        try {
            return Utils.getPort(hostPort);
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
