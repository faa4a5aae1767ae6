// kafkajs scenarios, run by NonJavaClientsTest against Twinlog and Apache Kafka.
// Usage: node clients.js BOOTSTRAP SCENARIO TOPIC [ARGS...]. Prints one line starting with OK on success; a failed
// check throws (exit code 1, the reason on stderr). Every wait has a deadline.
'use strict';
const { Kafka, CompressionTypes, CompressionCodecs, logLevel } = require('kafkajs');
const SnappyCodec = require('kafkajs-snappy');
const lz4 = require('lz4js');
const xxh32 = require('lz4js/xxh32.js');

// kafkajs ships gzip only. snappy from kafkajs-snappy; lz4 with the pure-JS lz4js (LZ4 frame format, as Kafka
// uses), because kafkajs-lz4 needs a native build. Kafka accepts only frames flagged block-independent; lz4js
// leaves the flag unset although its one 4 MB block (larger than any batch here) depends on nothing, so the flag is
// set and the frame header's checksum byte recomputed (xxh32 of the two descriptor bytes, second byte of the hash).
function kafkaLz4Frame(frame) {
  const out = Buffer.from(frame);
  out[4] |= 0x20;
  out[6] = (xxh32.hash(0, out, 4, 2) >> 8) & 0xff;
  return out;
}
CompressionCodecs[CompressionTypes.Snappy] = SnappyCodec;
CompressionCodecs[CompressionTypes.LZ4] = () => ({
  async compress(encoder) { return kafkaLz4Frame(lz4.compress(encoder.buffer)); },
  async decompress(buffer) { return Buffer.from(lz4.decompress(buffer)); },
});
const CODECS = { none: CompressionTypes.None, gzip: CompressionTypes.GZIP, snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4 };
const DEADLINE_MS = 60000;

function check(condition, message) {
  if (!condition) throw new Error(message);
}

function client(bootstrap) {
  return new Kafka({ clientId: 'twinlog-tests', brokers: bootstrap.split(','), logLevel: logLevel.ERROR,
    retry: { retries: 8 } });
}

