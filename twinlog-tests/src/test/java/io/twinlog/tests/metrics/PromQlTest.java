package io.twinlog.tests.metrics;

import io.twinlog.tests.metrics.PromQl.LabelMatcher;
import io.twinlog.tests.metrics.PromQl.Selector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The PromQL reading the dashboard test relies on: the shapes of expression the dashboard uses (aggregations with
 * grouping, rates over Grafana's intervals, comparisons, label matchers with variables and regexes, variable queries)
 * give exactly their metrics, and label names, functions, keywords and numbers never pass for one; each selector
 * comes with its matchers, which select as Prometheus does (anchored regexes, a missing label as empty).
 */
@Timeout(300)
class PromQlTest {

    @Test
    void aggregationsRatesAndMatchersGiveOnlyTheMetric() {
        assertNames("sum(kafka_controller_kafkacontroller_activecontrollercount{job=~\"$job\"})",
                "kafka_controller_kafkacontroller_activecontrollercount");
        assertNames("sum by (instance) (rate(kafka_server_replicamanager_isrshrinks_total{job=~\"$job\","
                        + "instance=~\"$instance\"}[$__rate_interval]))",
                "kafka_server_replicamanager_isrshrinks_total");
        assertNames("sum by (topic) (rate(kafka_server_brokertopicmetrics_messagesin_total{topic=~\"$topic\","
                + "topic!=\"\"}[$__rate_interval]))", "kafka_server_brokertopicmetrics_messagesin_total");
        assertNames("max by (request) (kafka_network_requestmetrics_totaltimems{quantile=\"0.99\","
                        + "request=~\"Produce|FetchConsumer|FetchFollower|Metadata|OffsetCommit\"})",
                "kafka_network_requestmetrics_totaltimems");
        assertNames("sum by (request, error) (rate(kafka_network_requestmetrics_errors_total{error!=\"NONE\"}[5m]))",
                "kafka_network_requestmetrics_errors_total");
        assertNames("sum by (mirror) (increase(kafka_server_clustermirror_failovers_total{mirror=~\"$mirror\"}"
                + "[$__range]))", "kafka_server_clustermirror_failovers_total");
    }

    @Test
    void comparisonsAndNumbersAreNoMetrics() {
        assertNames("max by (mirror) (kafka_server_clustermirror_lagseconds{mirror=~\"$mirror\"} >= 0)",
                "kafka_server_clustermirror_lagseconds");
        assertNames("count by (mirror) (kafka_server_clustermirrorpartition_lagseconds == -1)",
                "kafka_server_clustermirrorpartition_lagseconds");
        assertNames("kafka_server_backgroundtask_lastsuccessagems > 5 * 2000 or jvm_memory_used_bytes > 1e9",
                "kafka_server_backgroundtask_lastsuccessagems", "jvm_memory_used_bytes");
        assertNames("process_cpu_seconds_total offset 5m / 0.5 unless bool 0x1f",
                "process_cpu_seconds_total");
    }

    @Test
    void matchingModifiersListLabelsNotMetrics() {
        assertNames("kafka_a * on (instance, job) group_left (mirror) kafka_b",
                "kafka_a", "kafka_b");
        assertNames("kafka_a / ignoring(quantile) group_right kafka_b", "kafka_a", "kafka_b");
        assertNames("sum without (partition, topic) (kafka_a)", "kafka_a");
        assertNames("sum(kafka_a) by (mirror)", "kafka_a");
        assertNames("rate(kafka_a[5m:30s]) + avg_over_time(kafka_b[${__range}])", "kafka_a", "kafka_b");
    }

    @Test
    void stringsMayHoldAnything() {
        assertNames("kafka_a{task=~\"mirror-.*|by (x) {y}\", other='single \\' quote'} and kafka_b{x=`raw \\`}",
                "kafka_a", "kafka_b");
        assertNames("label_replace(kafka_a, \"dst\", \"$1\", \"src\", \"(.*)\")", "kafka_a");
    }

    @Test
    void variableQueriesGiveTheirSelectorsMetric() {
        assertNames("label_values(kafka_server_replicamanager_partitioncount, job)",
                "kafka_server_replicamanager_partitioncount");
        assertNames("label_values(kafka_server_clustermirror_lagrecords{job=~\"$job\"}, mirror)",
                "kafka_server_clustermirror_lagrecords");
        assertNames("label_values(instance)");
        assertNames("sum([[metric]]) + kafka_a", "kafka_a");
    }

    @Test
    void unbalancedExpressionsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> PromQl.metricNames("sum(kafka_a{job=\"x\")"));
        assertThrows(IllegalArgumentException.class, () -> PromQl.metricNames("rate(kafka_a[5m)"));
        assertThrows(IllegalArgumentException.class, () -> PromQl.metricNames("kafka_a{job=\"x}"));
    }

    @Test
    void selectorsComeWithTheirMatchers() {
        List<Selector> selectors = PromQl.selectors("sum by (mirror) (kafka_a{job=~\"$job\", mirror!=\"\",q=\"a\\\"b\"}"
                + " >= 0) / kafka_b + rate(kafka_a {task=~\"x}|y\"}[$__rate_interval])");
        assertEquals(List.of(
                new Selector("kafka_a", List.of(new LabelMatcher("job", "=~", "$job"),
                        new LabelMatcher("mirror", "!=", ""), new LabelMatcher("q", "=", "a\"b"))),
                new Selector("kafka_a", List.of(new LabelMatcher("task", "=~", "x}|y"))),
                new Selector("kafka_b", List.of())), selectors);
        assertEquals("kafka_a{job=~\"$job\",mirror!=\"\",q=\"a\\\"b\"}", selectors.get(0).toString(), "as PromQL");
        assertEquals("kafka_b", selectors.get(2).toString());
        assertThrows(IllegalArgumentException.class, () -> PromQl.selectors("kafka_a{job=~'x'}"));
    }

    @Test
    void matchersSelectAsPrometheusDoes() {
        LabelMatcher anyMirror = new LabelMatcher("mirror", "=~", ".+");
        assertTrue(anyMirror.matches("m"));
        assertFalse(anyMirror.matches(null), "a series without the label has it empty");
        assertFalse(anyMirror.matches(""));
        LabelMatcher requests = new LabelMatcher("request", "=~", "Produce|Metadata");
        assertTrue(requests.matches("Metadata"));
        assertFalse(requests.matches("ProduceX"), "anchored at both ends");
        assertTrue(new LabelMatcher("topic", "=", "").matches(null));
        assertTrue(new LabelMatcher("error", "!=", "NONE").matches("UNKNOWN_TOPIC_OR_PARTITION"));
        assertFalse(new LabelMatcher("error", "!~", "NONE|.*_ID").matches("INVALID_PRODUCER_ID"));
    }

    private static void assertNames(String expr, String... expected) {
        Set<String> names = PromQl.metricNames(expr);
        assertEquals(List.of(expected), List.copyOf(names), expr);
    }
}
