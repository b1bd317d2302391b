// Known answers of @platformatic/kafka's group assigners, from the installed
// package (its version read from its package.json and written into every
// line). The package's Consumer, as group leader (Consumer#createAssignments),
// hands the assigner: its own member id, its map of members (filled from the
// JoinGroup response in the coordinator's order, each member's subscription
// decoded: topics, ownedPartitions, generationId), a Set of the leader's own
// subscribed topics (topics.current, in the order it subscribed), and the
// metadata of those topics; a group of one member is given every partition of
// the leader's topics without calling the assigner. This script does the
// same, with the members' subscriptions taken from the group file shape
// partwise reads (`assign --group`), the leader named by `leader` (else the
// first member). Both assigners are plain functions of their input (no
// randomness), so each group is asked once.
import { writeFileSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { roundRobinAssigner, cooperativeStickyAssigner } from '@platformatic/kafka'

const pkg = fileURLToPath(new URL('./node_modules/@platformatic/kafka/package.json', import.meta.url))
const version = JSON.parse(readFileSync(pkg, 'utf8')).version
const out = process.argv[2]

// xorshift32, a fixed seed: the cases are the same on every run.
let s = 0x35353535
const next = () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s }
const below = (n) => next() % n
const shuffle = (a) => { for (let i = a.length - 1; i > 0; i--) { const j = below(i + 1); [a[i], a[j]] = [a[j], a[i]] } return a }

const COUNTS = [1, 2, 3, 4, 5, 6, 8, 12]
// Names whose localeCompare order differs from their code-unit order
// (case, '_' before digits) beside plain ones.
const NAMES = ['orders', 'payments', 'market-updates', 'notifications', 'Orders', 'orders_v2', 'orders-v2', 'orders2', 't', 'T-1', 'a_b', 'a1']
const randTopics = (k) => shuffle(NAMES.slice()).slice(0, k).map(name => ({ name, partitions: COUNTS[below(COUNTS.length)] }))
const mixedId = () => { const base = below(7); return (i) => `c${(i * 7 + base) % 13}-${i.toString(16)}` }
const plainId = (i) => `m${String(i).padStart(2, '0')}`
const uniform = (n, topics, id) => Array.from({ length: n }, (_, i) => ({
  id: id(i), instance_id: null, subscription: topics.map(t => t.name), owned_partitions: [], generation: null
}))
const claim = (m, t, p) => {
  const c = m.owned_partitions.find(o => o[0] === t)
  if (c) { if (!c[1].includes(p)) c[1].push(p) } else m.owned_partitions.push([t, [p]])
}

const cases = []
const add = (name, kind, group) => {
  for (const m of group.members) for (const c of m.owned_partitions) c[1].sort((a, b) => a - b)
  cases.push({ name, kind, group: { group: name, ...group } })
}

