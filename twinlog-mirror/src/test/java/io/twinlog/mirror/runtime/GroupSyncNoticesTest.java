package io.twinlog.mirror.runtime;

import io.twinlog.mirror.store.GroupSyncRecord;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.IntStream;

import static io.twinlog.mirror.store.GroupSyncRecord.Type.CONSUMER;
import static io.twinlog.mirror.store.GroupSyncRecord.Type.SHARE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link GroupSyncNotices} says each thing once per mirror, and {@link GroupSyncReads#batches}; one rule per test. */
@Timeout(60)
class GroupSyncNoticesTest {
    private final GroupSyncNotices notices = new GroupSyncNotices();

    private static GroupListing listing(GroupType type, String protocol) {
        return new GroupListing("billing", Optional.of(type), protocol, Optional.empty());
    }

    @Test
    void aGroupActiveHereIsSaidOnceWhenItStartsAndOnceWhenItEnds() {
        assertTrue(notices.onActiveHere("m1", "billing", "group billing", "it has 2 members here"));
        assertFalse(notices.onActiveHere("m1", "billing", "group billing", "it has 2 members here"));
        assertTrue(notices.onNotActiveHere("m1", "billing", "group billing"));
        assertFalse(notices.onNotActiveHere("m1", "billing", "group billing"));
    }

    @Test
    void aGroupNeverActiveHereSaysNothingWhenSynced() {
        assertFalse(notices.onNotActiveHere("m1", "billing", "group billing"));
    }

    @Test
    void eachMirrorHasItsOwnNotices() {
        assertTrue(notices.onActiveHere("m1", "billing", "group billing", "members"));
        assertTrue(notices.onActiveHere("m2", "billing", "group billing", "members"));
    }

    @Test
    void aGroupIdOfAnotherTypeHereIsAConflictUntilItIsFree() {
        GroupListing shareHere = listing(GroupType.SHARE, "");
        assertTrue(notices.typeConflict("m1", CONSUMER, "billing", shareHere));
        assertTrue(notices.typeConflict("m1", CONSUMER, "billing", shareHere), "still one, said once");
        assertFalse(notices.typeConflict("m1", CONSUMER, "billing", null), "gone here: free");
        assertFalse(notices.typeConflict("m1", CONSUMER, "billing", listing(GroupType.CONSUMER, "consumer")));
    }

    @Test
    void aGroupOfTheSameTypeHereIsNoConflict() {
        assertFalse(notices.typeConflict("m1", SHARE, "billing", listing(GroupType.SHARE, "share")));
        assertFalse(notices.typeConflict("m1", CONSUMER, "billing", listing(GroupType.CLASSIC, "consumer")));
    }

    @Test
    void aTypeNotServedIsSaidOncePerReasonAndWhenServedAgain() {
        UnsupportedVersionException level0 = new UnsupportedVersionException("share.version 0");
        assertTrue(notices.onUnsupported("m1", SHARE, "the source", level0));
        assertFalse(notices.onUnsupported("m1", SHARE, "the source", level0));
        assertTrue(notices.onUnsupported("m1", SHARE, "this cluster", level0), "another reason");
        assertTrue(notices.onSupported("m1", SHARE));
        assertFalse(notices.onSupported("m1", SHARE));
    }

    @Test
    void aDeletedMirrorsNoticesAreForgotten() {
        notices.onActiveHere("m1", "billing", "group billing", "members");
        notices.retainMirrors(Set.of("m2"));
        assertTrue(notices.onActiveHere("m1", "billing", "group billing", "members"), "said again: forgotten");
    }

    @Test
    void theNounNamesShareGroups() {
        assertEquals("share group", GroupSyncNotices.noun(GroupSyncRecord.Type.SHARE));
        assertEquals("group", GroupSyncNotices.noun(GroupSyncRecord.Type.CONSUMER));
    }

    @Test
    void groupsAreBatchedByNameAHundredPerRequest() {
        Set<String> groups = Set.copyOf(IntStream.range(0, 250).mapToObj(i -> String.format("g%03d", i)).toList());
        List<List<String>> batches = GroupSyncReads.batches(groups);
        assertEquals(List.of(100, 100, 50), batches.stream().map(List::size).toList());
        assertEquals("g000", batches.get(0).get(0));
        assertEquals("g249", batches.get(2).get(49));
        assertEquals(List.of(), GroupSyncReads.batches(Set.of()));
    }
}
