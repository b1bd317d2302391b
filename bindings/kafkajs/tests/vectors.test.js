'use strict'
// The KafkaJS assigner on the copartitioned consistency vectors
// (tests/vectors/copartitioned/vectors.txt: the Rust leader's output, which
// the Rust runtime and the Java port replay too): every case's members,
// with their owned partitions, through the assigner exactly as KafkaJS
// calls it, decoded with KafkaJS's own MemberAssignment.decode: each
// member's partitions and user data bytes as the file says. Members that own
// nothing alternate between the v3 subscription this binding sends and
// KafkaJS's own v0 metadata, as a plain KafkaJS member sends: the leader
// must read both.
const test = require('node:test')
const assert = require('node:assert')
const fs = require('fs')
const path = require('path')
const { AssignerProtocol } = require('kafkajs')
const { copartitionedAssigner, encodeSubscription } = require('..')
const { fakeCluster, decodeWithKafkajs } = require('./fake')

const file = path.join(__dirname, '..', '..', '..', 'tests', 'vectors', 'copartitioned', 'vectors.txt')

const list = s => (s === '-' ? [] : s.split(','))
const tps = s => list(s).map(x => [x.slice(0, x.lastIndexOf(':')), Number(x.slice(x.lastIndexOf(':') + 1))])
// One order for both sides (UTF-16, as JS compares): only equality matters.
const sorted = xs => xs.map(([t, p]) => `${t}\u0000${p}`).sort()

function parse(text) {
  const cases = []
  let c
  for (const line of text.split('\n')) {
    const f = line.split(' ')
    if (f[0] === 'case') c = { name: f[1], topics: {}, members: [], expect: {}, userdata: null }
    else if (f[0] === 'topic') c.topics[f[1]] = Number(f[2])
    else if (f[0] === 'member') c.members.push({ id: f[1], instance: f[2] === '-' ? null : f[2], topics: list(f[3]), owned: tps(f[4]) })
    else if (f[0] === 'expect') c.expect[f[1]] = tps(f[2])
    else if (f[0] === 'userdata') c.userdata = Buffer.from(f[1], 'hex')
    else if (f[0] === 'end') cases.push(c)
  }
  return cases
}

const cases = parse(fs.readFileSync(file, 'utf8'))

test('the vectors are many shapes', () => {
  assert.ok(cases.length >= 878, `${cases.length} cases`)
  assert.ok(cases.some(c => c.members.length > 100))
  assert.ok(cases.some(c => c.name.startsWith('seed-')))
  assert.ok(cases.some(c => c.members.some(m => m.owned.some(([t, p]) => p >= (c.topics[t] || 0)))), 'claims past a count')
})

test('every case replays through the KafkaJS assigner', async () => {
  let k = 0
  for (const c of cases) {
    const assigner = copartitionedAssigner()({ cluster: fakeCluster(c.topics) })
    const members = c.members.map(m => ({
      memberId: m.id,
      groupInstanceId: m.instance,
      memberMetadata:
        m.owned.length === 0 && k++ % 2 === 0
          ? AssignerProtocol.MemberMetadata.encode({ version: 0, topics: m.topics })
          : encodeSubscription(m.topics, m.owned, m.owned.length ? 1 : -1),
    }))
    const got = decodeWithKafkajs(await assigner.assign({ members, topics: [] }))
    for (const m of c.members) {
      assert.deepStrictEqual(sorted(got[m.id].partitions), sorted(c.expect[m.id] || []), `${c.name} member ${m.id}`)
      assert.ok(got[m.id].userData.equals(c.userdata), `${c.name} member ${m.id}: user data`)
      assert.strictEqual(got[m.id].version, 3)
    }
  }
})
