'use strict'
// Live: one classic group with members of every runtime that has partwise's
// copartitioned assignor: Sarama, franz-go and kafka-go (bindings/go),
// kafka-python and aiokafka (bindings/python), KafkaJS and
// @platformatic/kafka (this package), the Java client (bindings/java) and
// partwise kafka consume (Rust), over two co-partitioned topics. Members
// join and leave so that the leader moves from runtime to runtime: the group
// shrinks to one member of Go, then Python, then Node, then Java, which
// leads the next members in. Every settled generation: whole units, every
// partition owned once; a member present before and after a leave keeps
// what it had; every record produced during the churn handled; every
// assignment any member printed whole units; at least one generation led by
// each of Go, Python, Node and Java, with a member of another runtime
// assigned under it. A kafka-go member never leads here, nor joins under a
// kafka-python leader: kafka-go 0.4.51 as leader refuses every other
// client's subscription, and kafka-python 3.0.12 as leader fails on
// kafka-go's (a version-1 header over a version-0 body; see
// docs/reference/clients.md); it joins under Sarama and @platformatic/kafka
// leaders and leaves first when the group shrinks. Needs PARTWISE_KAFKA_BOOTSTRAP, the
// partwise binary, PARTWISE_JAVA_CP, PARTWISE_GO_MEMBER and PARTWISE_PYTHON
// (bindings/kafkajs/test sets them up).
const test = require('node:test')
const assert = require('node:assert')
const fs = require('fs')
const { Kafka, logLevel } = require('kafkajs')
const { bootstrap, Member, rustBinary, unitsWhole, settled, onlyLeaverMoved, setup } = require('./helpers')

const skip = !bootstrap
  ? 'PARTWISE_KAFKA_BOOTSTRAP not set'
  : !fs.existsSync(rustBinary())
    ? `${rustBinary()} missing: cargo build -p partwise-cli`
    : !process.env.PARTWISE_JAVA_CP
      ? 'PARTWISE_JAVA_CP not set'
      : !process.env.PARTWISE_GO_MEMBER
        ? 'PARTWISE_GO_MEMBER not set'
        : !process.env.PARTWISE_PYTHON && 'PARTWISE_PYTHON not set'

const RUNTIME = {
  sarama: 'go',
  franzgo: 'go',
  kafkago: 'go',
  'kafka-python': 'python',
  aiokafka: 'python',
  kafkajs: 'node',
  platformatic: 'node',
  java: 'java',
  rust: 'rust',
}

test('a group of every runtime keeps units whole while the leader moves from Go to Python to Node to Java', { skip, timeout: 900000 }, async t => {
  const kafka = new Kafka({ clientId: 'live-all', brokers: [bootstrap], logLevel: logLevel.NOTHING })
  const s = await setup(kafka, 'kjs-all')
  const members = []
  const join = kind => {
    const m = new Member(s.group, `${kind}-${members.length}`, s.topics, kind)
    members.push(m)
    return m
  }
  const alive = () => members.filter(m => m.alive())
  const settle = async () => {
    await s.produce(6)
    return settled(s.admin, s.group, alive().length, s.topics, 120000)
  }
  // Clean leaves of all but `keeper`, kafka-go members first; the members
  // that stay keep what they had.
  const shrinkTo = async keeper => {
    const before = await settle()
    const leavers = alive().filter(m => m !== keeper).sort((a, b) => (a.kind === 'kafkago' ? -1 : 0) - (b.kind === 'kafkago' ? -1 : 0))
    for (const m of leavers) await m.kill('SIGTERM')
    onlyLeaverMoved(before, await settle())
  }
  const leaders = []
  try {
    // Go: a Sarama member alone leads every other runtime in.
    const goLeader = join('sarama')
    await settle()
    for (const kind of ['kafka-python', 'platformatic', 'java', 'franzgo', 'aiokafka', 'kafkajs', 'rust', 'kafkago']) {
      join(kind)
      await settle()
    }
    leaders.push([goLeader, members[1]])
    // A clean leave of a non-leader: only its units move.
    let prev = await settle()
    await members[3].kill('SIGTERM') // java
    let next = await settle()
    onlyLeaverMoved(prev, next)

    // Python: the kafka-python member alone leads the next ones in.
    const pyLeader = members[1]
    await shrinkTo(pyLeader)
    const franz = join('franzgo')
    await settle()
    const plat = join('platformatic')
    await settle()
    join('sarama')
    await settle()
    leaders.push([pyLeader, franz])

    // Node: the @platformatic/kafka member alone leads the next ones in.
    await shrinkTo(plat)
    const java = join('java')
    await settle()
    join('aiokafka')
    await settle()
    join('kafkago')
    await settle()
    leaders.push([plat, java])

    // Java: the Java member alone leads the next ones in.
    await shrinkTo(java)
    const kjs = join('kafkajs')
    await settle()
    join('rust')
    await settle()
    join('kafka-python')
    await settle()
    leaders.push([java, kjs])
    prev = await settle()
    await kjs.kill('SIGTERM')
    next = await settle()
    onlyLeaverMoved(prev, next)

    await s.allHandled(members, 120000)
    for (const m of members) {
      for (const e of m.events) assert.notStrictEqual(e.event, 'crash', `${m.clientId} crashed: ${e.error}`)
      for (const parts of m.assignments()) {
        assert.ok(unitsWhole(parts, s.topics), `${m.clientId} was assigned a split unit: ${JSON.stringify(parts)}`)
      }
    }
    for (const [leader, ledIn] of leaders) {
      assert.ok(leader.events.some(e => e.event === 'assigned' && e.leader), `${leader.clientId} (${RUNTIME[leader.kind]}) never led`)
      assert.ok(ledIn.assignments().some(p => p.length > 0), `${ledIn.clientId} got nothing under the ${RUNTIME[leader.kind]} leader ${leader.clientId}`)
    }
    // Which members led a generation (the assignments they printed as the
    // group's leader), for the record.
    for (const m of members) {
      const led = m.events.filter(e => e.event === 'assigned' && e.leader).length
      if (led > 0) t.diagnostic(`${m.clientId} (${RUNTIME[m.kind]}) led ${led} generation(s)`)
    }
    const kinds = new Set(members.map(m => m.kind))
    assert.deepStrictEqual([...kinds].sort(), Object.keys(RUNTIME).sort())
  } finally {
    await s.close(members)
  }
})
