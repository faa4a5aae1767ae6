package io.twinlog.tests.kafka.legacy;

import io.twinlog.testkit.TestDirectories;
import io.twinlog.testkit.ZooKeeperProcess;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.File;

/**
 * One ZooKeeper server ({@link ZooKeeperProcess}, a JVM of its own) for the whole of a test class, registered with
 * {@code @RegisterExtension static final}: every {@link LegacyKafkaCluster} the class starts registers under a chroot
 * of its own, so one server serves each version's cluster in turn and a server start is paid once per class.
 */
final class ClassZooKeeper implements BeforeAllCallback, AfterAllCallback {
    private final String name;
    private File dir;
    private ZooKeeperProcess zooKeeper;

    /** @param name names the temporary directory that holds ZooKeeper's data and log */
    ClassZooKeeper(String name) {
        this.name = name;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        dir = TestDirectories.create(name);
        zooKeeper = new ZooKeeperProcess(new File(dir, "zookeeper"));
        zooKeeper.start();
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        if (zooKeeper != null) {
            zooKeeper.close();
        }
        TestDirectories.delete(dir);
    }

    /** What {@link LegacyKafkaCluster} takes as its ZooKeeper address. */
    String connectString() {
        return zooKeeper.connectString();
    }
}