async function until(condition, what) {
  const deadline = Date.now() + DEADLINE_MS;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function produce(kafka, topic, count, { codec = 'none', idempotent = false, prefix = 'v', partition = 0 } = {}) {
  const producer = kafka.producer({ idempotent, maxInFlightRequests: idempotent ? 1 : undefined });
  await producer.connect();
  const offsets = [];
  const chunk = 500;
  for (let start = 0; start < count; start += chunk) {
    const messages = [];
    for (let i = start; i < Math.min(count, start + chunk); i++) {
      messages.push({ key: `k${i}`, value: `${prefix}${i}`, partition });
    }
    const result = await producer.send({ topic, messages, acks: -1, compression: CODECS[codec] });
    result.forEach((r) => offsets.push(Number(r.baseOffset)));
  }
  await producer.disconnect();
  return offsets;
}

async function read(kafka, topic, count, { fromBeginning = true, groupId } = {}) {
  const consumer = kafka.consumer({ groupId: groupId || `read-${topic}-${Date.now()}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning });
  const records = [];
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`read ${records.length} of ${count} from ${topic}`)), DEADLINE_MS);
    consumer.run({ eachMessage: async ({ partition, message }) => {
      records.push({ partition, offset: Number(message.offset), key: message.key.toString(),
        value: message.value.toString() });
      if (records.length >= count) { clearTimeout(timer); resolve(); }
    } }).catch(reject);
  });
  await consumer.disconnect();
  return records;
}

async function admin(kafka, topic) {
  const a = kafka.admin();
  await a.connect();
  check(await a.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 1,
    configEntries: [{ name: 'retention.ms', value: '3600000' }] }], waitForLeaders: true }), 'topic not created');
  const metadata = await a.fetchTopicMetadata({ topics: [topic] });
  check(metadata.topics[0].partitions.length === 3, 'partitions');
  const cluster = await a.describeCluster();
  check(cluster.brokers.length >= 1, 'brokers');
  const configs = await a.describeConfigs({ includeSynonyms: false,
    resources: [{ type: 2, name: topic }, { type: 4, name: String(cluster.brokers[0].nodeId) }] });
  const topicEntries = configs.resources[0].configEntries;
  check(topicEntries.find((e) => e.configName === 'retention.ms').configValue === '3600000', 'retention.ms');
  check(configs.resources[1].configEntries.length > 300, `broker configs ${configs.resources[1].configEntries.length}`);
  const topics = await a.listTopics();
  check(topics.includes(topic), 'listTopics');
  const groups = await a.listGroups();
  await a.deleteTopics({ topics: [topic] });
  await a.disconnect();
  console.log(`OK admin brokers=${cluster.brokers.length} groups=${groups.groups.length}`);
}

async function roundtrip(kafka, topic, codec, count) {
  await produce(kafka, topic, count, { codec });
  const records = await read(kafka, topic, count);
  records.sort((x, y) => x.offset - y.offset);
  for (let i = 0; i < count; i++) {
    const r = records[i];
    check(r.offset === i && r.key === `k${i}` && r.value === `v${i}`, `record ${i}: ${JSON.stringify(r)}`);
  }
  console.log(`OK roundtrip ${codec} ${count}`);
}

async function positions(kafka, topic) {
  await produce(kafka, topic, 100);
  const a = kafka.admin();
  await a.connect();
  const offsets = await a.fetchTopicOffsets(topic);
  check(offsets[0].low === '0' && offsets[0].high === '100', `watermarks ${JSON.stringify(offsets)}`);
  const byTime = await a.fetchTopicOffsetsByTimestamp(topic, Date.now() + 3600000);
  check(byTime[0].offset === '100', `offset after the last timestamp ${JSON.stringify(byTime)}`);
  const first = await a.fetchTopicOffsetsByTimestamp(topic, 0);
  check(first[0].offset === '0', `offset for timestamp 0 ${JSON.stringify(first)}`);
  await a.disconnect();
  const beginning = await read(kafka, topic, 1, { fromBeginning: true });
  check(beginning[0].offset === 0, 'from beginning');
  // from the end (no committed offset, fromBeginning false): only what is produced after the group started
  const consumer = kafka.consumer({ groupId: `end-${topic}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: false });
  const seen = [];
  let producedAfterJoin = false;
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`from the end: ${JSON.stringify(seen)}`)), DEADLINE_MS);
    consumer.on(consumer.events.GROUP_JOIN, () => {
      // the position is taken at the first fetch after the join; produce once that fetch has happened
      setTimeout(() => { produce(kafka, topic, 1, { prefix: 'after-end-' }).then(() => { producedAfterJoin = true; },
        reject); }, 1000);
    });
    consumer.run({ eachMessage: async ({ message }) => {
      seen.push({ offset: Number(message.offset), value: message.value.toString() });
      clearTimeout(timer);
      resolve();
    } }).catch(reject);
  });
  await consumer.disconnect();
  check(producedAfterJoin || seen.length > 0, 'nothing produced');
  check(seen[0].offset === 100 && seen[0].value === 'after-end-0', `from the end: ${JSON.stringify(seen)}`);
  console.log('OK positions');
}

async function idempotent(kafka, topic, count) {
  const offsets = await produce(kafka, topic, count, { idempotent: true, codec: 'gzip' });
  check(offsets[0] === 0, 'idempotent base offset');
  const records = await read(kafka, topic, count);
  records.sort((x, y) => x.offset - y.offset);
  check(records.every((r, i) => r.offset === i && r.value === `v${i}`), 'idempotent records differ');
  console.log(`OK idempotent ${count}`);
}

