package io.twinlog.mirror.runtime;

import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.mirror.runtime.MirrorTopicStarter.TopicResult;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The checks of {@link MirrorTopicStarter} made without a cluster. A prefixed name that is an internal topic's is
 * refused as the source's own internal topics are. A start whose loop check the source could not answer (decision 125): a failback into an existing local topic is
 * refused, naming why and what to do, since the source topic may still mirror from here (A's {@code orders}
 * mirrored on B as {@code west.orders}: starting {@code west.orders} on A would take the live {@code orders} over).
 */
@Timeout(10)
class MirrorTopicStarterChecksTest {
    private static final String NO_DESCRIBE = "the source refused to say which of its topics mirror from this "
            + "cluster: the mirror's principal there needs DESCRIBE on its cluster mirrors";
    private static final SourceMirrorTopics.Loops REFUSED = new SourceMirrorTopics.Loops(Set.of(),
            Optional.of(NO_DESCRIBE), true, Set.of());
    private static final SourceMirrorTopics.Loops UNREACHABLE = new SourceMirrorTopics.Loops(Set.of(),
            Optional.of("the source could not be asked"), false, Set.of());
    /** The source listed its mirrors but refused LastMirroredEpochs of west.orders: a mirror it hides mirrors it. */
    private static final SourceMirrorTopics.Loops HIDDEN = new SourceMirrorTopics.Loops(Set.of(), Optional.empty(),
            false, Set.of("west.orders"));

    @Test
    void aPrefixedNameThatIsAnInternalTopicsIsRefused() {
        for (String internal : new String[]{"__transaction_state", "__consumer_offsets", "__twinlog_quarantine"}) {
            String source = internal.substring(2);
            TopicResult refused = MirrorTopicStarter.refusal(source, internal).orElseThrow();
            assertEquals(Errors.INVALID_TOPIC_EXCEPTION.code(), refused.code());
            assertTrue(refused.message().contains("'" + source + "' would be mirrored here as '" + internal + "'")
                    && refused.message().contains("mirror.topic.prefix"), refused.message());
        }
        assertTrue(MirrorTopicStarter.refusal("__consumer_offsets", "_.__consumer_offsets").isPresent(),
                "the source's own internal topics stay refused");
        assertEquals(Optional.empty(), MirrorTopicStarter.refusal("orders", "__orders"));
        assertEquals(Optional.empty(), MirrorTopicStarter.refusal("orders", "orders"));
    }

    @Test
    void aFailbackIntoALocalTopicIsRefusedWhenTheSourceCannotSayItIsNoLoop() {
        Optional<TopicResult> refused = MirrorTopicStarter.takeoverInDoubt("from-b", "west.orders", "orders",
                REFUSED, Optional.empty());
        assertEquals(MirrorErrors.CLUSTER_MIRROR_AUTHORIZATION_FAILED.code, refused.orElseThrow().code());
        assertTrue(refused.get().message().contains("fails back into 'orders'")
                && refused.get().message().contains(NO_DESCRIBE), refused.get().message());
        assertEquals(MirrorErrors.SOURCE_CLUSTER_UNREACHABLE.code, MirrorTopicStarter.takeoverInDoubt("from-b",
                "west.orders", "orders", UNREACHABLE, Optional.empty()).orElseThrow().code());
        TopicResult hidden = MirrorTopicStarter.takeoverInDoubt("from-b", "west.orders", "orders", HIDDEN,
                Optional.empty()).orElseThrow();
        assertEquals(MirrorErrors.CLUSTER_MIRROR_AUTHORIZATION_FAILED.code, hidden.code());
        assertTrue(hidden.message().contains("needs DESCRIBE"), hidden.message());
        assertEquals(Optional.empty(), MirrorTopicStarter.takeoverInDoubt("from-b", "west.payments", "payments",
                HIDDEN, Optional.empty()), "a topic the source answered for is no doubt");
        assertTrue(MirrorTopicStarter.takeoverInDoubt("from-b", "west.orders", "orders", UNREACHABLE,
                Optional.of(new MirrorImage.MirrorTopic("from-b", DesiredMirrorState.STOPPED))).isPresent(),
                "a topic this mirror failed over is taken over by the start again");
    }

    @Test
    void nothingIsRefusedWhenTheSourceAnsweredOrTheTopicAlreadyMirrorsHere() {
        assertEquals(Optional.empty(), MirrorTopicStarter.takeoverInDoubt("from-b", "west.orders", "orders",
                SourceMirrorTopics.Loops.NONE, Optional.empty()));
        assertEquals(Optional.empty(), MirrorTopicStarter.takeoverInDoubt("from-b", "orders", "east.orders",
                REFUSED, Optional.of(new MirrorImage.MirrorTopic("from-b", DesiredMirrorState.MIRRORING))),
                "a start of a topic that already mirrors under this mirror takes nothing over");
    }
}
