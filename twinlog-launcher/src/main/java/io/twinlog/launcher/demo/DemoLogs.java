package io.twinlog.launcher.demo;

import org.apache.logging.log4j.core.Appender;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.FileAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.layout.PatternLayout;

import java.io.File;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Sends the brokers' log to a file during the demo, so the console shows only the demo's steps. Replaces, in the
 * running Log4j configuration, every appender a logger writes to (the console) with one file appender; levels and
 * loggers stay as configured ({@code config/log4j2.properties}).
 */
public final class DemoLogs {
    private static final String PATTERN = "[%d{ISO8601}] %-5p [%t] %c{1} - %m%n";

    private DemoLogs() {
    }

    /** From now on, every log line goes to {@code file} (appended) instead of the console. */
    public static void toFile(File file) {
        LoggerContext context = LoggerContext.getContext(false);
        Configuration config = context.getConfiguration();
        Appender appender = FileAppender.newBuilder()
                .setName("twinlog-demo")
                .withFileName(file.getPath())
                .withAppend(true)
                .setLayout(PatternLayout.newBuilder().withConfiguration(config).withPattern(PATTERN).build())
                .setConfiguration(config)
                .build();
        appender.start();
        config.addAppender(appender);
        Set<LoggerConfig> loggers = new HashSet<>(config.getLoggers().values());
        loggers.add(config.getRootLogger());
        for (LoggerConfig logger : loggers) {
            List<String> writesTo = new ArrayList<>(logger.getAppenders().keySet());
            if (!writesTo.isEmpty()) {
                writesTo.forEach(logger::removeAppender);
                logger.addAppender(appender, null, null);
            }
        }
        context.updateLoggers();
    }
}
