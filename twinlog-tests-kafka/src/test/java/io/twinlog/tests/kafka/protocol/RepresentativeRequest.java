package io.twinlog.tests.kafka.protocol;

import io.twinlog.testkit.RawKafkaConnection;
import org.apache.kafka.common.protocol.ApiMessage;

/**
 * Builds the request one API sends at one version to one cluster. It may first put the cluster into the state the
 * request needs (a LeaveGroup needs a member), over the same connection the request will use.
 */
@FunctionalInterface
interface RepresentativeRequest {
    ApiMessage build(SideBySideClusters.Target target, short version, RawKafkaConnection connection) throws Exception;
}