// A committed, an aborted and a committed transaction: a read_committed consumer sees the committed ones only.
async function transactions(kafka, topic, count) {
  const producer = kafka.producer({ transactionalId: `js-${topic}`, idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  for (const [prefix, commit, n] of [['c', true, count], ['a', false, count], ['last', true, 1]]) {
    const txn = await producer.transaction();
    const messages = [];
    for (let i = 0; i < n; i++) messages.push({ key: `k${i}`, value: `${prefix}${i}`, partition: 0 });
    await txn.send({ topic, messages });
    if (commit) await txn.commit(); else await txn.abort();
  }
  await producer.disconnect();
  const records = await read(kafka, topic, count + 1);
  records.sort((x, y) => x.offset - y.offset);
  const values = records.map((r) => r.value);
  check(values.length === count + 1 && values.every((v, i) => v === (i < count ? `c${i}` : 'last0')),
    `read_committed saw ${values.length} records, first ${values.slice(0, 3)}`);
  console.log(`OK transactions ${count}`);
}

async function group(kafka, topic, groupId) {
  const a = kafka.admin();
  await a.connect();
  await a.createTopics({ topics: [{ topic, numPartitions: 4, replicationFactor: 1 }], waitForLeaders: true });
  for (let p = 0; p < 4; p++) await produce(kafka, topic, 100, { partition: p, prefix: `p${p}-` });
  const seen = new Map();
  const byMember = [new Set(), new Set()];
  // A member that crashes must stay down (kafkajs restarts a crashed consumer by default): a stray restarted member
  // would hold half the partitions of the next phase.
  const members = [0, 1].map(() => kafka.consumer({ groupId, sessionTimeout: 30000, heartbeatInterval: 500,
    retry: { retries: 8, restartOnFailure: async () => false } }));
  const joins = [0, 0];
  members.forEach((member, index) => member.on(member.events.GROUP_JOIN, () => { joins[index] += 1; }));
  await new Promise(async (resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`group consumed ${seen.size} of 400`)), DEADLINE_MS);
    try {
      for (const [index, member] of members.entries()) {
        await member.connect();
        await member.subscribe({ topic, fromBeginning: true });
        await member.run({ autoCommit: false, eachMessage: async ({ partition, message }) => {
          const key = `${partition}/${message.offset}`;
          if (seen.has(key)) { reject(new Error(`record ${key} delivered twice`)); return; }
          seen.set(key, message.value.toString());
          byMember[index].add(partition);
          await member.commitOffsets([{ topic, partition, offset: String(Number(message.offset) + 1) }]);
          if (seen.size === 400) { clearTimeout(timer); resolve(); }
        } });
      }
    } catch (e) { reject(e); }
  });
  // Leave one at a time, each when no rebalance is under way: kafkajs crashes a member whose disconnect() races the
  // rebalance its peer's LeaveGroup started (its metadata or sockets already dropped), and a crashed member never
  // sends its own LeaveGroup, so the next member would wait out the session timeout.
  const joinsBefore = joins[1];
  await members[0].disconnect();
  await until(() => joins[1] > joinsBefore, 'the remaining member rejoined after its peer left');
  await members[1].disconnect();
  for (let p = 0; p < 4; p++) await produce(kafka, topic, 10, { partition: p, prefix: `later-p${p}-` });
  const started = Date.now();
  const later = await read(kafka, topic, 40, { fromBeginning: true, groupId });
  const joinSeconds = (Date.now() - started) / 1000;
  const got = later.map((r) => `${r.partition}/${r.offset}`).sort();
  const expected = [];
  for (let p = 0; p < 4; p++) for (let i = 0; i < 10; i++) expected.push(`${p}/${100 + i}`);
  check(JSON.stringify(got) === JSON.stringify(expected.sort()), `did not resume exactly: ${got.slice(0, 5)}...`);
  check(joinSeconds < 15, `the next member waited ${joinSeconds} s`);
  const description = await a.describeGroups([groupId]);
  await a.disconnect();
  console.log(`OK group members=${[...byMember[0]]}|${[...byMember[1]]} rejoin_s=${joinSeconds} `
    + `protocol=${description.groups[0].protocol}`);
}

async function main() {
  const [bootstrap, scenario, topic, ...args] = process.argv.slice(2);
  const kafka = client(bootstrap);
  if (scenario === 'admin') await admin(kafka, topic);
  else if (scenario === 'roundtrip') await roundtrip(kafka, topic, args[0], Number(args[1]));
  else if (scenario === 'positions') await positions(kafka, topic);
  else if (scenario === 'idempotent') await idempotent(kafka, topic, Number(args[0]));
  else if (scenario === 'group') await group(kafka, topic, args[0]);
  else if (scenario === 'transactions') await transactions(kafka, topic, Number(args[0]));
  else throw new Error(`unknown scenario ${scenario}`);
}

main().then(() => process.exit(0), (e) => { console.error(e.stack || e); process.exit(1); });
