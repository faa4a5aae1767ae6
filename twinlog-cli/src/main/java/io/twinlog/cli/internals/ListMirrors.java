package io.twinlog.cli.internals;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.clients.mirror.MirrorException;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * {@code --list [--mirror NAME]}: one line per cluster mirror, sorted by name:
 * <pre>
 * MIRROR  STATE  TOPICS  SOURCE-CLUSTER-ID  SOURCE-BOOTSTRAP-SERVER
 * </pre>
 * With {@code --mirror}, only that mirror, and UNKNOWN_CLUSTER_MIRROR if there is none.
 */
public final class ListMirrors implements MirrorAction {
    private final Optional<String> mirror;

    public ListMirrors(Optional<String> mirror) {
        this.mirror = mirror;
    }

    @Override
    public void run(MirrorAdmin admin, PrintWriter out) throws IOException {
        List<MirrorAdmin.MirrorListing> mirrors = admin.listClusterMirrors(false).stream()
                .filter(m -> mirror.isEmpty() || m.name().equals(mirror.get()))
                .sorted(Comparator.comparing(MirrorAdmin.MirrorListing::name))
                .toList();
        if (mirror.isPresent() && mirrors.isEmpty()) {
            throw new MirrorException(MirrorErrors.UNKNOWN_CLUSTER_MIRROR.code,
                    "No cluster mirror named '" + mirror.get() + "'");
        }
        Table table = new Table("MIRROR", "STATE", "TOPICS", "SOURCE-CLUSTER-ID", "SOURCE-BOOTSTRAP-SERVER");
        for (MirrorAdmin.MirrorListing m : mirrors) {
            table.addRow(m.name(), m.state(), m.topicCount(), m.sourceClusterId(), m.sourceBootstrap());
        }
        table.print(out);
    }
}
