package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.clients.mirror.message.PreviewMirrorFailoverRequestData;
import io.twinlog.clients.mirror.message.PreviewMirrorFailoverResponseData;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.controller.zk.MetadataWatcher;
import io.twinlog.mirror.partition.TimeCut;
import io.twinlog.mirror.runtime.LocalPartitions;
import io.twinlog.mirror.runtime.MirrorLocalPartition;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.protocol.ApiRegistry;
import io.twinlog.server.security.BrokerAuthorization;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.Executor;

/**
 * PreviewMirrorFailover (API 7010, issue 30 point 4): the dry run of a failover, plain or to a point in time. Each
 * partition this broker leads is read from its log with the cut the real failover makes
 * ({@link MirrorLocalPartition#timeCut}); nothing is written. It reads local log batch headers (up to the cut) and
 * the metadata image only, no network or ZooKeeper, yet on the mirror API threads, not the request thread: a read of
 * a log can take a while, and a request handler thread never scans one. A partition whose log changes under the read
 * (retention, a truncation) is answered with its error, the others as usual. DESCRIBE on the mirror is needed.
 */
public final class FailoverPreviews {
    /** A plain failover keeps everything: the cut of a time after every batch. */
    private static final long EVERYTHING = Long.MAX_VALUE - 1;
    private static final Logger log = LoggerFactory.getLogger(FailoverPreviews.class);

    private final LocalPartitions partitions;
    private final MetadataWatcher metadata;
    private final MirrorRequestAuthorizer authorizer;
    private final Time time;

    public FailoverPreviews(LocalPartitions partitions, MetadataWatcher metadata, BrokerAuthorization authorization,
                            Time time) {
        this.partitions = partitions;
        this.metadata = metadata;
        this.authorizer = MirrorRequestAuthorizer.of(authorization);
        this.time = time;
    }

    /** @param apiThreads the mirror API threads ({@link MirrorApiHandlers#apiThreads}) */
    public void register(ApiRegistry.Builder registry, Executor apiThreads) {
        MirrorApiRegistration.add(registry, MirrorApi.PREVIEW_MIRROR_FAILOVER, PreviewMirrorFailoverRequestData::new,
                apiThreads, this::preview);
    }

    private ApiMessage preview(AuthorizableRequestContext ctx, PreviewMirrorFailoverRequestData req) {
        MirrorApi api = MirrorApi.PREVIEW_MIRROR_FAILOVER;
        Optional<MirrorApiError> denied = authorizer.mirrorDenied(ctx, AclOperation.DESCRIBE, req.mirrorName());
        if (denied.isPresent()) {
            return denied.get().answer(api);
        }
        Optional<MirrorApiError> badTime = MirrorRequestValidator.pointInTimeRefused(req.stopAtMs(), -1);
        if (badTime.isPresent()) {
            return badTime.get().answer(api);
        }
        MetadataImage image = metadata.image();
        PreviewMirrorFailoverResponseData out = new PreviewMirrorFailoverResponseData();
        for (PreviewMirrorFailoverRequestData.PreviewTopic topic : req.topics()) {
            MirrorImage.MirrorTopic mt = image.mirrors().topics().get(topic.name());
            boolean ours = mt != null && mt.mirror().equals(req.mirrorName());
            PreviewMirrorFailoverResponseData.PreviewTopicResult result = new PreviewMirrorFailoverResponseData
                    .PreviewTopicResult().setName(topic.name());
            for (int p : topic.partitions()) {
                TopicPartition tp = new TopicPartition(topic.name(), p);
                result.partitions().add(ours ? partition(image, tp, req.stopAtMs())
                        : new PreviewMirrorFailoverResponseData.PreviewPartitionResult().setPartitionIndex(p)
                        .setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code()));
            }
            out.topics().add(result);
        }
        return out;
    }

    private PreviewMirrorFailoverResponseData.PreviewPartitionResult partition(MetadataImage image, TopicPartition tp,
                                                                                long atMs) {
        PreviewMirrorFailoverResponseData.PreviewPartitionResult r = new PreviewMirrorFailoverResponseData
                .PreviewPartitionResult().setPartitionIndex(tp.partition());
        Optional<MirrorLocalPartition> local = partitions.partition(tp);
        if (local.isEmpty() || !local.get().isLeader()) {
            return r.setErrorCode(Errors.NOT_LEADER_OR_FOLLOWER.code());
        }
        TimeCut cut;
        try {
            cut = local.get().timeCut(atMs < 0 ? EVERYTHING : atMs);
        } catch (IOException | ApiException e) {
            // the log changed under the read (retention deleted a segment: OffsetOutOfRange; a truncation; the
            // directory failed): this partition's answer says so, the CLI asks again, the others are answered
            log.info("Failover preview of {}: the log could not be read: {}", tp, e.toString(), e);
            return r.setErrorCode(Errors.forException(e).code());
        }
        MirrorImage.MirrorPartition mp = image.mirrors().partitions().get(tp);
        long upTo = mp == null ? -1L : MirrorPartitionRecord.fromJson(mp.json()).progress().mirroredUpToMs();
        return r.setLogEndOffset(cut.logEnd()).setKeptOffset(cut.offset()).setKeptTimestamp(cut.keptTimestamp())
                .setQuarantinedRecords(-1L).setMirroredUpToMs(upTo).setNowMs(time.milliseconds());
    }
}
