'use strict'
// Live: KafkaJS 2.2.4 members (separate Node processes) with the
// copartitioned assigner on Apache Kafka, over two topics of 6 partitions.
// After every change (1..6 joins, a SIGKILL, a clean leave, a join) the
// group's stable generation, read back with describeGroups, must give every
// partition to exactly one member and partition p of both topics to one
// member; every assignment a member reports must hold whole units; a member
// leaving moves only its own units; every record produced is handled at
// least once. Needs PARTWISE_KAFKA_BOOTSTRAP (bash bindings/kafkajs/test sets it).
const test = require('node:test')
const assert = require('node:assert')
const path = require('path')
const { spawn } = require('child_process')
const { Kafka, logLevel, AssignerProtocol } = require('kafkajs')

const bootstrap = process.env.PARTWISE_KAFKA_BOOTSTRAP
const N = 6
const sleep = ms => new Promise(r => setTimeout(r, ms))

class Member {
  constructor(group, clientId, topics) {
    this.clientId = clientId
    this.events = []
    this.proc = spawn(process.execPath, [path.join(__dirname, 'member.js'), bootstrap, group, clientId, ...topics], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let buf = ''
    this.proc.stdout.on('data', d => {
      buf += d
      let i
      while ((i = buf.indexOf('\n')) >= 0) {
        this.events.push(JSON.parse(buf.slice(0, i)))
        buf = buf.slice(i + 1)
      }
    })
    this.exited = new Promise(r => this.proc.on('exit', r))
  }
  kill(signal) {
    this.proc.kill(signal)
    return this.exited
  }
}

function unitsWhole(partitions, topics) {
  const by = {}
  for (const [t, p] of partitions) (by[p] = by[p] || new Set()).add(t)
  return Object.values(by).every(s => topics.every(t => s.has(t)))
}

// The stable generation: member clientId -> sorted "topic/p" list, once the
// group is Stable with `count` members that together own every partition.
async function settled(admin, group, count, topics, deadline = 60000) {
  const end = Date.now() + deadline
  let last
  while (Date.now() < end) {
    const { groups } = await admin.describeGroups([group])
    const g = groups[0]
    last = `${g.state}, ${g.members.length} members`
    if (g.state === 'Stable' && g.members.length === count) {
      const owners = {}
      for (const m of g.members) {
        const a = AssignerProtocol.MemberAssignment.decode(m.memberAssignment)
        const list = []
        for (const [t, ps] of Object.entries(a ? a.assignment : {})) for (const p of ps) list.push(`${t}/${p}`)
        owners[m.clientId] = list.sort()
      }
      const all = Object.values(owners).flat()
      if (all.length === topics.length * N) {
        assert.strictEqual(new Set(all).size, all.length, `a partition owned twice: ${JSON.stringify(owners)}`)
        assert.strictEqual(g.protocol, 'copartitioned')
        for (const [m, list] of Object.entries(owners)) {
          const parts = list.map(s => [s.slice(0, s.lastIndexOf('/')), Number(s.slice(s.lastIndexOf('/') + 1))])
          assert.ok(unitsWhole(parts, topics), `member ${m} holds a split unit: ${list}`)
        }
        return owners
      }
    }
    await sleep(300)
  }
  throw new Error(`group ${group} did not settle with ${count} members (last: ${last})`)
}

test('KafkaJS members with CopartitionedAssigner: whole units through joins, SIGKILL, leave', { skip: !bootstrap && 'PARTWISE_KAFKA_BOOTSTRAP not set', timeout: 300000 }, async () => {
  const run = `${process.pid}-${Date.now()}`
  const topics = [`kjs-a-${run}`, `kjs-b-${run}`]
  const group = `kjs-group-${run}`
  const kafka = new Kafka({ clientId: 'live-test', brokers: [bootstrap], logLevel: logLevel.NOTHING })
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({ waitForLeaders: true, topics: topics.map(topic => ({ topic, numPartitions: N, replicationFactor: 1 })) })
  const producer = kafka.producer()
  await producer.connect()
  let produced = 0
  const produce = async n => {
    const messages = []
    for (let i = 0; i < n; i++, produced++) messages.push({ key: `k${produced}`, value: `r${produced}`, partition: produced % N })
    for (const topic of topics) await producer.send({ topic, messages: messages.map(m => ({ ...m, value: `${topic}:${m.value}` })) })
  }
  const members = new Map()
  let next = 0
  const join = () => {
    const id = `m${next++}`
    members.set(id, new Member(group, id, topics))
  }
  const alive = () => [...members.values()].filter(m => m.proc.exitCode === null && m.proc.signalCode === null)
  try {
    let prev
    for (let k = 1; k <= N; k++) {
      join()
      await produce(12)
      prev = await settled(admin, group, k, topics)
    }
    // A clean leave: only the leaver's units move.
    const leaver = members.get('m2')
    await leaver.kill('SIGTERM')
    const afterLeave = await settled(admin, group, N - 1, topics)
    for (const [m, list] of Object.entries(afterLeave)) {
      for (const tp of prev[m]) assert.ok(list.includes(tp), `${m} lost ${tp} when m2 left`)
    }
    await produce(12)
    // SIGKILL: the group notices after the session timeout.
    await members.get('m0').kill('SIGKILL')
    await produce(12)
    await settled(admin, group, N - 2, topics)
    join()
    await produce(12)
    await settled(admin, group, N - 1, topics)
    join()
    await produce(12)
    await settled(admin, group, N, topics)

    // Every record handled at least once, by whichever member owned it.
    const want = new Set()
    for (const t of topics) for (let i = 0; i < produced; i++) want.add(`${t}:r${i}`)
    const end = Date.now() + 60000
    let missing
    while (Date.now() < end) {
      const seen = new Set([...members.values()].flatMap(m => m.events.filter(e => e.event === 'record').map(e => e.value)))
      missing = [...want].filter(v => !seen.has(v))
      if (missing.length === 0) break
      await sleep(300)
    }
    assert.deepStrictEqual(missing, [], 'records never handled')
    // Every assignment any member reported held whole units.
    let assignments = 0
    for (const m of members.values()) {
      for (const e of m.events) {
        assert.notStrictEqual(e.event, 'crash', `${m.clientId} crashed: ${e.error}`)
        if (e.event !== 'assigned') continue
        assignments++
        assert.strictEqual(e.protocol, 'copartitioned')
        assert.ok(unitsWhole(e.partitions, topics), `${m.clientId} was assigned a split unit: ${JSON.stringify(e.partitions)}`)
      }
    }
    assert.ok(assignments >= 2 * N, `${assignments} assignments reported`)
  } finally {
    await Promise.all(alive().map(m => m.kill('SIGTERM')))
    await producer.disconnect()
    await admin.deleteTopics({ topics }).catch(() => {})
    await admin.disconnect()
  }
})
