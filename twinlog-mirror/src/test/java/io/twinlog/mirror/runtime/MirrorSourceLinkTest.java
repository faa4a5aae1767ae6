package io.twinlog.mirror.runtime;

import io.twinlog.mirror.store.MirrorDefinition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One mirror's fetcher on a broker, on {@link FakeMirrorBroker}'s sources: started once, restarted for other client
 * configs, stopped when nothing needs it (its threads waited for on the closer), and the source's cluster ID
 * recorded at first contact.
 */
@Timeout(30)
class MirrorSourceLinkTest {
    private final FakeMirrorBroker broker = new FakeMirrorBroker();
    /** The stopped fetchers waiting for the closer; run when the test says. */
    private final List<Runnable> closing = new ArrayList<>();
    private final MirrorSourceLink link = new MirrorSourceLink("m", broker.sources(), broker, closing::add,
            Time.SYSTEM, def -> null);
    private final AtomicInteger restarts = new AtomicInteger();

    @Test
    void theFetcherStartsOnceAndRestartsForOtherClientConfigs() throws Exception {
        broker.createMirror("m", "source:9092");
        MirrorDefinition def = broker.definition("m").orElseThrow();
        assertTrue(link.existing().isEmpty());
        MirrorSource first = link.sourceFor(def, restarts::incrementAndGet);
        assertSame(first, link.sourceFor(def, restarts::incrementAndGet));
        assertEquals(1, broker.sources.size());
        assertEquals(0, restarts.get());

        broker.alterMirror("m", "elsewhere:9092");
        MirrorSource second = link.sourceFor(broker.definition("m").orElseThrow(), restarts::incrementAndGet);
        assertEquals(1, restarts.get());
        assertEquals("elsewhere:9092", broker.sources.get(1).bootstrap);
        assertSame(second, link.existing().orElseThrow());
        FakeMirrorBroker.Source old = broker.sources.get(0);
        assertTrue(old.detached, "nothing appended from the old address");
        assertFalse(old.shutDown, "its threads are waited for off the caller's thread");
        closing.forEach(Runnable::run);
        assertTrue(old.shutDown);
    }

    @Test
    void theFetcherStopsWhenNothingNeedsItAndAStopIsNoRestart() throws Exception {
        broker.createMirror("m", "source:9092");
        MirrorDefinition def = broker.definition("m").orElseThrow();
        link.sourceFor(def, restarts::incrementAndGet);
        link.stopUnlessNeeded(true);
        assertTrue(link.existing().isPresent());

        link.stopUnlessNeeded(false);
        assertTrue(link.existing().isEmpty());
        assertTrue(broker.sources.get(0).detached);
        closing.forEach(Runnable::run);
        assertTrue(broker.sources.get(0).shutDown);
        assertFalse(link.sourceEndOutOfDate(new TopicPartition("orders", 0)), "no fetcher: nothing out of date");

        // even with other configs now, the next start is a fresh start, not a restart
        broker.alterMirror("m", "elsewhere:9092");
        link.sourceFor(broker.definition("m").orElseThrow(), restarts::incrementAndGet);
        assertEquals(0, restarts.get());
        assertEquals(2, broker.sources.size());

        link.close();
        assertTrue(broker.sources.get(1).shutDown, "closing waits for the fetcher on the caller's thread");
        assertTrue(link.existing().isEmpty());
    }

    @Test
    void theCapAppliesLive() throws Exception {
        broker.createMirror("m", "source:9092");
        MirrorDefinition def = broker.definition("m").orElseThrow();
        link.updateReplicationQuota(def); // no fetcher: nothing to do
        link.sourceFor(def, restarts::incrementAndGet);
        link.updateReplicationQuota(def);
        assertEquals(def.replicationThrottledRate(), broker.sources.get(0).replicationQuota);
        assertEquals(1, broker.sources.size(), "no restart");
    }

    @Test
    void theSourceClusterIdIsRecordedAtFirstContact() throws Exception {
        broker.createMirror("m", "source:9092");
        MirrorDefinition created = broker.definition("m").orElseThrow();
        MirrorDefinition unknownSource = new MirrorDefinition("m", created.configs(), Optional.empty(),
                MirrorDefinition.State.ACTIVE, Optional.empty());
        assertTrue(broker.updateDefinition(created, unknownSource));

        link.checkSourceClusterId(unknownSource); // no fetcher: nothing seen, nothing recorded
        assertEquals(Optional.empty(), broker.definition("m").orElseThrow().sourceClusterId());

        link.sourceFor(unknownSource, restarts::incrementAndGet);
        link.checkSourceClusterId(unknownSource);
        assertEquals(Optional.of("source-cluster"), broker.definition("m").orElseThrow().sourceClusterId());
    }
}
