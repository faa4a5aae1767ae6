package io.twinlog.bench;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

/** The figures one system gives in one round of the {@code mirror-scale} phase, each logged as it is taken. */
final class ScaleFigures {
    private static final Logger log = LoggerFactory.getLogger(ScaleFigures.class);

    private final String system;
    private final int round;
    private final List<MirrorBenchmark.Figure> figures = new ArrayList<>();

    ScaleFigures(String system, int round) {
        this.system = system;
        this.round = round;
    }

    void add(String name, double value, String unit) {
        figures.add(new MirrorBenchmark.Figure(system, round, name, value, unit));
        log.info("[{}] mirror-scale: {} = {} {}", system, name, String.format("%.1f", value), unit);
    }

    List<MirrorBenchmark.Figure> list() {
        return figures;
    }
}
