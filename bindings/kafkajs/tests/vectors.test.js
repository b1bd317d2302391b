'use strict'
// The KafkaJS assigner against the Rust assignor on the consistency vectors
// (tests/vectors/copartitioned/cases.jsonl): every generation of every case
// must give each member the same partitions, and the same user data bytes,
// as the Rust core; churn steps feed the KafkaJS output forward as the next
// generation's owned partitions, as a live group would.
const test = require('node:test')
const assert = require('node:assert')
const path = require('path')
const { AssignerProtocol } = require('kafkajs')
const { copartitionedAssigner, encodeSubscription } = require('..')
const { fakeCluster, decodeWithKafkajs } = require('./fake')

const vectors = require(path.join(__dirname, '..', '..', '..', 'tests', 'vectors', 'copartitioned', 'generate.js'))

// The documented unit-groups user data (crates/partwise-wire encode_unit_groups):
// "pwu\0", i32 group count, per group an i32 topic count and i16-length names.
function unitGroupBytes(groups) {
  const parts = [Buffer.from('pwu\x00', 'latin1')]
  const i32 = n => {
    const b = Buffer.alloc(4)
    b.writeInt32BE(n)
    return b
  }
  parts.push(i32(groups.length))
  for (const g of groups) {
    parts.push(i32(g.length))
    for (const t of g) {
      const name = Buffer.from(t, 'utf8')
      const len = Buffer.alloc(2)
      len.writeInt16BE(name.length)
      parts.push(len, name)
    }
  }
  return Buffer.concat(parts)
}

async function kafkajsAssign(group, k) {
  const assigner = copartitionedAssigner()({ cluster: fakeCluster(group.topics) })
  const members = group.members.map((m, i) => ({
    memberId: m.id,
    groupInstanceId: m.instance_id || null,
    // A member with nothing owned sometimes speaks KafkaJS's own v0
    // metadata, as a plain KafkaJS member would: the leader must read both.
    memberMetadata:
      m.owned.length === 0 && (i + k) % 2 === 0
        ? AssignerProtocol.MemberMetadata.encode({ version: 0, topics: m.topics })
        : encodeSubscription(m.topics, m.owned, k),
  }))
  return decodeWithKafkajs(await assigner.assign({ members, topics: [] }))
}

const cases = vectors.load()

test('the vectors are many shapes', () => {
  assert.ok(cases.length >= 150, `${cases.length} cases`)
  assert.ok(cases.some(c => c.steps.length > 4))
  assert.ok(cases.some(c => c.name.includes('unequal')))
})

for (const c of cases) {
  test(`copartitioned ${c.name}`, async () => {
    let prev = null
    for (let k = 0; k < c.steps.length; k++) {
      const step = c.steps[k]
      const members = step.members.map(m => ({
        ...m,
        owned: k === 0 ? m.owned || [] : (prev[m.id] || { partitions: [] }).partitions,
      }))
      const got = await kafkajsAssign({ topics: c.topics, members }, k)
      const want = step.expected
      const wantBytes = unitGroupBytes(want.unit_groups)
      for (const m of step.members) {
        assert.deepStrictEqual(got[m.id].partitions, want.assignment[m.id] || [], `step ${k} member ${m.id}`)
        assert.ok(got[m.id].userData.equals(wantBytes), `step ${k} member ${m.id}: user data`)
        assert.strictEqual(got[m.id].version, 3)
      }
      prev = got
    }
  })
}

test('the committed vectors are what the Rust assignor computes now', { skip: !process.env.PARTWISE_VECTORS_RUST && 'set PARTWISE_VECTORS_RUST=1 (bash bindings/kafkajs/test does)' }, () => {
  const fresh = vectors.generate()
  assert.deepStrictEqual(fresh, cases)
})
