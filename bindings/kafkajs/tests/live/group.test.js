'use strict'
// Live: KafkaJS 2.2.4 members (separate Node processes) with the
// copartitioned assigner on Apache Kafka, over two topics of 6 partitions.
// After every change (1..6 joins, a clean leave, a SIGKILL, joins) the
// group's stable generation, read back with describeGroups, must give every
// partition to exactly one member and partition p of both topics to one
// member; every assignment a member reports must hold whole units; a member
// leaving moves only its own units; every record produced is handled at
// least once. Needs PARTWISE_KAFKA_BOOTSTRAP (bash bindings/kafkajs/test sets it).
const test = require('node:test')
const assert = require('node:assert')
const { Kafka, logLevel } = require('kafkajs')
const { bootstrap, N, Member, unitsWhole, settled, onlyLeaverMoved, setup } = require('./helpers')

test('KafkaJS members with CopartitionedAssigner: whole units through joins, leave, SIGKILL', { skip: !bootstrap && 'PARTWISE_KAFKA_BOOTSTRAP not set', timeout: 300000 }, async () => {
  const kafka = new Kafka({ clientId: 'live-test', brokers: [bootstrap], logLevel: logLevel.NOTHING })
  const s = await setup(kafka, 'kjs')
  const members = []
  const join = () => members.push(new Member(s.group, `m${members.length}`, s.topics))
  try {
    let prev
    for (let k = 1; k <= N; k++) {
      join()
      await s.produce(12)
      prev = await settled(s.admin, s.group, k, s.topics)
    }
    await members[2].kill('SIGTERM')
    onlyLeaverMoved(prev, await settled(s.admin, s.group, N - 1, s.topics))
    await s.produce(12)
    await members[0].kill('SIGKILL')
    await s.produce(12)
    await settled(s.admin, s.group, N - 2, s.topics)
    join()
    await s.produce(12)
    await settled(s.admin, s.group, N - 1, s.topics)
    join()
    await s.produce(12)
    await settled(s.admin, s.group, N, s.topics)
    await s.allHandled(members)
    let assignments = 0
    for (const m of members) {
      for (const e of m.events) assert.notStrictEqual(e.event, 'crash', `${m.clientId} crashed: ${e.error}`)
      for (const parts of m.assignments()) {
        assignments++
        assert.ok(unitsWhole(parts, s.topics), `${m.clientId} was assigned a split unit: ${JSON.stringify(parts)}`)
      }
    }
    assert.ok(assignments >= 2 * N, `${assignments} assignments reported`)
  } finally {
    await s.close(members)
  }
})
