// A real @platformatic/kafka producer with its default partitioner (no
// `partitioner` option): reads keys from stdin, one a line, sends them in
// that order, and prints one JSON line per key with the partition the
// broker stored it in (the produce result), the known answer the test holds
// partwise's audit to.
//
//   node platformatic_produce.mjs BOOTSTRAP TOPIC < keys
//
// @platformatic/kafka comes from .cache/live-clients (bash scripts/ensure clients).
import { createRequire } from 'node:module'
import { join } from 'node:path'

// @platformatic/kafka 2.x uses Promise.withResolvers (Node 22+); on an older
// Node the standard built-in is supplied here, as its specification says.
if (!Promise.withResolvers) {
  Promise.withResolvers = function () {
    let resolve, reject
    const promise = new this((a, b) => { resolve = a; reject = b })
    return { promise, resolve, reject }
  }
}

const [bootstrap, topic, modules] = process.argv.slice(2)
const require = createRequire(join(modules, 'noop.js'))
const { Producer, stringSerializers } = await import(require.resolve('@platformatic/kafka'))

let input = ''
for await (const chunk of process.stdin) input += chunk
const keys = input.split('\n').filter(k => k.length > 0)
const producer = new Producer({ clientId: 'pw-live-platformatic', bootstrapBrokers: [bootstrap], serializers: stringSerializers, acks: -1 })
for (const key of keys) {
  const r = await producer.send({ messages: [{ topic, key, value: 'platformatic' }] })
  const o = r.offsets?.[0]
  process.stdout.write(JSON.stringify({ key, partition: o?.partition ?? null }) + '\n')
}
await producer.close()
