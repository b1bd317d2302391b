#!/usr/bin/env node
// KafkaJS (npm kafkajs@2.2.4, pinned in package-lock.json):
// Partitioners.DefaultPartitioner() and Partitioners.LegacyPartitioner() called with
// fake partitionMetadata (all partitions with a leader) and Buffer keys.
//   -> generated/kafkajs_default_partitioner.jsonl, generated/kafkajs_legacy_partitioner.jsonl
// The NULL key is round-robin from a random start in KafkaJS, so no NULL-key lines.
'use strict'
process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1'
const fs = require('fs')
const path = require('path')
const { Partitioners } = require('kafkajs')
const kafkajsVersion = require('kafkajs/package.json').version
if (kafkajsVersion !== '2.2.4') throw new Error('expected kafkajs 2.2.4, got ' + kafkajsVersion)

const PARTITION_COUNTS = [1, 2, 3, 6, 7, 8, 12, 100, 1000]
const generated = path.join(__dirname, '..', 'generated')
const keys = fs.readFileSync(path.join(generated, 'keys.jsonl'), 'utf8')
  .split('\n').filter(l => l.length > 0).map(l => JSON.parse(l))

function metadata(n) {
  const out = []
  for (let i = 0; i < n; i++) out.push({ partitionErrorCode: 0, partitionId: i, leader: 0, replicas: [0], isr: [0] })
  return out
}

for (const [name, factory] of [
  ['kafkajs_default_partitioner.jsonl', Partitioners.DefaultPartitioner],
  ['kafkajs_legacy_partitioner.jsonl', Partitioners.LegacyPartitioner],
]) {
  const partitioner = factory()
  const lines = []
  for (const k of keys) {
    for (const n of PARTITION_COUNTS) {
      const p = partitioner({
        topic: 't',
        partitionMetadata: metadata(n),
        message: { key: Buffer.from(k.key_hex, 'hex'), value: 'v' },
      })
      if (!Number.isInteger(p)) throw new Error('bad partition ' + p)
      lines.push(JSON.stringify({ key_hex: k.key_hex, key: k.key, partitions: n, partition: p }))
    }
  }
  const file = path.join(generated, name)
  fs.writeFileSync(file, lines.join('\n') + '\n')
  console.log(`wrote ${file} (${lines.length} lines)`)
}
