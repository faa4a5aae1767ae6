package io.twinlog.mirror.runtime;

import io.twinlog.mirror.store.MirrorDefinition;
import io.twinlog.mirror.store.MirrorProgress;
import io.twinlog.mirror.store.MirrorStore;
import org.apache.curator.framework.CuratorFramework;
import org.apache.kafka.common.TopicPartition;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the mirror workers read and write in the cluster's metadata store: the mirror definitions, the partitions'
 * state records (version-checked) and their progress. In a broker it is ZooKeeper ({@link #of}); an interface so
 * that the manager and its workers are tested without it ({@code MirrorManagerTest}).
 */
interface MirrorRecords {
    /** The mirror's definition; empty when it is gone. Throws when it cannot be read. */
    Optional<MirrorDefinition> definition(String name) throws Exception;

    /** Replaces the definition if it is still {@code expected}; false when it changed meanwhile. */
    boolean updateDefinition(MirrorDefinition expected, MirrorDefinition next) throws Exception;

    /** Writes state records, each conditionally on its expected version ({@link MirrorStateWriter#writeAll}). */
    MirrorStateWriter.Outcome writeStates(List<MirrorStateWriter.StateWrite> writes);

    /** Records the progress (source high watermark, local log end) of partitions this broker leads. */
    void writeProgress(Map<TopicPartition, MirrorProgress> progress) throws Exception;

    /** The records in ZooKeeper: definitions and progress through {@code store}, state records through {@code zk}. */
    static MirrorRecords of(MirrorStore store, CuratorFramework zk) {
        MirrorStateWriter writer = new MirrorStateWriter(zk);
        return new MirrorRecords() {
            @Override
            public Optional<MirrorDefinition> definition(String name) throws Exception {
                return store.get(name);
            }

            @Override
            public boolean updateDefinition(MirrorDefinition expected, MirrorDefinition next) throws Exception {
                return store.update(expected, next);
            }

            @Override
            public MirrorStateWriter.Outcome writeStates(List<MirrorStateWriter.StateWrite> writes) {
                return writer.writeAll(writes);
            }

            @Override
            public void writeProgress(Map<TopicPartition, MirrorProgress> progress) throws Exception {
                store.writeProgressAll(progress);
            }
        };
    }
}
