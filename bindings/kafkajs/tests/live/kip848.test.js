'use strict'
// Live: the consumer protocol (KIP-848) with partwise's broker-side
// assignor, for clients that have no client-side assignor of their own or
// prefer the broker's: confluent-kafka Python (librdkafka 2.16,
// group.protocol=consumer, group.remote.assignor=copartitioned) and
// @platformatic/kafka (groupProtocol 'consumer', groupRemoteAssignor
// 'copartitioned'), on brokers with dev.partwise.BrokerCopartitionedAssignor
// in group.consumer.assignors (scripts/services deploys it). Members join and
// leave; once each membership settles (from what the members themselves
// report: the classic DescribeGroups says nothing of a consumer group's
// assignment), every partition is held once, every member holds whole
// units, and on a leave the members that stay keep what they had; every
// record produced during the churn is handled. Needs
// PARTWISE_KAFKA_BOOTSTRAP (with the plug-in), PARTWISE_PYTHON (with
// confluent-kafka) and, on Node older than 22, PARTWISE_NODE22.
const test = require('node:test')
const assert = require('node:assert')
const { Kafka, logLevel } = require('kafkajs')
const { bootstrap, N, Member, unitsWhole, setup } = require('./helpers')

const skip = !bootstrap ? 'PARTWISE_KAFKA_BOOTSTRAP not set' : !process.env.PARTWISE_PYTHON && 'PARTWISE_PYTHON not set'
const sleep = ms => new Promise(r => setTimeout(r, ms))

test('confluent-kafka Python and @platformatic/kafka members on the consumer protocol keep units whole with the broker copartitioned assignor', { skip, timeout: 600000 }, async () => {
  const kafka = new Kafka({ clientId: 'live-kip848', brokers: [bootstrap], logLevel: logLevel.NOTHING })
  const s = await setup(kafka, 'kjs-kip848')
  const members = []
  const join = kind => {
    const m = new Member(s.group, `${kind}-${members.length}`, s.topics, kind, kind === 'platformatic-kip848' ? { PARTWISE_GROUP_PROTOCOL: 'consumer' } : {})
    members.push(m)
    return m
  }
  const alive = () => members.filter(m => m.alive())
  const latest = m => {
    const a = m.assignments()
    return a.length ? a[a.length - 1] : null
  }
  // Settled: every alive member reported, together every partition once,
  // and stays so for 2 s. Returns clientId -> sorted "topic/p".
  const settle = async () => {
    await s.produce(6)
    const end = Date.now() + 120000
    let last = ''
    let since = 0
    while (Date.now() < end) {
      const owners = {}
      let ok = true
      for (const m of alive()) {
        const a = latest(m)
        if (!a) ok = false
        else owners[m.clientId] = a.map(([t, p]) => `${t}/${p}`).sort()
      }
      const all = Object.values(owners).flat()
      ok = ok && all.length === s.topics.length * N && new Set(all).size === all.length
      const key = JSON.stringify(owners)
      if (ok && key === last) {
        if (Date.now() - since > 2000) {
          for (const m of alive()) assert.ok(unitsWhole(latest(m), s.topics), `${m.clientId} holds a split unit: ${owners[m.clientId]}`)
          return owners
        }
      } else {
        last = key
        since = Date.now()
      }
      await sleep(200)
    }
    throw new Error(`the consumer group did not settle: ${last}`)
  }
  const keep = (before, after) => {
    for (const [m, list] of Object.entries(after)) for (const tp of before[m] || []) assert.ok(list.includes(tp), `${m} lost ${tp} when a member left`)
  }
  try {
    for (const kind of ['confluent-kip848', 'platformatic-kip848', 'confluent-kip848', 'platformatic-kip848']) {
      join(kind)
      await settle()
    }
    let prev = await settle()
    assert.ok(Object.values(prev).every(l => l.length > 0), `4 members, each with units: ${JSON.stringify(prev)}`)
    for (const leaver of [members[1], members[0]]) {
      await leaver.kill('SIGTERM')
      const next = await settle()
      keep(prev, next)
      prev = next
    }
    join('platformatic-kip848')
    await settle()
    join('confluent-kip848')
    prev = await settle()
    await s.allHandled(members, 120000)
    for (const m of members) {
      for (const e of m.events) assert.notStrictEqual(e.event, 'crash', `${m.clientId} crashed: ${e.error}`)
    }
  } finally {
    await s.close(members)
  }
})
