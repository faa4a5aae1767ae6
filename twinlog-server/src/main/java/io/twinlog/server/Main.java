package io.twinlog.server;

import io.twinlog.common.BrokerConfig;
import io.twinlog.common.ConfigException;
import org.apache.kafka.common.utils.Time;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/** {@code bin/twinlog-server-start.sh CONFIG}: runs one broker in the foreground until SIGTERM or SIGINT. */
@Command(name = "twinlog-server-start", mixinStandardHelpOptions = true,
        description = "Runs one Twinlog broker in the foreground from a Kafka-style properties file.")
public final class Main implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "CONFIG", description = "server.properties file")
    private File configFile;

    @Option(names = "--override", paramLabel = "KEY=VALUE", description = "Override a property of the file")
    private Map<String, String> overrides = Map.of();

    public static void main(String[] args) {
        int code = new CommandLine(new Main()).execute(args);
        if (code != 0) {
            System.exit(code);
        }
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
        } catch (ConfigException e) {
            System.err.println("twinlog-server-start: invalid configuration: " + e.getMessage());
            return 1;
        }
        BrokerServer broker = new BrokerServer(config, Time.SYSTEM);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            broker.close();
            stopped.countDown();
        }, "twinlog-shutdown"));
        try {
            broker.start();
        } catch (Exception e) {
            org.slf4j.LoggerFactory.getLogger(Main.class).error("Broker {} failed to start", config.brokerId(), e);
            System.err.println("twinlog-server-start: broker failed to start: " + e.getMessage());
            broker.close();
            return 1;
        }
        stopped.await();
        return 0;
    }
}
