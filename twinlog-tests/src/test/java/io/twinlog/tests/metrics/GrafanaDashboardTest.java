package io.twinlog.tests.metrics;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.server.BrokerServer;
import io.twinlog.testkit.MirrorSteps;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import io.twinlog.tests.metrics.PromQl.LabelMatcher;
import io.twinlog.tests.metrics.PromQl.Selector;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Grafana dashboard shipped in config/grafana (docs/operations.md, "Grafana") queries only metrics that a
 * running Twinlog cluster with a mirror serves on its Prometheus endpoints, and covers what an operator of mirrored
 * clusters looks at: throughput, request latency, under-replicated and offline partitions, ISR changes, mirror lag in
 * records and seconds per mirror and partition, partitions per mirror state, failovers and failbacks, quarantined
 * records. A renamed or removed metric fails this test with the panel that reads it.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class GrafanaDashboardTest {
    /** Surefire runs in the module's directory; the distribution ships the repository's config/ as it is. */
    private static final Path DASHBOARD = Path.of("..", "config", "grafana", "twinlog-dashboard.json");
    private static final String DATASOURCE = "${datasource}";
    /** Every selector's: the dashboard shows one cluster (one scrape job) at a time. */
    private static final LabelMatcher THIS_CLUSTER = new LabelMatcher("job", "=~", "$job");
    /** Labels Prometheus adds to what it scrapes; the endpoints do not serve them. */
    private static final Set<String> SCRAPER_LABELS = Set.of("job", "instance");
    /** The "All" of the multi-value variables: a label that is there, not empty. */
    private static final String ALL = ".+";
    /** What Twinlog, the JVM and the process export; anything else a query names is the extractor's mistake. */
    private static final Pattern SERVED_PREFIX = Pattern.compile("^(kafka|jvm|process)_.*");
    private static final String MIRROR = "m";
    /** Still mirrored at the end: its partitions' lag gauges exist only while they mirror. */
    private static final String ORDERS = "orders";
    private static final int ORDERS_PARTITIONS = 3;
    /** Failed over: STOPPED partitions and a failover counted. */
    private static final String PAYMENTS = "payments";
    private static final int RECORDS = 1_000;
    private static final List<String> STATES = List.of("logtruncation", "epochfencing", "mirroring", "pausing",
            "paused", "stopping", "stopped", "failed", "ulerecovery", "unknown");
    /** The list of what the dashboard shows, by the metric each needs. */
    private static final Set<String> REQUIRED = required();

    @Test
    void dashboardIsAGrafanaModelWhoseQueriesAllReadTwinlogMetricsOfTheChosenCluster() throws Exception {
        Dashboard dashboard = Dashboard.read(DASHBOARD);
        List<String> problems = new ArrayList<>(dashboard.problems);
        Set<String> queried = new HashSet<>();
        for (Query query : dashboard.queries) {
            queried.addAll(query.metrics);
            if (query.metrics.isEmpty()) {
                problems.add(query.where + " reads no metric: " + query.expr);
            }
            for (String name : query.metrics) {
                if (!SERVED_PREFIX.matcher(name).matches()) {
                    problems.add(query.where + " reads '" + name + "', no Twinlog, JVM or process metric: "
                            + query.expr);
                }
            }
            if (!query.where.equals("variable job")
                    && !query.selectors.stream().allMatch(sel -> sel.matchers().contains(THIS_CLUSTER))) {
                problems.add(query.where + " reads a metric without job=~\"$job\" (it would mix clusters): "
                        + query.expr);
            }
        }
        for (String name : REQUIRED) {
            if (!queried.contains(name)) {
                problems.add("no panel shows " + name);
            }
        }
        assertTrue(problems.isEmpty(), () -> "the dashboard:\n" + String.join("\n", problems));
    }

    @Test
    void everyMetricAPanelQueriesIsServedByAClusterWithAMirror() throws Exception {
        Dashboard dashboard = Dashboard.read(DASHBOARD);
        try (TestCluster source = withPrometheus(TestCluster.builder().brokers(1)).build().start();
             TestCluster destination = withPrometheus(TestCluster.builder().brokers(3))
                     .brokerProperty("default.replication.factor", "3").build().start();
             Admin sourceAdmin = source.admin();
             MirrorAdmin mirrors = MirrorAdmin.create(destination.bootstrapServers(), Duration.ofSeconds(60))) {
            sourceAdmin.createTopics(List.of(new NewTopic(ORDERS, ORDERS_PARTITIONS, (short) 1),
                    new NewTopic(PAYMENTS, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            produce(source, ORDERS, RECORDS);
            produce(source, PAYMENTS, RECORDS);

            MirrorSteps.startMirroring(mirrors, MIRROR, source, ORDERS);
            Map<String, ?> refused = mirrors.startMirrorTopics(MIRROR, List.of(PAYMENTS), List.of(), List.of());
            assertTrue(refused.isEmpty(), "starting " + PAYMENTS + ": " + refused);
            awaitCaughtUp(mirrors, ORDERS);
            awaitCaughtUp(mirrors, PAYMENTS);
            // one topic failed over: STOPPED partitions and a failover to show, while the other keeps mirroring
            MirrorSteps.failOver(mirrors, MIRROR, PAYMENTS);
            // client traffic on the destination: consumer fetches and offset commits, produce requests
            consumeWithGroup(destination, ORDERS);
            produce(destination, PAYMENTS, RECORDS);
            // a client asking for a topic that does not exist: an error code in a response, for "errors by code"
            try (Admin destinationAdmin = destination.admin()) {
                ExecutionException unknown = assertThrows(ExecutionException.class, () -> destinationAdmin
                        .describeTopics(List.of("no-such-topic")).allTopicNames().get(30, TimeUnit.SECONDS));
                assertInstanceOf(UnknownTopicOrPartitionException.class, unknown.getCause());
            }

            List<BrokerServer> brokers = new ArrayList<>();
            source.runningBrokerIds().forEach(id -> brokers.add(source.broker(id)));
            destination.runningBrokerIds().forEach(id -> brokers.add(destination.broker(id)));
            // the destination leaders' gauges follow the mirror's state within a tick of their manager
            Scrape scrape = Waits.waitFor("the endpoints to report " + ORDERS + " caught up on every partition and "
                    + PAYMENTS + " failed over", () -> scrape(brokers), Scrape::showsTheScenario);
            Set<String> served = scrape.series().stream().map(Series::name)
                    .collect(Collectors.toCollection(TreeSet::new));

            List<String> missing = new ArrayList<>();
            for (Query query : dashboard.queries) {
                for (String name : query.metrics) {
                    if (!served.contains(name)) {
                        missing.add(query.where + " reads " + name + ", which no endpoint serves; served names like "
                                + "it: " + similar(served, name));
                    }
                }
                for (Selector selector : query.selectors) {
                    if (served.contains(selector.metric()) && scrape.series().stream()
                            .noneMatch(series -> series.selectedBy(selector))) {
                        missing.add(query.where + ": " + selector + " selects none of the served series "
                                + scrape.labelsOf(selector.metric()));
                    }
                }
            }
            assertTrue(missing.isEmpty(), () -> String.join("\n", missing));
        }
    }

    private static TestCluster.Builder withPrometheus(TestCluster.Builder builder) {
        return builder.brokerProperty("metrics.prometheus.listener", "http://127.0.0.1:0");
    }

    /** Every broker's endpoint, parsed by the strict reader. */
    private static Scrape scrape(List<BrokerServer> brokers) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        List<Series> all = new ArrayList<>();
        for (BrokerServer broker : brokers) {
            String url = broker.prometheusUrl().orElseThrow();
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(url))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, response.statusCode(), url);
            PrometheusText.parse(response.body()).forEach((key, value) -> all.add(Series.of(url, key, value)));
        }
        return new Scrape(all);
    }

    /** One series of one broker's endpoint. */
    private record Series(String url, String name, Map<String, String> labels, double value) {
        private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

        /** From the reader's key, {@code name{a="b",...}}, labels as the endpoint wrote them. */
        static Series of(String url, String key, double value) {
            int brace = key.indexOf('{');
            Map<String, String> labels = new LinkedHashMap<>();
            if (brace >= 0) {
                Matcher m = LABEL.matcher(key.substring(brace));
                while (m.find()) {
                    labels.put(m.group(1), m.group(2).replace("\\n", "\n").replaceAll("\\\\(.)", "$1"));
                }
            }
            return new Series(url, brace < 0 ? key : key.substring(0, brace), labels, value);
        }

        /**
         * Whether Prometheus would select this series with {@code selector} once it scraped it: job and instance
         * are the scraper's labels, which every series has; a multi-value variable stands for its "All".
         */
        boolean selectedBy(Selector selector) {
            if (!name.equals(selector.metric())) {
                return false;
            }
            for (LabelMatcher matcher : selector.matchers()) {
                if (SCRAPER_LABELS.contains(matcher.label())) {
                    continue;
                }
                LabelMatcher all = new LabelMatcher(matcher.label(), matcher.op(),
                        matcher.value().replace("$mirror", ALL).replace("$topic", ALL));
                if (!all.matches(labels.get(matcher.label()))) {
                    return false;
                }
            }
            return true;
        }
    }

    /** One scrape of every broker. */
    private record Scrape(List<Series> series) {
        /**
         * What the panels need to have data in this scenario: every partition of {@value #ORDERS} mirrored with a
         * known lag of 0 on its leader, {@value #PAYMENTS}'s partition STOPPED and its failover counted.
         */
        boolean showsTheScenario() {
            for (String family : List.of("kafka_server_clustermirrorpartition_lagrecords",
                    "kafka_server_clustermirrorpartition_lagseconds")) {
                for (int p = 0; p < ORDERS_PARTITIONS; p++) {
                    Map<String, String> labels = Map.of("mirror", MIRROR, "topic", ORDERS, "partition", "" + p);
                    if (!values(family, labels).equals(List.of(0.0))) {
                        return false;
                    }
                }
            }
            Map<String, String> mirror = Map.of("mirror", MIRROR);
            return sum("kafka_server_mirrormetadatamanager_stoppedpartitionstate", mirror) == 1
                    && sum("kafka_server_mirrormetadatamanager_mirroringpartitionstate", mirror) == ORDERS_PARTITIONS
                    && sum("kafka_server_clustermirror_failovers_total", mirror) == 1;
        }

        /** The values of the series {@code name{labels}} on every broker that serves it. */
        private List<Double> values(String name, Map<String, String> labels) {
            return series.stream().filter(s -> s.name.equals(name) && s.labels.equals(labels)).map(Series::value)
                    .collect(Collectors.toList());
        }

        private double sum(String name, Map<String, String> labels) {
            return values(name, labels).stream().mapToDouble(Double::doubleValue).sum();
        }

        /** The label sets served under {@code name}, for a selector that selects none of them. */
        String labelsOf(String name) {
            return series.stream().filter(s -> s.name.equals(name)).map(s -> s.labels.toString()).distinct()
                    .limit(20).collect(Collectors.joining(", "));
        }

        /** The mirror's series only: what a timeout is about, not a thousand JVM and request series. */
        @Override
        public String toString() {
            return series.stream().filter(s -> MIRROR.equals(s.labels.get("mirror")))
                    .map(s -> s.url + " " + s.name + s.labels + "=" + s.value)
                    .collect(Collectors.joining("\n", "\n", ""));
        }
    }

    /** The served names that share {@code name}'s first three words: what it was probably meant to be. */
    private static String similar(Set<String> served, String name) {
        String[] words = name.split("_");
        String prefix = String.join("_", List.of(words).subList(0, Math.min(3, words.length)));
        List<String> like = served.stream().filter(s -> s.startsWith(prefix)).collect(Collectors.toList());
        return like.isEmpty() ? "none (prefix " + prefix + ")" : String.join(", ", like);
    }

    private static void awaitCaughtUp(MirrorAdmin mirrors, String topic) {
        Waits.waitFor(topic + " mirroring with no lag", () -> mirrors.describeClusterMirrors(List.of(MIRROR))
                        .get(MIRROR).topics().get(topic).partitions(),
                partitions -> !partitions.isEmpty() && partitions.stream().allMatch(p ->
                        p.state().equals("MIRRORING") && p.lag() == 0 && p.destinationLogEndOffset() > 0),
                Duration.ofSeconds(60));
    }

    /** {@code count} records spread over {@code topic}'s partitions. */
    private static void produce(TestCluster cluster, String topic, int count) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of())) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, ("key-" + i).getBytes(StandardCharsets.UTF_8),
                        ("record-" + i).getBytes(StandardCharsets.UTF_8)));
            }
            producer.flush();
        }
    }

    /** Reads every record of {@code topic} as a group and commits: FetchConsumer and OffsetCommit requests. */
    private static void consumeWithGroup(TestCluster cluster, String topic) {
        List<TopicPartition> partitions = IntStream.range(0, ORDERS_PARTITIONS)
                .mapToObj(p -> new TopicPartition(topic, p)).collect(Collectors.toList());
        try (KafkaConsumer<byte[], byte[]> consumer = cluster.consumer(Map.of(
                ConsumerConfig.GROUP_ID_CONFIG, "dashboard-readers"))) {
            consumer.assign(partitions);
            int[] read = {0};
            Waits.waitUntil("the group reads every record of " + topic, () -> {
                read[0] += consumer.poll(Duration.ofMillis(200)).count();
                return read[0] >= RECORDS;
            });
            consumer.commitSync(Duration.ofSeconds(30));
        }
    }

    private static Set<String> required() {
        Set<String> names = new HashSet<>(List.of(
                "kafka_server_brokertopicmetrics_messagesin_total", "kafka_server_brokertopicmetrics_bytesin_total",
                "kafka_network_requestmetrics_totaltimems",
                "kafka_server_replicamanager_underreplicatedpartitions",
                "kafka_controller_kafkacontroller_offlinepartitionscount",
                "kafka_server_replicamanager_isrshrinks_total", "kafka_server_replicamanager_isrexpands_total",
                "kafka_server_clustermirror_lagrecords", "kafka_server_clustermirror_lagseconds",
                "kafka_server_clustermirrorpartition_lagrecords", "kafka_server_clustermirrorpartition_lagseconds",
                "kafka_server_clustermirror_failovers_total", "kafka_server_clustermirror_failbacks_total",
                "kafka_server_clustermirror_recordsquarantined_total"));
        STATES.forEach(state -> names.add("kafka_server_mirrormetadatamanager_" + state + "partitionstate"));
        return names;
    }

    /** One query of the dashboard: a panel's target or a variable's, with the metrics it reads. */
    private record Query(String where, String expr, Set<String> metrics, List<Selector> selectors) {
        Query(String where, String expr) {
            this(where, expr, PromQl.metricNames(expr), PromQl.selectors(expr));
        }
    }

    /** The dashboard's queries, and what is wrong with its structure (Grafana would refuse or mis-show it). */
    private static final class Dashboard {
        final List<Query> queries = new ArrayList<>();
        final List<String> problems = new ArrayList<>();
        private final Set<Integer> panelIds = new HashSet<>();

        static Dashboard read(Path file) throws Exception {
            assertTrue(Files.isRegularFile(file), file.toAbsolutePath() + " exists");
            JsonNode root = new ObjectMapper().readTree(file.toFile());
            Dashboard dashboard = new Dashboard();
            dashboard.check(root);
            assertFalse(dashboard.queries.isEmpty(), "the dashboard has queries");
            return dashboard;
        }

        private void check(JsonNode root) {
            expect(root.path("uid").asText().equals("twinlog-mirrors"), "uid is twinlog-mirrors");
            expect(root.path("schemaVersion").asInt() == 39, "schemaVersion is 39");
            expect(!root.path("title").asText().isBlank(), "the dashboard has a title");
            expect(root.path("id").isNull(), "id is null (Grafana assigns it on import)");
            Map<String, JsonNode> variables = new LinkedHashMap<>();
            for (JsonNode variable : root.path("templating").path("list")) {
                variables.put(variable.path("name").asText(), variable);
            }
            expect(variables.keySet().equals(Set.of("datasource", "job", "instance", "mirror", "topic")),
                    "variables datasource, job, instance, mirror, topic; found " + variables.keySet());
            JsonNode datasource = variables.get("datasource");
            expect(datasource != null && datasource.path("type").asText().equals("datasource")
                    && datasource.path("query").asText().equals("prometheus"), "datasource picks a Prometheus");
            JsonNode mirror = variables.get("mirror");
            // the state gauges also exist broker-wide without a mirror label: ".*" would count them twice
            expect(mirror != null && mirror.path("allValue").asText().equals(".+"), "mirror's All is \".+\"");
            variables.forEach((name, variable) -> {
                if (variable.path("type").asText().equals("query")) {
                    checkDatasource(variable.path("datasource"), "variable " + name);
                    JsonNode query = variable.path("query");
                    String expr = query.isTextual() ? query.asText() : query.path("query").asText();
                    expect(!expr.isBlank(), "variable " + name + " has a query");
                    queries.add(new Query("variable " + name, expr));
                }
            });
            for (JsonNode panel : root.path("panels")) {
                checkPanel(panel, "");
            }
        }

        private void checkPanel(JsonNode panel, String row) {
            String title = panel.path("title").asText();
            String where = "panel '" + row + title + "'";
            expect(!title.isBlank(), "a panel without a title (id " + panel.path("id") + ")");
            expect(panel.path("id").isInt() && panelIds.add(panel.path("id").asInt()),
                    where + " has an id of its own");
            JsonNode grid = panel.path("gridPos");
            expect(grid.path("w").asInt() >= 1 && grid.path("x").asInt() + grid.path("w").asInt() <= 24
                    && grid.path("h").asInt() >= 1, where + " fits Grafana's 24-column grid");
            if (panel.path("type").asText().equals("row")) {
                // a collapsed row holds its panels; an open row is followed by them at the top level
                for (JsonNode child : panel.path("panels")) {
                    checkPanel(child, title + " / ");
                }
                return;
            }
            checkDatasource(panel.path("datasource"), where);
            JsonNode targets = panel.path("targets");
            expect(targets.isArray() && !targets.isEmpty(), where + " has targets");
            Set<String> refIds = new HashSet<>();
            for (JsonNode target : targets) {
                String refId = target.path("refId").asText();
                expect(!refId.isBlank() && refIds.add(refId), where + " has a target without a refId of its own");
                if (target.has("datasource")) {
                    checkDatasource(target.path("datasource"), where + " target " + refId);
                }
                String expr = target.path("expr").asText();
                expect(!expr.isBlank(), where + " target " + refId + " has an expr");
                if (!expr.isBlank()) {
                    queries.add(new Query(where + " target " + refId, expr));
                }
            }
        }

        private void checkDatasource(JsonNode datasource, String where) {
            expect(datasource.path("type").asText().equals("prometheus")
                    && datasource.path("uid").asText().equals(DATASOURCE), where + " uses the ${datasource} variable");
        }

        private void expect(boolean ok, String what) {
            if (!ok) {
                problems.add(what);
            }
        }
    }
}
