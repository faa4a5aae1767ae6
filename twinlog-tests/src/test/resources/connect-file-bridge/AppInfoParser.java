package org.apache.kafka.common.utils;

/**
 * Compiled by ConnectDistributedTest for the Connect worker's JVM only, never part of the test class path.
 *
 * <p>The FileStream connectors are not published for Kafka 4.4; their 4.3.1 jar reports its version through
 * {@code org.apache.kafka.common.utils.AppInfoParser.getVersion()}, a class Kafka 4.4 moved to
 * {@code org.apache.kafka.common.utils.internals}. Connect asks a connector and a task for their version when it
 * validates, starts and reports them, so without this class every POST /connectors fails with a
 * NoClassDefFoundError. This is the one method connect-file 4.3.1 calls that 4.4 lacks: it answers what the moved
 * class answers, the version of the kafka-clients jar the worker runs on, as the connectors do in a 4.4
 * distribution.
 */
public final class AppInfoParser {
    private AppInfoParser() {
    }

    public static String getVersion() {
        return org.apache.kafka.common.utils.internals.AppInfoParser.getVersion();
    }
}
