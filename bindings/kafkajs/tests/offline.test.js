'use strict'
// Offline checks of the KafkaJS binding: the seed's counter-example with
// KafkaJS's own round-robin assigner, the partitioners against vectors
// recorded from the real clients (tests/vectors/generated), and bad input.
const test = require('node:test')
const assert = require('node:assert')
const fs = require('fs')
const path = require('path')
const { AssignerProtocol, PartitionAssigners } = require('kafkajs')
const { CopartitionedAssigner, createPartitioner, decodeAssignment, encodeSubscription } = require('..')
const { fakeCluster, decodeWithKafkajs } = require('./fake')

const TOPICS = { 'market-updates': 6, notifications: 6 }
const vectorsDir = path.join(__dirname, '..', '..', '..', 'tests', 'vectors', 'generated')

// Partition indices whose partitions of the two topics are owned by
// different members.
function splitIndices(byMember) {
  const owner = {}
  for (const [m, { partitions }] of Object.entries(byMember)) {
    for (const [t, p] of partitions) (owner[p] = owner[p] || {})[t] = m
  }
  return Object.keys(owner)
    .map(Number)
    .filter(p => owner[p]['market-updates'] !== owner[p].notifications)
}

async function run(factory, metadata) {
  const assigner = factory({ cluster: fakeCluster(TOPICS) })
  const members = [0, 1, 2, 3].map(i => ({
    memberId: `consumer-${i}`,
    memberMetadata: metadata(assigner, i),
  }))
  return decodeWithKafkajs(await assigner.assign({ members, topics: Object.keys(TOPICS) }))
}

test("the seed's counter-example: KafkaJS round-robin with 4 members splits units, copartitioned does not", async () => {
  const rr = await run(PartitionAssigners.roundRobin, a => a.protocol({ topics: Object.keys(TOPICS) }).metadata)
  assert.ok(splitIndices(rr).length > 0, 'round-robin kept every unit whole')
  const cp = await run(CopartitionedAssigner, a => a.protocol({ topics: Object.keys(TOPICS) }).metadata)
  assert.deepStrictEqual(splitIndices(cp), [])
  const owned = Object.values(cp).flatMap(x => x.partitions.map(([t, p]) => `${t}/${p}`))
  assert.strictEqual(owned.length, 12)
  assert.strictEqual(new Set(owned).size, 12)
})

test('a member sends its owned partitions once it has tracked an assignment', () => {
  const { copartitionedAssigner } = require('..')
  const factory = copartitionedAssigner()
  const handlers = {}
  const consumer = { events: { GROUP_JOIN: 'join' }, on: (e, f) => (handlers[e] = f) }
  factory.track(consumer)
  handlers.join({ payload: { memberAssignment: { a: [0, 2], b: [0] } } })
  const meta = factory({ cluster: fakeCluster({ a: 4, b: 4 }) }).protocol({ topics: ['a', 'b'] }).metadata
  const { decodeSubscription } = require('..')
  const s = decodeSubscription(meta)
  assert.deepStrictEqual(s.topics, ['a', 'b'])
  assert.deepStrictEqual(s.owned, [['a', 0], ['a', 2], ['b', 0]])
  assert.strictEqual(meta.readInt16BE(0), 3)
})

test('an assignment from KafkaJS v0 bytes and foreign user data decodes without unit groups', () => {
  const bytes = AssignerProtocol.MemberAssignment.encode({ version: 0, assignment: { a: [1, 0] }, userData: Buffer.from('other') })
  assert.deepStrictEqual(decodeAssignment(bytes), { partitions: [['a', 0], ['a', 1]] })
})

function meta(n) {
  return Array.from({ length: n }, (_, p) => ({ partitionId: p, leader: 0 }))
}

for (const [spec, file] of [
  ['java', 'java_kafka_clients_partitioner.jsonl'],
  ['kafkajs', 'kafkajs_default_partitioner.jsonl'],
  ['kafkajs:legacy', 'kafkajs_legacy_partitioner.jsonl'],
  ['librdkafka:consistent_random', 'librdkafka_consistent_random.jsonl'],
  ['librdkafka:fnv1a', 'librdkafka_fnv1a.jsonl'],
  ['sarama', 'sarama_hash_partitioner.jsonl'],
]) {
  test(`createPartitioner('${spec}') matches ${file}`, () => {
    const lines = fs.readFileSync(path.join(vectorsDir, file), 'utf8').split('\n').filter(Boolean).map(l => JSON.parse(l))
    const keyed = lines.filter(l => l.key_hex !== null)
    assert.ok(keyed.length > 100)
    const partition = createPartitioner(spec)()
    for (const l of keyed) {
      const got = partition({ topic: 't', partitionMetadata: meta(l.partitions), message: { key: Buffer.from(l.key_hex, 'hex') } })
      assert.strictEqual(got, l.partition, `key ${l.key_hex} over ${l.partitions}`)
    }
  })
}

test("createPartitioner('java') agrees with KafkaJS's DefaultPartitioner on string keys", () => {
  const { Partitioners } = require('kafkajs')
  const ours = createPartitioner('java')()
  const theirs = Partitioners.DefaultPartitioner()
  for (let i = 0; i < 500; i++) {
    const message = { key: `user-${i}` }
    assert.strictEqual(ours({ topic: 't', partitionMetadata: meta(12), message }), theirs({ topic: 't', partitionMetadata: meta(12), message }))
  }
})

test('key-less records under round-robin go around the available partitions', () => {
  const partition = createPartitioner('java:round-robin')()
  const pm = meta(3)
  const got = Array.from({ length: 6 }, () => partition({ topic: 't', partitionMetadata: pm, message: { key: null } }))
  assert.deepStrictEqual(got, [0, 1, 2, 0, 1, 2])
})

test('a bad partitioner spec is an error naming it', () => {
  assert.throws(() => createPartitioner('no-such-client'), /partitioner 'no-such-client'/)
})

test('subscription bytes round-trip owned partitions', () => {
  const { decodeSubscription } = require('..')
  const s = decodeSubscription(encodeSubscription(['b', 'a'], [['b', 3], ['a', 1]], 7))
  assert.deepStrictEqual(s, { topics: ['b', 'a'], owned: [['a', 1], ['b', 3]], generation: 7 })
})
