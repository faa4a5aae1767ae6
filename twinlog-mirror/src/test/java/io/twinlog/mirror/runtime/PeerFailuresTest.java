package io.twinlog.mirror.runtime;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.clients.mirror.MirrorException;
import io.twinlog.mirror.partition.PeerLookup.Failure;
import io.twinlog.mirror.runtime.PeerFailures.PeerDoubtException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** How what went wrong in a call to the peer is sorted: the exceptions MirrorAdmin and Kafka's Admin throw. */
@Timeout(60)
class PeerFailuresTest {
    @Test
    void timeoutsFromEitherClientAreTimeouts() {
        assertEquals(Failure.TIMEOUT, PeerFailures.failure(new IOException("Metadata failed",
                new SocketTimeoutException("did not answer within 5000 ms"))));
        assertEquals(Failure.TIMEOUT, PeerFailures.failure(new MirrorAdmin.UnreachableException("could not connect",
                new IOException("not set up", new SocketTimeoutException("connection not set up")))),
                "a TLS or SASL handshake that never completes is a timeout, not a refusal");
        assertEquals(Failure.TIMEOUT, PeerFailures.failure(new IOException("Could not read the offsets",
                new ExecutionException(new TimeoutException("Timed out waiting for a node assignment")))));
    }

    @Test
    void refusedAndDroppedConnectionsAreDisconnections() {
        assertEquals(Failure.DISCONNECTED, PeerFailures.failure(new MirrorAdmin.UnreachableException(
                "could not connect", new IOException("refused", new MirrorAdmin.DisconnectedException("refused")))));
        assertEquals(Failure.DISCONNECTED, PeerFailures.failure(new IOException("Metadata failed",
                new MirrorAdmin.DisconnectedException("closed the connection"))));
    }

    @Test
    void authenticationWinsOverTheClosedConnectionThatCarriesIt() {
        assertEquals(Failure.AUTHENTICATION, PeerFailures.failure(new MirrorAdmin.DisconnectedException("closed")
                .initCause(new SaslAuthenticationException("invalid credentials"))));
    }

    @Test
    void refusalsToSayAreAuthorizationFailures() {
        assertEquals(Failure.AUTHORIZATION, PeerFailures.failure(new MirrorException(
                MirrorErrors.CLUSTER_MIRROR_AUTHORIZATION_FAILED.code, "refused")));
        assertEquals(Failure.AUTHORIZATION, PeerFailures.failure(new MirrorException(
                Errors.CLUSTER_AUTHORIZATION_FAILED.code(), "refused")));
        assertEquals(Failure.AUTHORIZATION, PeerFailures.failure(new IOException("Could not describe",
                new ExecutionException(new TopicAuthorizationException("payments")))));
    }

    @Test
    void ourOwnDoubtsKeepTheirKindAndAnythingElseIsAnError() {
        assertEquals(Failure.WRONG_CLUSTER, PeerFailures.failure(new PeerDoubtException(Failure.WRONG_CLUSTER,
                "another cluster")));
        assertEquals(Failure.ERROR, PeerFailures.failure(new MirrorException(Errors.UNKNOWN_SERVER_ERROR.code(),
                "boom")));
        assertEquals(Failure.ERROR, PeerFailures.failure(new IllegalStateException("unexpected")));
    }

    @Test
    void aPeerThatKnowsNoTopicOfTheAskedNameAndIdIsADoubtNotNoRecord() {
        // LastMirroredEpochs' answer for a name the peer does not have with that ID (decision 125): the lookup fails
        // with it, and the failed lookup is a doubt (TruncationSteps.doubt: nothing cut, asked again)
        MirrorException unknown = new MirrorException(Errors.UNKNOWN_TOPIC_ID.code(), "LastMirroredEpochs refused "
                + "for orders-0");
        assertEquals(Failure.ERROR, PeerFailures.failure(unknown));
        assertEquals(Failure.ERROR, PeerFailures.failed("asking the source for its last mirrored epoch", unknown)
                .failure());
    }
}
