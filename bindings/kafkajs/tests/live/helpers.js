'use strict'
// What the live group tests share: member processes (KafkaJS, or partwise's
// Rust runtime through `partwise kafka consume`), and the check of a settled
// generation read back with describeGroups.
const assert = require('node:assert')
const path = require('path')
const { spawn } = require('child_process')
const { AssignerProtocol } = require('kafkajs')

const bootstrap = process.env.PARTWISE_KAFKA_BOOTSTRAP
const N = 6
const sleep = ms => new Promise(r => setTimeout(r, ms))

class Member {
  // kind 'kafkajs' (tests/live/member.js) or 'rust' (partwise kafka consume).
  constructor(group, clientId, topics, kind = 'kafkajs', env = {}) {
    this.clientId = clientId
    this.kind = kind
    this.events = []
    const [cmd, args] =
      kind === 'rust'
        ? [rustBinary(), ['kafka', 'consume', '-b', bootstrap, '-g', group, ...topics.flatMap(t => ['-t', t]),
            '--assignor', 'copartitioned', '--offset-reset', 'earliest', '--heartbeat-interval', '500ms',
            '--session-timeout', '6s', '--rebalance-timeout', '20s', '--commit-interval', '300ms', '--format', 'ndjson']]
        : [process.execPath, [path.join(__dirname, 'member.js'), bootstrap, group, clientId, ...topics]]
    this.proc = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } })
    let buf = ''
    this.proc.stdout.on('data', d => {
      buf += d
      let i
      while ((i = buf.indexOf('\n')) >= 0) {
        this.events.push(JSON.parse(buf.slice(0, i)))
        buf = buf.slice(i + 1)
      }
    })
    this.exited = new Promise(r => this.proc.on('exit', r))
  }
  alive() {
    return this.proc.exitCode === null && this.proc.signalCode === null
  }
  kill(signal) {
    if (this.alive()) this.proc.kill(signal)
    return this.exited
  }
  // Record ids handled: KafkaJS members print the value, Rust ones the key
  // (the test writes the id as both).
  handled() {
    return this.events
      .filter(e => e.event === 'record')
      .map(e => (e.value !== undefined ? e.value : Buffer.from(e.key_hex, 'hex').toString()))
  }
  assignments() {
    return this.events.filter(e => e.event === 'assigned').map(e => e.partitions)
  }
}

function rustBinary() {
  const dir = process.env.CARGO_TARGET_DIR || path.join(__dirname, '..', '..', '..', '..', 'target')
  return process.env.PARTWISE_BIN || path.join(dir, 'debug', 'partwise')
}

function unitsWhole(partitions, topics) {
  const by = {}
  for (const [t, p] of partitions) (by[p] = by[p] || new Set()).add(t)
  return Object.values(by).every(s => topics.every(t => s.has(t)))
}

// The stable generation: member id -> sorted "topic/p" list, once the group
// is Stable with `count` members that together own every partition once;
// with `copartitioned` (the default) also checked for whole units.
async function settled(admin, group, count, topics, deadline = 60000, copartitioned = true) {
  const end = Date.now() + deadline
  let last
  while (Date.now() < end) {
    const { groups } = await admin.describeGroups([group])
    const g = groups[0]
    last = `${g.state}, ${g.members.length} members`
    if (g.state === 'Stable' && g.members.length === count) {
      const owners = {}
      for (const m of g.members) {
        const a = AssignerProtocol.MemberAssignment.decode(m.memberAssignment)
        const list = []
        for (const [t, ps] of Object.entries(a ? a.assignment : {})) for (const p of ps) list.push(`${t}/${p}`)
        owners[m.memberId] = list.sort()
      }
      const all = Object.values(owners).flat()
      if (all.length === topics.length * N) {
        assert.strictEqual(new Set(all).size, all.length, `a partition owned twice: ${JSON.stringify(owners)}`)
        if (!copartitioned) return owners
        assert.strictEqual(g.protocol, 'copartitioned')
        for (const [m, list] of Object.entries(owners)) {
          const parts = list.map(s => [s.slice(0, s.lastIndexOf('/')), Number(s.slice(s.lastIndexOf('/') + 1))])
          assert.ok(unitsWhole(parts, topics), `member ${m} holds a split unit: ${list}`)
        }
        return owners
      }
    }
    await sleep(300)
  }
  throw new Error(`group ${group} did not settle with ${count} members (last: ${last})`)
}

// Members present before and after a leave keep every partition they had.
function onlyLeaverMoved(before, after) {
  for (const [m, list] of Object.entries(after)) {
    for (const tp of before[m] || []) assert.ok(list.includes(tp), `${m} lost ${tp} when a member left`)
  }
}

// Topics of N partitions, a producer writing ids as key and value, and the
// check that every id was handled by some member.
async function setup(kafka, prefix) {
  const run = `${process.pid}-${Date.now()}`
  const topics = [`${prefix}-a-${run}`, `${prefix}-b-${run}`]
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({ waitForLeaders: true, topics: topics.map(topic => ({ topic, numPartitions: N, replicationFactor: 1 })) })
  const producer = kafka.producer()
  await producer.connect()
  let produced = 0
  const ids = []
  return {
    topics,
    group: `${prefix}-group-${run}`,
    admin,
    async produce(n) {
      for (const topic of topics) {
        const messages = []
        for (let i = 0; i < n; i++) {
          const id = `${topic}:r${produced + i}`
          ids.push(id)
          messages.push({ key: id, value: id, partition: (produced + i) % N })
        }
        await producer.send({ topic, messages })
      }
      produced += n
    },
    async allHandled(members, deadline = 60000) {
      const end = Date.now() + deadline
      let missing
      while (Date.now() < end) {
        const seen = new Set(members.flatMap(m => m.handled()))
        missing = ids.filter(v => !seen.has(v))
        if (missing.length === 0) return
        await sleep(300)
      }
      assert.deepStrictEqual(missing, [], 'records never handled')
    },
    async close(members) {
      await Promise.all(members.map(m => m.kill('SIGTERM')))
      await producer.disconnect()
      await admin.deleteTopics({ topics }).catch(() => {})
      await admin.disconnect()
    },
  }
}

module.exports = { bootstrap, N, Member, rustBinary, unitsWhole, settled, onlyLeaverMoved, setup }
