package io.twinlog.mirror.store;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.twinlog.controller.zk.Json;

/**
 * How far a mirror partition had got when its destination leader last recorded it: the source high watermark its
 * fetcher last saw and the leader's own log end; and in time, the max timestamp of the last batch it holds from the
 * source and the time up to which it holds everything the source had (the partition's mirrored-up-to time,
 * {@code MirroredTime}, decision 122). Kept in the durable record so every destination broker reports the same
 * offsets, lag and RPO, whichever of them is asked (-1 where not known yet).
 */
public record MirrorProgress(long sourceHighWatermark, long destinationLogEndOffset, long newestMirroredTimestamp,
                             long mirroredUpToMs) {
    public static final MirrorProgress UNKNOWN = new MirrorProgress(-1L, -1L);
    /** The version of {@link Document} written now (1: offsets only, read with unknown times). */
    static final int DOCUMENT_VERSION = 2;

    /** Offsets only, the times unknown. */
    public MirrorProgress(long sourceHighWatermark, long destinationLogEndOffset) {
        this(sourceHighWatermark, destinationLogEndOffset, -1L, -1L);
    }

    /** How far the destination is behind the source, or -1 if either end is unknown. */
    public long lag() {
        return sourceHighWatermark >= 0 && destinationLogEndOffset >= 0
                ? Math.max(0, sourceHighWatermark - destinationLogEndOffset) : -1L;
    }

    /**
     * Progress as stored at {@code /mirror_progress/<topic>/<partition>}:
     * {@code {"version":2,"sourceHighWatermark":120,"destinationLogEndOffset":118,
     * "newestMirroredTimestamp":1796637600000,"mirroredUpToMs":1796637600000}}; the times are absent when unknown.
     * Version 1 documents (before the times, possibly with the fields in another order) read with both times -1.
     */
    @JsonPropertyOrder({"version", "sourceHighWatermark", "destinationLogEndOffset", "newestMirroredTimestamp",
        "mirroredUpToMs"})
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Document(@JsonProperty("version") int version,
                           @JsonProperty("sourceHighWatermark") long sourceHighWatermark,
                           @JsonProperty("destinationLogEndOffset") long destinationLogEndOffset,
                           @JsonProperty("newestMirroredTimestamp") Long newestMirroredTimestamp,
                           @JsonProperty("mirroredUpToMs") Long mirroredUpToMs) {
    }

    public Document toJson() {
        return new Document(DOCUMENT_VERSION, sourceHighWatermark, destinationLogEndOffset,
                orNull(newestMirroredTimestamp), orNull(mirroredUpToMs));
    }

    /** @param path where the progress was read, for the error if it is corrupt */
    public static MirrorProgress fromJson(byte[] data, String path) {
        Document d = Json.decode(data, path, Document.class);
        return new MirrorProgress(d.sourceHighWatermark(), d.destinationLogEndOffset(),
                orUnknown(d.newestMirroredTimestamp()), orUnknown(d.mirroredUpToMs()));
    }

    /** An unknown time (-1) is left out of a document. */
    static Long orNull(long time) {
        return time < 0 ? null : time;
    }

    static long orUnknown(Long time) {
        return time == null ? -1L : time;
    }
}
