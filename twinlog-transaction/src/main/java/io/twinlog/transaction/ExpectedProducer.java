package io.twinlog.transaction;

/**
 * The producer id and epoch an InitProducerId request (v3+) says the producer had, when it re-initializes after an
 * error: the coordinator bumps that epoch, or fences the producer if another instance took over since.
 */
public record ExpectedProducer(long producerId, short epoch) {
}
