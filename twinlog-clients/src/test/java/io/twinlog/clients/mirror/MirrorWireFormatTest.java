package io.twinlog.clients.mirror;

import io.twinlog.clients.mirror.message.AlterClusterMirrorRequestData;
import io.twinlog.clients.mirror.message.AlterClusterMirrorResponseData;
import io.twinlog.clients.mirror.message.CreateClusterMirrorRequestData;
import io.twinlog.clients.mirror.message.CreateClusterMirrorResponseData;
import io.twinlog.clients.mirror.message.DeleteClusterMirrorRequestData;
import io.twinlog.clients.mirror.message.DeleteClusterMirrorResponseData;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsRequestData;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirror;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirrorConfig;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirrorGroup;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirrorPartition;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirrorTopic;
import io.twinlog.clients.mirror.message.LastMirroredEpochsRequestData;
import io.twinlog.clients.mirror.message.LastMirroredEpochsRequestData.LastMirroredEpochsTopic;
import io.twinlog.clients.mirror.message.LastMirroredEpochsResponseData;
import io.twinlog.clients.mirror.message.LastMirroredEpochsResponseData.LastMirroredEpochsPartitionResult;
import io.twinlog.clients.mirror.message.LastMirroredEpochsResponseData.LastMirroredEpochsTopicResult;
import io.twinlog.clients.mirror.message.ListClusterMirrorsRequestData;
import io.twinlog.clients.mirror.message.ListClusterMirrorsResponseData;
import io.twinlog.clients.mirror.message.ListClusterMirrorsResponseData.ListedMirror;
import io.twinlog.clients.mirror.message.PauseMirrorTopicsRequestData;
import io.twinlog.clients.mirror.message.PauseMirrorTopicsResponseData;
import io.twinlog.clients.mirror.message.PreviewMirrorFailoverRequestData;
import io.twinlog.clients.mirror.message.PreviewMirrorFailoverResponseData;
import io.twinlog.clients.mirror.message.ResumeMirrorTopicsRequestData;
import io.twinlog.clients.mirror.message.ResumeMirrorTopicsResponseData;
import io.twinlog.clients.mirror.message.StartMirrorTopicsRequestData;
import io.twinlog.clients.mirror.message.StartMirrorTopicsResponseData;
import io.twinlog.clients.mirror.message.StopMirrorTopicsRequestData;
import io.twinlog.clients.mirror.message.StopMirrorTopicsResponseData;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.MessageUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The mirror APIs' bytes on the wire are what they were before the messages were generated from JSON specs: every
 * request and response of every key and version, with representative values (nulls, empty and several-element
 * arrays, -1 sentinels, non-ASCII text), encodes to golden bytes captured from the hand-built {@code Struct}
 * schemas {@code MirrorApi} had until the messages were generated (the two were compared byte for byte, field names
 * and order checked, in the commit that added the specs), and those bytes read back into an equal message. A change to a spec that moves,
 * retypes or drops a field of a released version fails here; a new version gets samples of its own.
 */
@Timeout(10)
class MirrorWireFormatTest {
    private static final short V0 = 0;

    /** One message of one API and version, with its bytes as the hand-built schemas encoded it. */
    record Sample(MirrorApi api, short version, ApiMessage message, MirrorMessageReader<?> reader,
                  String golden) {
        @Override
        public String toString() {
            return api.name + (message.getClass().getSimpleName().contains("Request") ? "Request" : "Response")
                    + " v" + version;
        }
    }

