'use strict'
// The KafkaJS assigner on the Java binding's consistency vectors
// (tests/vectors/copartitioned/vectors.txt, the Rust leader's output for 848
// groups: non-ASCII names, static members, missing topics, grown topics,
// doubly claimed partitions, up to 139 members), so one set of cases pins
// the Rust leader, the Java port and this binding together. Each case is
// self-contained: members with their owned partitions, each member's
// expected partitions and the user data bytes.
const test = require('node:test')
const assert = require('node:assert')
const fs = require('fs')
const path = require('path')
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

const present = fs.existsSync(file)
test('the shared vectors replay through the KafkaJS assigner', { skip: !present && `${file} is not in this tree` }, async () => {
  const cases = parse(fs.readFileSync(file, 'utf8'))
  assert.ok(cases.length >= 800, `${cases.length} cases`)
  for (const c of cases) {
    const assigner = copartitionedAssigner()({ cluster: fakeCluster(c.topics) })
    const members = c.members.map(m => ({
      memberId: m.id,
      groupInstanceId: m.instance,
      memberMetadata: encodeSubscription(m.topics, m.owned, m.owned.length ? 1 : -1),
    }))
    const got = decodeWithKafkajs(await assigner.assign({ members, topics: [] }))
    for (const m of c.members) {
      assert.deepStrictEqual(sorted(got[m.id].partitions), sorted(c.expect[m.id] || []), `${c.name} member ${m.id}`)
      assert.ok(got[m.id].userData.equals(c.userdata), `${c.name} member ${m.id}: user data`)
    }
  }
})
