package io.twinlog.server.metadata;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.zk.Json;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@link LostReplicas} kept in each log dir ({@value #FILE_NAME}), so a broker that goes down again before the
 * controller took it out of those ISRs still reports them at its next start, when its logs of them exist again
 * (created empty as a follower). Written before the broker registers, again as entries go, and removed once none is
 * left. A dir whose
 * file cannot be read is logged and skipped: the other dirs' copies, and the logs found missing, still count.
 */
public final class LostReplicasFile {
    static final String FILE_NAME = "twinlog-lost-replicas.json";
    private static final Logger log = LoggerFactory.getLogger(LostReplicasFile.class);

    /** The file's document: {@code {"version":1,"brokerId":1,"lostReplicas":[...]}} as in the registration. */
    record Document(@JsonProperty("version") int version, @JsonProperty("brokerId") int brokerId,
                    @JsonProperty("lostReplicas") List<BrokerRegistration.TopicReplicas> lostReplicas) {
    }

    private final int brokerId;
    private final Collection<File> logDirs;

    public LostReplicasFile(int brokerId, Collection<File> logDirs) {
        this.brokerId = brokerId;
        this.logDirs = List.copyOf(logDirs);
    }

    /** The entries of every readable copy (an entry in any copy counts). */
    public Map<TopicIdPartition, Integer> read() {
        Map<TopicIdPartition, Integer> out = new HashMap<>();
        for (File dir : logDirs) {
            Path file = dir.toPath().resolve(FILE_NAME);
            if (!Files.exists(file)) {
                continue;
            }
            try {
                Document d = Json.decode(Files.readAllBytes(file), file.toString(), Document.class);
                out.putAll(BrokerRegistration.lostReplicas(d.lostReplicas(), file.toString()));
            } catch (IOException | RuntimeException e) {
                // broad: a file unreadable in any way must not stop the broker starting
                log.error("Could not read {}; the lost replicas it may list are not known from it (those whose log "
                        + "is missing still are)", file, e);
            }
        }
        return out;
    }

    /** Records {@code lost} in every log dir (atomically per dir), or removes the files when it is empty. */
    public void write(LostReplicas lost) throws IOException {
        for (File dir : logDirs) {
            Path file = dir.toPath().resolve(FILE_NAME);
            if (lost.isEmpty()) {
                Files.deleteIfExists(file);
                continue;
            }
            Path tmp = dir.toPath().resolve(FILE_NAME + ".tmp");
            Files.write(tmp, Json.encode(new Document(1, brokerId,
                    BrokerRegistration.lostByTopic(lost.replicas()))));
            Utils.atomicMoveWithFallback(tmp, file);
        }
    }
}
