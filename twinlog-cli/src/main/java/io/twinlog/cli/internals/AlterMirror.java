package io.twinlog.cli.internals;

import io.twinlog.clients.mirror.MirrorAdmin;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.Map;

/** {@code --alter}: changes configs of a cluster mirror (source address, client configs, patterns). */
public record AlterMirror(String mirror, Map<String, String> changes) implements MirrorAction {
    public AlterMirror {
        changes = Map.copyOf(changes);
    }

    @Override
    public void run(MirrorAdmin admin, PrintWriter out) throws IOException {
        admin.alterClusterMirror(mirror, changes);
        out.println("Altered cluster mirror '" + mirror + "': " + changes.keySet() + ".");
    }
}
