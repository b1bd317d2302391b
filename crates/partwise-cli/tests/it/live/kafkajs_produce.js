'use strict'
// A real KafkaJS 2.x producer with its DefaultPartitioner (Java-compatible
// murmur2), for the audit's live mixture tests: reads keys from stdin, one a
// line, sends them in that order as one batch, and prints one JSON line per
// key with the partition KafkaJS's own partitioner chose for it, the known
// answer the test holds partwise to.
//
//   node kafkajs_produce.js BOOTSTRAP TOPIC < keys
//
// KafkaJS comes from bindings/kafkajs (bash scripts/ensure kafkajs).
const path = require('path')
const repo = path.join(__dirname, '..', '..', '..', '..', '..')
const { Kafka, Partitioners, logLevel } = require(
  require.resolve('kafkajs', { paths: [path.join(repo, 'bindings', 'kafkajs')] })
)

async function main() {
  const [bootstrap, topic] = process.argv.slice(2)
  let input = ''
  for await (const chunk of process.stdin) input += chunk
  const keys = input.split('\n').filter(k => k.length > 0)
  const kafka = new Kafka({ clientId: 'pw-audit-test', brokers: [bootstrap], logLevel: logLevel.NOTHING })
  // KafkaJS's DefaultPartitioner, each of its answers noted as the producer
  // asks it (with the producer's own view of the topic's partitions).
  const chosen = []
  const createPartitioner = () => {
    const inner = Partitioners.DefaultPartitioner()
    return args => {
      const partition = inner(args)
      chosen.push({ key: String(args.message.key), partition })
      return partition
    }
  }
  const producer = kafka.producer({ createPartitioner })
  await producer.connect()
  await producer.send({ topic, acks: -1, messages: keys.map(k => ({ key: k, value: 'kafkajs' })) })
  await producer.disconnect()
  for (const c of chosen) process.stdout.write(JSON.stringify(c) + '\n')
}

main().catch(e => {
  console.error(e)
  process.exit(1)
})
