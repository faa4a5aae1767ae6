package io.twinlog.server;

import io.twinlog.common.BrokerConfig;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import sun.misc.Signal;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

/** {@code bin/twinlog-server-start.sh CONFIG}: runs one broker in the foreground until SIGTERM or SIGINT. */
@Command(name = "twinlog-server-start", mixinStandardHelpOptions = true,
        description = "Runs one Twinlog broker in the foreground from a Kafka-style properties file.")
public final class Main implements Callable<Integer> {
    private static final Logger log = LoggerFactory.getLogger(Main.class);
    @Parameters(index = "0", paramLabel = "CONFIG", description = "server.properties file")
    private File configFile;

    @Option(names = "--override", paramLabel = "KEY=VALUE", description = "Override a property of the file")
    private Map<String, String> overrides = Map.of();

    public static void main(String[] args) {
        int code = new CommandLine(new Main()).execute(args);
        // Always exit explicitly: after a clean stop, a library's leftover non-daemon thread must not keep the
        // process alive.
        System.exit(code);
    }

    @Override
    public Integer call() throws Exception {
        Properties props = new Properties();
        try (InputStream in = Files.newInputStream(configFile.toPath())) {
            props.load(in);
        } catch (IOException e) {
            System.err.println("twinlog-server-start: cannot read " + configFile + ": " + e.getMessage());
            return 1;
        }
        props.putAll(overrides);
        BrokerConfig config;
        try {
            config = new BrokerConfig(props);
            // checked again by start(); here so a bad group coordinator key also ends in one line, before any
            // thread or ZooKeeper connection exists
            BrokerConfigCheck.validateHostedKeys(config);
        } catch (ConfigException e) {
            System.err.println("twinlog-server-start: invalid configuration: " + e.getMessage());
            return 1;
        }
        BrokerServer broker = new BrokerServer(config, Time.SYSTEM);
        AtomicBoolean stopRequested = new AtomicBoolean();
        CountDownLatch stopped = new CountDownLatch(1);
        // The JVM answers SIGTERM and SIGINT by running the shutdown hooks and exiting with 128 + signal (143, 130)
        // even when they shut down cleanly, so a supervisor would see every requested stop as a failure. Handling
        // the two signals here runs the same clean shutdown (it may abort a start-up in progress) and exits 0. The
        // hook stays for every other way the JVM ends.
        for (String signal : List.of("TERM", "INT")) {
            try {
                Signal.handle(new Signal(signal), s -> {
                    stopRequested.set(true);
                    broker.close();
                    stopped.countDown();
                });
            } catch (IllegalArgumentException e) {
                // reserved by the JVM (-Xrs) or the OS: the shutdown hook still stops the broker cleanly
                log.warn("Cannot handle SIG{}: {}", signal, e.getMessage());
            }
        }
        Runtime.getRuntime().addShutdownHook(new Thread(broker::close, "twinlog-shutdown"));
        try {
            broker.start();
        } catch (ConfigException e) {
            // a refusal that names its cause and its remedy (log dirs of another cluster, ...): one line, no trace
            log.error("Broker {} refused to start: {}", config.brokerId(),
                    e.getMessage());
            System.err.println("twinlog-server-start: broker " + config.brokerId() + " refused to start: "
                    + e.getMessage());
            broker.close();
            return 1;
        } catch (Exception e) {
            // broad: whatever ends the start-up ends the process with status 1, logged with its trace; a start-up
            // aborted by a stop signal is that stop, not a failure
            if (stopRequested.get()) {
                stopped.await();
                return 0;
            }
            log.error("Broker {} failed to start", config.brokerId(), e);
            System.err.println("twinlog-server-start: broker failed to start: " + e.getMessage());
            broker.close();
            return 1;
        }
        broker.awaitShutdown();
        if (broker.stoppedOnFatalError()) {
            System.err.println("twinlog-server-start: broker " + config.brokerId()
                    + " stopped: every log dir has failed (see the log)");
            return 1;
        }
        stopped.await(); // a signal's stop: its handler counts down once the broker is closed
        return 0;
    }
}
