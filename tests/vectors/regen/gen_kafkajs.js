#!/usr/bin/env node
// KafkaJS (npm kafkajs@2.2.4, pinned in package-lock.json), end to end: a real
// KafkaJS producer with createPartitioner = Partitioners.DefaultPartitioner or
// Partitioners.LegacyPartitioner produces every corpus key (Buffer keys) to
// topics pwjs-n<N> with N partitions on a live broker
// (PARTWISE_KAFKA_BOOTSTRAP or --bootstrap HOST:PORT). Each record is its own
// send(), so the RecordMetadata that send() resolves to names exactly that
// record's partition.
//   -> generated/kafkajs_default_partitioner.jsonl, generated/kafkajs_legacy_partitioner.jsonl
// Checks: ROUNDS rounds, each with a fresh producer, must agree; the broker's
// end offsets must have grown, per partition, by exactly the records the
// RecordMetadata put there; and each result must equal what the same
// partitioner function returns when KafkaJS's producer code is bypassed
// (called with the topic's partition metadata), the path the old harness used.
// The NULL key is round-robin from a random start in KafkaJS: not produced.
'use strict'
process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1'
const fs = require('fs')
const path = require('path')
const { Kafka, Partitioners, logLevel } = require('kafkajs')
const kafkajsVersion = require('kafkajs/package.json').version
if (kafkajsVersion !== '2.2.4') throw new Error('expected kafkajs 2.2.4, got ' + kafkajsVersion)

const PARTITION_COUNTS = [1, 2, 3, 6, 7, 8, 12, 100, 1000]
const ROUNDS = 3
const CONCURRENCY = 64
const generated = path.join(__dirname, '..', 'generated')

function arg (name) {
  const i = process.argv.indexOf(name)
  return i === -1 ? undefined : process.argv[i + 1]
}
const bootstrap = arg('--bootstrap') || process.env.PARTWISE_KAFKA_BOOTSTRAP
if (!bootstrap) {
  console.error('gen_kafkajs.js: no broker: pass --bootstrap HOST:PORT or set PARTWISE_KAFKA_BOOTSTRAP')
  process.exit(2)
}
const brokerVersion = arg('--broker-version') || process.env.PARTWISE_KAFKA_VERSION || 'unknown'
const topicFor = n => `pwjs-n${n}`

const keys = fs.readFileSync(path.join(generated, 'keys.jsonl'), 'utf8')
  .split('\n').filter(l => l.length > 0).map(l => JSON.parse(l))

const kafka = new Kafka({
  clientId: 'partwise-vectors-regen',
  brokers: bootstrap.split(','),
  logLevel: logLevel.NOTHING,
  retry: { retries: 10 },
})

async function ensureTopics (admin) {
  const existing = new Set(await admin.listTopics())
  const missing = PARTITION_COUNTS.filter(n => !existing.has(topicFor(n)))
  if (missing.length > 0) {
    await admin.createTopics({
      waitForLeaders: true,
      timeout: 60000,
      topics: missing.map(n => ({ topic: topicFor(n), numPartitions: n, replicationFactor: 1 })),
    })
  }
  const md = await admin.fetchTopicMetadata({ topics: PARTITION_COUNTS.map(topicFor) })
  for (const t of md.topics) {
    const n = Number(t.name.split('-n')[1])
    if (t.partitions.length !== n) throw new Error(`${t.name} has ${t.partitions.length} partitions, want ${n}`)
  }
}

// A topic just created may not have its leaders everywhere yet: retried.
async function endOffsets (admin) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await endOffsetsOnce(admin)
    } catch (e) {
      if (!e.retriable || attempt >= 60) throw e
      await new Promise(resolve => setTimeout(resolve, 1000))
    }
  }
}

async function endOffsetsOnce (admin) {
  const out = {}
  for (const n of PARTITION_COUNTS) {
    for (const o of await admin.fetchTopicOffsets(topicFor(n))) out[`${topicFor(n)}/${o.partition}`] = BigInt(o.high)
  }
  return out
}

