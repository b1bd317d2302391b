#!/usr/bin/env node
'use strict'
// assign() inside KafkaJS 2.2.4, in one run, on the same members and
// metadata: partwise's CopartitionedAssigner over the WebAssembly core (what
// the package ships), the same adapter over the old napi-rs native module
// (bindings/kafkajs/native, built by `bash bindings/kafkajs/build --native`;
// left out, and said so, when it is not built), and KafkaJS's own
// RoundRobinAssigner. Two sizes: 100 members x 10,000 partitions and 1,000
// members x 100,000 (two co-partitioned topics of half each). partwise's
// assigner is timed on a fresh group and on a sticky round (every member
// but one reports what it owns). Medians of RUNS runs (default 7), the
// peers interleaved run by run; writes bench/results/kafkajs_assign.json and
// prints it.
//   bash bindings/kafkajs/build --native && node bench/kafkajs_assign.js [RUNS]
const fs = require('fs')
const path = require('path')
const { performance } = require('perf_hooks')
const binding = path.join(__dirname, '..', 'bindings', 'kafkajs')
const { PartitionAssigners } = require(path.join(binding, 'node_modules', 'kafkajs'))
const wasm = require(binding)

const RUNS = Number(process.argv[2] || 7)
const SIZES = [
  [100, 10000],
  [1000, 100000],
]

// The native module's calls as core.js's: its leader path as the binding
// had it (every member's topics decoded one call at a time, a member that
// does not decode replaced by an empty subscription, then one assign call).
function nativeCore(n) {
  const held = new Map()
  let next = 0
  const empty = n.encodeSubscription([], [], -1)
  return {
    encodeSubscription: n.encodeSubscription,
    decodeSubscription: n.decodeSubscription,
    decodeAssignment: n.decodeAssignment,
    Partitioner: n.Partitioner,
    readMembers(members) {
      const out = members.map(m => {
        try {
          return { topics: n.subscriptionTopics(m.memberMetadata) }
        } catch (e) {
          return { error: e.message }
        }
      })
      held.set(++next, members.map((m, i) => ({
        memberId: m.memberId,
        groupInstanceId: typeof m.groupInstanceId === 'string' ? m.groupInstanceId : undefined,
        memberMetadata: out[i].error === undefined ? m.memberMetadata : empty,
      })))
      return { handle: next, members: out }
    },
    assign(handle, counts) {
      const members = held.get(handle)
      held.delete(handle)
      return n.assign(members, counts)
    },
    release(handle) {
      held.delete(handle)
    },
  }
}

let native = null
const nativeFile = path.join(binding, 'native', 'partwise.node')
if (fs.existsSync(nativeFile)) native = require(path.join(binding, 'adapter'))(nativeCore(require(nativeFile)))
else console.error(`${nativeFile} is not built (bash bindings/kafkajs/build --native): the native peer is left out`)

async function time(f) {
  const t = performance.now()
  const out = await f()
  return [performance.now() - t, out]
}
const median = xs => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]

async function size(members, partitions) {
  const TOPICS = { 'bench-a': partitions / 2, 'bench-b': partitions / 2 }
  const names = Object.keys(TOPICS)
  const metadata = Object.fromEntries(names.map(t => [t, Array.from({ length: TOPICS[t] }, (_, p) => ({ partitionId: p, leader: 0 }))]))
  const cluster = {
    async addMultipleTargetTopics() {},
    findTopicPartitionMetadata: t => metadata[t],
  }
  const ids = Array.from({ length: members }, (_, i) => `consumer-${i}-${(i * 2654435761) >>> 0}`)
  const rr = PartitionAssigners.roundRobin({ cluster })
  const rrMembers = ids.map(memberId => ({ memberId, memberMetadata: rr.protocol({ topics: names }).metadata }))
  const peers = { wasm }
  if (native) peers.native = native
  const fresh = ids.map(memberId => ({ memberId, memberMetadata: wasm.encodeSubscription(names, [], -1) }))
  // The next generation: every member reports its partitions; one left.
  const first = await wasm.copartitionedAssigner()({ cluster }).assign({ members: fresh, topics: names })
  const owned = new Map(first.map(a => [a.memberId, wasm.decodeAssignment(a.memberAssignment).partitions]))
  const sticky = ids.slice(1).map(memberId => ({ memberId, memberMetadata: wasm.encodeSubscription(names, owned.get(memberId), 1) }))
  const t = { roundrobin: [] }
  const assigners = {}
  for (const [name, p] of Object.entries(peers)) {
    assigners[name] = p.copartitionedAssigner()({ cluster })
    t[`${name}_fresh`] = []
    t[`${name}_sticky`] = []
  }
  for (let r = 0; r < RUNS + 1; r++) {
    const keep = r > 0 // the first round warms up
    const [ms] = await time(() => rr.assign({ members: rrMembers, topics: names }))
    if (keep) t.roundrobin.push(ms)
    for (const [name, a] of Object.entries(assigners)) {
      const [f] = await time(() => a.assign({ members: fresh, topics: names }))
      const [s] = await time(() => a.assign({ members: sticky, topics: names }))
      if (keep) {
        t[`${name}_fresh`].push(f)
        t[`${name}_sticky`].push(s)
      }
    }
  }
  const out = { members, partitions }
  for (const [k, v] of Object.entries(t)) out[`${k}_ms_median`] = Number(median(v).toFixed(1))
  for (const [k, v] of Object.entries(t)) out[`${k}_ms_range`] = [Number(Math.min(...v).toFixed(1)), Number(Math.max(...v).toFixed(1))]
  for (const name of Object.keys(assigners)) {
    out[`${name}_fresh_vs_roundrobin`] = Number((out[`${name}_fresh_ms_median`] / out.roundrobin_ms_median).toFixed(2))
    out[`${name}_sticky_vs_roundrobin`] = Number((out[`${name}_sticky_ms_median`] / out.roundrobin_ms_median).toFixed(2))
  }
  return out
}

async function main() {
  const result = {
    runs: RUNS,
    node: process.version,
    kafkajs: require(path.join(binding, 'node_modules', 'kafkajs', 'package.json')).version,
    wasm_bytes: fs.statSync(path.join(binding, 'partwise.wasm')).size,
    sizes: [],
  }
  for (const [m, p] of SIZES) result.sizes.push(await size(m, p))
  const text = JSON.stringify(result, null, 1)
  fs.writeFileSync(path.join(__dirname, 'results', 'kafkajs_assign.json'), text + '\n')
  console.log(text)
}
main().catch(e => {
  console.error(e)
  process.exit(1)
})
