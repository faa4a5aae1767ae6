package io.twinlog.tests;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.twinlog.testkit.BrokerProcess;
import io.twinlog.testkit.BrokerProcesses;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The JSON log format for log shippers (issue 14, point 7): a broker in its own JVM, started as the bin/ scripts start
 * it (with config/log4j2.properties) and {@code TWINLOG_LOG_FORMAT=json}, writes one JSON object per line, each with
 * Elastic Common Schema's fields, and nothing else.
 */
@Timeout(120)
class JsonLogFormatTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    @RegisterExtension
    final BrokerProcesses processes = new BrokerProcesses("json-log");

    @Test
    void aBrokerStartedWithTheJsonFormatWritesOneJsonObjectPerLine() throws Exception {
        Path config = Path.of("..", "config", "log4j2.properties").toAbsolutePath().normalize();
        assertTrue(Files.isRegularFile(config), config + " (tests run from the twinlog-tests directory)");
        BrokerProcess broker = processes.create("broker", Map.of()).withJvm(List.of("-Dlog4j2.configurationFile=" + config),
                Map.of("TWINLOG_LOG_FORMAT", "json"));
        broker.start();
        try (Admin admin = broker.admin()) {
            admin.createTopics(List.of(new NewTopic("logged", 1, (short) 1))).all().get();
        }
        assertEquals(0, broker.terminate(), "clean shutdown");

        List<JsonNode> events = parse(broker.logFile());
        assertTrue(events.size() > 20, "a broker's start, a topic and a shutdown log more than this: " + events.size());
        for (JsonNode e : events) {
            for (String field : List.of("@timestamp", "log.level", "log.logger", "process.thread.name", "message")) {
                assertTrue(e.hasNonNull(field), field + " missing in " + e);
            }
        }
        assertTrue(events.stream().anyMatch(e -> e.get("message").asText().contains("Became the controller")),
                "the controller's election is logged");
        assertTrue(events.stream().anyMatch(e -> e.get("message").asText().contains("Initial leadership of logged-0")
                && e.get("log.level").asText().equals("INFO")), "the new partition's leadership is logged at INFO");
    }

    /** Every line of the broker's output as JSON; a line that is not fails the test, with the line. */
    private static List<JsonNode> parse(File log) throws IOException {
        List<JsonNode> events = new ArrayList<>();
        for (String line : Files.readAllLines(log.toPath())) {
            if (line.isBlank()) {
                continue;
            }
            try {
                JsonNode node = JSON.readTree(line);
                assertTrue(node.isObject(), "not a JSON object: " + line);
                events.add(node);
            } catch (IOException e) {
                fail("not a JSON line: " + line, e);
            }
        }
        return events;
    }
}
