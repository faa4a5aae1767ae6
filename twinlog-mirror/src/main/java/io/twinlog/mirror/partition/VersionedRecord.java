package io.twinlog.mirror.partition;

import io.twinlog.mirror.store.MirrorPartitionRecord;

/** A mirror partition record with the version of its durable copy (-1: never written). */
public record VersionedRecord(MirrorPartitionRecord record, int version) {
}
