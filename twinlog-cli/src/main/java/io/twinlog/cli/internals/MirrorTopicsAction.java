package io.twinlog.cli.internals;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorException;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * {@code --start/--add}, {@code --stop/--remove}, {@code --pause}, {@code --resume} with {@code --topic REGEX...}:
 * changes the desired state of mirror topics. Each {@code --topic} is a regular expression (a plain topic name
 * matches itself): for start it is matched against the source cluster's topics, otherwise against the mirror's
 * topics. Any topic error makes the command fail (exit 1) with the first error on one line.
 */
public final class MirrorTopicsAction implements MirrorAction {
    /** What the action asks of the matching mirror topics. */
    public enum Operation {
        START("start mirroring topics"),
        STOP("stop mirror topics, i.e. fail over"),
        PAUSE("pause mirror topics"),
        RESUME("resume mirror topics");

        final String description;

        Operation(String description) {
            this.description = description;
        }
    }

    /** Letters, digits, '_' and '-' only: surely a topic name, not a pattern ('.' would make "a.b" ambiguous). */
    private static final Pattern PLAIN_NAME = Pattern.compile("[a-zA-Z0-9_-]+");

    private final Operation operation;
    private final String optionName;
    private final String mirror;
    private final List<String> topicPatterns;

    /** @param optionName the action as the operator spelled it ({@code --remove} or {@code --stop}) */
    public MirrorTopicsAction(Operation operation, String optionName, String mirror, List<String> topicPatterns) {
        this.operation = operation;
        this.optionName = optionName;
        this.mirror = mirror;
        this.topicPatterns = List.copyOf(topicPatterns);
    }

    public Operation operation() {
        return operation;
    }

    public String mirror() {
        return mirror;
    }

    public List<String> topicPatterns() {
        return topicPatterns;
    }

    /** The plain topic names of {@code --topic} values: sent as names, so a typo is an error, not an empty match. */
    static List<String> names(List<String> topicPatterns) {
        return topicPatterns.stream().filter(t -> PLAIN_NAME.matcher(t).matches()).toList();
    }

    /** The other {@code --topic} values: sent as regexes. */
    static List<String> patterns(List<String> topicPatterns) {
        return topicPatterns.stream().filter(t -> !PLAIN_NAME.matcher(t).matches()).toList();
    }

    @Override
    public void run(MirrorAdmin admin, PrintWriter out) throws IOException {
        // a plain topic name is sent as a name (so a typo is an error, not an empty match); anything else as a regex
        List<String> names = names(topicPatterns);
        List<String> patterns = patterns(topicPatterns);
        Map<String, MirrorException> errors = switch (operation) {
            case START -> admin.startMirrorTopics(mirror, names, patterns, List.of());
            case STOP -> admin.stopMirrorTopics(mirror, names, patterns);
            case PAUSE -> admin.pauseMirrorTopics(mirror, names, patterns);
            case RESUME -> admin.resumeMirrorTopics(mirror, names, patterns);
        };
        String done = switch (operation) {
            case START -> "started mirroring";
            case STOP -> "stopped (failed over, writable)";
            case PAUSE -> "paused";
            case RESUME -> "resumed";
        };
        if (errors.isEmpty()) {
            out.println("Mirror " + mirror + ": topics matching " + topicPatterns + " " + done + ".");
            return;
        }
        Map.Entry<String, MirrorException> first = errors.entrySet().iterator().next();
        throw CommandException.failed(errors.size() + " topic(s) failed, first: " + first.getKey() + ": "
                + first.getValue().getMessage());
    }
}
