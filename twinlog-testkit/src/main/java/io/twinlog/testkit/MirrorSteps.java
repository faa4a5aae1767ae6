package io.twinlog.testkit;

import io.twinlog.clients.mirror.MirrorAdmin;

import java.util.List;
import java.util.Map;

/**
 * The operator's steps of a mirroring scenario, as {@code twinlog-mirrors.sh} takes them, for tests: create a
 * mirror and start a topic, fail a topic over and wait until it is writable. Each step fails the test with the
 * cluster's answer if it is refused.
 */
public final class MirrorSteps {
    private MirrorSteps() {
    }

    /** Creates mirror {@code name} (from {@code source}) on the cluster {@code admin} talks to and starts {@code topic}. */
    public static void startMirroring(MirrorAdmin admin, String name, TestCluster source, String topic)
            throws Exception {
        admin.createClusterMirror(name, Map.of("bootstrap.servers", source.bootstrapServers()));
        Map<String, ?> errors = admin.startMirrorTopics(name, List.of(topic), List.of(), List.of());
        if (!errors.isEmpty()) {
            throw new AssertionError("starting " + topic + " on mirror " + name + " was refused: " + errors);
        }
    }

    /**
     * A one-broker source cluster whose mirror traffic crosses {@code proxy}: besides PLAINTEXT it listens on MIRROR,
     * advertised at the proxy's address (as the fault campaign's brokers are), and the proxy forwards to it. A mirror
     * that bootstraps from {@code proxy.address()} then fetches through the proxy too, so the proxy's faults reach
     * its fetches, not only its first contact.
     */
    public static TestCluster startSourceBehind(FaultProxy proxy, TestCluster.Builder builder) throws Exception {
        TestCluster source = builder.brokers(1)
                .brokerProperty("listeners", "PLAINTEXT://127.0.0.1:0,MIRROR://127.0.0.1:0")
                .brokerProperty("advertised.listeners", "PLAINTEXT://127.0.0.1:0,MIRROR://" + proxy.address())
                .brokerProperty("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,MIRROR:PLAINTEXT")
                .brokerProperty("inter.broker.listener.name", "PLAINTEXT").build().start();
        proxy.retarget("127.0.0.1", source.broker(0).boundPort("MIRROR"));
        return source;
    }

    /** Fails {@code topic} over: stops mirroring it and waits until every partition is STOPPED, so writable. */
    public static void failOver(MirrorAdmin admin, String name, String topic) throws Exception {
        Map<String, ?> errors = admin.stopMirrorTopics(name, List.of(topic), List.of());
        if (!errors.isEmpty()) {
            throw new AssertionError("failing " + topic + " over on mirror " + name + " was refused: " + errors);
        }
        Waits.waitUntil(topic + " failed over (every partition STOPPED)", () -> admin
                .describeClusterMirrors(List.of(name)).get(name).topics().get(topic).partitions().stream()
                .allMatch(p -> p.state().equals("STOPPED")));
    }
}
