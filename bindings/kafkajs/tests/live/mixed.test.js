'use strict'
// Live: a mixed group, KafkaJS members with CopartitionedAssigner and
// partwise's Rust runtime (`partwise kafka consume --assignor
// copartitioned`), whichever leads: joins of both kinds, a KafkaJS member
// leaving (only its units move), a Rust member SIGKILLed, a Rust member
// leaving, rejoins. Every settled generation whole units, every partition
// owned once, every record handled. Needs PARTWISE_KAFKA_BOOTSTRAP and the
// partwise binary (target/debug/partwise, or PARTWISE_BIN).
const test = require('node:test')
const assert = require('node:assert')
const fs = require('fs')
const { Kafka, logLevel } = require('kafkajs')
const { bootstrap, N, Member, rustBinary, unitsWhole, settled, onlyLeaverMoved, setup } = require('./helpers')

const skip = !bootstrap ? 'PARTWISE_KAFKA_BOOTSTRAP not set' : !fs.existsSync(rustBinary()) && `${rustBinary()} missing: cargo build -p partwise-cli`

test('a group of KafkaJS and Rust members keeps units whole under either leader', { skip, timeout: 300000 }, async () => {
  const kafka = new Kafka({ clientId: 'live-mixed', brokers: [bootstrap], logLevel: logLevel.NOTHING })
  const s = await setup(kafka, 'kjs-mixed')
  const members = []
  const join = kind => members.push(new Member(s.group, `${kind}${members.length}`, s.topics, kind))
  try {
    let prev
    // Rust first, so a Rust member leads the first generations.
    for (const [k, kind] of ['rust', 'kafkajs', 'rust', 'kafkajs'].entries()) {
      join(kind)
      await s.produce(12)
      prev = await settled(s.admin, s.group, k + 1, s.topics)
    }
    await members[1].kill('SIGTERM') // a KafkaJS member leaves
    onlyLeaverMoved(prev, (prev = await settled(s.admin, s.group, 3, s.topics)))
    await s.produce(12)
    await members[0].kill('SIGKILL') // the first Rust member, the leader so far
    await s.produce(12)
    prev = await settled(s.admin, s.group, 2, s.topics)
    join('kafkajs')
    await s.produce(12)
    prev = await settled(s.admin, s.group, 3, s.topics)
    await members[2].kill('SIGTERM') // a Rust member leaves
    onlyLeaverMoved(prev, await settled(s.admin, s.group, 2, s.topics))
    join('rust')
    await s.produce(12)
    await settled(s.admin, s.group, 3, s.topics)
    await s.allHandled(members)
    for (const m of members) {
      for (const e of m.events) assert.notStrictEqual(e.event, 'crash', `${m.clientId} crashed: ${e.error}`)
      for (const parts of m.assignments()) {
        assert.ok(unitsWhole(parts, s.topics), `${m.clientId} (${m.kind}) was assigned a split unit: ${JSON.stringify(parts)}`)
      }
    }
    // Only KafkaJS members were left before the last Rust one joined, so a
    // KafkaJS leader assigned to a Rust member there.
    assert.ok(members.some(m => m.kind === 'kafkajs' && m.events.some(e => e.event === 'assigned' && e.leader)), 'no KafkaJS member led')
    const last = members[members.length - 1]
    assert.ok(last.kind === 'rust' && last.assignments().some(p => p.length > 0), 'the last Rust member got nothing from the KafkaJS leader')
  } finally {
    await s.close(members)
  }
})
