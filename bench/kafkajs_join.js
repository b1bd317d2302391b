#!/usr/bin/env node
'use strict'
// The leader's JoinGroup-to-SyncGroup time in a real KafkaJS 2.2.4 group on a
// real broker: partwise's copartitionedAssigner (the package's WebAssembly
// core, tracked so members report what they own) against KafkaJS's own
// RoundRobinAssigner, side by side in one run. bench/compare-kafkajs-join runs
// it (and starts a broker); by hand:
//   PARTWISE_TEST_BROKER=127.0.0.1:9092 node bench/kafkajs_join.js
//
// Each side is one group of MEMBERS consumers over two co-partitioned topics
// of PARTITIONS partitions each (created here as pwbench-join-*, deleted at
// the end with the two groups), in two processes: the leader alone (started
// first, so the broker makes it the leader and keeps it there: a classic
// group changes leader only when the leader does not rejoin) and the other
// MEMBERS - 1 together. A round is a follower leaving (consumer.disconnect)
// and, once the group has settled, a new follower joining: two rebalances.
// The sides alternate rebalance by rebalance (one group rebalances at a
// time, the first side swapped every round); WARMUP rounds are discarded,
// ROUNDS are kept.
//
// Measured on the leader from KafkaJS's own instrumentation
// (consumer.events.REQUEST: sentAt and duration, Date.now() milliseconds):
// gap = SyncGroup sentAt - (JoinGroup sentAt + duration), the time from the
// JoinGroup response's arrival to the SyncGroup request's write. It holds
// what KafkaJS's leader does there: decode the JoinGroup response (every
// member's metadata), refresh metadata (one Metadata round trip, timed
// apart as metadata_ms), assigner.assign() (timed apart with
// performance.now(), assign_ms), encode SyncGroup; local_ms is the gap less
// the Metadata round trip, the leader's own work. CPU time, which a loaded
// machine does not inflate by the wait for a core: cpu_ms, the leader
// process's (it holds the leader alone) from the JoinGroup response's arrival
// to the SyncGroup response's (the gap's work plus decoding the SyncGroup
// response and the Metadata one), and assign_cpu_ms. For context: the leader's
// GROUP_JOIN duration (its whole joinAndSync, which waits for every member to
// rejoin) and settle_ms, from the trigger to the last member's GROUP_JOIN.
// A rebalance counts once every member reported the same leader and an
// assignment that holds every partition once (for partwise also whole units)
// and nothing changed for QUIET_MS.
const fs = require('fs')
const os = require('os')
const path = require('path')
const { fork } = require('child_process')
const { performance } = require('perf_hooks')
const binding = path.join(__dirname, '..', 'bindings', 'kafkajs')
const kafkajsDir = path.join(binding, 'node_modules', 'kafkajs')

const SIDES = ['partwise', 'roundrobin']
const PROTOCOL = { partwise: 'copartitioned', roundrobin: 'RoundRobinAssigner' }

function fail(message) {
  console.error(`kafkajs_join: ${message}`)
  process.exit(2)
}

function intEnv(name, dflt, min) {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return dflt
  if (!/^[0-9]+$/.test(raw) || Number(raw) < min) fail(`${name}=${JSON.stringify(raw)}: expected an integer >= ${min}`)
  return Number(raw)
}

const sleep = ms => new Promise(r => setTimeout(r, ms))
const cpuMs = u => (u.user + u.system) / 1000

