#!/usr/bin/python3
"""confluent-kafka-python (librdkafka) scenarios, run by NonJavaClientsTest against Twinlog and Apache Kafka.

Usage: clients.py BOOTSTRAP SCENARIO TOPIC [ARGS...]. Prints one line starting with OK on success; any failed check
raises (exit code 1 with the reason on stderr). Every wait has a deadline.
"""
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition, OFFSET_BEGINNING, OFFSET_END, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic, ConfigResource

DEADLINE_S = 60


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def produce(bootstrap, topic, count, partition=0, extra=None, prefix="v", timestamp_base=None):
    config = {"bootstrap.servers": bootstrap, "linger.ms": 20, "acks": "all"}
    config.update(extra or {})
    producer = Producer(config)
    offsets = []
    errors = []

    def on_delivery(err, msg):
        if err is not None:
            errors.append(str(err))
        else:
            offsets.append(msg.offset())

    for i in range(count):
        kwargs = {"key": "k%d" % i, "value": "%s%d" % (prefix, i), "partition": partition, "on_delivery": on_delivery}
        if timestamp_base is not None:
            kwargs["timestamp"] = timestamp_base + i * 1000
        while True:
            try:
                producer.produce(topic, **kwargs)
                break
            except BufferError:
                producer.poll(0.1)
    check(producer.flush(DEADLINE_S) == 0, "records still unsent after %d s" % DEADLINE_S)
    check(not errors, "delivery errors: %s" % errors[:3])
    return sorted(offsets)


def read(bootstrap, topic, partition, start, count):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused-" + topic, "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, partition, start)])
    records = []
    deadline = time.time() + DEADLINE_S
    while len(records) < count and time.time() < deadline:
        for msg in consumer.consume(1000, 1.0):
            check(msg.error() is None, "consume error %s" % msg.error())
            records.append(msg)
    consumer.close()
    check(len(records) >= count, "read %d of %d records from %s-%d" % (len(records), count, topic, partition))
    return records


def admin(bootstrap, topic):
    client = AdminClient({"bootstrap.servers": bootstrap})
    futures = client.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1,
                                             config={"retention.ms": "3600000"})])
    futures[topic].result(DEADLINE_S)
    deadline = time.time() + DEADLINE_S
    while time.time() < deadline:
        metadata = client.list_topics(topic, timeout=10)
        t = metadata.topics[topic]
        if t.error is None and len(t.partitions) == 3 and all(p.leader >= 0 for p in t.partitions.values()):
            break
        time.sleep(0.1)
    check(len(metadata.brokers) >= 1, "no brokers in metadata")
    check(sorted(t.partitions) == [0, 1, 2], "partitions %s" % sorted(t.partitions))
    resource = ConfigResource("topic", topic)
    configs = client.describe_configs([resource])[resource].result(DEADLINE_S)
    check(configs["retention.ms"].value == "3600000", "retention.ms %s" % configs["retention.ms"].value)
    check("cleanup.policy" in configs, "cleanup.policy missing")
    broker = ConfigResource("broker", str(list(metadata.brokers)[0]))
    broker_configs = client.describe_configs([broker])[broker].result(DEADLINE_S)
    check(len(broker_configs) > 300, "broker configs: %d" % len(broker_configs))
    groups = client.list_groups(timeout=10)
    print("OK admin brokers=%d broker_configs=%d groups=%d" % (len(metadata.brokers), len(broker_configs),
                                                               len(groups)))


def roundtrip(bootstrap, topic, codec, count):
    offsets = produce(bootstrap, topic, count, extra={"compression.type": codec})
    check(offsets == list(range(count)), "offsets not 0..%d: %s..." % (count - 1, offsets[:5]))
    records = read(bootstrap, topic, 0, OFFSET_BEGINNING, count)
    for i, msg in enumerate(records[:count]):
        check(msg.offset() == i and msg.key() == b"k%d" % i and msg.value() == b"v%d" % i,
              "record %d: offset %d key %s value %s" % (i, msg.offset(), msg.key(), msg.value()))
    print("OK roundtrip %s %d" % (codec, count))