// Produces every (key, n) once with a fresh producer; returns partitions in
// case order and adds each record's topic/partition to `placed`.
async function runRound (factory, label, round, placed) {
  const producer = kafka.producer({ createPartitioner: factory, allowAutoTopicCreation: false })
  await producer.connect()
  const jobs = []
  for (let i = 0; i < keys.length; i++) {
    for (const n of PARTITION_COUNTS) jobs.push({ i, n })
  }
  const result = new Array(jobs.length)
  let next = 0
  async function worker () {
    while (next < jobs.length) {
      const j = next++
      const { i, n } = jobs[j]
      const md = await producer.send({
        topic: topicFor(n),
        acks: -1,
        messages: [{ key: Buffer.from(keys[i].key_hex, 'hex'), value: `${label}:${round}:${i}:${n}` }],
      })
      if (md.length !== 1 || md[0].errorCode !== 0 || md[0].topicName !== topicFor(n)) {
        throw new Error(`unexpected RecordMetadata for ${label} key ${i} n=${n}: ${JSON.stringify(md)}`)
      }
      result[j] = md[0].partition
      const tp = `${topicFor(n)}/${md[0].partition}`
      placed[tp] = (placed[tp] || 0n) + 1n
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  await producer.disconnect()
  return { jobs, result }
}

function metadata (n) {
  const out = []
  for (let i = 0; i < n; i++) out.push({ partitionErrorCode: 0, partitionId: i, leader: 0, replicas: [0], isr: [0] })
  return out
}

async function main () {
  const admin = kafka.admin()
  await admin.connect()
  await ensureTopics(admin)
  const before = await endOffsets(admin)
  const placed = {}
  const files = []
  for (const [name, factory] of [
    ['kafkajs_default_partitioner.jsonl', Partitioners.DefaultPartitioner],
    ['kafkajs_legacy_partitioner.jsonl', Partitioners.LegacyPartitioner],
  ]) {
    const t0 = Date.now()
    let first
    for (let r = 0; r < ROUNDS; r++) {
      const got = await runRound(factory, name, r, placed)
      if (!first) { first = got; continue }
      const bad = got.result.filter((p, j) => p !== first.result[j]).length
      if (bad) throw new Error(`${name}: round ${r} disagrees with round 0 on ${bad} cases`)
    }
    const direct = factory()
    const byCase = new Map()
    first.jobs.forEach(({ i, n }, j) => {
      const p = first.result[j]
      const d = direct({ topic: topicFor(n), partitionMetadata: metadata(n), message: { key: Buffer.from(keys[i].key_hex, 'hex'), value: 'v' } })
      if (d !== p) throw new Error(`${name}: key ${keys[i].key_hex} n=${n}: producer put it in ${p}, the bare partitioner says ${d}`)
      byCase.set(`${i}:${n}`, p)
    })
    const lines = []
    for (let i = 0; i < keys.length; i++) {
      for (const n of PARTITION_COUNTS) {
        lines.push(JSON.stringify({ key_hex: keys[i].key_hex, key: keys[i].key, partitions: n, partition: byCase.get(`${i}:${n}`) }))
      }
    }
    const file = path.join(generated, name)
    fs.writeFileSync(file, lines.join('\n') + '\n')
    console.log(`${name}: ${keys.length} keys x ${PARTITION_COUNTS.length} topics x ${ROUNDS} rounds agree, = bare partitioner (${((Date.now() - t0) / 1000).toFixed(1)}s) -> ${file}`)
    files.push({ file: name, lines: lines.length })
  }
  const after = await endOffsets(admin)
  let records = 0n
  for (const tp of Object.keys(after)) {
    const grew = after[tp] - (before[tp] || 0n)
    const want = placed[tp] || 0n
    records += want
    if (grew !== want) throw new Error(`${tp}: end offset grew by ${grew}, RecordMetadata placed ${want} records there`)
  }
  console.log(`broker end offsets grew by exactly the ${records} records, partition by partition`)
  await admin.disconnect()
  fs.writeFileSync(path.join(generated, 'kafkajs_run.json'), JSON.stringify({
    broker: `Apache Kafka ${brokerVersion} (scripts/kafka-up, KRaft, 1 node, 127.0.0.1)`,
    kafkajs: kafkajsVersion,
    node: process.version,
    date: new Date().toISOString().slice(0, 10),
    rounds: ROUNDS,
    partition_counts: PARTITION_COUNTS,
    records_produced: Number(records),
    files,
  }, null, 1) + '\n')
}

main().catch(e => { console.error('gen_kafkajs.js:', e); process.exit(1) })
