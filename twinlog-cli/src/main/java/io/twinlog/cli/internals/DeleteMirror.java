package io.twinlog.cli.internals;

import io.twinlog.clients.mirror.MirrorAdmin;

import java.io.IOException;
import java.io.PrintWriter;

/** {@code --delete}: removes a cluster mirror; the broker refuses while any of its topics is not stopped. */
public final class DeleteMirror implements MirrorAction {
    private final String mirror;

    public DeleteMirror(String mirror) {
        this.mirror = mirror;
    }

    @Override
    public void run(MirrorAdmin admin, PrintWriter out) throws IOException {
        admin.deleteClusterMirror(mirror);
        out.println("Deleted cluster mirror '" + mirror + "'.");
    }
}