def positions(bootstrap, topic):
    base = int(time.time() * 1000) - 3600_000
    produce(bootstrap, topic, 100, timestamp_base=base)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "positions-" + topic, "enable.auto.commit": False})
    low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10, cached=False)
    check((low, high) == (0, 100), "watermarks %s" % ((low, high),))
    found = consumer.offsets_for_times([TopicPartition(topic, 0, base + 50_000)], timeout=10)
    check(found[0].offset == 50, "offset for timestamp %d" % found[0].offset)
    consumer.close()
    check(read(bootstrap, topic, 0, OFFSET_BEGINNING, 1)[0].offset() == 0, "from beginning")
    check(read(bootstrap, topic, 0, 50, 1)[0].value() == b"v50", "from the timestamp's offset")
    # from the end: nothing of the first 100 records; librdkafka shows no position before the first record, so
    # markers are produced until one arrives, and the first record read must be one of them
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "end-" + topic, "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, OFFSET_END)])
    deadline = time.time() + DEADLINE_S
    msgs = []
    markers = 0
    while not msgs and time.time() < deadline:
        produce(bootstrap, topic, 1, prefix="after-end-%d-" % markers)
        markers += 1
        msgs = [m for m in consumer.consume(10, 0.5) if m.error() is None]
    consumer.close()
    check(msgs and msgs[0].offset() >= 100 and msgs[0].value().startswith(b"after-end-"),
          "from the end: %s" % [(m.offset(), m.value()) for m in msgs[:3]])
    print("OK positions")


def idempotent(bootstrap, topic, count):
    offsets = produce(bootstrap, topic, count, extra={"enable.idempotence": True, "compression.type": "lz4"})
    check(offsets == list(range(count)), "idempotent offsets not contiguous")
    records = read(bootstrap, topic, 0, OFFSET_BEGINNING, count)
    check([m.value() for m in records[:count]] == [b"v%d" % i for i in range(count)], "idempotent records differ")
    print("OK idempotent %d" % count)