    static List<Sample> samples() {
        Uuid topicId = new Uuid(0x0123456789abcdefL, 0xfedcba9876543210L);
        List<Sample> samples = new ArrayList<>();
        samples.add(new Sample(MirrorApi.CREATE_CLUSTER_MIRROR, V0, new CreateClusterMirrorRequestData()
                .setMirrorName("east→west").setConfigs(List.of(
                        new CreateClusterMirrorRequestData.CreatableMirrorConfig().setName("bootstrap.servers")
                                .setValue("a:9092,b:9092"),
                        new CreateClusterMirrorRequestData.CreatableMirrorConfig().setName("sasl.jaas.config")
                                .setValue(null))),
                CreateClusterMirrorRequestData::new,
                "0c65617374e28692776573740312626f6f7473747261702e736572766572730e613a393039322c623a39303932001173"
                + "61736c2e6a6161732e636f6e666967000000"));
        samples.add(new Sample(MirrorApi.CREATE_CLUSTER_MIRROR, V0, new CreateClusterMirrorResponseData()
                .setThrottleTimeMs(0).setErrorCode((short) 7102).setErrorMessage("Cluster mirror 'm' already exists"),
                CreateClusterMirrorResponseData::new,
                "000000001bbe22436c7573746572206d6972726f7220276d2720616c72656164792065786973747300"));
        samples.add(new Sample(MirrorApi.DELETE_CLUSTER_MIRROR, V0, new DeleteClusterMirrorRequestData()
                .setMirrorName("m"), DeleteClusterMirrorRequestData::new,
                "026d00"));
        samples.add(new Sample(MirrorApi.DELETE_CLUSTER_MIRROR, V0, new DeleteClusterMirrorResponseData()
                .setErrorCode((short) 0).setErrorMessage(null), DeleteClusterMirrorResponseData::new,
                "0000000000000000"));
        samples.add(new Sample(MirrorApi.LIST_CLUSTER_MIRRORS, V0, new ListClusterMirrorsRequestData()
                .setIncludeTopicNames(true), ListClusterMirrorsRequestData::new,
                "0100"));
        samples.add(new Sample(MirrorApi.LIST_CLUSTER_MIRRORS, V0, new ListClusterMirrorsResponseData()
                .setMirrors(List.of(
                        new ListedMirror().setMirrorName("m1").setSourceBootstrap("src:9092")
                                .setSourceClusterId("Zq3xJ1hbQ9yV2n4sE6bV-w").setState("ACTIVE").setTopicCount(2)
                                .setTopicNames(List.of("orders", "payments")),
                        new ListedMirror().setMirrorName("m2").setSourceBootstrap("other:9092")
                                .setSourceClusterId(null).setState("FAILED").setTopicCount(0)
                                .setTopicNames(List.of()))),
                ListClusterMirrorsResponseData::new,
                "0000000000000003036d31097372633a39303932175a7133784a31686251397956326e3473453662562d770741435449"
                + "56450000000203076f7264657273097061796d656e747300036d320b6f746865723a3930393200074641494c45440000"
                + "0000010000"));
        samples.add(new Sample(MirrorApi.DESCRIBE_CLUSTER_MIRRORS, V0, new DescribeClusterMirrorsRequestData()
                .setMirrorNames(List.of("m1", "m2")), DescribeClusterMirrorsRequestData::new,
                "03036d31036d3200"));
        samples.add(new Sample(MirrorApi.DESCRIBE_CLUSTER_MIRRORS, V0, describeResponse(topicId),
                DescribeClusterMirrorsResponseData::new,
                "0000000000000003000000036d310741435449564511536f7572636520726561636861626c65167372632d313a393039"
                + "322c7372632d323a39303932175a7133784a31686251397956326e3473453662562d770312626f6f7473747261702e73"
                + "657276657273167372632d313a393039322c7372632d323a393039320000117361736c2e6a6161732e636f6e66696700"
                + "010002096f72646572732e2a020ec3bc6ec3af63c3b864c3a92e2a02076f72646572730123456789abcdeffedcba9876"
                + "5432100a4d4952524f52494e4703000000000a4d4952524f52494e4700000000000003e800000000000003de00000000"
                + "0000000a000000ffffffffffffffffffffffff01ffffffffffffffff010000000000000000ffffffffffffffff000000"
                + "00010f4c4f475f5452554e434154494f4e000000012a05f2000000000000001387000000012a05de790003164c656164"
                + "65722065706f636820342066656e6365640000000400000000000013860300000002000000030000000000000fa00200"
                + "00000300000000000003e60000000000000fa00000030862696c6c696e670000019af232b2000000000c000000010943"
                + "4f4e53554d4552000873686172652d67ffffffffffffffff000000000000000006534841524500001bbd174e6f20636c"
                + "7573746572206d6972726f7220276d3227036d320100010001010101010000"));
        samples.add(new Sample(MirrorApi.LAST_MIRRORED_EPOCHS, V0, new LastMirroredEpochsRequestData()
                .setRequesterClusterId(null).setTopics(List.of(
                        new LastMirroredEpochsTopic().setTopicName("orders").setTopicId(Uuid.ZERO_UUID)
                                .setPartitions(List.of(0, 1, 2)),
                        new LastMirroredEpochsTopic().setTopicName("payments").setTopicId(topicId)
                                .setPartitions(List.of()))),
                LastMirroredEpochsRequestData::new,
                "0003076f7264657273000000000000000000000000000000000400000000000000010000000200097061796d656e7473"
                + "0123456789abcdeffedcba9876543210010000"));
        samples.add(new Sample(MirrorApi.LAST_MIRRORED_EPOCHS, V0, new LastMirroredEpochsResponseData()
                .setTopics(List.of(new LastMirroredEpochsTopicResult().setTopicName("orders").setTopicId(topicId)
                        .setPartitions(List.of(
                                new LastMirroredEpochsPartitionResult().setPartitionIndex(0)
                                        .setErrorCode((short) 0).setLastMirroredEpoch(7)
                                        .setLastMirroredOffset(123_456_789_012L),
                                new LastMirroredEpochsPartitionResult().setPartitionIndex(1)
                                        .setErrorCode((short) 7111).setLastMirroredEpoch(-1)
                                        .setLastMirroredOffset(-1L))))),
                LastMirroredEpochsResponseData::new,
                "0000000000000002076f72646572730123456789abcdeffedcba987654321003000000000000000000070000001cbe99"
                + "1a1400000000011bc7ffffffffffffffffffffffff000000"));
        samples.add(new Sample(MirrorApi.ALTER_CLUSTER_MIRROR, V0, new AlterClusterMirrorRequestData()
                .setMirrorName("m1").setConfigs(List.of(
                        new AlterClusterMirrorRequestData.AlterableMirrorConfig().setName("mirror.topics.include")
                                .setValue("orders.*"),
                        new AlterClusterMirrorRequestData.AlterableMirrorConfig().setName("client.id")
                                .setValue(null))),
                AlterClusterMirrorRequestData::new,
                "036d3103166d6972726f722e746f706963732e696e636c756465096f72646572732e2a000a636c69656e742e69640000"
                + "00"));
        samples.add(new Sample(MirrorApi.ALTER_CLUSTER_MIRROR, V0, new AlterClusterMirrorResponseData()
                .setErrorCode((short) 40).setErrorMessage("Invalid config"), AlterClusterMirrorResponseData::new,
                "0000000000280f496e76616c696420636f6e66696700"));

        samples.add(new Sample(MirrorApi.START_MIRROR_TOPICS, V0, new StartMirrorTopicsRequestData()
                .setMirrorName("m1").setTopics(List.of("orders")).setPatterns(List.of("pay.*", "ship.*"))
                .setExcludePatterns(List.of(".*-internal")), StartMirrorTopicsRequestData::new,
                "036d3102076f726465727303067061792e2a07736869702e2a020c2e2a2d696e7465726e616c00"));
        samples.add(new Sample(MirrorApi.START_MIRROR_TOPICS, V0, new StartMirrorTopicsResponseData()
                .setErrorCode((short) 0).setTopics(List.of(
                        new StartMirrorTopicsResponseData.MirrorTopicResult().setName("orders")
                                .setErrorCode((short) 0).setErrorMessage(null),
                        new StartMirrorTopicsResponseData.MirrorTopicResult().setName("payments")
                                .setErrorCode((short) 36).setErrorMessage("Topic 'payments' already exists"))),
                StartMirrorTopicsResponseData::new,
                "0000000000000003076f726465727300000000097061796d656e7473002420546f70696320277061796d656e74732720"
                + "616c7265616479206578697374730000"));
        samples.add(new Sample(MirrorApi.STOP_MIRROR_TOPICS, V0, new StopMirrorTopicsRequestData()
                .setMirrorName("m1").setTopics(List.of("orders", "payments")).setPatterns(List.of())
                .setExcludePatterns(List.of()), StopMirrorTopicsRequestData::new,
                "036d3103076f7264657273097061796d656e7473010100"));
        samples.add(new Sample(MirrorApi.STOP_MIRROR_TOPICS, V0, new StopMirrorTopicsResponseData()
                .setErrorCode((short) 7) .setErrorMessage("Timed out").setTopics(List.of(
                        new StopMirrorTopicsResponseData.MirrorTopicResult().setName("orders")
                                .setErrorCode((short) 7).setErrorMessage("Timed out"))),
                StopMirrorTopicsResponseData::new,
                "0000000000070a54696d6564206f757402076f726465727300070a54696d6564206f75740000"));
        // version 1 (issue 30): a failover to a point in time, and per partition what it kept and quarantined
        samples.add(new Sample(MirrorApi.STOP_MIRROR_TOPICS, (short) 1, new StopMirrorTopicsRequestData()
                .setMirrorName("m1").setTopics(List.of("orders")).setPatterns(List.of()).setExcludePatterns(List.of())
                .setStopAtMs(1796637240000L).setStopTimeoutMs(30_000L), StopMirrorTopicsRequestData::new,
                "036d3102076f72646572730101000001a24fecaac0000000000000753000"));
        samples.add(new Sample(MirrorApi.STOP_MIRROR_TOPICS, (short) 1, new StopMirrorTopicsResponseData()
                .setErrorCode((short) 0).setErrorMessage(null).setTopics(List.of(
                        new StopMirrorTopicsResponseData.MirrorTopicResult().setName("orders").setErrorCode((short) 0)
                                .setErrorMessage(null).setPartitions(List.of(
                                        new StopMirrorTopicsResponseData.PointInTimeResult().setPartitionIndex(0)
                                                .setReach("REACHED").setKeptOffset(120)
                                                .setKeptTimestamp(1796637239512L).setQuarantinedFrom(120)
                                                .setQuarantinedTo(155).setQuarantinedRecords(35),
                                        new StopMirrorTopicsResponseData.PointInTimeResult().setPartitionIndex(1)
                                                .setReach("TIMED_OUT").setKeptOffset(80).setKeptTimestamp(-1)
                                                .setQuarantinedFrom(-1).setQuarantinedTo(-1)
                                                .setQuarantinedRecords(0))))),
                StopMirrorTopicsResponseData::new,
                "0000000000000002076f7264657273000000030000000008524541434845440000000000000078000001a24feca8d80000"
                + "000000000078000000000000009b000000000000002300000000010a54494d45445f4f55540000000000000050ffff"
                + "ffffffffffffffffffffffffffffffffffffffffffff0000000000000000000000"));
        samples.add(new Sample(MirrorApi.PREVIEW_MIRROR_FAILOVER, V0, new PreviewMirrorFailoverRequestData()
                .setMirrorName("m1").setStopAtMs(1796637240000L).setTopics(List.of(
                        new PreviewMirrorFailoverRequestData.PreviewTopic().setName("orders")
                                .setPartitions(List.of(0, 1)))), PreviewMirrorFailoverRequestData::new,
                "036d31000001a24fecaac002076f72646572730300000000000000010000"));
        samples.add(new Sample(MirrorApi.PREVIEW_MIRROR_FAILOVER, V0, new PreviewMirrorFailoverResponseData()
                .setErrorCode((short) 0).setErrorMessage(null).setTopics(List.of(
                        new PreviewMirrorFailoverResponseData.PreviewTopicResult().setName("orders").setPartitions(
                                List.of(new PreviewMirrorFailoverResponseData.PreviewPartitionResult()
                                                .setPartitionIndex(0).setErrorCode((short) 0).setLogEndOffset(155)
                                                .setKeptOffset(120).setKeptTimestamp(1796637239512L)
                                                .setQuarantinedRecords(35).setMirroredUpToMs(1796637300000L)
                                                .setNowMs(1796637360000L),
                                        new PreviewMirrorFailoverResponseData.PreviewPartitionResult()
                                                .setPartitionIndex(1).setErrorCode((short) 6))))),
                PreviewMirrorFailoverResponseData::new,
                "0000000000000002076f726465727303000000000000000000000000009b0000000000000078000001a24feca8d80000"
                + "000000000023000001a24fed9520000001a24fee7f8000000000010006ffffffffffffffffffffffffffffffffffff"
                + "ffffffffffff0000000000000000ffffffffffffffffffffffffffffffff000000"));
        samples.add(new Sample(MirrorApi.PAUSE_MIRROR_TOPICS, V0, new PauseMirrorTopicsRequestData()
                .setMirrorName("m1").setTopics(List.of()).setPatterns(List.of(".*")).setExcludePatterns(List.of()),
                PauseMirrorTopicsRequestData::new,
                "036d310102032e2a0100"));
        samples.add(new Sample(MirrorApi.PAUSE_MIRROR_TOPICS, V0, new PauseMirrorTopicsResponseData()
                .setErrorCode((short) 7101).setErrorMessage("No cluster mirror 'x'").setTopics(List.of()),
                PauseMirrorTopicsResponseData::new,
                "000000001bbd164e6f20636c7573746572206d6972726f72202778270100"));
        samples.add(new Sample(MirrorApi.RESUME_MIRROR_TOPICS, V0, new ResumeMirrorTopicsRequestData()
                .setMirrorName("m1").setTopics(List.of("orders")).setPatterns(List.of())
                .setExcludePatterns(List.of()), ResumeMirrorTopicsRequestData::new,
                "036d3102076f7264657273010100"));
        samples.add(new Sample(MirrorApi.RESUME_MIRROR_TOPICS, V0, new ResumeMirrorTopicsResponseData()
                .setTopics(List.of(new ResumeMirrorTopicsResponseData.MirrorTopicResult().setName("orders"))),
                ResumeMirrorTopicsResponseData::new,
                "0000000000000002076f72646572730000000000"));
        return samples;
    }

