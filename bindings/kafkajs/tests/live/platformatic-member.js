#!/usr/bin/env node
'use strict'
// One @platformatic/kafka (pinned in package.json) classic group member with
// partwise's copartitioned assigner (platformaticAssigner()), as a separate
// process for the live tests: prints one JSON line per assignment
// ({"event":"assigned","leader":bool,"partitions":[[topic,p],...]}) and per
// record handled ({"event":"record","value":...}); SIGTERM leaves the group.
// Usage: node platformatic-member.js BOOTSTRAP GROUP CLIENT_ID TOPIC...
// PARTWISE_GROUP_PROTOCOL=consumer joins on the consumer protocol (KIP-848)
// instead, asking the broker for its `copartitioned` assignor
// (groupRemoteAssignor): the broker assigns, no client-side assigner runs.
const [bootstrap, groupId, clientId, ...topics] = process.argv.slice(2)
if (!bootstrap || !groupId || !clientId || topics.length === 0) {
  console.error('usage: platformatic-member.js BOOTSTRAP GROUP CLIENT_ID TOPIC...')
  process.exit(2)
}
const say = o => process.stdout.write(JSON.stringify(o) + '\n')

async function main() {
  const { Consumer, stringDeserializers } = await import('@platformatic/kafka')
  const pw = require('../..').platformaticAssigner()
  let led = false
  const options = {
    ...pw.options,
    partitionAssigner(...args) {
      led = true
      return pw.options.partitionAssigner(...args)
    },
  }
  const kip848 = process.env.PARTWISE_GROUP_PROTOCOL === 'consumer'
  const consumer = new Consumer({
    groupId,
    clientId,
    bootstrapBrokers: [bootstrap],
    deserializers: stringDeserializers,
    autocommit: 300,
    ...(kip848
      ? { groupProtocol: 'consumer', groupRemoteAssignor: 'copartitioned' }
      : { sessionTimeout: 6000, heartbeatInterval: 500, rebalanceTimeout: 20000, ...options }),
  })
  pw.track(consumer)
  // An error the consumer emits while running is a crash the test sees; one
  // while leaving (a connection closed under a last rejoin) is not.
  let stopping = false
  consumer.on('error', e => {
    if (!stopping) say({ event: 'crash', error: String(e && e.message) })
    console.error(`platformatic member ${clientId}: ${e && e.message}`)
  })
  let last = null
  const report = () => {
    const partitions = []
    for (const a of consumer.assignments || []) for (const p of a.partitions) partitions.push([a.topic, p])
    partitions.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] - y[1]))
    const key = `${consumer.generationId}:${JSON.stringify(partitions)}`
    if (key === last) return
    last = key
    say({ event: 'assigned', memberId: consumer.memberId, generation: consumer.generationId, leader: led, partitions })
    led = false
  }
  consumer.on('consumer:group:join', report)
  consumer.on('consumer:group:rebalance', report)
  // On the consumer protocol an assignment can change with no event.
  if (kip848) setInterval(report, 200).unref()
  const stream = await consumer.consume({ topics, mode: 'earliest', fallbackMode: 'earliest', autocommit: 300 })
  report()
  const stop = async () => {
    stopping = true
    await stream.close().catch(() => {})
    await consumer.close().catch(() => {})
    say({ event: 'left' })
    process.exit(0)
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
  for await (const message of stream) {
    say({ event: 'record', topic: message.topic, partition: message.partition, value: message.value })
  }
}

main().catch(e => {
  console.error(`platformatic member ${clientId}: ${e.stack || e}`)
  process.exit(1)
})
