package io.twinlog.cli.internals;

/** Checks {@code HOST:PORT[,HOST:PORT...]} lists before anything is sent, so a typo is a usage error. */
public final class BootstrapServers {
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
            int colon = hostPort.lastIndexOf(':');
            if (colon < 0) {
                throw CommandException.usage("Invalid " + option + " '" + hostPort + "': expected HOST:PORT");
            }
            String host = hostPort.substring(0, colon);
            String port = hostPort.substring(colon + 1);
            if (!port.matches("[0-9]{1,5}") || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535) {
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
}
