package io.twinlog.dashboard;

import java.util.List;
import java.util.regex.Pattern;

/**
 * The exact {@code twinlog-mirrors.sh} commands an operator runs for what the dashboard shows (the syntax of
 * docs/operator-guide.md): fail a topic (or every topic of a mirror) over on this cluster, and fail it back to the
 * source once the source is back. Pure: strings from names and addresses.
 *
 * <p>{@code --topic} takes a regular expression that the broker matches against whole topic names; the CLI sends a
 * value of only letters, digits, '_' and '-' as a plain name. A topic name is therefore written with its '.' escaped
 * ({@code orders\.v1}): unescaped, failing over {@code orders.v1} would also fail over {@code orders-v1} and
 * {@code ordersXv1}, which cannot be undone. Kafka topic names are {@code [a-zA-Z0-9._-]}, and '.' is the only one of
 * those a regex reads as more than itself. {@link #ALL_TOPICS} is the one pattern the builders pass through.
 *
 * @param tool            the command, e.g. {@code bin/twinlog-mirrors.sh}
 * @param thisCluster     bootstrap servers of the cluster serving the dashboard (the mirror's destination)
 */
public record MirrorCommands(String tool, String thisCluster) {
    /** Characters a POSIX shell passes through unquoted. */
    private static final Pattern SHELL_SAFE = Pattern.compile("[A-Za-z0-9._:,/@%+=-]+");
    /** Every topic of a mirror, as {@code --topic} takes it (a regex; never a topic name, which has no '*'). */
    public static final String ALL_TOPICS = ".*";

    /** Stops mirroring {@code topic} (a topic name, or {@link #ALL_TOPICS}) and makes it writable on this cluster. */
    public String failover(String mirror, String topic) {
        return topicCommand("--remove", mirror, topic);
    }

    public String pause(String mirror, String topic) {
        return topicCommand("--pause", mirror, topic);
    }

    public String resume(String mirror, String topic) {
        return topicCommand("--resume", mirror, topic);
    }

    private String topicCommand(String action, String mirror, String topic) {
        return tool + " --bootstrap-server " + quote(thisCluster) + " " + action + " --topic " + topicArgument(topic)
                + " --mirror " + quote(mirror);
    }

    /**
     * Failback of {@code topic} after a failover, as the operator guide describes it: the source becomes the
     * destination of a mirror {@code <mirror>-back} from this cluster, is verified identical, fails over back, and
     * this cluster mirrors the source again.
     */
    public List<String> failback(String mirror, String sourceBootstrap, String topic) {
        String back = backMirror(mirror);
        String source = quote(sourceBootstrap);
        String topicArgument = topicArgument(topic);
        return List.of(
                tool + " --bootstrap-server " + source + " --create --mirror " + quote(back)
                        + " --source-bootstrap-server " + quote(thisCluster),
                tool + " --bootstrap-server " + source + " --start --mirror " + quote(back) + " --topic " + topicArgument,
                tool + " --bootstrap-server " + source + " --verify --mirror " + quote(back) + " --topic " + topicArgument,
                tool + " --bootstrap-server " + source + " --remove --mirror " + quote(back) + " --topic " + topicArgument,
                tool + " --bootstrap-server " + quote(thisCluster) + " --start --mirror " + quote(mirror) + " --topic "
                        + topicArgument);
    }

    /** The {@code --topic} value, shell-quoted, that matches exactly {@code topic} (or every topic for ALL_TOPICS). */
    static String topicArgument(String topic) {
        return quote(topic.equals(ALL_TOPICS) ? ALL_TOPICS : topic.replace(".", "\\."));
    }

    /** The name of the reverse mirror a failback creates on the source; mirror names allow 249 characters. */
    static String backMirror(String mirror) {
        String back = mirror + "-back";
        return back.length() <= 249 ? back : mirror.substring(0, 244) + "-back";
    }

    static String quote(String value) {
        if (SHELL_SAFE.matcher(value).matches()) {
            return value;
        }
        return "'" + value.replace("'", "'\\''") + "'";
    }
}
