package io.twinlog.mirror.store;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.twinlog.controller.zk.Json;

/**
 * How far a mirror partition had got when its destination leader last recorded it: the source high watermark its
 * fetcher last saw and the leader's own log end. Kept in the durable record so every destination broker reports
 * the same offsets and lag, whichever of them is asked (-1 where not known yet).
 */
public record MirrorProgress(long sourceHighWatermark, long destinationLogEndOffset) {
    public static final MirrorProgress UNKNOWN = new MirrorProgress(-1L, -1L);

    /** How far the destination is behind the source, or -1 if either end is unknown. */
    public long lag() {
        return sourceHighWatermark >= 0 && destinationLogEndOffset >= 0
                ? Math.max(0, sourceHighWatermark - destinationLogEndOffset) : -1L;
    }

    /**
     * Progress as stored at {@code /mirror_progress/<topic>/<partition>}:
     * {@code {"version":1,"sourceHighWatermark":120,"destinationLogEndOffset":118}} (records written before this
     * type existed may have the fields in another order).
     */
    @JsonPropertyOrder({"version", "sourceHighWatermark", "destinationLogEndOffset"})
    public record Document(@JsonProperty("version") int version,
                           @JsonProperty("sourceHighWatermark") long sourceHighWatermark,
                           @JsonProperty("destinationLogEndOffset") long destinationLogEndOffset) {
    }

    public Document toJson() {
        return new Document(1, sourceHighWatermark, destinationLogEndOffset);
    }

    /** @param path where the progress was read, for the error if it is corrupt */
    public static MirrorProgress fromJson(byte[] data, String path) {
        Document d = Json.decode(data, path, Document.class);
        return new MirrorProgress(d.sourceHighWatermark(), d.destinationLogEndOffset());
    }
}
