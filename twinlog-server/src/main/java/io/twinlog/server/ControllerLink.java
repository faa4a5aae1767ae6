package io.twinlog.server;

import io.twinlog.common.BrokerConfig;
import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.controller.Controller;
import io.twinlog.controller.zk.ControllerZkClient;
import io.twinlog.controller.zk.MetadataStore;
import io.twinlog.controller.zk.MetadataWatcher;
import io.twinlog.protocol.ListenerChannels;
import io.twinlog.server.controller.AlterPartitionManager;
import io.twinlog.server.controller.ControllerChannel;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.kafka.common.utils.Time;

import java.util.function.Predicate;

/**
 * The broker's side of the controller: this broker's {@link Controller} (active only while it holds
 * {@code /controller}), the two channels to whichever broker is the controller (ISR changes on one, forwarded
 * elections and reassignments on the other, so an ISR change never waits behind a forwarded election), and the
 * {@link AlterPartitionManager} that sends this broker's leaders' ISR changes. Built before the replica manager
 * (which reports ISR changes through it); started once the broker is registered. The controller and the channels
 * close at different steps of the broker's shutdown ({@link #closeController}, {@link #closeChannels}); each part is
 * visible to them as soon as it is built, so a start-up that fails half-way closes what was built.
 */
final class ControllerLink {
    // volatile: the broker's close() may run on another thread while build() runs; null until built
    private volatile Controller controller;
    private volatile ControllerChannel alterPartitionChannel;
    private volatile ControllerChannel forwardingChannel;
    private volatile AlterPartitionManager alterPartitionManager;

    /**
     * Builds the parts; nothing runs yet but the controller's event thread.
     *
     * @param uncleanElectionEnabled whether a topic's leader may be elected from outside its ISR
     */
    void build(BrokerConfig config, CuratorFramework zk, MetadataStore store, MetadataWatcher watcher,
               BrokerNodes nodes, ListenerChannels channels, Predicate<String> uncleanElectionEnabled,
               BrokerMetrics metrics, Time time) {
        // waits up to a session timeout for brokers re-registering after a ZooKeeper outage (ReregistrationGrace)
        controller = new Controller(config.brokerId(), new ControllerZkClient(zk), uncleanElectionEnabled,
                config.zookeeperSessionTimeoutMs(), time);
        zk.getConnectionStateListenable().addListener((client, state) -> {
            if (state == ConnectionState.LOST) {
                controller.onSessionLost();
            } else if (state == ConnectionState.RECONNECTED) {
                controller.onReconnected();
            }
        });
        controller.enableMetrics(metrics);
        controller.setHousekeeping(store::resumeTopicDeletions); // a deletion its broker's crash cut short
        // first listener: the controller decides from the images the metadata thread delivers
        controller.onImage(watcher.image());
        watcher.addListener((previous, next, delta) -> controller.onImage(next));
        // ISR changes on a channel of their own: never behind a forwarded election waiting for its answer
        alterPartitionChannel = new ControllerChannel(ControllerChannel.ALTER_PARTITION, config.brokerId(),
                () -> watcher.image().controllerId(), nodes::node, config.replicaSocketTimeoutMs(),
                channels::interBroker, time);
        forwardingChannel = new ControllerChannel(ControllerChannel.FORWARDING, config.brokerId(),
                () -> watcher.image().controllerId(), nodes::node, config.replicaSocketTimeoutMs(),
                channels::interBroker, time);
        alterPartitionManager = new AlterPartitionManager(config.brokerId(), nodes::brokerEpoch, watcher, controller,
                alterPartitionChannel);
    }

    /** Null before {@link #build}. */
    Controller controller() {
        return controller;
    }

    /** Forwarded elections and reassignments go to the controller on this channel. */
    ControllerChannel forwardingChannel() {
        return forwardingChannel;
    }

    AlterPartitionManager alterPartitionManager() {
        return alterPartitionManager;
    }

    /** Once the broker is registered: ISR changes are sent, and this broker may become the controller. */
    void start() {
        alterPartitionManager.start();
        controller.start();
    }

    void closeController() {
        QuietClose.close("controller", controller);
    }

    /** The ISR change sender, then both channels. */
    void closeChannels() {
        QuietClose.close("ISR change sender", alterPartitionManager);
        QuietClose.close("AlterPartition channel", alterPartitionChannel);
        QuietClose.close("forwarding channel", forwardingChannel);
    }
}
