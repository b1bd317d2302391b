'use strict'
// What the live group tests share: member processes (KafkaJS, partwise's
// Rust runtime through `partwise kafka consume`, or a Java KafkaConsumer with
// dev.partwise.CopartitionedAssignor through bindings/java's LiveMember), and
// the check of a settled generation read back with describeGroups.
const assert = require('node:assert')
const path = require('path')
const { spawn } = require('child_process')
const { AssignerProtocol } = require('kafkajs')

const bootstrap = process.env.PARTWISE_KAFKA_BOOTSTRAP
const N = 6
const sleep = ms => new Promise(r => setTimeout(r, ms))

class Member {
  // kind 'kafkajs' (tests/live/member.js), 'rust' (partwise kafka consume) or
  // 'java' (LiveMember on PARTWISE_JAVA_CP; it leaves when its stdin closes).
  // Every kind's output becomes the same events: {event:'assigned', leader,
  // partitions:[[topic,p],...]} and {event:'record', value | key_hex}.
  constructor(group, clientId, topics, kind = 'kafkajs', env = {}) {
    this.clientId = clientId
    this.kind = kind
    this.events = []
    const [cmd, args] = {
      rust: () => [rustBinary(), ['kafka', 'consume', '-b', bootstrap, '-g', group, ...topics.flatMap(t => ['-t', t]),
        '--assignor', 'copartitioned', '--offset-reset', 'earliest', '--heartbeat-interval', '500ms',
        '--session-timeout', '6s', '--rebalance-timeout', '20s', '--commit-interval', '300ms', '--format', 'ndjson']],
      java: () => ['java', ['-cp', javaClasspath(), 'dev.partwise.LiveMember', bootstrap, group, topics.join(',')]],
      kafkajs: () => [process.execPath, [path.join(__dirname, 'member.js'), bootstrap, group, clientId, ...topics]],
      // The other runtimes' members (all.test.js): bindings/go's livemember
      // (PARTWISE_GO_MEMBER, built by bindings/kafkajs/test), bindings/python's
      // live_member.py in a venv with the package installed (PARTWISE_PYTHON),
      // and @platformatic/kafka with this package's platformaticAssigner().
      sarama: () => [goMember(), ['sarama', bootstrap, group, clientId, ...topics]],
      franzgo: () => [goMember(), ['franzgo', bootstrap, group, clientId, ...topics]],
      kafkago: () => [goMember(), ['kafkago', bootstrap, group, clientId, ...topics]],
      'kafka-python': () => [pythonMember(), [pythonScript(), 'kafka-python', bootstrap, group, clientId, ...topics]],
      aiokafka: () => [pythonMember(), [pythonScript(), 'aiokafka', bootstrap, group, clientId, ...topics]],
      // The consumer protocol (kip848.test.js): the broker's copartitioned assignor.
      'confluent-kip848': () => [pythonMember(), [pythonScript('kip848_member.py'), bootstrap, group, clientId, ...topics]],
      'platformatic-kip848': () => [platformaticNode(), [path.join(__dirname, 'platformatic-member.js'), bootstrap, group, clientId, ...topics]],
      platformatic: () => [platformaticNode(), [path.join(__dirname, 'platformatic-member.js'), bootstrap, group, clientId, ...topics]],
    }[kind]()
    this.proc = spawn(cmd, args, { stdio: [kind === 'java' ? 'pipe' : 'ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } })
    const parse = kind === 'java' ? javaEvent() : line => JSON.parse(line)
    let buf = ''
    this.proc.stdout.on('data', d => {
      buf += d
      let i
      while ((i = buf.indexOf('\n')) >= 0) {
        const e = parse(buf.slice(0, i))
        if (e) this.events.push(e)
        buf = buf.slice(i + 1)
      }
    })
    this.exited = new Promise(r => this.proc.on('exit', r))
  }
  alive() {
    return this.proc.exitCode === null && this.proc.signalCode === null
  }
  // SIGTERM is a clean leave; a Java member leaves when its stdin closes
  // (a JVM on SIGTERM exits without leaving the group).
  kill(signal) {
    if (this.alive()) {
      if (this.kind === 'java' && signal === 'SIGTERM') this.proc.stdin.end()
      else this.proc.kill(signal)
    }
    return this.exited
  }
  // Record ids handled: KafkaJS members print the value, Rust and Java ones
  // the key (the test writes the id as both).
  handled() {
    return this.events
      .filter(e => e.event === 'record')
      .map(e => (e.value !== undefined ? e.value : Buffer.from(e.key_hex, 'hex').toString()))
  }
  assignments() {
    return this.events.filter(e => e.event === 'assigned').map(e => e.partitions)
  }
}

function goMember() {
  const bin = process.env.PARTWISE_GO_MEMBER
  if (!bin) throw new Error('PARTWISE_GO_MEMBER unset: go build -o BIN ./internal/livemember in bindings/go (bindings/kafkajs/test does)')
  return bin
}

// @platformatic/kafka 2.12 needs Node 22.22+ (its engines): PARTWISE_NODE22
// when this Node is older (bindings/kafkajs/test installs one from npm).
function platformaticNode() {
  const major = Number(process.versions.node.split('.')[0])
  if (major >= 22) return process.execPath
  const node = process.env.PARTWISE_NODE22
  if (!node) throw new Error(`@platformatic/kafka needs Node 22.22+ and this is ${process.version}: set PARTWISE_NODE22 (bindings/kafkajs/test does)`)
  return node
}

function pythonMember() {
  const py = process.env.PARTWISE_PYTHON
  if (!py) throw new Error('PARTWISE_PYTHON unset: a python with bindings/python installed (bindings/kafkajs/test makes one)')
  return py
}

function pythonScript(name = 'live_member.py') {
  return path.join(__dirname, '..', '..', '..', 'python', 'tests', name)
}

function javaClasspath() {
  const cp = process.env.PARTWISE_JAVA_CP
  if (!cp) throw new Error('PARTWISE_JAVA_CP unset: bash bindings/java/test --classpath prints it (bindings/kafkajs/test sets it)')
  return cp
}

// LiveMember's lines (`led`, `assigned MEMBER GEN T:P,...|-`, `record T P
// OFFSET KEY_HEX`) as events; `led` marks the next assignment as the leader's.
function javaEvent() {
  let led = false
  return line => {
    const w = line.split(' ')
    if (w[0] === 'led') led = true
    else if (w[0] === 'assigned') {
      const partitions = w[3] === '-' ? [] : w[3].split(',').map(tp => [tp.slice(0, tp.lastIndexOf(':')), Number(tp.slice(tp.lastIndexOf(':') + 1))])
      const e = { event: 'assigned', memberId: w[1], generation: Number(w[2]), leader: led, partitions }
      led = false
      return e
    } else if (w[0] === 'record') return { event: 'record', topic: w[1], partition: Number(w[2]), offset: Number(w[3]), key_hex: w[4] === '-' ? '' : w[4] }
    return null
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

// Creates `topics` of `partitions` partitions and waits until every
// partition has a leader. KafkaJS's own waitForLeaders gives up at once
// when the broker does not know a new topic yet (UNKNOWN_TOPIC_OR_PARTITION),
// which a busy shared broker answers for a moment.
async function createTopics(admin, topics, partitions = N) {
  // KafkaJS's own wait for leaders gives up on UNKNOWN_TOPIC_OR_PARTITION,
  // which a broker answers until the new topic's metadata reaches it: the
  // loop below waits instead, through that answer too.
  await admin.createTopics({
    topics: topics.map(topic => ({ topic, numPartitions: partitions, replicationFactor: 1 })),
    waitForLeaders: false
  })
  const end = Date.now() + 30000
  for (;;) {
    try {
      const { topics: got } = await admin.fetchTopicMetadata({ topics })
      if (got.every(t => t.partitions.length === partitions && t.partitions.every(p => p.leader >= 0))) return
    } catch (e) {
      if (Date.now() > end) throw e
    }
    if (Date.now() > end) throw new Error(`topics ${topics.join(', ')} have no leaders after 30 s`)
    await sleep(300)
  }
}

// Topics of N partitions, a producer writing ids as key and value, and the
// check that every id was handled by some member.
async function setup(kafka, prefix) {
  const run = `${process.pid}-${Date.now()}`
  const topics = [`${prefix}-a-${run}`, `${prefix}-b-${run}`]
  const admin = kafka.admin()
  await admin.connect()
  await createTopics(admin, topics)
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

module.exports = { bootstrap, N, Member, rustBinary, javaClasspath, unitsWhole, settled, onlyLeaverMoved, createTopics, setup }
