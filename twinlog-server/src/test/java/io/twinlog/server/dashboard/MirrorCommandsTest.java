package io.twinlog.server.dashboard;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The commands the dashboard shows are those of docs/operator-guide.md, quoted for a POSIX shell where needed. */
class MirrorCommandsTest {
    private final MirrorCommands commands = new MirrorCommands("bin/twinlog-mirrors.sh", "b1:9192,b2:9192");

    @Test
    void failoverOfATopic() {
        assertEquals("bin/twinlog-mirrors.sh --bootstrap-server b1:9192,b2:9192 --remove --topic orders --mirror dr",
                commands.failover("dr", "orders"));
    }

    @Test
    void failoverOfEveryTopicQuotesTheRegex() {
        assertEquals("bin/twinlog-mirrors.sh --bootstrap-server b1:9192,b2:9192 --remove --topic '.*' --mirror dr",
                commands.failover("dr", MirrorCommands.ALL_TOPICS));
    }

    @Test
    void failbackMirrorsBackFromThisClusterThenSwitches() {
        assertEquals(List.of(
                "bin/twinlog-mirrors.sh --bootstrap-server a1:9092 --create --mirror dr-back "
                        + "--source-bootstrap-server b1:9192,b2:9192",
                "bin/twinlog-mirrors.sh --bootstrap-server a1:9092 --start --mirror dr-back --topic orders",
                "bin/twinlog-mirrors.sh --bootstrap-server a1:9092 --verify --mirror dr-back --topic orders",
                "bin/twinlog-mirrors.sh --bootstrap-server a1:9092 --remove --mirror dr-back --topic orders",
                "bin/twinlog-mirrors.sh --bootstrap-server b1:9192,b2:9192 --start --mirror dr --topic orders"),
                commands.failback("dr", "a1:9092", "orders"));
    }

    @Test
    void pauseAndResume() {
        assertEquals("bin/twinlog-mirrors.sh --bootstrap-server b1:9192,b2:9192 --pause --topic orders --mirror dr",
                commands.pause("dr", "orders"));
        assertEquals("bin/twinlog-mirrors.sh --bootstrap-server b1:9192,b2:9192 --resume --topic orders --mirror dr",
                commands.resume("dr", "orders"));
    }

    @Test
    void singleQuotesAreEscaped() {
        assertEquals("'it'\\''s'", MirrorCommands.quote("it's"));
    }

    @Test
    void theReverseMirrorNameStaysValid() {
        assertEquals(249, MirrorCommands.backMirror("m".repeat(249)).length());
    }
}
