package io.twinlog.tests.dashboard;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.FaultProxy;
import io.twinlog.testkit.MirrorInvariants;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The mirror dashboard in a real browser (the system's headless Chromium) against two clusters with a mirror whose
 * link to the source runs through a {@link FaultProxy} (the source advertises the proxy on a listener of its own, so
 * only the mirror's traffic crosses it): the page loads without console errors and shows the partitions MIRRORING;
 * with the link throttled while a producer writes 3 MB to the source, the records-lag chart rises and falls back to 0;
 * with the link cut, the partitions show FAILED with the reason describe reports; with actions enabled, the
 * failover button (confirmed) fails the topic over and it becomes writable. Screenshots of every step go to
 * target/dashboard-screenshots/.
 *
 * <p>The page rebuilds its mirrors every 2 s, so an element found once goes stale: every look at a rebuilt element
 * finds it again inside a polled wait ({@link Waits} takes a stale element as "not yet").
 */
@Timeout(300)
class DashboardBrowserTest {
    private static final String MIRROR = "dr";
    private static final String TOPIC = "orders";
    private static final Path SCREENSHOTS = Path.of("target", "dashboard-screenshots");
    private static final Duration PAGE_WAIT = Duration.ofSeconds(60);
    private static final long SEND_TIMEOUT_SECONDS = 30;

    @Test
    void dashboardFollowsLagAndFailuresAndFailsATopicOver() throws Exception {
        try (FaultProxy link = new FaultProxy("mirror-link", "127.0.0.1", 9);
             TestCluster source = TestCluster.builder().brokers(1)
                     .brokerProperty("listeners", "PLAINTEXT://127.0.0.1:0,MIRROR://127.0.0.1:0")
                     .brokerProperty("advertised.listeners",
                             "PLAINTEXT://127.0.0.1:0,MIRROR://127.0.0.1:" + link.port())
                     .brokerProperty("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,MIRROR:PLAINTEXT")
                     .brokerProperty("inter.broker.listener.name", "PLAINTEXT")
                     .build().start();
             TestCluster destination = TestCluster.builder().brokers(1)
                     .brokerProperty("dashboard.listener", "http://127.0.0.1:0")
                     .brokerProperty("dashboard.actions.enable", "true")
                     .build().start();
             Admin sourceAdmin = source.admin();
             MirrorAdmin mirrors = MirrorAdmin.create(destination.bootstrapServers(), Duration.ofSeconds(60));
             HeadlessChromium browser = HeadlessChromium.start(SCREENSHOTS)) {
            link.retarget("127.0.0.1", source.broker(0).boundPort("MIRROR"));
            sourceAdmin.createTopics(List.of(new NewTopic(TOPIC, 2, (short) 1))).all()
                    .get(SEND_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            produce(source, 0, 50);
            produce(source, 1, 50);
            mirrors.createClusterMirror(MIRROR, Map.of("bootstrap.servers", link.address()));
            assertEquals(Map.of(), mirrors.startMirrorTopics(MIRROR, List.of(TOPIC), List.of(), List.of()));
            ChromeDriver page = browser.driver();
            String url = destination.broker(0).dashboardUrl().orElseThrow();

            // 1. the page loads, shows both partitions MIRRORING and the exact failover command
            page.get(url);
            awaitStates(page, "MIRRORING", "MIRRORING");
            String failover = "bin/twinlog-mirrors.sh --bootstrap-server " + destination.bootstrapServers()
                    + " --remove --topic " + TOPIC + " --mirror " + MIRROR;
            Waits.waitFor("the page shows " + failover, () -> commands(page), shown -> shown.contains(failover),
                    PAGE_WAIT);
            // this broker's background tasks, each OK, and no warning about them
            Waits.waitFor("the page lists the metadata resync task as OK", () -> page.findElements(
                    By.cssSelector("#tasks tr[data-task='metadata-resync'] .badge")).stream()
                    .map(WebElement::getText).toList(), badges -> badges.equals(List.of("OK")), PAGE_WAIT);
            assertFalse(page.findElement(By.id("tasks-attention")).isDisplayed(), "no background task needs attention");
            assertEquals(List.of(), browser.consoleErrors(), "no console errors on load");
            browser.screenshot("01-mirroring");

            // 2. a slow link while the source takes 3 MB: the lag chart rises, then falls back to 0 once it is fast
            link.throttle(200_000);
            produce(source, 0, 3_000);
            Waits.waitFor("the records-lag chart of partition 0 rises", () -> chartValues(page, 0),
                    values -> values.stream().anyMatch(v -> v > 0), PAGE_WAIT);
            browser.screenshot("02-lagging");
            link.throttle(0);
            MirrorInvariants.awaitMirrored(source, destination, new TopicPartition(TOPIC, 0));
            List<Double> chart = Waits.waitFor("the chart falls back to 0 after the rise", () -> chartValues(page, 0),
                    values -> values.get(values.size() - 1) == 0 && values.stream().anyMatch(v -> v > 0), PAGE_WAIT);
            assertTrue(chart.size() >= 3, "a live chart with several points: " + chart);
            // caught up and then idle: an RPO of a few seconds (the last caught-up fetch), not the records' age
            Waits.waitFor("partition 0's RPO cell shows a small number of seconds", () -> row(page, 0)
                    .findElement(By.className("rpo-seconds")).getText(), text -> text.matches("\\d+(\\.\\d+)?")
                    && Double.parseDouble(text) < 30, PAGE_WAIT);
            browser.screenshot("03-caught-up");

            // 3. the link cut: FAILED partitions with the reason describe gives, on each row and in the summary
            link.cut();
            awaitStates(page, "FAILED", "FAILED");
            String reason = mirrors.describeClusterMirrors(List.of(MIRROR)).get(MIRROR).topics().get(TOPIC)
                    .partitions().get(0).lastError();
            assertTrue(reason != null && !reason.isBlank(), "describe gives a reason: " + reason);
            Waits.waitFor("partition 0's row shows the reason", () -> row(page, 0).findElement(By.className("reason"))
                    .getText(), text -> text.startsWith(reason.substring(0, Math.min(20, reason.length()))), PAGE_WAIT);
            assertTrue(page.findElement(By.id("failed-summary")).isDisplayed(), "the FAILED summary is shown");
            browser.screenshot("04-failed");
            link.heal();
            awaitStates(page, "MIRRORING", "MIRRORING");

            // 4. the failover button, confirmed, fails the topic over: STOPPED and writable on the destination
            Waits.waitUntil("a click on the failover button", () -> {
                page.findElement(By.cssSelector("button[data-action='failover'][data-topic='" + TOPIC + "']")).click();
                return true;
            }, PAGE_WAIT);
            Waits.waitFor("the confirmation dialog", () -> page.switchTo().alert(), a -> true, PAGE_WAIT).accept();
            Waits.waitUntil("describe shows every partition STOPPED", () -> mirrors.describeClusterMirrors(
                    List.of(MIRROR)).get(MIRROR).topics().get(TOPIC).partitions().stream()
                    .allMatch(p -> p.state().equals("STOPPED")), PAGE_WAIT);
            awaitStates(page, "STOPPED", "STOPPED");
            RecordMetadata written = produce(destination, 0, 1);
            assertTrue(written.offset() >= 3_050, "written on the destination after the mirrored records: " + written);
            Waits.waitFor("the page reports the failover accepted", () -> page.findElement(By.id("action-result"))
                    .getText(), text -> text.contains("accepted"), PAGE_WAIT);
            browser.screenshot("05-failed-over");
            assertEquals(List.of(), browser.consoleErrors(), "no console errors through every step");
        }
    }

    private static void awaitStates(ChromeDriver page, String partition0, String partition1) {
        Waits.waitFor("the page shows " + TOPIC + " partitions " + partition0 + ", " + partition1,
                () -> List.of(state(page, 0), state(page, 1)), s -> s.equals(List.of(partition0, partition1)),
                PAGE_WAIT);
    }

    private static String state(ChromeDriver page, int partition) {
        return row(page, partition).getAttribute("data-state");
    }

    private static WebElement row(ChromeDriver page, int partition) {
        return page.findElement(By.cssSelector("tr[data-mirror='" + MIRROR + "'][data-topic='" + TOPIC
                + "'][data-partition='" + partition + "']"));
    }

    /** The values the records-lag chart of {@code partition} plots now, oldest first. */
    private static List<Double> chartValues(ChromeDriver page, int partition) {
        String values = page.findElement(By.cssSelector(".charts[data-topic='" + TOPIC
                + "'] svg[data-metric='records'] polyline[data-series='p" + partition + "']"))
                .getAttribute("data-values");
        return values == null || values.isEmpty() ? List.of()
                : Arrays.stream(values.split(",")).map(Double::valueOf).toList();
    }

    /** Every command shown on the page, open or folded. */
    private static List<String> commands(ChromeDriver page) {
        return page.findElements(By.cssSelector("pre.cmd")).stream().map(e -> e.getAttribute("textContent")).toList();
    }

    private static RecordMetadata produce(TestCluster cluster, int partition, int count) throws Exception {
        byte[] value = new byte[1_000];
        new Random(partition).nextBytes(value);
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of("linger.ms", 5))) {
            for (int i = 0; i < count; i++) {
                sent.add(p.send(new ProducerRecord<>(TOPIC, partition, ("k" + i).getBytes(StandardCharsets.UTF_8),
                        value)));
            }
            p.flush();
        }
        RecordMetadata last = null;
        for (Future<RecordMetadata> f : sent) {
            // every send acknowledged, or the test fails with the producer's error
            last = f.get(SEND_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        }
        return last;
    }
}