// ---------------------------------------------------------------- members
// A child process holding some of one side's consumers; the driver sends it
// {cmd: add | remove | stop} and it reports every GROUP_JOIN.
function memberProcess() {
  const { Kafka, logLevel, PartitionAssigners } = require(kafkajsDir)
  let cfg
  const consumers = new Map()
  const send = m => process.send(m)

  function assignerFor(state) {
    // The factory KafkaJS calls once per consumer; assign() is wrapped in
    // place (RoundRobinAssigner's reads this.version) to time it alone.
    const base = cfg.side === 'partwise' ? require(binding).copartitionedAssigner() : PartitionAssigners.roundRobin
    const factory = opts => {
      const a = base(opts)
      const assign = a.assign
      a.assign = async function (group) {
        const t = performance.now()
        const cpu = process.cpuUsage()
        const out = await assign.call(a, group)
        state.assignMs = performance.now() - t
        state.assignCpuMs = cpuMs(process.cpuUsage(cpu))
        state.assignMembers = group.members.length
        return out
      }
      return a
    }
    return [base, factory]
  }

  async function add(key) {
    // KAFKAJS_LOG=WARN (or INFO, DEBUG): the members' KafkaJS log on stderr, to see why a group does not settle.
    const level = logLevel[(process.env.KAFKAJS_LOG || 'NOTHING').toUpperCase()]
    const kafka = new Kafka({ clientId: `pwbench-join-${cfg.side}-${key}`, brokers: [cfg.bootstrap], logLevel: level === undefined ? logLevel.NOTHING : level })
    const state = { joinResponseAt: null, cpuAtJoin: null, metadata: [], sync: null, assignMs: null, assignCpuMs: null, assignMembers: null }
    const [base, factory] = assignerFor(state)
    const consumer = kafka.consumer({
      groupId: cfg.group,
      partitionAssigners: [factory],
      sessionTimeout: 30000,
      rebalanceTimeout: 60000,
      heartbeatInterval: 1000,
      maxWaitTimeInMs: cfg.fetchWaitMs,
    })
    // What the member owns goes into its next JoinGroup (the sticky use the
    // binding's README shows); KafkaJS's own assigner has nothing of the kind.
    if (base.track) base.track(consumer)
    consumer.on(consumer.events.REQUEST, ({ payload: r }) => {
      if (r.apiName === 'JoinGroup') {
        // Emitted as the response arrives, before KafkaJS decodes it.
        state.cpuAtJoin = process.cpuUsage()
        state.joinResponseAt = r.sentAt + r.duration
        state.metadata = []
        state.sync = null
        state.assignMs = null
      } else if (r.apiName === 'Metadata' && state.joinResponseAt !== null && state.sync === null) {
        state.metadata.push(r.duration)
      } else if (r.apiName === 'SyncGroup') {
        state.sync = { sentAt: r.sentAt, duration: r.duration, cpuMs: cpuMs(process.cpuUsage(state.cpuAtJoin)) }
      }
    })
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      let sample = null
      if (payload.isLeader) {
        if (state.sync === null || state.joinResponseAt === null || state.assignMs === null) {
          send({ ev: 'error', key, error: 'a leader GROUP_JOIN without its JoinGroup, assign() and SyncGroup seen' })
          return
        }
        sample = {
          gap_ms: state.sync.sentAt - state.joinResponseAt,
          assign_ms: state.assignMs,
          assign_cpu_ms: state.assignCpuMs,
          cpu_ms: state.sync.cpuMs,
          assign_members: state.assignMembers,
          metadata_ms: state.metadata.reduce((a, b) => a + b, 0),
          metadata_requests: state.metadata.length,
          local_ms: state.sync.sentAt - state.joinResponseAt - state.metadata.reduce((a, b) => a + b, 0),
          sync_ms: state.sync.duration,
          join_ms: payload.duration,
        }
      }
      send({
        ev: 'join',
        key,
        at: Date.now(),
        memberId: payload.memberId,
        leaderId: payload.leaderId,
        protocol: payload.groupProtocol,
        assignment: Object.entries(payload.memberAssignment),
        sample,
      })
    })
    consumer.on(consumer.events.CRASH, ({ payload }) => send({ ev: 'error', key, error: `crash: ${payload.error}` }))
    consumers.set(key, consumer)
    await consumer.connect()
    for (const topic of cfg.topics) await consumer.subscribe({ topic })
    await consumer.run({ eachMessage: async () => {} })
  }

  process.on('message', async m => {
    try {
      if (m.cmd === 'init') {
        cfg = m
        send({ ok: m.id })
      } else if (m.cmd === 'add') {
        await Promise.all(m.keys.map(add))
        send({ ok: m.id })
      } else if (m.cmd === 'remove') {
        await consumers.get(m.key).disconnect()
        consumers.delete(m.key)
        send({ ok: m.id })
      } else if (m.cmd === 'stop') {
        await Promise.all([...consumers.values()].map(c => c.disconnect()))
        const u = process.resourceUsage()
        send({ ok: m.id, max_rss_kb: u.maxRSS, rss_kb: Math.round(process.memoryUsage().rss / 1024) })
        process.disconnect()
      }
    } catch (e) {
      send({ ev: 'error', key: m.key || null, error: `${m.cmd}: ${e.stack || e}` })
    }
  })
}

