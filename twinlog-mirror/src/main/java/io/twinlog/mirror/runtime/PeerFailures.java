package io.twinlog.mirror.runtime;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.clients.mirror.MirrorException;
import io.twinlog.mirror.partition.PeerLookup;
import io.twinlog.mirror.partition.PeerLookup.Failure;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.DisconnectException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.protocol.Errors;

import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Sorts what went wrong in a call to a mirror's source (the peer) during a failback into a {@link Failure}, for the
 * operator and the retry: every failure is a doubt, whatever its kind, and none of them lets a failback cut
 * (issue 25, point 2). The first kind whose sign appears anywhere in the cause chain wins, in the order of
 * {@link #SIGNS}: an authentication failure reported as a closed connection is an authentication failure.
 */
final class PeerFailures {
    private record Sign(Failure failure, Predicate<Throwable> test) {
    }

    private static final List<Sign> SIGNS = List.of(
            new Sign(Failure.AUTHENTICATION, t -> t instanceof AuthenticationException),
            new Sign(Failure.AUTHORIZATION, t -> t instanceof AuthorizationException
                    || t instanceof MirrorException m && isAuthorizationError(m.errorCode())),
            new Sign(Failure.TIMEOUT, t -> t instanceof SocketTimeoutException || t instanceof TimeoutException
                    // the JDK's, from a future's get (its name is taken by Kafka's)
                    || t instanceof java.util.concurrent.TimeoutException),
            new Sign(Failure.DISCONNECTED, t -> t instanceof MirrorAdmin.UnreachableException
                    || t instanceof MirrorAdmin.DisconnectedException || t instanceof DisconnectException
                    || t instanceof ConnectException));

    private PeerFailures() {
    }

    /** {@code e} as a doubt about the peer; {@code what} says what was being done ("asking the source ..."). */
    static PeerLookup.Failed failed(String what, Throwable e) {
        return new PeerLookup.Failed(failure(e), what + ": " + message(e));
    }

    static Failure failure(Throwable e) {
        if (e instanceof PeerDoubtException doubt) {
            return doubt.failure();
        }
        for (Sign sign : SIGNS) {
            for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
                if (sign.test().test(t)) {
                    return sign.failure();
                }
            }
        }
        return Failure.ERROR;
    }

    private static boolean isAuthorizationError(short code) {
        Optional<MirrorErrors> mirrorError = MirrorErrors.forCode(code);
        if (mirrorError.isPresent()) {
            return mirrorError.get() == MirrorErrors.CLUSTER_MIRROR_AUTHORIZATION_FAILED;
        }
        return Errors.forCode(code).exception() instanceof AuthorizationException;
    }

    private static String message(Throwable e) {
        String message = e.getMessage();
        return message == null || message.isBlank() ? e.getClass().getSimpleName() : message;
    }

    /** A doubt found by our own checks (another cluster at the address, a log that changed while compared). */
    static final class PeerDoubtException extends IOException {
        private final Failure failure;

        PeerDoubtException(Failure failure, String message) {
            super(message);
            this.failure = failure;
        }

        Failure failure() {
            return failure;
        }
    }
}
