package io.twinlog.campaign;

import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(10)
class LogDirsTest {
    @TempDir
    File dir;

    @Test
    void thePartitionsOfALogDirAreItsTopicPartitionDirectories() throws IOException {
        for (String name : List.of("campaign-0", "__consumer_offsets-12", "campaign-1.4b0c6a4e8e6b4d1a-delete",
                "campaign-2-stray")) {
            Files.createDirectories(new File(dir, name).toPath());
        }
        Files.writeString(new File(dir, "meta.properties").toPath(), "version=0\n");
        assertEquals(List.of(new TopicPartition("__consumer_offsets", 12), new TopicPartition("campaign", 0)),
                LogDirs.partitionsIn(dir));
    }

    @Test
    void aReplicaIsReadFromWhicheverLogDirHoldsItAndTwoAreReported() throws IOException {
        File first = new File(dir, "logs");
        File second = new File(dir, "small-disk/logs");
        TopicPartition tp = new TopicPartition("campaign", 0);
        Files.createDirectories(new File(second, "campaign-0").toPath());
        assertEquals(Optional.of(List.of()), ReplicaFiles.read(List.of(first, second), tp));
        assertEquals(Optional.empty(), ReplicaFiles.read(List.of(first, second), new TopicPartition("campaign", 1)));
        Files.createDirectories(new File(first, "campaign-0").toPath());
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> ReplicaFiles.read(List.of(first, second), tp));
        assertTrue(e.getMessage().startsWith("campaign-0 has a replica in more than one log dir of the broker"),
                e.getMessage());
    }
}
