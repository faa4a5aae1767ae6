package io.twinlog.group;

import io.twinlog.controller.metadata.FeatureLevels;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MirrorImage;
import org.apache.kafka.server.common.ShareVersion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * share.version reaches Kafka's image as a KRaft controller's feature record would bring it: the share coordinator
 * turns its periodic jobs on and off from {@code finalizedVersions()}.
 */
@Timeout(10)
class KafkaImageBridgeTest {
    private static final String SV = ShareVersion.FEATURE_NAME;
    /** share.version 0 written by an operator (1 is the default). */
    private static final FeatureLevels SHARE_GROUPS_OFF = FeatureLevels.fromNode(Map.of(SV, (short) 0), 0, "/feature");

    @Test
    void shareVersionIsReplayedWhenItChangesAndOnlyThen() {
        KafkaImageBridge bridge = new KafkaImageBridge();
        assertTrue(bridge.update(image(SHARE_GROUPS_OFF), 1).isEmpty(), "level 0 is Kafka's empty image");

        Optional<KafkaImageBridge.Update> on = bridge.update(image(FeatureLevels.fromNode(Map.of(SV, (short) 1), 0,
                "/feature")), 2);
        assertTrue(on.isPresent());
        assertEquals((short) 1, on.get().image().features().finalizedVersions().get(SV));
        assertTrue(bridge.update(image(FeatureLevels.fromNode(Map.of(SV, (short) 1), 1, "/feature")), 3).isEmpty(),
                "the same level again changes nothing");

        // an operator's 2 is bounded to Twinlog's 1 before it reaches the bridge: nothing changes either
        assertTrue(bridge.update(image(FeatureLevels.fromNode(Map.of(SV, (short) 2), 2, "/feature")), 4).isEmpty());

        Optional<KafkaImageBridge.Update> off = bridge.update(image(SHARE_GROUPS_OFF), 5);
        assertTrue(off.isPresent());
        assertFalse(off.get().image().features().finalizedVersions().containsKey(SV));
    }

    private static MetadataImage image(FeatureLevels features) {
        return new MetadataImage("cluster", Map.of(), Map.of(), Map.of(), -1, MirrorImage.EMPTY, Map.of(), features);
    }
}