    private static DescribeClusterMirrorsResponseData describeResponse(Uuid topicId) {
        DescribedMirrorPartition mirroring = new DescribedMirrorPartition().setPartitionIndex(0).setState("MIRRORING")
                .setSourceLogEndOffset(1_000L).setDestinationLogEndOffset(990L).setLag(10L)
                .setRetryAttempt((short) 0).setLastError(null).setLastMirroredEpoch(-1).setLastMirroredOffset(-1L)
                .setOutOfSyncReplicas(List.of()).setTruncationOffset(-1L).setTruncationPendingReplicas(List.of())
                .setTruncatedOffsets(0L).setConsistentFromOffset(-1L);
        DescribedMirrorPartition truncating = new DescribedMirrorPartition().setPartitionIndex(1)
                .setState("LOG_TRUNCATION").setSourceLogEndOffset(5_000_000_000L).setDestinationLogEndOffset(4_999L)
                .setLag(4_999_995_001L).setRetryAttempt((short) 3).setLastError("Leader epoch 4 fenced")
                .setLastMirroredEpoch(4).setLastMirroredOffset(4_998L).setOutOfSyncReplicas(List.of(2, 3))
                .setTruncationOffset(4_000L).setTruncationPendingReplicas(List.of(3)).setTruncatedOffsets(998L)
                .setConsistentFromOffset(4_000L);
        return new DescribeClusterMirrorsResponseData().setThrottleTimeMs(0).setErrorCode((short) 0)
                .setErrorMessage(null).setMirrors(List.of(
                        new DescribedMirror().setErrorCode((short) 0).setErrorMessage(null).setMirrorName("m1")
                                .setState("ACTIVE").setStateReason("Source reachable")
                                .setSourceBootstrap("src-1:9092,src-2:9092").setSourceClusterId("Zq3xJ1hbQ9yV2n4sE6bV-w")
                                .setConfigs(List.of(
                                        new DescribedMirrorConfig().setName("bootstrap.servers")
                                                .setValue("src-1:9092,src-2:9092").setSensitive(false),
                                        new DescribedMirrorConfig().setName("sasl.jaas.config").setValue(null)
                                                .setSensitive(true)))
                                .setIncludePatterns(List.of("orders.*")).setExcludePatterns(List.of("ünïcødé.*"))
                                .setTopics(List.of(new DescribedMirrorTopic().setTopicName("orders")
                                        .setTopicId(topicId).setDesiredState("MIRRORING")
                                        .setPartitions(List.of(mirroring, truncating))))
                                .setGroups(List.of(
                                        new DescribedMirrorGroup().setGroupId("billing").setLastSyncTimeMs(
                                                1_765_000_000_000L).setOffsetsSynced(12).setOffsetsClamped(1)
                                                .setGroupType("CONSUMER"),
                                        new DescribedMirrorGroup().setGroupId("share-g").setLastSyncTimeMs(-1L)
                                                .setOffsetsSynced(0).setOffsetsClamped(0).setGroupType("SHARE"))),
                        new DescribedMirror().setErrorCode((short) 7101).setErrorMessage("No cluster mirror 'm2'")
                                .setMirrorName("m2").setState("").setStateReason(null).setSourceBootstrap("")
                                .setSourceClusterId(null)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("samples")
    void theBytesAreTheGoldenBytesAndReadBackEqual(Sample sample) {
        byte[] bytes = encode(sample);
        assertEquals(sample.golden(), HexFormat.of().formatHex(bytes), sample + ": the bytes changed");
        ByteBuffer buffer = ByteBuffer.wrap(HexFormat.of().parseHex(sample.golden()));
        ApiMessage read = sample.reader().read(new ByteBufferAccessor(buffer), sample.version());
        assertEquals(sample.message(), read);
        assertFalse(buffer.hasRemaining(), "nothing left after the message");
    }

    @Test
    void everyVersionOfEveryApiHasARequestAndAResponseSample() {
        Set<String> sampled = samples().stream().map(Sample::toString).collect(Collectors.toSet());
        for (MirrorApi api : MirrorApi.values()) {
            for (short v = api.oldestVersion(); v <= api.latestVersion(); v++) {
                assertTrue(sampled.contains(api.name + "Request v" + v), api.name + " request v" + v);
                assertTrue(sampled.contains(api.name + "Response v" + v), api.name + " response v" + v);
            }
        }
    }

    private static byte[] encode(Sample sample) {
        ByteBuffer buffer = MessageUtil.toByteBufferAccessor(sample.message(), sample.version()).buffer();
        byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        return bytes;
    }
}
