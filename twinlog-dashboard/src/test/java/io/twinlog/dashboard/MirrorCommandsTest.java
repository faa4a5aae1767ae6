package io.twinlog.dashboard;

import io.twinlog.cli.MirrorsCommand;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.internals.Topic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The commands the dashboard shows are those of docs/operator-guide.md, quoted for a POSIX shell where needed. */
@Timeout(30)
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

    @Test
    void aTopicNameWithADotIsEscapedInEveryCommand() {
        String escaped = "'orders\\.v1'";
        assertEquals("bin/twinlog-mirrors.sh --bootstrap-server b1:9192,b2:9192 --remove --topic " + escaped
                + " --mirror dr", commands.failover("dr", "orders.v1"));
        assertEquals("bin/twinlog-mirrors.sh --bootstrap-server b1:9192,b2:9192 --pause --topic " + escaped
                + " --mirror dr", commands.pause("dr", "orders.v1"));
        assertEquals("bin/twinlog-mirrors.sh --bootstrap-server b1:9192,b2:9192 --resume --topic " + escaped
                + " --mirror dr", commands.resume("dr", "orders.v1"));
        for (String step : commands.failback("dr", "a1:9092", "orders.v1")) {
            assertFalse(step.contains("orders.v1"), "escaped in " + step);
        }
        assertEquals(4, commands.failback("dr", "a1:9092", "orders.v1").stream()
                .filter(step -> step.contains("--topic " + escaped)).count());
    }

    /** Through a real shell and the CLI's own parser, failing over orders.v1 selects orders.v1 and nothing else. */
    @Test
    void theEscapedTopicReachesTheCliAsAPatternMatchingOnlyThatTopic() throws Exception {
        List<String> all = new ArrayList<>(commands.failback("dr", "a1:9092", "orders.v1"));
        all.addAll(List.of(commands.failover("dr", "orders.v1"), commands.pause("dr", "orders.v1"),
                commands.resume("dr", "orders.v1")));
        for (String command : all.subList(1, all.size())) { // the first step (--create) has no --topic
            List<String> topics = MirrorsCommand.newCommandLine().parseArgs(shellWords(command))
                    .matchedOptionValue("--topic", List.<String>of());
            assertEquals(List.of("orders\\.v1"), topics, command);
            // the broker (MirrorTopicHandlers) and --verify match a --topic pattern with Pattern.matches
            for (String other : List.of("orders-v1", "ordersXv1", "orders_v1", "orders.v10", "xorders.v1")) {
                assertFalse(Pattern.matches(topics.get(0), other), command + " must not select " + other);
            }
            assertTrue(Pattern.matches(topics.get(0), "orders.v1"), command);
        }
    }

    /** Every character Kafka allows in a topic name, escaped, matches itself and no other allowed character. */
    @Test
    void escapingTheDotSufficesForEveryLegalTopicCharacter() {
        List<Character> legal = new ArrayList<>();
        for (char c = 0; c < 128; c++) {
            try {
                Topic.validate("a" + c + "b");
                legal.add(c);
            } catch (InvalidTopicException e) {
                // not allowed in a topic name
            }
        }
        assertEquals(26 * 2 + 10 + 3, legal.size(), "Kafka's [a-zA-Z0-9._-]: " + legal);
        for (char c : legal) {
            String pattern = unquote(MirrorCommands.topicArgument("a" + c + "b"));
            for (char d : legal) {
                assertEquals(c == d, Pattern.matches(pattern, "a" + d + "b"), pattern + " against a" + d + "b");
            }
        }
    }

    @Test
    void everyTopicOfAMirrorStaysARegex() {
        assertEquals("'.*'", MirrorCommands.topicArgument(MirrorCommands.ALL_TOPICS));
    }

    /** The words {@code sh} makes of a command's arguments (after the tool). */
    private static String[] shellWords(String command) throws IOException, InterruptedException {
        String arguments = command.substring(command.indexOf(' ') + 1);
        Process sh = new ProcessBuilder("sh", "-c", "printf '%s\\n' " + arguments).redirectErrorStream(true).start();
        String out = new String(sh.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(sh.waitFor(10, TimeUnit.SECONDS), "sh ended");
        assertEquals(0, sh.exitValue(), out);
        return out.lines().toArray(String[]::new);
    }

    private static String unquote(String word) {
        return word.startsWith("'") ? word.substring(1, word.length() - 1) : word;
    }
}
