#!/usr/bin/env node
'use strict'
/*
 * Partition loads and exact heavy hitters with KafkaJS's default partitioner.
 *
 * Usage: node kafkajs_skew.js FILE PARTITIONS [TOP]
 *
 * The same computation as `partwise skew -P java`, done the way a Node user
 * would with the real client: count every key exactly (a Map from key to
 * count), route every distinct key once with the real
 *
 *     Partitioners.DefaultPartitioner()({ topic, partitionMetadata, message: { key } })
 *
 * (created once, as the producer does; partitionMetadata as in
 * kafkajs_count.js), add its count to that partition's load, and report the
 * TOP (default 10) heaviest keys.
 *
 * Reading is kafkajs_count.js's: the file is read in 256 MiB chunks, lines
 * end at "\n" (one "\r" before it is dropped); an empty line is an empty key,
 * a last line without a newline is a key, nothing after the last "\n" is not.
 * Map keys are the key bytes as a latin1 string (one char per byte, so exact
 * for any bytes); the key handed to the partitioner is
 * Buffer.from(str, 'latin1'), the same bytes. V8 caps a Map at 2^24 entries,
 * so the counts are spread over 64 Maps by the key's last byte (a file of up
 * to ~1 billion distinct keys fits, memory permitting).
 *
 * Routing a distinct key once and adding its count gives the same loads as
 * routing every line, and keeps this peer as fast as it can be.
 * Ties in the top list are broken by key bytes, ascending, so two correct
 * peers print the same list.
 *
 * Prints one JSON line:
 *   {"partitioner":"java","partitions":N,"keys":LINES,"distinct":D,
 *    "loads":[l0,...],"top":[[key,count],...],"top_hex":[[hex,count],...]}
 */
const fs = require('fs')
const { Partitioners } = require('kafkajs')
const kafkajsVersion = require('kafkajs/package.json').version

const [path, nArg, topArg] = process.argv.slice(2)
const n = Number(nArg)
const topN = topArg === undefined ? 10 : Number(topArg)
if (!path || !Number.isInteger(n) || n < 1 || !Number.isInteger(topN) || topN < 0) {
  process.stderr.write('usage: node kafkajs_skew.js FILE PARTITIONS (>= 1) [TOP (>= 0)]\n')
  process.exit(2)
}

const SHARDS = 64
const maps = []
for (let i = 0; i < SHARDS; i++) maps.push(new Map())

function count (buf, start, stop) {
  const m = maps[stop > start ? buf[stop - 1] & (SHARDS - 1) : 0]
  const k = buf.toString('latin1', start, stop)
  m.set(k, (m.get(k) || 0) + 1)
}

// Counts every complete line of buf[0, end); returns where the unfinished
// last line starts.
function scan (buf, end) {
  let start = 0
  let nl
  while ((nl = buf.indexOf(0x0a, start)) !== -1 && nl < end) {
    let stop = nl
    if (stop > start && buf[stop - 1] === 0x0d) stop--
    count(buf, start, stop)
    start = nl + 1
  }
  return start
}

const CHUNK = Number(process.env.BENCH_JS_CHUNK || 0) || 256 << 20
const fd = fs.openSync(path, 'r')
let buf = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(fs.fstatSync(fd).size, 1)))
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
  buf.copy(buf, 0, rest, have)
  have -= rest
}
fs.closeSync(fd)
if (have > 0) {
  let stop = have
  if (buf[stop - 1] === 0x0d) stop--
  count(buf, 0, stop)
}

const topic = 'bench'
const partitionMetadata = []
for (let p = 0; p < n; p++) {
  partitionMetadata.push({ partitionErrorCode: 0, partitionId: p, leader: 0, replicas: [0], isr: [0] })
}
const partition = Partitioners.DefaultPartitioner()
const loads = new Array(n).fill(0)
let keys = 0
let distinct = 0
// top: the topN heaviest so far, heaviest first, ties by key ascending
const top = []
const heavier = (ka, ca, kb, cb) => ca > cb || (ca === cb && ka < kb)
for (const m of maps) {
  distinct += m.size
  for (const [k, c] of m) {
    const key = Buffer.from(k, 'latin1')
    loads[partition({ topic, partitionMetadata, message: { key } })] += c
    keys += c
    if (top.length < topN || heavier(k, c, top[top.length - 1][0], top[top.length - 1][1])) {
      let i = top.length
      while (i > 0 && heavier(k, c, top[i - 1][0], top[i - 1][1])) i--
      top.splice(i, 0, [k, c])
      if (top.length > topN) top.pop()
    }
  }
}

process.stdout.write(JSON.stringify({
  partitioner: 'java',
  partitions: n,
  keys,
  distinct,
  loads,
  top: top.map(([k, c]) => [Buffer.from(k, 'latin1').toString('utf8'), c]),
  top_hex: top.map(([k, c]) => [Buffer.from(k, 'latin1').toString('hex'), c])
}) + '\n')
process.stderr.write(`kafkajs ${kafkajsVersion} DefaultPartitioner: ${keys} keys, ${distinct} distinct\n`)
