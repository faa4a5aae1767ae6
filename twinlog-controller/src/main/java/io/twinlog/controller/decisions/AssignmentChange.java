package io.twinlog.controller.decisions;

import io.twinlog.controller.metadata.TopicAssignment;
import io.twinlog.controller.store.StateWrite;

import java.util.List;

/**
 * A topic's new assignment record (replicas, reassignments in progress) with the partition states that change in
 * the same atomic write, the versions the write must find, and what it does in words (for the shell's log).
 */
public record AssignmentChange(String topic, TopicAssignment next, int expectedVersion, List<StateWrite> states,
                               List<String> events) {
    public AssignmentChange {
        states = List.copyOf(states);
        events = List.copyOf(events);
    }
}
