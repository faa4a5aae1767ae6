package io.twinlog.launcher.demo;

import java.util.List;
import java.util.Map;

/**
 * What every step of the guided demo works with: the two clusters, the mirror between them, the console it prints
 * to, the waits, and the demo topic with what earlier steps recorded of it ({@link DemoTopic}).
 */
abstract class DemoSteps {
    final ClusterView source;
    final ClusterView destination;
    final String mirror;
    final DemoConsole console;
    final Polls polls;
    final DemoTopic demo;
    final String topic;
    final String group;
    final Map<Integer, List<String>> written;
    final Map<Integer, List<String>> writtenAfterFailover;
    final Map<Integer, List<String>> strayWrites;
    final Map<Integer, Long> committed;
    final Map<Integer, Long> lastMirroredOffsets;

    DemoSteps(ClusterView source, ClusterView destination, String mirror, DemoConsole console, Polls polls,
              DemoTopic demo) {
        this.source = source;
        this.destination = destination;
        this.mirror = mirror;
        this.console = console;
        this.polls = polls;
        this.demo = demo;
        this.topic = demo.topic;
        this.group = demo.group;
        this.written = demo.written;
        this.writtenAfterFailover = demo.writtenAfterFailover;
        this.strayWrites = demo.strayWrites;
        this.committed = demo.committed;
        this.lastMirroredOffsets = demo.lastMirroredOffsets;
    }
}