def read_all(bootstrap, topic, isolation, at_least):
    """Every record of partition 0 from the start under an isolation level: until at_least arrived, then 1 s more."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused-%s-%s" % (topic, isolation),
                         "enable.auto.commit": False, "isolation.level": isolation})
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    values = []
    deadline = time.time() + DEADLINE_S
    while len(values) < at_least and time.time() < deadline:
        values += [m.value().decode() for m in consumer.consume(1000, 0.5) if m.error() is None]
    values += [m.value().decode() for m in consumer.consume(1000, 1.0) if m.error() is None]
    consumer.close()
    return values


def transactions(bootstrap, topic, count):
    """A committed, an aborted and a committed transaction: read_committed sees the committed ones only."""
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": "py-" + topic, "linger.ms": 5})
    producer.init_transactions(DEADLINE_S)
    for prefix, commit in (("c", True), ("a", False), ("last", True)):
        producer.begin_transaction()
        for i in range(count if prefix != "last" else 1):
            producer.produce(topic, value="%s%d" % (prefix, i), partition=0)
        check(producer.flush(DEADLINE_S) == 0, "records still unsent after %d s" % DEADLINE_S)
        if commit:
            producer.commit_transaction(DEADLINE_S)
        else:
            producer.abort_transaction(DEADLINE_S)
    committed = read_all(bootstrap, topic, "read_committed", count + 1)
    check(committed == ["c%d" % i for i in range(count)] + ["last0"],
          "read_committed saw %d records, first %s" % (len(committed), committed[:3]))
    uncommitted = read_all(bootstrap, topic, "read_uncommitted", 2 * count + 1)
    check(len(uncommitted) == 2 * count + 1, "read_uncommitted saw %d records" % len(uncommitted))
    print("OK transactions %d" % count)


def group_consumer(bootstrap, group, assignor):
    return Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                     "auto.offset.reset": "earliest", "partition.assignment.strategy": assignor,
                     "session.timeout.ms": 30000, "heartbeat.interval.ms": 500})


def group(bootstrap, topic, group_id, assignor):
    """Two members share 4 partitions, commit, close cleanly; a new member resumes exactly after the commits."""
    client = AdminClient({"bootstrap.servers": bootstrap})
    client.create_topics([NewTopic(topic, num_partitions=4, replication_factor=1)])[topic].result(DEADLINE_S)
    members = [group_consumer(bootstrap, group_id, assignor) for _ in range(2)]
    for m in members:
        m.subscribe([topic])
    deadline = time.time() + DEADLINE_S
    # both members in, every partition assigned, before there is anything to read: a member that commits while the
    # second one joins gets ILLEGAL_GENERATION (and, cooperative, a partition may move to the other member after
    # records were read from it but not committed), which is the client's normal behaviour, not what is tested
    while time.time() < deadline:
        for m in members:
            check(not m.consume(10, 0.2), "records before any was produced")
        assigned = [sorted(p.partition for p in m.assignment()) for m in members]
        if assigned[0] and assigned[1] and sorted(assigned[0] + assigned[1]) == [0, 1, 2, 3]:
            break
    for p in range(4):
        produce(bootstrap, topic, 100, partition=p, prefix="p%d-" % p)
    seen = {}
    by_member = [set(), set()]
    while len(seen) < 400 and time.time() < deadline:
        for index, m in enumerate(members):
            for msg in m.consume(100, 0.2):
                check(msg.error() is None, "consume error %s" % msg.error())
                key = (msg.partition(), msg.offset())
                check(key not in seen, "record %s delivered twice" % (key,))
                seen[key] = msg.value()
                by_member[index].add(msg.partition())
                m.commit(message=msg, asynchronous=False)
    check(len(seen) == 400, "group consumed %d of 400" % len(seen))
    check(not (by_member[0] & by_member[1]) or assignor == "cooperative-sticky",
          "both members read partitions %s" % (by_member[0] & by_member[1]))
    both = [sorted(p.partition for p in m.assignment()) for m in members]
    check(sorted(both[0] + both[1]) == [0, 1, 2, 3] and both[0] and both[1], "assignment %s" % both)
    for m in members:
        m.close()
    for p in range(4):
        produce(bootstrap, topic, 10, partition=p, prefix="later-p%d-" % p)
    started = time.time()
    resumed = group_consumer(bootstrap, group_id, assignor)
    resumed.subscribe([topic])
    later = []
    while len(later) < 40 and time.time() < deadline + DEADLINE_S:
        later.extend(m for m in resumed.consume(100, 0.2) if m.error() is None)
    join_s = time.time() - started
    resumed.close()
    check(len(later) == 40, "resumed member read %d of 40" % len(later))
    check(sorted((m.partition(), m.offset()) for m in later) == [(p, 100 + i) for p in range(4) for i in range(10)],
          "did not resume exactly after the commits")
    # the departed members left the group: the join did not wait out their 30 s session timeout
    check(join_s < 15, "the next member waited %.1f s" % join_s)
    print("OK group %s members=%s rejoin_s=%.1f" % (assignor, both, join_s))


def main():
    bootstrap, scenario, topic = sys.argv[1:4]
    args = sys.argv[4:]
    if scenario == "admin":
        admin(bootstrap, topic)
    elif scenario == "roundtrip":
        roundtrip(bootstrap, topic, args[0], int(args[1]))
    elif scenario == "positions":
        positions(bootstrap, topic)
    elif scenario == "idempotent":
        idempotent(bootstrap, topic, int(args[0]))
    elif scenario == "group":
        group(bootstrap, topic, args[0], args[1])
    elif scenario == "transactions":
        transactions(bootstrap, topic, int(args[0]))
    else:
        raise SystemExit("unknown scenario " + scenario)


if __name__ == "__main__":
    main()
