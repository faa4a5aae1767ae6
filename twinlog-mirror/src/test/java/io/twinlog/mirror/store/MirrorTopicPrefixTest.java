package io.twinlog.mirror.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code mirror.topic.prefix} and its separator: the names a mirror gives its topics, checked when set. */
@Timeout(10)
class MirrorTopicPrefixTest {
    private static MirrorDefinition mirror(String... configs) {
        Map<String, String> map = new HashMap<>();
        map.put(MirrorDefinition.BOOTSTRAP_SERVERS, "src:9092");
        for (int i = 0; i < configs.length; i += 2) {
            map.put(configs[i], configs[i + 1]);
        }
        return new MirrorDefinition("dr", map, Optional.empty(), MirrorDefinition.State.ACTIVE, Optional.empty());
    }

    @Test
    void withoutAPrefixTopicsKeepTheirNames() {
        assertEquals("orders", mirror().destinationTopic("orders"));
        assertEquals("orders", mirror(MirrorDefinition.TOPIC_PREFIX, "").destinationTopic("orders"));
        assertEquals("orders", mirror(MirrorDefinition.TOPIC_PREFIX_SEPARATOR, "_").destinationTopic("orders"),
                "a separator alone renames nothing");
        assertEquals(Optional.empty(), mirror().validateSettings());
    }

    @Test
    void aPrefixAndSeparatorNameTheTopicsHere() {
        assertEquals("west.orders", mirror(MirrorDefinition.TOPIC_PREFIX, "west").destinationTopic("orders"));
        assertEquals("west_orders", mirror(MirrorDefinition.TOPIC_PREFIX, "west",
                MirrorDefinition.TOPIC_PREFIX_SEPARATOR, "_").destinationTopic("orders"));
        assertEquals("westorders", mirror(MirrorDefinition.TOPIC_PREFIX, "west",
                MirrorDefinition.TOPIC_PREFIX_SEPARATOR, "").destinationTopic("orders"));
        assertEquals(Optional.empty(), mirror(MirrorDefinition.TOPIC_PREFIX, "us-west_2.a").validateSettings());
    }

    @Test
    void illegalOrTooLongPrefixesAreRefusedWithTheReason() {
        String spaces = mirror(MirrorDefinition.TOPIC_PREFIX, "we st").validateSettings().orElseThrow();
        assertTrue(spaces.contains("mirror.topic.prefix") && spaces.contains("[a-zA-Z0-9._-]"), spaces);
        assertTrue(mirror(MirrorDefinition.TOPIC_PREFIX, "west", MirrorDefinition.TOPIC_PREFIX_SEPARATOR, "/")
                .validateSettings().isPresent());
        assertTrue(mirror(MirrorDefinition.TOPIC_PREFIX, "..").validateSettings().isPresent());
        String tooLong = mirror(MirrorDefinition.TOPIC_PREFIX, "p".repeat(248)).validateSettings().orElseThrow();
        assertTrue(tooLong.contains("249"), tooLong);
        assertEquals(Optional.empty(), mirror(MirrorDefinition.TOPIC_PREFIX, "p".repeat(247)).validateSettings(),
                "249 characters with the separator leaves one for the topic");
    }

    @Test
    void aTopicWhoseRenamedNameIsTooLongIsRefusedAlone() {
        MirrorDefinition def = mirror(MirrorDefinition.TOPIC_PREFIX, "west");
        assertFalse(def.destinationNameRefused("t".repeat(244)).isPresent(), "west. + 244 = 249");
        String why = def.destinationNameRefused("t".repeat(245)).orElseThrow();
        assertTrue(why.contains("250 characters"), why);
    }

    @Test
    void theNamingRuleIsThePrefixWithItsSeparator() {
        assertTrue(mirror(MirrorDefinition.TOPIC_PREFIX, "west").sameTopicNames(mirror(MirrorDefinition.TOPIC_PREFIX,
                "west", MirrorDefinition.TOPIC_PREFIX_SEPARATOR, ".")));
        assertFalse(mirror(MirrorDefinition.TOPIC_PREFIX, "west").sameTopicNames(mirror()));
        assertTrue(mirror().sameTopicNames(mirror(MirrorDefinition.TOPIC_PREFIX_SEPARATOR, "_")),
                "no prefix, whatever the separator");
    }
}
