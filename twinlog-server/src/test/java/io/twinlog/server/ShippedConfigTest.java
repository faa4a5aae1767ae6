package io.twinlog.server;

import io.twinlog.common.BrokerConfig;
import org.apache.zookeeper.server.quorum.QuorumPeerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The configuration files shipped in {@code config/} are checked against the definitions: every broker key they set,
 * or show commented out as an example, is defined, and every value passes validation.
 */
@Timeout(30)
class ShippedConfigTest {
    private static final Path CONFIG = Path.of("..", "config");
    /** A commented-out example setting, {@code #key=value}; prose comments never have a key before an '='. */
    private static final Pattern COMMENTED_SETTING = Pattern.compile("^#\\s*([a-z0-9]+(?:\\.[a-z0-9]+)+)=(.*)$");

    @Test
    void everyServerPropertiesKeyIsDefinedAndValid() throws IOException {
        Properties set = load(CONFIG.resolve("server.properties"));
        assertFalse(set.isEmpty());
        BrokerConfig config = new BrokerConfig(set);
        BrokerConfigCheck.validateHostedKeys(config);
        assertEquals(Optional.empty(), BrokerConfigCheck.undefinedKeysWarning(config),
                "every key of server.properties is defined by BrokerConfig or the hosted group coordinator");
    }

    @Test
    void everyCommentedOutExampleIsDefinedAndValid() throws IOException {
        Map<String, String> examples = commentedSettings(CONFIG.resolve("server.properties"));
        assertTrue(examples.containsKey(BrokerConfig.ZOOKEEPER_CONNECT), "examples found: " + examples.keySet());
        Properties base = load(CONFIG.resolve("server.properties"));
        for (Map.Entry<String, String> example : examples.entrySet()) {
            Properties p = new Properties();
            p.putAll(base);
            p.put(example.getKey(), example.getValue());
            BrokerConfig config = assertDoesNotThrow(() -> new BrokerConfig(p), example.toString());
            assertDoesNotThrow(() -> BrokerConfigCheck.validateHostedKeys(config), example.toString());
            assertEquals(Optional.empty(), BrokerConfigCheck.undefinedKeysWarning(config),
                    example.toString());
        }
    }

    /** ZooKeeper's own file is checked by ZooKeeper's own parser. */
    @Test
    void zookeeperPropertiesParse() throws Exception {
        QuorumPeerConfig zk = new QuorumPeerConfig();
        zk.parseProperties(load(CONFIG.resolve("zookeeper.properties")));
        assertEquals(2181, zk.getClientPortAddress().getPort());
    }

    private static Properties load(Path file) throws IOException {
        Properties p = new Properties();
        try (Reader in = Files.newBufferedReader(file)) {
            p.load(in);
        }
        return p;
    }

    private static Map<String, String> commentedSettings(Path file) throws IOException {
        Map<String, String> out = new LinkedHashMap<>();
        for (String line : Files.readAllLines(file)) {
            Matcher m = COMMENTED_SETTING.matcher(line.strip());
            if (m.matches()) {
                out.put(m.group(1), m.group(2).strip());
            }
        }
        return out;
    }
}
