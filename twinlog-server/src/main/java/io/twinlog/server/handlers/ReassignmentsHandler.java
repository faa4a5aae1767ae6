package io.twinlog.server.handlers;

import io.twinlog.controller.Controller;
import io.twinlog.controller.metadata.TopicAssignment;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.protocol.AdminDeadline;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.server.controller.ControllerChannel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NotControllerException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData;
import org.apache.kafka.common.message.ListPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.ListPartitionReassignmentsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AlterPartitionReassignmentsRequest;
import org.apache.kafka.common.requests.AlterPartitionReassignmentsResponse;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.ListPartitionReassignmentsRequest;
import org.apache.kafka.common.requests.ListPartitionReassignmentsResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * AlterPartitionReassignments (start or cancel moving replicas; decided by the controller, forwarded to it by any
 * other broker) and ListPartitionReassignments (answered from this broker's metadata image).
 */
public final class ReassignmentsHandler {
    private static final Logger log = LoggerFactory.getLogger(ReassignmentsHandler.class);
    private final BrokerContext ctx;
    private final Controller controller;
    private final ControllerChannel channel;

    public ReassignmentsHandler(BrokerContext ctx, Controller controller, ControllerChannel channel) {
        this.ctx = ctx;
        this.controller = controller;
        this.channel = channel;
    }

    public RequestHandler alter() {
        return this::handleAlter;
    }

    public RequestHandler list() {
        return this::handleList;
    }

    private void handleAlter(Request request) throws Exception {
        AlterPartitionReassignmentsRequest body = request.body();
        AlterPartitionReassignmentsRequestData data = body.data();
        if (!controller.isActive()) {
            try {
                AlterPartitionReassignmentsResponse forwarded = channel.send(AdminDeadline.of(request), timeLeftMs ->
                        new AlterPartitionReassignmentsRequest.Builder(data.duplicate().setTimeoutMs(timeLeftMs)));
                request.respond(new AlterPartitionReassignmentsResponse(forwarded.data()));
            } catch (TimeoutException e) {
                log.info("{} not forwarded: {}", request, e.getMessage());
                request.respond(request.errorResponse(e));
            } catch (Exception e) {
                // broad: any failure to reach the controller is answered NOT_CONTROLLER, which the client retries
                log.info("Could not forward AlterPartitionReassignments to the controller", e);
                request.respond(request.errorResponse(new NotControllerException(
                        "The controller could not be reached: " + e.getMessage())));
            }
            return;
        }
        Map<TopicPartition, Optional<List<Integer>>> targets = new LinkedHashMap<>();
        for (AlterPartitionReassignmentsRequestData.ReassignableTopic t : data.topics()) {
            for (AlterPartitionReassignmentsRequestData.ReassignablePartition p : t.partitions()) {
                targets.put(new TopicPartition(t.name(), p.partitionIndex()),
                        p.replicas() == null ? Optional.empty() : Optional.of(new ArrayList<>(p.replicas())));
            }
        }
        // answered from callbacks: the request thread does not wait for the controller or the metadata image
        controller.alterReassignments(targets).orTimeout(Math.max(5_000, data.timeoutMs()), TimeUnit.MILLISECONDS)
                .thenCompose(results -> whenVisible(targets, results).thenApply(image -> results))
                .whenComplete((results, error) -> {
                    if (error != null) {
                        request.respond(request.errorResponse(AsyncFailures.cause(error)));
                    } else {
                        request.respond(new AlterPartitionReassignmentsResponse(response(targets, results)));
                    }
                });
    }

    private static AlterPartitionReassignmentsResponseData response(Map<TopicPartition, Optional<List<Integer>>> targets,
                                                                    Map<TopicPartition, ApiError> results) {
        AlterPartitionReassignmentsResponseData response = new AlterPartitionReassignmentsResponseData();
        Map<String, AlterPartitionReassignmentsResponseData.ReassignableTopicResponse> byTopic = new HashMap<>();
        targets.keySet().forEach(tp -> {
            ApiError e = results.getOrDefault(tp, new ApiError(Errors.UNKNOWN_SERVER_ERROR, "no result"));
            byTopic.computeIfAbsent(tp.topic(), name -> {
                AlterPartitionReassignmentsResponseData.ReassignableTopicResponse r =
                        new AlterPartitionReassignmentsResponseData.ReassignableTopicResponse().setName(name);
                response.responses().add(r);
                return r;
            }).partitions().add(new AlterPartitionReassignmentsResponseData.ReassignablePartitionResponse()
                    .setPartitionIndex(tp.partition()).setErrorCode(e.error().code()).setErrorMessage(e.message()));
        });
        return response;
    }

    /**
     * Answers only once this broker's image shows the accepted changes (a reassignment in progress or already
     * done; a cancelled one gone), as Kafka's controller answers from the state it just changed: the admin's
     * ListPartitionReassignments, also served here, must not miss a reassignment that was just accepted.
     */
    private CompletableFuture<?> whenVisible(Map<TopicPartition, Optional<List<Integer>>> targets,
                                             Map<TopicPartition, ApiError> results) {
        Map<TopicPartition, Optional<List<Integer>>> accepted = new HashMap<>();
        targets.forEach((tp, target) -> {
            ApiError result = results.get(tp);
            if (result != null && result.error() == Errors.NONE) {
                accepted.put(tp, target);
            }
        });
        if (accepted.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        return ctx.metadata().whenApplied("reassignments of " + accepted.keySet(), image -> accepted.entrySet().stream()
                .allMatch(e -> image.topic(e.getKey().topic()).map(t -> {
                    boolean inProgress = t.reassigning().containsKey(e.getKey().partition());
                    if (e.getValue().isEmpty()) {
                        return !inProgress;
                    }
                    return inProgress || Optional.ofNullable(t.partitions().get(e.getKey().partition()))
                            .map(p -> p.replicas().equals(e.getValue().get())).orElse(false);
                }).orElse(true)), 30_000);
    }

    private void handleList(Request request) {
        ListPartitionReassignmentsRequest body = request.body();
        ListPartitionReassignmentsRequestData data = body.data();
        ListPartitionReassignmentsResponseData response = new ListPartitionReassignmentsResponseData();
        for (TopicImage t : ctx.image().topics().values()) {
            List<Integer> wanted = null;
            if (data.topics() != null) {
                Optional<ListPartitionReassignmentsRequestData.ListPartitionReassignmentsTopics> req = data.topics()
                        .stream().filter(x -> x.name().equals(t.name())).findFirst();
                if (req.isEmpty()) {
                    continue;
                }
                wanted = req.get().partitionIndexes();
            }
            ListPartitionReassignmentsResponseData.OngoingTopicReassignment out =
                    new ListPartitionReassignmentsResponseData.OngoingTopicReassignment().setName(t.name());
            for (Map.Entry<Integer, TopicAssignment.Reassignment> e : t.reassigning().entrySet()) {
                if (wanted != null && !wanted.contains(e.getKey())) {
                    continue;
                }
                out.partitions().add(new ListPartitionReassignmentsResponseData.OngoingPartitionReassignment()
                        .setPartitionIndex(e.getKey())
                        .setReplicas(new ArrayList<>(t.partitions().get(e.getKey()).replicas()))
                        .setAddingReplicas(e.getValue().adding())
                        .setRemovingReplicas(e.getValue().removing()));
            }
            if (!out.partitions().isEmpty()) {
                response.topics().add(out);
            }
        }
        request.respond(new ListPartitionReassignmentsResponse(response));
    }
}
