package io.twinlog.testkit;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The broker JVMs ({@link BrokerProcess}) of one test, as a JUnit extension: each broker gets a data directory of
 * its own under the test's, and after the test every broker is killed and the directories deleted; when the test
 * failed, each broker's log tail is printed first (the test JVM never sees a child's output otherwise, and a
 * {@code TestWatcher} runs only after the directories are gone).
 *
 * <pre>
 * &#64;RegisterExtension
 * final BrokerProcesses processes = new BrokerProcesses("jmx-metrics");
 *
 * &#64;Test
 * void test() throws Exception {
 *     BrokerProcess broker = processes.start("broker", Map.of());
 *     try (Admin admin = broker.admin()) { ... }
 * }
 * </pre>
 */
public final class BrokerProcesses implements AfterEachCallback {
    private final String prefix;
    private final List<BrokerProcess> brokers = new ArrayList<>();
    private File directory;

    /** {@code prefix} names the test's temporary directory ({@code twinlog-<prefix>-...}). */
    public BrokerProcesses(String prefix) {
        this.prefix = prefix;
    }

    /**
     * A broker (not started) with {@code properties} over {@link BrokerProcess}'s defaults, in data directory
     * {@code name} under the test's; {@link BrokerProcess#start()} starts it, and again after a kill, with its data.
     */
    public BrokerProcess create(String name, Map<String, String> properties) throws IOException {
        BrokerProcess broker = new BrokerProcess(new File(directory(), name), properties);
        brokers.add(broker);
        return broker;
    }

    /** {@link #create} and start it; returns when it accepts connections. */
    public BrokerProcess start(String name, Map<String, String> properties) throws IOException {
        BrokerProcess broker = create(name, properties);
        broker.start();
        return broker;
    }

    /** The test's directory, holding each broker's (and whatever else the test puts there: a ZooKeeper's). */
    public File directory() {
        if (directory == null) {
            directory = TestDirectories.create(prefix);
        }
        return directory;
    }

    /** Every broker this test created, in order. */
    public List<BrokerProcess> brokers() {
        return List.copyOf(brokers);
    }

    @Override
    public void afterEach(ExtensionContext context) throws InterruptedException {
        try {
            if (context.getExecutionException().isPresent()) {
                for (int i = 0; i < brokers.size(); i++) {
                    System.out.println("---- broker process " + i + " log tail (" + context.getDisplayName()
                            + ") ----\n" + brokers.get(i).logTail());
                }
            }
            for (BrokerProcess broker : brokers) {
                broker.close();
            }
        } finally {
            brokers.clear();
            if (directory != null) {
                TestDirectories.delete(directory);
                directory = null;
            }
        }
    }
}
