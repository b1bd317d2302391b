#!/usr/bin/env node
'use strict'
// One assign() at 1,000 members x 100,000 partitions (two co-partitioned
// topics of 50,000) inside KafkaJS 2.2.4: partwise's CopartitionedAssigner
// (the Rust core through napi-rs; a fresh group, then a sticky round where
// every member reports what it owns) against KafkaJS's RoundRobinAssigner,
// on the same members and metadata. Prints medians of RUNS runs (default 5)
// as one JSON line. Usage: bash bindings/kafkajs/build && node bench/kafkajs_assign.js [RUNS]
const path = require('path')
const { performance } = require('perf_hooks')
const binding = path.join(__dirname, '..', 'bindings', 'kafkajs')
const { PartitionAssigners } = require(path.join(binding, 'node_modules', 'kafkajs'))
const { copartitionedAssigner, encodeSubscription } = require(binding)

const RUNS = Number(process.argv[2] || 5)
const MEMBERS = 1000
const TOPICS = { 'bench-a': 50000, 'bench-b': 50000 }
const names = Object.keys(TOPICS)
const cluster = {
  async addMultipleTargetTopics() {},
  findTopicPartitionMetadata: t => Array.from({ length: TOPICS[t] }, (_, p) => ({ partitionId: p, leader: 0 })),
}
const ids = Array.from({ length: MEMBERS }, (_, i) => `consumer-${i}-${(i * 2654435761) >>> 0}`)

async function time(f) {
  const t = performance.now()
  const out = await f()
  return [performance.now() - t, out]
}
const median = xs => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]

async function main() {
  const rr = PartitionAssigners.roundRobin({ cluster })
  const cp = copartitionedAssigner()({ cluster })
  const rrMembers = ids.map(memberId => ({ memberId, memberMetadata: rr.protocol({ topics: names }).metadata }))
  const fresh = ids.map(memberId => ({ memberId, memberMetadata: encodeSubscription(names, [], -1) }))
  const t = { roundrobin: [], copartitioned_fresh: [], copartitioned_sticky: [] }
  let sticky
  for (let r = 0; r < RUNS; r++) {
    t.roundrobin.push((await time(() => rr.assign({ members: rrMembers, topics: names })))[0])
    const [ms, out] = await time(() => cp.assign({ members: fresh, topics: names }))
    t.copartitioned_fresh.push(ms)
    if (!sticky) {
      const { decodeAssignment } = require(binding)
      const owned = new Map(out.map(a => [a.memberId, decodeAssignment(a.memberAssignment).partitions]))
      // The next generation: every member reports its partitions; one left.
      sticky = ids.slice(1).map(memberId => ({ memberId, memberMetadata: encodeSubscription(names, owned.get(memberId), 1) }))
    }
    t.copartitioned_sticky.push((await time(() => cp.assign({ members: sticky, topics: names })))[0])
  }
  const result = { members: MEMBERS, partitions: 100000, runs: RUNS, node: process.version }
  for (const [k, v] of Object.entries(t)) result[`${k}_ms_median`] = Number(median(v).toFixed(1))
  console.log(JSON.stringify(result))
}
main().catch(e => {
  console.error(e)
  process.exit(1)
})
