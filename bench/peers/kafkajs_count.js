#!/usr/bin/env node
'use strict'
/*
 * Count keys per partition with KafkaJS's own default partitioner.
 *
 * Usage: node kafkajs_count.js FILE PARTITIONS
 *
 * Reads FILE into one Buffer (in large chunks if it is over 1 GiB), finds
 * line ends with indexOf(0x0a) and routes each key, a Buffer subarray with
 * the "\n" (and one "\r" before it) removed, through the real
 *
 *     Partitioners.DefaultPartitioner()({ topic, partitionMetadata, message: { key } })
 *
 * as the KafkaJS producer does for a keyed message (the producer calls its
 * `createPartitioner` option, DefaultPartitioner by default, once, and then
 * the returned function per message; so it is one call to make the
 * partitioner, not two: `DefaultPartitioner()()` would be a TypeError), with partitionMetadata of
 * N partitions, all led by broker 0. A final line without a newline still
 * counts; nothing after the last "\n" means no extra key.
 *
 * Prints one NDJSON line, the same shape as `partwise route --summary
 * --format ndjson`:
 *     {"partitioner":"java","partitions":N,"counts":[c0,c1,...]}
 */
const fs = require('fs')
const { Partitioners } = require('kafkajs')
const kafkajsVersion = require('kafkajs/package.json').version

const [path, nArg] = process.argv.slice(2)
const n = Number(nArg)
if (!path || !Number.isInteger(n) || n < 1) {
  process.stderr.write('usage: node kafkajs_count.js FILE PARTITIONS (>= 1)\n')
  process.exit(2)
}

const topic = 'bench'
const partitionMetadata = []
for (let p = 0; p < n; p++) {
  partitionMetadata.push({ partitionErrorCode: 0, partitionId: p, leader: 0, replicas: [0], isr: [0] })
}
const partition = Partitioners.DefaultPartitioner()
const counts = new Array(n).fill(0)
let keys = 0

function route (key) {
  const p = partition({ topic, partitionMetadata, message: { key } })
  counts[p]++
  keys++
}

// Routes every complete line of buf[0, end); returns where the unfinished
// last line starts.
function scan (buf, end) {
  let start = 0
  let nl
  while ((nl = buf.indexOf(0x0a, start)) !== -1 && nl < end) {
    let stop = nl
    if (stop > start && buf[stop - 1] === 0x0d) stop--
    route(buf.subarray(start, stop))
    start = nl + 1
  }
  return start
}

// BENCH_JS_CHUNK=<bytes> forces the chunked reader (used to test it).
const forcedChunk = Number(process.env.BENCH_JS_CHUNK || 0)
const size = fs.statSync(path).size
if (!forcedChunk && size <= 1 << 30) {
  const buf = fs.readFileSync(path)
  const rest = scan(buf, buf.length)
  if (rest < buf.length) route(buf.subarray(rest))
} else {
  const fd = fs.openSync(path, 'r')
  const CHUNK = forcedChunk || 256 << 20
  let buf = Buffer.allocUnsafe(CHUNK)
  let have = 0
  for (;;) {
    if (have === buf.length) { // one line longer than the buffer
      const bigger = Buffer.allocUnsafe(buf.length * 2)
      buf.copy(bigger, 0, 0, have)
      buf = bigger
    }
    const got = fs.readSync(fd, buf, have, buf.length - have, null)
    if (got === 0) break
    have += got
    const rest = scan(buf, have)
    // keys already routed; move the partial line to the front
    buf.copy(buf, 0, rest, have)
    have -= rest
  }
  fs.closeSync(fd)
  if (have > 0) route(Buffer.from(buf.subarray(0, have)))
}

process.stdout.write(JSON.stringify({ partitioner: 'java', partitions: n, counts }) + '\n')
process.stderr.write(`kafkajs ${kafkajsVersion} DefaultPartitioner: ${keys} keys\n`)