// ----------------------------------------------------------------- driver
class Child {
  constructor(side, role, cfg, onEvent) {
    this.side = side
    this.role = role
    this.proc = fork(__filename, ['--member-process'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    this.pending = new Map()
    this.next = 0
    this.exited = new Promise(r => this.proc.on('exit', r))
    this.proc.on('message', m => {
      if (m.ok !== undefined) {
        const p = this.pending.get(m.ok)
        this.pending.delete(m.ok)
        p.resolve(m)
      } else onEvent(this, m)
    })
    this.proc.on('exit', (code, signal) => {
      const e = new Error(`the ${side} ${role} process exited (${signal || code})`)
      for (const p of this.pending.values()) p.reject(e)
      this.pending.clear()
    })
    this.ready = this.call({ cmd: 'init', side, ...cfg })
  }
  call(msg) {
    const id = ++this.next
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      this.proc.send({ ...msg, id })
    })
  }
}

const median = xs => {
  const s = xs.slice().sort((a, b) => a - b)
  const n = s.length
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2
}
const round1 = x => Math.round(x * 10) / 10
function stats(xs) {
  return { median: round1(median(xs)), min: round1(Math.min(...xs)), max: round1(Math.max(...xs)), n: xs.length }
}

async function createTopics(admin, topics, partitions) {
  // One topic a request: a KRaft controller takes at most 10,000 records per
  // operation (BoundedListTooLongException), a partition being one record.
  for (const topic of topics) {
    try {
      // KafkaJS's own wait for leaders gives up on the first
      // UNKNOWN_TOPIC_OR_PARTITION a new topic answers: the loop below waits.
      await admin.createTopics({ waitForLeaders: false, topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }] })
    } catch (e) {
      const why = (e.errors || []).map(x => `${x.topic || topic}: ${x.type || x.message}`).join('; ')
      throw new Error(`creating ${topic} (${partitions} partitions): ${e.message}${why ? ` (${why})` : ''}`)
    }
  }
  const end = Date.now() + 120000
  for (;;) {
    try {
      const { topics: got } = await admin.fetchTopicMetadata({ topics })
      if (got.every(t => t.partitions.length === partitions && t.partitions.every(p => p.leader >= 0))) break
    } catch (e) {
      // A broker answers UNKNOWN_TOPIC_OR_PARTITION for a moment after creation.
      if (Date.now() > end) throw e
    }
    if (Date.now() > end) throw new Error(`topics ${topics.join(', ')} have no leaders after 120 s`)
    await sleep(500)
  }
  // A leader in the metadata is not yet a partition the broker serves: until
  // it has created the partition's log it answers ListOffsets with
  // NOT_LEADER_OR_FOLLOWER, and a KafkaJS member getting that while it
  // resolves its offsets refreshes metadata and re-joins the group, so every
  // member (the leader too: "Leader re-joining group during Stable") restarts
  // the rebalance for all. With 10,000 new partitions on a busy broker that
  // lasts tens of seconds, and the group keeps re-joining for as long: wait
  // until every partition answers.
  for (;;) {
    try {
      for (const topic of topics) await admin.fetchTopicOffsets(topic)
      return
    } catch (e) {
      if (Date.now() > end) throw new Error(`topics ${topics.join(', ')}: not every partition answers ListOffsets after 120 s (${e.message})`)
    }
    await sleep(500)
  }
}

