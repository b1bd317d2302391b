'use strict'
// Run from a directory where only `npm install kafkajs partwise-kafkajs-<v>.tgz`
// happened (tests/pack/run does that): two KafkaJS consumers in one group
// with the package's copartitionedAssigner over two topics of 6 partitions
// on the broker at PARTWISE_KAFKA_BOOTSTRAP, records keyed by the package's
// createPartitioner('java'). Passes when the group has settled on both
// members, each holding whole units (partition p of both topics or of
// neither) and together every partition once, and every record produced
// (before and after the second member joined) was handled, those after it
// by the member holding their unit. Exits 1 naming what failed.
const { Kafka, logLevel } = require('kafkajs')
const { copartitionedAssigner, createPartitioner } = require('partwise-kafkajs')

const bootstrap = process.env.PARTWISE_KAFKA_BOOTSTRAP
const P = 6
const tag = `pack-${process.pid}-${Date.now()}`
const topics = [`${tag}-a`, `${tag}-b`]
const sleep = ms => new Promise(r => setTimeout(r, ms))

async function until(what, ok, ms = 40000) {
  const end = Date.now() + ms
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(100)
  }
}

function member(kafka, name, handled) {
  const assigner = copartitionedAssigner()
  const consumer = kafka.consumer({
    groupId: tag,
    partitionAssigners: [assigner],
    sessionTimeout: 10000,
    rebalanceTimeout: 10000,
    heartbeatInterval: 300,
    maxWaitTimeInMs: 100,
  })
  assigner.track(consumer)
  const m = { name, consumer, assigner, parts: null }
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const parts = []
    for (const [t, ps] of Object.entries(payload.memberAssignment || {})) for (const p of ps) parts.push([t, p])
    m.parts = parts
  })
  m.start = async () => {
    await consumer.connect()
    await consumer.subscribe({ topics, fromBeginning: true })
    await consumer.run({
      eachMessage: async ({ topic, partition, message }) => {
        handled.push({ by: name, topic, partition, record: `${message.key}/${message.value}` })
      },
    })
  }
  return m
}

// Whole units: for every partition index, both topics or neither.
function whole(parts) {
  const has = new Set(parts.map(([t, p]) => `${t}:${p}`))
  for (let p = 0; p < P; p++) if (has.has(`${topics[0]}:${p}`) !== has.has(`${topics[1]}:${p}`)) return false
  return true
}

async function main() {
  if (!bootstrap) throw new Error('PARTWISE_KAFKA_BOOTSTRAP is not set')
  const kafka = new Kafka({ clientId: tag, brokers: [bootstrap], logLevel: logLevel.NOTHING })
  const admin = kafka.admin()
  await admin.connect()
  // KafkaJS's own wait for leaders gives up on UNKNOWN_TOPIC_OR_PARTITION,
  // which a broker answers until the new topics reach it: wait here instead.
  await admin.createTopics({ waitForLeaders: false, topics: topics.map(topic => ({ topic, numPartitions: P })) })
  for (const end = Date.now() + 30000; ;) {
    try {
      const { topics: got } = await admin.fetchTopicMetadata({ topics })
      if (got.every(t => t.partitions.length === P && t.partitions.every(p => p.leader >= 0))) break
    } catch (e) {
      if (Date.now() > end) throw e
    }
    if (Date.now() > end) throw new Error(`topics ${topics.join(', ')} have no leaders after 30 s`)
    await new Promise(resolve => setTimeout(resolve, 300))
  }
  const producer = kafka.producer({ createPartitioner: createPartitioner('java') })
  await producer.connect()
  let sent = 0
  const produce = async round => {
    for (const topic of topics) {
      const messages = Array.from({ length: 30 }, (_, i) => ({ key: `key-${i}`, value: `${round}` }))
      await producer.send({ topic, messages })
      sent += messages.length
    }
  }
  const handled = []
  const a = member(kafka, 'a', handled)
  const b = member(kafka, 'b', handled)
  try {
    await a.start()
    await produce(0)
    await until('the first member to be assigned', () => a.parts && a.parts.length === 2 * P)
    await b.start()
    const split = () =>
      a.parts && b.parts && a.parts.length > 0 && b.parts.length > 0 && a.parts.length + b.parts.length === 2 * P
    await until('both members to be assigned', split)
    for (const m of [a, b]) if (!whole(m.parts)) throw new Error(`member ${m.name} holds a split unit: ${JSON.stringify(m.parts)}`)
    const all = new Set([...a.parts, ...b.parts].map(([t, p]) => `${t}:${p}`))
    if (all.size !== 2 * P) throw new Error(`the members hold ${all.size} of ${2 * P} partitions`)
    const holder = new Map()
    for (const m of [a, b]) for (const [, p] of m.parts) holder.set(p, m.name)
    const before = handled.length
    await produce(1)
    const distinct = () => new Set(handled.map(h => `${h.topic}/${h.record}`)).size
    await until(`all ${sent} records to be handled`, () => distinct() === sent)
    for (const h of handled.slice(before)) {
      if (h.by !== holder.get(h.partition)) throw new Error(`${h.topic}:${h.partition} handled by ${h.by}, its unit is ${holder.get(h.partition)}'s`)
    }
    console.log(`pack test: 2 members hold ${a.parts.length / 2} and ${b.parts.length / 2} whole units; ${handled.length} records handled of ${sent} sent`)
  } finally {
    await Promise.allSettled([a.consumer.disconnect(), b.consumer.disconnect(), producer.disconnect()])
    await admin.deleteTopics({ topics }).catch(() => {})
    await admin.disconnect()
  }
}

main().then(
  () => process.exit(0),
  e => {
    console.error(`pack test: ${e.message}`)
    process.exit(1)
  }
)
