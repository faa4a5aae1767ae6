package io.twinlog.mirror.runtime;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MetadataListener;
import io.twinlog.controller.zk.MetadataWatcher;

/**
 * The broker's metadata image as the mirror manager reads it: the current image, and each new one as it comes. In
 * a broker it is the {@link MetadataWatcher} ({@link #of}); an interface so that the manager is tested with images
 * built by the test ({@code MirrorManagerTest}).
 */
interface MirrorMetadata {
    MetadataImage image();

    /** Tells {@code listener} of every new image, on the metadata thread. */
    void addListener(MetadataListener listener);

    static MirrorMetadata of(MetadataWatcher watcher) {
        return new MirrorMetadata() {
            @Override
            public MetadataImage image() {
                return watcher.image();
            }

            @Override
            public void addListener(MetadataListener listener) {
                watcher.addListener(listener);
            }
        };
    }
}
