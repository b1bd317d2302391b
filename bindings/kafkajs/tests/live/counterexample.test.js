'use strict'
// Live, the seed's counter-example: 4 KafkaJS 2.2.4 processes over two
// topics of 6 partitions. KafkaJS's own RoundRobinAssigner gives partition p
// of the two topics to different members; CopartitionedAssigner does not.
const test = require('node:test')
const assert = require('node:assert')
const { Kafka, logLevel } = require('kafkajs')
const { bootstrap, Member, unitsWhole, settled, setup } = require('./helpers')

async function fourMembers(kafka, prefix, env) {
  const s = await setup(kafka, prefix)
  const members = []
  try {
    for (let k = 0; k < 4; k++) members.push(new Member(s.group, `m${k}`, s.topics, 'kafkajs', env))
    const owners = await settled(s.admin, s.group, 4, s.topics, 60000, false)
    const { groups } = await s.admin.describeGroups([s.group])
    return { protocol: groups[0].protocol, owners, topics: s.topics }
  } finally {
    await s.close(members)
  }
}

const split = ({ owners, topics }) =>
  Object.values(owners).filter(list => !unitsWhole(list.map(x => [x.slice(0, x.lastIndexOf('/')), Number(x.slice(x.lastIndexOf('/') + 1))]), topics)).length

test("the seed's counter-example on Apache Kafka: round-robin splits, copartitioned does not", { skip: !bootstrap && 'PARTWISE_KAFKA_BOOTSTRAP not set', timeout: 180000 }, async () => {
  const kafka = new Kafka({ clientId: 'live-counterexample', brokers: [bootstrap], logLevel: logLevel.NOTHING })
  const rr = await fourMembers(kafka, 'kjs-rr', { PARTWISE_ASSIGNER: 'roundrobin' })
  assert.strictEqual(rr.protocol, 'RoundRobinAssigner')
  assert.ok(split(rr) > 0, `round-robin kept units whole: ${JSON.stringify(rr.owners)}`)
  const cp = await fourMembers(kafka, 'kjs-cp', {})
  assert.strictEqual(cp.protocol, 'copartitioned')
  assert.strictEqual(split(cp), 0, JSON.stringify(cp.owners))
})