async function driver() {
  const bootstrap = process.env.PARTWISE_TEST_BROKER || process.env.PARTWISE_KAFKA_BOOTSTRAP
  if (!bootstrap) fail('PARTWISE_TEST_BROKER (host:port of the broker) is not set; bench/compare-kafkajs-join starts one')
  const MEMBERS = intEnv('MEMBERS', 100, 2)
  const PARTITIONS = intEnv('PARTITIONS', 1000, 1)
  const ROUNDS = intEnv('ROUNDS', 5, 1)
  const WARMUP = intEnv('WARMUP', 1, 0)
  const QUIET_MS = intEnv('QUIET_MS', 2000, 0)
  const SETTLE_S = intEnv('SETTLE_S', 300, 1)
  // The consumers' maxWaitTimeInMs. Before every fetch a KafkaJS 2.2.4 member
  // compares each subscribed topic's partition list with the one it saw at
  // its last sync (ConsumerGroup.checkForStaleAssignment, arrayDiff: an
  // indexOf per partition, so P^2 / 2 steps a topic, whatever the member is
  // assigned): ~10 ms of CPU a topic at 5,000 partitions on this machine, so
  // 200 idle members fetching every second need more than the two cores and
  // stop answering in time (SyncGroup timeouts, members dropped, the group
  // rebalancing over and over). A longer wait makes idle members fetch less
  // often; the leader's JoinGroup-to-SyncGroup step does not depend on it.
  const FETCH_WAIT_MS = intEnv('FETCH_WAIT_MS', 1000, 0)
  const out = process.env.RESULTS || path.join(__dirname, 'results', 'kafkajs_join.json')
  if (!fs.existsSync(kafkajsDir)) fail(`${kafkajsDir} is missing: bash bindings/kafkajs/build installs it`)

  const { Kafka, logLevel } = require(kafkajsDir)
  const run = `${Date.now().toString(36)}-${process.pid}`
  const topics = [`pwbench-join-${run}-a`, `pwbench-join-${run}-b`]
  const groups = Object.fromEntries(SIDES.map(s => [s, `pwbench-join-${run}-${s}`]))
  // Quiet: a new topic's metadata fails for a moment, which KafkaJS logs as an
  // error per attempt; a real failure is thrown and reported.
  const kafka = new Kafka({ clientId: 'pwbench-join-admin', brokers: [bootstrap], logLevel: logLevel.NOTHING })
  const admin = kafka.admin()
  await admin.connect()
  const load = [os.loadavg().map(round1)]
  const t0 = Date.now()
  let created = false
  const children = []
  let failure = null
  try {
    created = true // deleting a topic that was never made only logs a line
    await createTopics(admin, topics, PARTITIONS)
    console.error(`kafkajs_join: topics ${topics.join(', ')} (${PARTITIONS} partitions each) on ${bootstrap}`)

    // Every member's latest GROUP_JOIN by key, and the leader samples.
    const latest = new Map()
    const samples = []
    const onEvent = (child, m) => {
      if (m.ev === 'join') {
        latest.set(m.key, m)
        if (m.sample) samples.push({ side: child.side, role: child.role, at: m.at, ...m.sample })
      } else if (m.ev === 'error' && !failure) failure = new Error(`${child.side} ${child.role} member ${m.key}: ${m.error}`)
    }
    const sides = {}
    for (const side of SIDES) {
      const cfg = { bootstrap, group: groups[side], topics, fetchWaitMs: FETCH_WAIT_MS }
      sides[side] = { leader: new Child(side, 'leader', cfg, onEvent), followers: new Child(side, 'followers', cfg, onEvent), live: [], nextKey: 0 }
      children.push(sides[side].leader, sides[side].followers)
    }
    await Promise.all(children.map(c => c.ready))

    // Settled: every live member's GROUP_JOIN since `since`, one leader, the
    // side's protocol, every partition once (whole units for partwise), and
    // QUIET_MS without another join.
    const everyPartition = PARTITIONS * topics.length
    async function settle(side, since) {
      const live = sides[side].live
      const end = Date.now() + SETTLE_S * 1000
      let why = ''
      for (;;) {
        if (failure) throw failure
        if (Date.now() > end) throw new Error(`${side}: the group did not settle in ${SETTLE_S} s (${why})`)
        await sleep(100)
        const joins = live.map(k => latest.get(k))
        if (joins.some(j => !j || j.at < since)) {
          why = `${joins.filter(j => j && j.at >= since).length} of ${live.length} members joined`
          continue
        }
        const last = Math.max(...joins.map(j => j.at))
        if (Date.now() - last < QUIET_MS) {
          why = `a member joined again ${Date.now() - last} ms ago`
          continue
        }
        if (new Set(joins.map(j => j.leaderId)).size !== 1) {
          why = 'members name different leaders'
          continue
        }
        if (joins.some(j => j.protocol !== PROTOCOL[side])) throw new Error(`${side}: protocol ${joins[0].protocol}, expected ${PROTOCOL[side]}`)
        const owner = new Map()
        let twice = 0
        for (const j of joins) {
          for (const [t, ps] of j.assignment) {
            for (const p of ps) {
              if (owner.has(`${t}/${p}`)) twice++
              owner.set(`${t}/${p}`, j.key)
            }
          }
        }
        if (twice > 0 || owner.size !== everyPartition) {
          why = `${owner.size} of ${everyPartition} partitions assigned, ${twice} twice`
          continue
        }
        let split = 0
        for (let p = 0; p < PARTITIONS; p++) if (new Set(topics.map(t => owner.get(`${t}/${p}`))).size > 1) split++
        if (side === 'partwise' && split > 0) throw new Error(`partwise: ${split} units split across members`)
        const leaderKey = joins.find(j => j.memberId === j.leaderId)
        return { settle_ms: last - since, split_units: split, leader: leaderKey ? leaderKey.key : null, members: live.length }
      }
    }

    async function addMembers(side, child, n) {
      const keys = Array.from({ length: n }, () => `${child.role[0]}${sides[side].nextKey++}`)
      sides[side].live.push(...keys)
      await child.call({ cmd: 'add', keys })
      return keys
    }

    // Start-up (not measured): the leader alone, then the others.
    for (const side of SIDES) {
      const s = sides[side]
      let since = Date.now()
      const [leaderKey] = await addMembers(side, s.leader, 1)
      await settle(side, since)
      since = Date.now()
      await addMembers(side, s.followers, MEMBERS - 1)
      const st = await settle(side, since)
      if (st.leader !== leaderKey) throw new Error(`${side}: member ${st.leader} leads, not the leader process's ${leaderKey}`)
      console.error(`kafkajs_join: ${side}: ${MEMBERS} members settled in ${((Date.now() - since) / 1000).toFixed(1)} s`)
    }

    const rebalances = []
    async function rebalance(side, kind, roundNo) {
      const s = sides[side]
      const since = Date.now()
      const from = samples.length
      if (kind === 'leave') {
        // The oldest follower leaves: never the leader process's member.
        const key = s.live.find(k => k.startsWith('f'))
        s.live.splice(s.live.indexOf(key), 1)
        await s.followers.call({ cmd: 'remove', key })
      } else {
        await addMembers(side, s.followers, 1)
      }
      const st = await settle(side, since)
      const mine = samples.slice(from).filter(x => x.side === side && x.at >= since)
      if (mine.length === 0) throw new Error(`${side} ${kind}: the group settled without a leader sample`)
      // Only the last leader pass made the settled generation; earlier ones
      // (a second rebalance before the first settled) are kept as a count.
      const x = mine[mine.length - 1]
      const r = { round: roundNo, side, kind, leader_passes: mine.length, ...st, ...x }
      delete r.at
      rebalances.push(r)
      console.error(
        `kafkajs_join: round ${roundNo} ${side} ${kind}: gap ${x.gap_ms} ms (assign ${x.assign_ms.toFixed(1)}, metadata ${x.metadata_ms}; CPU ${x.cpu_ms.toFixed(1)}), ` +
          `leader join ${x.join_ms} ms, settled in ${st.settle_ms} ms, ${st.members} members`
      )
    }

    for (let r = 0; r < WARMUP + ROUNDS; r++) {
      const order = r % 2 === 0 ? SIDES : SIDES.slice().reverse()
      for (const kind of ['leave', 'join']) for (const side of order) await rebalance(side, kind, r - WARMUP)
    }
    load.push(os.loadavg().map(round1))

    // Peak RSS per process, then every member leaves.
    const rss = {}
    for (const side of SIDES) {
      rss[side] = {}
      for (const role of ['leader', 'followers']) {
        const m = await sides[side][role].call({ cmd: 'stop' })
        rss[side][role] = { max_rss_mb: round1(m.max_rss_kb / 1024), rss_at_end_mb: round1(m.rss_kb / 1024) }
      }
    }

    const kept = rebalances.filter(x => x.round >= 0)
    const result = {
      what:
        "KafkaJS leader: SyncGroup sentAt - (JoinGroup sentAt + duration) from consumer.events.REQUEST (gap_ms, Date.now() ms); the Metadata round trip in between (metadata_ms) and the rest (local_ms = gap_ms - metadata_ms); assign() alone by performance.now() (assign_ms); the leader process's CPU time from the JoinGroup response to the SyncGroup response (cpu_ms) and in assign() (assign_cpu_ms); the leader's GROUP_JOIN duration (join_ms); trigger to the last member's GROUP_JOIN (settle_ms)",
      node: process.version,
      kafkajs: require(path.join(kafkajsDir, 'package.json')).version,
      broker: process.env.BENCH_BROKER || bootstrap,
      wasm_bytes: fs.statSync(path.join(binding, 'partwise.wasm')).size,
      machine: { cpus: os.cpus().length, cpu: os.cpus()[0].model, loadavg_start: load[0], loadavg_end: load[1] },
      members: MEMBERS,
      topics: topics.length,
      partitions_per_topic: PARTITIONS,
      rounds: ROUNDS,
      warmup_rounds: WARMUP,
      consumer_config: { sessionTimeout: 30000, rebalanceTimeout: 60000, heartbeatInterval: 1000, maxWaitTimeInMs: FETCH_WAIT_MS },
      seconds: Math.round((Date.now() - t0) / 1000),
      summary: {},
      rss_mb: rss,
      rebalances: kept,
      warmup: rebalances.filter(x => x.round < 0),
    }
    const metrics = ['gap_ms', 'local_ms', 'assign_ms', 'metadata_ms', 'cpu_ms', 'assign_cpu_ms', 'join_ms', 'settle_ms']
    for (const kind of ['all', 'leave', 'join']) {
      const sel = kept.filter(x => kind === 'all' || x.kind === kind)
      const s = {}
      for (const side of SIDES) {
        s[side] = {}
        for (const m of metrics) s[side][m] = stats(sel.filter(x => x.side === side).map(x => x[m]))
        s[side].split_units = stats(sel.filter(x => x.side === side).map(x => x.split_units))
      }
      s.partwise_over_roundrobin = {}
      for (const m of metrics) {
        const d = s.roundrobin[m].median
        s.partwise_over_roundrobin[m] = d > 0 ? Math.round((s.partwise[m].median / d) * 100) / 100 : null
      }
      result.summary[kind] = s
    }
    // The same rebalance of both sides, one round: ratios that share a stretch of the machine.
    result.paired_gap_ratios = []
    result.paired_cpu_ratios = []
    for (let r = 0; r < ROUNDS; r++) {
      for (const kind of ['leave', 'join']) {
        const [p, q] = SIDES.map(side => kept.find(x => x.round === r && x.kind === kind && x.side === side))
        result.paired_gap_ratios.push(q.gap_ms > 0 ? Math.round((p.gap_ms / q.gap_ms) * 100) / 100 : null)
        result.paired_cpu_ratios.push(q.cpu_ms > 0 ? Math.round((p.cpu_ms / q.cpu_ms) * 100) / 100 : null)
      }
    }
    fs.mkdirSync(path.dirname(out), { recursive: true })
    fs.writeFileSync(out, JSON.stringify(result, null, 1) + '\n')
    fs.writeFileSync(out.replace(/\.json$/, '') + '.md', markdown(result))
    console.log(markdown(result))
  } catch (e) {
    failure = failure || e
  } finally {
    for (const c of children) if (c.proc.exitCode === null) c.proc.kill('SIGKILL')
    await Promise.all(children.map(c => c.exited))
    // Only what this run made: its two topics and its two groups.
    if (created) {
      try {
        await admin.deleteTopics({ topics, timeout: 60000 })
      } catch (e) {
        console.error(`kafkajs_join: deleting ${topics.join(', ')}: ${e.message}`)
      }
      if (children.length > 0) try {
        await admin.deleteGroups(Object.values(groups))
      } catch (e) {
        // A group still holding a member killed above is not empty yet.
        console.error(`kafkajs_join: deleting groups ${Object.values(groups).join(', ')}: ${e.message}`)
      }
    }
    await admin.disconnect()
  }
  if (failure) {
    console.error(`kafkajs_join: ${failure.stack || failure}`)
    process.exit(1)
  }
}

