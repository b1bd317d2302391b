'use strict'
// Live: one group of all three runtimes with the copartitioned protocol: 2
// Rust members (partwise kafka consume), 2 KafkaJS (CopartitionedAssigner)
// and 2 Java (dev.partwise.CopartitionedAssignor), then churn in each
// runtime: a clean leave of each kind (only the leaver's units move), a
// SIGKILL of each kind, the group down to one Java member that leads the
// others back in, and a last 2 + 2 + 2 group. Every settled generation whole
// units with every partition owned once, every assignment any member printed
// whole units, every record handled. Needs PARTWISE_KAFKA_BOOTSTRAP, the
// partwise binary and PARTWISE_JAVA_CP (bindings/kafkajs/test sets both up).
const test = require('node:test')
const assert = require('node:assert')
const fs = require('fs')
const { Kafka, logLevel } = require('kafkajs')
const { bootstrap, Member, rustBinary, unitsWhole, settled, onlyLeaverMoved, setup } = require('./helpers')

const skip = !bootstrap
  ? 'PARTWISE_KAFKA_BOOTSTRAP not set'
  : !fs.existsSync(rustBinary())
    ? `${rustBinary()} missing: cargo build -p partwise-cli`
    : !process.env.PARTWISE_JAVA_CP && 'PARTWISE_JAVA_CP not set: bash bindings/java/test --classpath prints it'

test('a group of Rust, KafkaJS and Java members keeps units whole through churn in each runtime', { skip, timeout: 600000 }, async () => {
  const kafka = new Kafka({ clientId: 'live-three', brokers: [bootstrap], logLevel: logLevel.NOTHING })
  const s = await setup(kafka, 'kjs-three')
  const members = []
  const join = kind => {
    const m = new Member(s.group, `${kind}${members.length}`, s.topics, kind)
    members.push(m)
    return m
  }
  const live = () => members.filter(m => m.alive()).length
  // Waits for the group to settle with everyone alive; returns the owners.
  const settle = async () => {
    await s.produce(6)
    return settled(s.admin, s.group, live(), s.topics, 90000)
  }
  try {
    // 2 + 2 + 2, one join (one rebalance) at a time; rust0, alone, leads first.
    for (const kind of ['rust', 'kafkajs', 'java', 'rust', 'kafkajs', 'java']) {
      join(kind)
      await settle()
    }
    let prev = await settle()
    assert.ok(Object.values(prev).every(l => l.length === 2), `6 members, one unit each: ${JSON.stringify(prev)}`)

    // A clean leave in each runtime: only the leaver's units move.
    for (const leaver of [members[1], members[2], members[0]]) {
      await leaver.kill('SIGTERM')
      const next = await settle()
      onlyLeaverMoved(prev, next)
      prev = next
    }
    // A SIGKILL of each runtime's last member but one Java member: alone, it
    // leads the next Rust member in.
    await members[3].kill('SIGKILL')
    await settle()
    await members[4].kill('SIGKILL')
    await settle()
    const rust6 = join('rust')
    await settle()
    const kjs7 = join('kafkajs')
    await settle()
    // Then KafkaJS is left alone and leads a Java member in.
    await members[5].kill('SIGKILL')
    await settle()
    await rust6.kill('SIGKILL')
    await settle()
    const java8 = join('java')
    await settle()
    // Back to 2 + 2 + 2.
    for (const kind of ['rust', 'java', 'rust', 'kafkajs']) {
      join(kind)
      await settle()
    }
    assert.deepStrictEqual(members.filter(m => m.alive()).map(m => m.kind).sort(), ['java', 'java', 'kafkajs', 'kafkajs', 'rust', 'rust'])
    await s.allHandled(members, 90000)

    for (const m of members) {
      for (const e of m.events) assert.notStrictEqual(e.event, 'crash', `${m.clientId} crashed: ${e.error}`)
      for (const parts of m.assignments()) {
        assert.ok(unitsWhole(parts, s.topics), `${m.clientId} (${m.kind}) was assigned a split unit: ${JSON.stringify(parts)}`)
      }
    }
    // Each runtime led, and assigned to a member of another runtime.
    const led = m => m.events.some(e => e.event === 'assigned' && e.leader)
    for (const [leader, ledIn] of [[members[0], members[1]], [members[5], rust6], [kjs7, java8]]) {
      assert.ok(led(leader), `${leader.clientId} (${leader.kind}) never led`)
      assert.ok(ledIn.assignments().some(p => p.length > 0), `${ledIn.clientId} got nothing under the ${leader.kind} leader`)
    }
  } finally {
    await s.close(members)
  }
})
