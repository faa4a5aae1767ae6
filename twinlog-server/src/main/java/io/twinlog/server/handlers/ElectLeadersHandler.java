package io.twinlog.server.handlers;

import io.twinlog.controller.Controller;
import io.twinlog.controller.election.PartitionChanges;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.protocol.AdminDeadline;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.server.controller.ControllerChannel;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NotControllerException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.message.ElectLeadersRequestData;
import org.apache.kafka.common.message.ElectLeadersResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ElectLeadersRequest;
import org.apache.kafka.common.requests.ElectLeadersResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * ElectLeaders (admin {@code electLeaders}, PREFERRED or UNCLEAN): decided by the controller; a broker that is not
 * the controller forwards the request to it and relays the answer, so the admin may talk to any broker. An empty
 * partition list means every partition (PREFERRED only elects where needed).
 */
public final class ElectLeadersHandler implements RequestHandler {
    private static final Logger log = LoggerFactory.getLogger(ElectLeadersHandler.class);
    private final BrokerContext ctx;
    private final Controller controller;
    private final ControllerChannel channel;

    public ElectLeadersHandler(BrokerContext ctx, Controller controller, ControllerChannel channel) {
        this.ctx = ctx;
        this.controller = controller;
        this.channel = channel;
    }

    @Override
    public void handle(Request request) throws Exception {
        ElectLeadersRequest body = request.body();
        ElectLeadersRequestData data = body.data();
        if (!controller.isActive()) {
            try {
                ElectLeadersResponse forwarded = channel.send(AdminDeadline.of(request), timeLeftMs ->
                        new ElectLeadersRequest.Builder(ElectionType.valueOf(data.electionType()),
                                data.topicPartitions() == null ? null : partitions(data), timeLeftMs));
                request.respond(new ElectLeadersResponse(forwarded.data()));
            } catch (TimeoutException e) {
                log.info("{} not forwarded: {}", request, e.getMessage());
                request.respond(request.errorResponse(e));
            } catch (Exception e) {
                // broad: any failure to reach the controller is answered NOT_CONTROLLER, which the client retries
                log.info("Could not forward ElectLeaders to the controller", e);
                request.respond(request.errorResponse(new NotControllerException(
                        "The controller could not be reached: " + e.getMessage())));
            }
            return;
        }
        Set<TopicPartition> targets = new HashSet<>();
        if (data.topicPartitions() == null || data.topicPartitions().isEmpty()) {
            for (TopicImage t : ctx.image().topics().values()) {
                t.partitions().keySet().forEach(p -> targets.add(new TopicPartition(t.name(), p)));
            }
        } else {
            targets.addAll(partitions(data));
        }
        boolean unclean = data.electionType() == ElectionType.UNCLEAN.value;
        boolean all = data.topicPartitions() == null || data.topicPartitions().isEmpty();
        // answered from callbacks: the request thread does not wait for the controller or the metadata image
        controller.electLeaders(unclean, targets).orTimeout(Math.max(1_000, data.timeoutMs()), TimeUnit.MILLISECONDS)
                .thenCompose(results -> whenLeadersVisible(results).thenApply(image -> results))
                .whenComplete((results, error) -> {
                    if (error != null) {
                        request.respond(request.errorResponse(AsyncFailures.cause(error)));
                    } else {
                        request.respond(new ElectLeadersResponse(response(results, all)));
                    }
                });
    }

    private static ElectLeadersResponseData response(Map<TopicPartition, PartitionChanges.ElectionResult> results,
                                                     boolean all) {
        Map<String, ElectLeadersResponseData.ReplicaElectionResult> byTopic = new HashMap<>();
        ElectLeadersResponseData response = new ElectLeadersResponseData().setErrorCode(Errors.NONE.code());
        results.forEach((tp, r) -> {
            if (all && r.error() == Errors.ELECTION_NOT_NEEDED) {
                return; // "all partitions" answers only for partitions that needed an election
            }
            ElectLeadersResponseData.ReplicaElectionResult t = byTopic.computeIfAbsent(tp.topic(), name -> {
                ElectLeadersResponseData.ReplicaElectionResult n = new ElectLeadersResponseData.ReplicaElectionResult()
                        .setTopic(name);
                response.replicaElectionResults().add(n);
                return n;
            });
            t.partitionResult().add(new ElectLeadersResponseData.PartitionResult().setPartitionId(tp.partition())
                    .setErrorCode(r.error().code()).setErrorMessage(r.message()));
        });
        return response;
    }

    /** Completes once the new leaders are visible here, so a describe right after the answer shows them. */
    private CompletableFuture<?> whenLeadersVisible(Map<TopicPartition, PartitionChanges.ElectionResult> results) {
        Set<TopicPartition> changed = new HashSet<>();
        results.forEach((tp, r) -> r.newState().ifPresent(s -> changed.add(tp)));
        if (changed.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        return ctx.metadata().whenApplied("elected leaders of " + changed, image -> changed.stream().allMatch(tp ->
                image.partition(tp).map(p -> p.state() != null
                        && p.state().leader() == results.get(tp).newState().get().leader()).orElse(false)), 30_000);
    }

    private static Set<TopicPartition> partitions(ElectLeadersRequestData data) {
        Set<TopicPartition> out = new HashSet<>();
        if (data.topicPartitions() != null) {
            for (ElectLeadersRequestData.TopicPartitions t : data.topicPartitions()) {
                for (Integer p : t.partitions()) {
                    out.add(new TopicPartition(t.topic(), p));
                }
            }
        }
        return out;
    }

}