function markdown(r) {
  const a = r.summary.all
  const f = s => `${s.median} (${s.min}-${s.max})`
  const lines = [
    `# KafkaJS leader: JoinGroup response to SyncGroup request`,
    '',
    `${r.members} KafkaJS ${r.kafkajs} consumers per group (Node ${r.node}), 2 topics x ${r.partitions_per_topic} partitions, ` +
      `${r.rounds} rounds (+${r.warmup_rounds} warm-up) of one follower leaving and one joining, per assigner; broker ${r.broker}; ` +
      `${r.machine.cpus} CPUs, load average ${r.machine.loadavg_start.join(' ')} at the start, ${r.machine.loadavg_end.join(' ')} at the end.`,
    '',
    'Medians (min-max) over every kept rebalance, ms:',
    '',
    '| | partwise copartitioned (WebAssembly) | KafkaJS RoundRobinAssigner | partwise / round-robin |',
    '| --- | --- | --- | --- |',
  ]
  const names = {
    gap_ms: 'leader JoinGroup response -> SyncGroup sent',
    metadata_ms: 'of which the Metadata round trip',
    local_ms: 'the rest: the leader\'s own work',
    assign_ms: 'of which assign()',
    cpu_ms: "the leader process's CPU time, JoinGroup response to SyncGroup response",
    assign_cpu_ms: "of which assign()'s",
    join_ms: "leader's GROUP_JOIN duration",
    settle_ms: 'trigger -> last member joined',
  }
  for (const [m, label] of Object.entries(names)) {
    lines.push(`| ${label} | ${f(a.partwise[m])} | ${f(a.roundrobin[m])} | ${a.partwise_over_roundrobin[m]} |`)
  }
  lines.push(
    '',
    `Leave / join medians of the gap: partwise ${r.summary.leave.partwise.gap_ms.median} / ${r.summary.join.partwise.gap_ms.median} ms, ` +
      `round-robin ${r.summary.leave.roundrobin.gap_ms.median} / ${r.summary.join.roundrobin.gap_ms.median} ms. ` +
      `Paired ratios (partwise / round-robin, same round and trigger): gap ${r.paired_gap_ratios.join(', ')}; CPU ${r.paired_cpu_ratios.join(', ')}.`,
    '',
    `Units (partition p of both topics) split across members: partwise ${f(a.partwise.split_units)}, round-robin ${f(a.roundrobin.split_units)}.`,
    '',
    `Peak RSS, MB: partwise leader ${r.rss_mb.partwise.leader.max_rss_mb}, its ${r.members - 1} followers' process ${r.rss_mb.partwise.followers.max_rss_mb}; ` +
      `round-robin leader ${r.rss_mb.roundrobin.leader.max_rss_mb}, followers ${r.rss_mb.roundrobin.followers.max_rss_mb}.`,
    ''
  )
  return lines.join('\n')
}

if (process.argv[2] === '--member-process') memberProcess()
else if (process.argv.length > 2) fail(`unexpected arguments ${JSON.stringify(process.argv.slice(2))} (settings are environment variables: see the header)`)
else driver()
