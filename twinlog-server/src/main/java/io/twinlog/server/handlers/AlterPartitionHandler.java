package io.twinlog.server.handlers;

import io.twinlog.controller.Controller;
import io.twinlog.controller.decisions.IsrChange;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.AlterPartitionRequestData;
import org.apache.kafka.common.message.AlterPartitionResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AlterPartitionRequest;
import org.apache.kafka.common.requests.AlterPartitionResponse;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** AlterPartition (inter-broker): a leader's ISR change, decided by the controller; NOT_CONTROLLER elsewhere. */
public final class AlterPartitionHandler implements RequestHandler {
    private final BrokerContext ctx;
    private final Controller controller;

    public AlterPartitionHandler(BrokerContext ctx, Controller controller) {
        this.ctx = ctx;
        this.controller = controller;
    }

    @Override
    public void handle(Request request) {
        AlterPartitionRequest body = request.body();
        AlterPartitionRequestData data = body.data();
        if (!controller.isActive()) {
            request.respond(new AlterPartitionResponse(new AlterPartitionResponseData()
                    .setErrorCode(Errors.NOT_CONTROLLER.code())));
            return;
        }
        List<IsrChange> changes = new ArrayList<>();
        Map<TopicPartition, Uuid> ids = new HashMap<>();
        AlterPartitionResponseData response = new AlterPartitionResponseData();
        for (AlterPartitionRequestData.TopicData t : data.topics()) {
            Optional<TopicImage> topic = ctx.image().topic(t.topicId());
            for (AlterPartitionRequestData.PartitionData p : t.partitions()) {
                if (topic.isEmpty()) {
                    response.topics().add(new AlterPartitionResponseData.TopicData().setTopicId(t.topicId())
                            .setPartitions(List.of(new AlterPartitionResponseData.PartitionData()
                                    .setPartitionIndex(p.partitionIndex())
                                    .setErrorCode(Errors.UNKNOWN_TOPIC_ID.code()))));
                    continue;
                }
                List<Integer> isr = new ArrayList<>();
                p.newIsrWithEpochs().forEach(b -> isr.add(b.brokerId()));
                if (isr.isEmpty()) {
                    isr.addAll(p.newIsr());
                }
                TopicPartition tp = new TopicPartition(topic.get().name(), p.partitionIndex());
                ids.put(tp, t.topicId());
                changes.add(new IsrChange(tp, p.leaderEpoch(), p.partitionEpoch(), isr));
            }
        }
        controller.alterPartition(data.brokerId(), data.brokerEpoch(), changes).whenComplete((results, error) -> {
            if (error != null) {
                request.respond(request.errorResponse(error));
                return;
            }
            Map<Uuid, AlterPartitionResponseData.TopicData> byTopic = new HashMap<>();
            results.forEach((tp, r) -> {
                AlterPartitionResponseData.TopicData td = byTopic.computeIfAbsent(ids.get(tp), id -> {
                    AlterPartitionResponseData.TopicData n = new AlterPartitionResponseData.TopicData().setTopicId(id);
                    response.topics().add(n);
                    return n;
                });
                AlterPartitionResponseData.PartitionData pd = new AlterPartitionResponseData.PartitionData()
                        .setPartitionIndex(tp.partition()).setErrorCode(r.error().code());
                r.state().ifPresent(s -> pd.setLeaderId(s.leader()).setLeaderEpoch(s.leaderEpoch())
                        .setIsr(new ArrayList<>(s.isr())).setPartitionEpoch(s.partitionEpoch()));
                td.partitions().add(pd);
            });
            request.respond(new AlterPartitionResponse(response));
        });
    }
}
