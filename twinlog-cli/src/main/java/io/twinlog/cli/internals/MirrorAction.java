package io.twinlog.cli.internals;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorException;

import java.io.IOException;
import java.io.PrintWriter;

/**
 * One action of {@code twinlog-mirrors.sh}, built from a command line that has already been validated. It makes its
 * calls on the admin client and prints its result to {@code out}; it reports failures by throwing (a
 * {@link MirrorException} from the broker, an {@link IOException} from the network, or a
 * {@link CommandException}), never by printing them, so that the command prints every error the same way.
 */
public interface MirrorAction {
    void run(MirrorAdmin admin, PrintWriter out) throws IOException;
}
