#!/usr/bin/env node
'use strict'
// One KafkaJS 2.2.4 group member with the copartitioned assigner, as a
// separate process for the live tests: prints one JSON line per assignment
// ({"event":"assigned","partitions":[[topic,p],...]}) and per record handled
// ({"event":"record","value":...}); SIGTERM leaves the group cleanly.
// Usage: node member.js BOOTSTRAP GROUP CLIENT_ID TOPIC...
// PARTWISE_ASSIGNER=roundrobin runs KafkaJS's own RoundRobinAssigner instead
// (the seed's counter-example).
const { Kafka, logLevel, PartitionAssigners } = require('kafkajs')
// KafkaJS's own assigner needs only KafkaJS: the binding (and its native
// module) is loaded for the copartitioned one alone, so a round-robin member
// runs where only `npm ci` was done.
const roundRobin = process.env.PARTWISE_ASSIGNER === 'roundrobin'

const [bootstrap, groupId, clientId, ...topics] = process.argv.slice(2)
if (!bootstrap || !groupId || !clientId || topics.length === 0) {
  console.error('usage: member.js BOOTSTRAP GROUP CLIENT_ID TOPIC...')
  process.exit(2)
}
const say = o => process.stdout.write(JSON.stringify(o) + '\n')

async function main() {
  const kafka = new Kafka({ clientId, brokers: [bootstrap], logLevel: logLevel.NOTHING })
  const assigner = roundRobin ? null : require('../..').copartitionedAssigner()
  const consumer = kafka.consumer({
    groupId,
    partitionAssigners: [roundRobin ? PartitionAssigners.roundRobin : assigner],
    sessionTimeout: 6000,
    heartbeatInterval: 500,
    rebalanceTimeout: 20000,
  })
  if (assigner) assigner.track(consumer)
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const partitions = []
    for (const [t, ps] of Object.entries(payload.memberAssignment)) for (const p of ps) partitions.push([t, p])
    say({ event: 'assigned', memberId: payload.memberId, leader: payload.isLeader, protocol: payload.groupProtocol, partitions })
  })
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    say({ event: 'crash', error: String(payload.error) })
  })
  await consumer.connect()
  for (const topic of topics) await consumer.subscribe({ topic, fromBeginning: true })
  await consumer.run({
    eachMessage: async ({ topic, partition, message }) => {
      say({ event: 'record', topic, partition, value: message.value.toString() })
    },
  })
  const stop = async () => {
    await consumer.disconnect()
    say({ event: 'left' })
    process.exit(0)
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}

main().catch(e => {
  console.error(`member ${clientId}: ${e.stack || e}`)
  process.exit(1)
})
