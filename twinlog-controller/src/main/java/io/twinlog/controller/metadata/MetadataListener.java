package io.twinlog.controller.metadata;

/**
 * Told of each new metadata image, on the metadata thread, with what changed since the previous one. The delta is
 * computed once per image for every listener.
 */
@FunctionalInterface
public interface MetadataListener {
    void onImage(MetadataImage previous, MetadataImage next, MetadataDelta delta);
}