const two6 = [{ name: 'market-updates', partitions: 6 }, { name: 'notifications', partitions: 6 }]
for (const n of [1, 2, 3, 4, 5, 6, 7]) add(`fresh-${n}-members-2x6`, 'fresh', { topics: two6, members: uniform(n, two6, plainId) })
const two12 = [{ name: 'mu12', partitions: 12 }, { name: 'mu12b', partitions: 12 }]
add('fresh-5-members-2x12', 'fresh', { topics: two12, members: uniform(5, two12, plainId) })
for (let i = 0; i < 8; i++) {
  const ts = randTopics(1 + below(3))
  add(`fresh-random-${i}`, 'fresh', { topics: ts, members: uniform(1 + below(6), ts, mixedId()) })
}
// Owned claims, one generation; some members new, some partitions unclaimed.
for (let i = 0; i < 8; i++) {
  const ts = randTopics(1 + below(3))
  const n = 2 + below(5)
  const ms = uniform(n, ts, mixedId())
  const holders = 1 + below(n)
  for (let h = 0; h < holders; h++) ms[h].generation = 7
  for (const t of ts) for (let p = 0; p < t.partitions; p++) if (below(5)) claim(ms[below(holders)], t.name, p)
  add(`owned-${i}`, 'owned-claims', { topics: ts, members: shuffle(ms) })
}
// Mixed generations: older claims, some partitions claimed twice.
for (let i = 0; i < 8; i++) {
  const ts = randTopics(1 + below(3))
  const n = 2 + below(4)
  const ms = uniform(n, ts, mixedId())
  for (const m of ms) m.generation = 3 + below(3)
  if (below(3) === 0) ms[below(n)].generation = null
  for (const t of ts) for (let p = 0; p < t.partitions; p++) {
    claim(ms[below(n)], t.name, p)
    if (below(3) === 0) claim(ms[below(n)], t.name, p)
  }
  add(`mixed-generations-${i}`, 'mixed-generations', { topics: ts, members: ms })
}
// Unequal subscriptions, fresh and with claims; the leader's own topics
// decide what is dealt.
for (let i = 0; i < 10; i++) {
  const ts = randTopics(2 + below(3))
  const n = 2 + below(5)
  const ms = uniform(n, ts, mixedId())
  for (const m of ms) {
    let sub = shuffle(ts.map(t => t.name)).filter(() => below(3) !== 0)
    if (sub.length === 0) sub = [ts[below(ts.length)].name]
    m.subscription = sub
  }
  if (i % 2 === 1) {
    for (const m of ms) m.generation = 9
    for (const t of ts) for (let p = 0; p < t.partitions; p++) {
      const m = ms[below(n)]
      if (below(4) && m.subscription.includes(t.name)) claim(m, t.name, p)
    }
  }
  add(`unequal-subscriptions-${i}`, 'unequal-subscriptions', { topics: ts, members: ms })
}
// Static members (the assigners see no instance ids).
for (let i = 0; i < 4; i++) {
  const ts = randTopics(1 + below(3))
  const n = 2 + below(5)
  const ms = uniform(n, ts, mixedId())
  ms.forEach((m, k) => { if (below(4)) m.instance_id = `worker-${n - k}` })
  if (i % 2 === 1) {
    for (const m of ms) m.generation = 2
    for (const t of ts) for (let p = 0; p < t.partitions; p++) claim(ms[below(n)], t.name, p)
  }
  add(`static-${i}`, 'static-members', { topics: ts, members: ms })
}
// A named leader that is not the first member, with a subscription of its own.
for (let i = 0; i < 6; i++) {
  const ts = randTopics(2 + below(2))
  const n = 3 + below(3)
  const ms = uniform(n, ts, mixedId())
  const leader = 1 + below(n - 1)
  ms[leader].subscription = shuffle(ms[leader].subscription.slice()).slice(0, 1 + below(ts.length))
  if (i % 2 === 1) {
    for (const m of ms) m.generation = 4
    for (const t of ts) for (let p = 0; p < t.partitions; p++) {
      const m = ms[below(n)]
      if (m.subscription.includes(t.name)) claim(m, t.name, p)
    }
  }
  add(`leader-${i}`, 'leader', { topics: ts, members: ms, leader: ms[leader].id })
}

// Calls an assigner as the leader's Consumer#createAssignments does.
function leaderCall (assigner, g) {
  const leader = g.leader ?? g.members[0].id
  const members = new Map()
  for (const m of g.members) {
    members.set(m.id, {
      memberId: m.id,
      version: 1,
      topics: m.subscription.slice(),
      metadata: null,
      ownedPartitions: m.owned_partitions.map(([topic, partitions]) => ({ topic, partitions: partitions.slice() })),
      generationId: m.generation ?? -1,
      rackId: null
    })
  }
  const own = members.get(leader).topics
  const metadata = { topics: new Map() }
  for (const t of own) {
    const topic = g.topics.find(x => x.name === t)
    if (topic) metadata.topics.set(t, { partitionsCount: topic.partitions })
  }
  const result = {}
  for (const m of g.members) result[m.id] = []
  if (members.size === 1) {
    for (const t of own) for (let p = 0; p < metadata.topics.get(t).partitionsCount; p++) result[leader].push([t, p])
  } else {
    for (const member of assigner(leader, members, new Set(own), metadata)) {
      for (const a of member.assignments.values()) for (const p of a.partitions) result[member.memberId].push([a.topic, p])
    }
  }
  for (const id of Object.keys(result)) {
    result[id].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]))
  }
  return result
}

const lines = []
for (const c of cases) {
  for (const [spec, assigner] of [['platformatic:roundrobin', roundRobinAssigner], ['platformatic:cooperative-sticky', cooperativeStickyAssigner]]) {
    let outcomes = []
    let error = null
    try {
      outcomes = [{ assignment: leaderCall(assigner, c.group), runs: 1 }]
    } catch (e) {
      error = String(e && e.message ? e.message : e)
    }
    lines.push(JSON.stringify({ client: 'platformatic', version, assignor: spec, case: c.name, kind: c.kind, group: c.group, runs: 1, outcomes, error }))
  }
}
writeFileSync(out, lines.join('\n') + '\n')
console.error(`node-groups: ${cases.length} cases, ${lines.length} lines, @platformatic/kafka ${version}, node ${process.version}`)
