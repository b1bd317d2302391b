'use strict'
// The @platformatic/kafka assigner on the copartitioned consistency vectors
// (tests/vectors/copartitioned/vectors.txt, the Rust leader's output): each
// case's members as a real @platformatic/kafka (pinned in package.json)
// leader hands them to its `partitionAssigner`: subscription bytes written
// by its own encodeConsumerProtocolSubscription with the user data from
// this assigner's `protocolsMetadata` (alternately with the claims in the
// standard owned-partitions field instead, as a cooperative member of
// another client sends them), decoded by its own
// decodeConsumerProtocolSubscription into the fields its consumer passes;
// the result encoded and decoded with its own assignment codec. Cases with
// static members are left to vectors.test.js: @platformatic/kafka hands an
// assigner no group.instance.id.
const test = require('node:test')
const assert = require('node:assert')
const fs = require('fs')
const path = require('path')
const { platformaticAssigner, encodeOwned, decodeOwned } = require('..')

const file = path.join(__dirname, '..', '..', '..', 'tests', 'vectors', 'copartitioned', 'vectors.txt')
const list = s => (s === '-' ? [] : s.split(','))
const tps = s => list(s).map(x => [x.slice(0, x.lastIndexOf(':')), Number(x.slice(x.lastIndexOf(':') + 1))])
const sorted = xs => xs.map(([t, p]) => `${t}\u0000${p}`).sort()

function parse(text) {
  const cases = []
  let c
  for (const line of text.split('\n')) {
    const f = line.split(' ')
    if (f[0] === 'case') c = { name: f[1], topics: {}, members: [], expect: {} }
    else if (f[0] === 'topic') c.topics[f[1]] = Number(f[2])
    else if (f[0] === 'member') c.members.push({ id: f[1], instance: f[2] === '-' ? null : f[2], topics: list(f[3]), owned: tps(f[4]) })
    else if (f[0] === 'expect') c.expect[f[1]] = tps(f[2])
    else if (f[0] === 'end') cases.push(c)
  }
  return cases
}

test('every case without static members replays through the real @platformatic/kafka codecs', async () => {
  const pk = await import('@platformatic/kafka')
  // The pinned release (package.json's exports hide its package.json, so read the file).
  const manifest = path.join(__dirname, '..', 'node_modules', '@platformatic', 'kafka', 'package.json')
  assert.strictEqual(JSON.parse(fs.readFileSync(manifest, 'utf8')).version, '2.12.1')
  const cases = parse(fs.readFileSync(file, 'utf8'))
  let replayed = 0
  let k = 0
  for (const c of cases) {
    if (c.members.some(m => m.instance !== null)) continue
    const leader = platformaticAssigner()
    assert.deepStrictEqual(leader.options.protocols.map(p => p.name), ['copartitioned'])
    const members = new Map()
    for (const m of c.members) {
      let bytes
      if (k++ % 2 === 0) {
        // This binding's member: a consumer whose last assignment was m.owned.
        const byTopic = new Map()
        for (const [t, p] of m.owned) {
          if (!byTopic.has(t)) byTopic.set(t, { topic: t, partitions: [] })
          byTopic.get(t).partitions.push(p)
        }
        const member = platformaticAssigner().track({ assignments: [...byTopic.values()], memberId: m.id, generationId: 1 })
        const userData = member.options.protocolsMetadata(member.options.protocols, m.topics, null)
        bytes = pk.encodeConsumerProtocolSubscription({ version: 3, topics: m.topics, userData, ownedPartitions: [], generationId: -1 })
      } else {
        const byTopic = new Map()
        for (const [t, p] of m.owned) {
          if (!byTopic.has(t)) byTopic.set(t, { topic: t, partitions: [] })
          byTopic.get(t).partitions.push(p)
        }
        bytes = pk.encodeConsumerProtocolSubscription({ version: 1, topics: m.topics, userData: null, ownedPartitions: [...byTopic.values()] })
      }
      const s = pk.decodeConsumerProtocolSubscription(bytes)
      members.set(m.id, { memberId: m.id, version: s.version, topics: s.topics, metadata: s.userData, ownedPartitions: s.ownedPartitions, generationId: s.generationId })
    }
    const metadata = { topics: new Map(Object.entries(c.topics).map(([t, n]) => [t, { partitionsCount: n }])) }
    const out = leader.options.partitionAssigner(c.members[0].id, members, new Set(c.members[0].topics), metadata)
    const got = {}
    for (const { memberId, assignments } of out) {
      const bytes = pk.encodeConsumerProtocolAssignment({ version: 0, assignedPartitions: [...assignments.values()], userData: null })
      got[memberId] = []
      for (const a of pk.decodeConsumerProtocolAssignment(bytes).assignedPartitions) for (const p of a.partitions) got[memberId].push([a.topic, p])
    }
    for (const m of c.members) {
      assert.deepStrictEqual(sorted(got[m.id] || []), sorted(c.expect[m.id] || []), `${c.name} member ${m.id}`)
    }
    replayed++
  }
  assert.ok(replayed >= 300, `${replayed} cases`)
})

test('owned user data reads back, and nothing else reads as it', () => {
  const owned = [['b', 3], ['a', 1], ['日本', 7]]
  const b = encodeOwned(owned, 42)
  assert.deepStrictEqual(decodeOwned(b), [['a', 1], ['b', 3], ['日本', 7]])
  for (let i = 0; i < b.length; i++) assert.deepStrictEqual(decodeOwned(b.subarray(0, i)), [], `cut at ${i}`)
  assert.deepStrictEqual(decodeOwned(Buffer.concat([b, Buffer.from([0])])), [])
  assert.deepStrictEqual(decodeOwned(Buffer.from('pwu\0\0\0\0\0', 'latin1')), [])
})
