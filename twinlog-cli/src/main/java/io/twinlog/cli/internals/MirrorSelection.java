package io.twinlog.cli.internals;

import picocli.CommandLine.Option;

import java.util.ArrayList;
import java.util.List;

/** Which mirror and which of its topics an action of {@code twinlog-mirrors.sh} is about, as picocli fills them in. */
public final class MirrorSelection {
    private static final String TOPIC_ACTIONS = "--start/--add, --stop/--remove, --pause or --resume";

    @Option(names = "--mirror", paramLabel = "NAME", order = 21, description = "The cluster mirror (needed by "
            + "every action but --list and --describe).")
    String mirror;

    @Option(names = "--topic", paramLabel = "REGEX", order = 22, description = "Source topics, by name or "
            + "regular expression; repeatable (with " + TOPIC_ACTIONS + ").")
    List<String> topics = new ArrayList<>();
}
