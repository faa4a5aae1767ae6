package io.twinlog.tests.connect;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The Connect workers of one test: a failure (a timeout included) carries the tail of each worker's log, since what
 * went wrong is usually only visible there, and every worker JVM is killed after the test, passed or failed.
 */
final class ConnectWorkers implements TestExecutionExceptionHandler, AfterEachCallback {
    private static final int TAIL_LINES = 80;
    private final List<ConnectWorker> workers = new ArrayList<>();

    ConnectWorker create(Path dir, Map<String, String> properties, List<Path> classPathAdditions) throws Exception {
        ConnectWorker worker = new ConnectWorker(dir, properties, classPathAdditions);
        workers.add(worker);
        return worker;
    }

    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable failure) throws Throwable {
        if (workers.isEmpty()) {
            throw failure;
        }
        StringBuilder message = new StringBuilder(String.valueOf(failure.getMessage()));
        for (ConnectWorker worker : workers) {
            message.append("\n----- last ").append(TAIL_LINES).append(" lines of ").append(worker.log())
                    .append(" -----\n").append(worker.logTail(TAIL_LINES));
        }
        AssertionError withLogs = new AssertionError(message.toString(), failure);
        withLogs.setStackTrace(failure.getStackTrace());
        throw withLogs;
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        for (ConnectWorker worker : workers) {
            worker.close();
        }
        workers.clear();
    }
}
