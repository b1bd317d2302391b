'use strict'
/**
 * The adaptation of partwise's core to KafkaJS's interfaces: the assigner
 * factory ({ cluster, groupId, logger }) => { name, version, assign, protocol }
 * and the partitioner factory () => ({ topic, partitionMetadata, message }).
 *
 * `core` is what computes: the WebAssembly module (./core.js, what the
 * package ships), or the napi-rs native module, which bench/kafkajs_assign.js
 * measures beside it through this same adapter. Both are the Rust code the
 * partwise runtime's leader runs, so a KafkaJS leader writes the same
 * assignment bytes as a partwise (Rust) leader, and a KafkaJS member reads a
 * Rust leader's assignment.
 */
module.exports = function kafkajsBinding(core) {
  const PROTOCOL = 'copartitioned'
  // Consumer protocol v3, what the partwise runtime and the Java client send.
  const VERSION = 3
  // Names as a log line shows them: a hostile member may send hundreds of
  // names of hundreds of characters.
  function someNames(names) {
    const shown = names.slice(0, 10).map(n => JSON.stringify(n.length > 60 ? `${n.slice(0, 60)}...` : n))
    return names.length > 10 ? `${shown.join(', ')} and ${names.length - 10} more` : shown.join(', ')
  }

  // KafkaJS hands an assigner its root logger; without one (an assigner built
  // by hand) warnings still reach stderr.
  function assignerLogger(logger) {
    if (logger && typeof logger.namespace === 'function') return logger.namespace('CopartitionedAssigner')
    if (logger && typeof logger.warn === 'function') return logger
    const stderr = (message, extra) => process.stderr.write(`partwise-kafkajs: ${message} ${JSON.stringify(extra || {})}\n`)
    return { error: stderr, warn: stderr, info() {}, debug() {} }
  }

  // Partition counts of the topics the members subscribe to that exist. The
  // leader's own topics are in the cluster's cache already (KafkaJS refreshed
  // it before calling assign). Other members' topics are looked up in a
  // listing of every topic: a Metadata request that names topics makes the
  // broker create them (auto.create.topics.enable) or fail the request for
  // a name that is not a legal topic name ('', '..', 'a/b', 250 characters),
  // and adding them to the cluster's target topics would refresh (and
  // re-create) them for the consumer's whole life. A name the listing does
  // not have is assigned to no one, as KafkaJS's RoundRobinAssigner assigns
  // only topics the cluster knows; the listing, not a local rule on names,
  // decides, so this leader assigns what a Rust or Java leader would.
  const LISTING_RETRIES = [250, 500, 1000]
  async function partitionCounts(cluster, wanted, log, groupId) {
    const counts = {}
    const known = t => {
      try {
        const parts = cluster.findTopicPartitionMetadata(t)
        return Array.isArray(parts) ? parts.length : 0
      } catch (_) {
        return 0 // metadata not loaded: look it up like any other topic
      }
    }
    const other = []
    for (const t of wanted) {
      const n = known(t)
      if (n > 0) counts[t] = n
      else other.push(t)
    }
    if (other.length === 0) return counts
    let listing
    for (let attempt = 0; ; attempt++) {
      try {
        listing = await cluster.metadata({ topics: [] })
        break
      } catch (e) {
        // KafkaJS fails a whole listing for one topic's error, and a topic
        // just created or being deleted anywhere on the cluster has one for
        // a moment: try again briefly before giving up on these topics.
        if (attempt < LISTING_RETRIES.length) {
          await new Promise(r => setTimeout(r, LISTING_RETRIES[attempt]))
          continue
        }
        log.warn(
          `could not list the cluster's topics (${e.message}); topics only other members subscribe to are not assigned this generation: ${someNames(other)}`,
          { groupId }
        )
        return counts
      }
    }
    const byName = new Map((listing.topicMetadata || []).map(t => [t.topic, t.partitionMetadata || []]))
    const missing = []
    for (const t of other) {
      const parts = byName.get(t)
      if (parts && parts.length > 0) counts[t] = parts.length
      else missing.push(t)
    }
    if (missing.length > 0) {
      log.info(`members subscribe to topics the cluster does not have; no one is assigned them: ${someNames(missing)}`, { groupId })
    }
    return counts
  }

  /**
   * An assigner factory whose members remember what they were assigned, so
   * that each JoinGroup tells the leader what this member owns (the leader
   * keeps units with their owners). Call `.track(consumer)` once after
   * `kafka.consumer(...)`; without it the assignment is still whole-unit,
   * but not sticky across generations.
   */
  function copartitionedAssigner() {
    // Owned partitions as [topic, partition], from the last GROUP_JOIN.
    const state = { owned: [] }
    const factory = ({ cluster, groupId, logger }) => {
      const log = assignerLogger(logger)
      return {
        name: PROTOCOL,
        version: VERSION,

        async assign({ members }) {
          // Each member's metadata is decoded once, on its own: bytes that
        // do not decode are that member's fault, so it is named in the log
        // and assigned nothing while the others are assigned as usual.
        // Throwing instead would make KafkaJS retry the same join for
        // minutes and then stop the leader.
        const read = core.readMembers(members)
        try {
          const wanted = new Set()
          read.members.forEach((r, i) => {
            if (r.error === undefined) {
              for (const t of r.topics) wanted.add(t)
              return
            }
            const memberId = members[i].memberId
            log.warn(`member '${memberId}' sent subscription metadata that does not decode (${r.error}); it is assigned nothing`, {
              groupId,
              memberId,
            })
          })
          // KafkaJS hands the leader its own topics; the Rust leader (and so
          // this one) assigns every topic any member subscribes to that exists.
          const counts = await partitionCounts(cluster, [...wanted].sort(), log, groupId)
          return core.assign(read.handle, counts)
        } catch (e) {
          core.release(read.handle)
          throw e
        }
      },

      protocol({ topics }) {
          return {
            name: PROTOCOL,
            metadata: core.encodeSubscription(topics, state.owned, -1),
          }
        },
      }
    }
    factory.track = consumer => {
      consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
        const owned = []
        for (const [topic, parts] of Object.entries(payload.memberAssignment || {})) {
          for (const p of parts) owned.push([topic, p])
        }
        state.owned = owned
      })
      return factory
    }
    factory.owned = () => state.owned.slice()
    return factory
  }

  /** A ready-made assigner factory (not sticky: see copartitionedAssigner). */
  const CopartitionedAssigner = copartitionedAssigner()

  // Owned partitions and their generation as subscription user data
  // (`pwo\0`, as the Rust, Java, Go and Python members write them):
  // @platformatic/kafka sends an empty owned-partitions field unless its
  // protocol is cooperative-sticky, so a member's claims travel here.
  const OWNED_MAGIC = Buffer.from('pwo\0', 'latin1')
  function encodeOwned(owned, generation) {
    const byTopic = new Map()
    for (const [t, p] of owned) {
      if (!byTopic.has(t)) byTopic.set(t, [])
      byTopic.get(t).push(p)
    }
    const parts = [OWNED_MAGIC, int32(generation), int32(byTopic.size)]
    for (const t of [...byTopic.keys()].sort(utf8Order)) {
      const name = Buffer.from(t, 'utf8')
      const ps = byTopic.get(t)
      const len = Buffer.alloc(2)
      len.writeInt16BE(name.length)
      parts.push(len, name, int32(ps.length), ...ps.map(int32))
    }
    return Buffer.concat(parts)
  }
  function int32(n) {
    const b = Buffer.alloc(4)
    b.writeInt32BE(n | 0)
    return b
  }
  function utf8Order(a, b) {
    return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))
  }
  /** The claims in `pwo\0` user data; [] for anything else (truncated, trailing or foreign bytes). */
  function decodeOwned(data) {
    if (!Buffer.isBuffer(data) || data.length < 12 || !data.subarray(0, 4).equals(OWNED_MAGIC)) return []
    let at = 8
    const need = n => {
      if (at + n > data.length) throw new RangeError('truncated')
    }
    try {
      need(4)
      const topics = data.readInt32BE(at)
      at += 4
      if (topics < 0) return []
      const out = []
      for (let i = 0; i < topics; i++) {
        need(2)
        const len = data.readInt16BE(at)
        at += 2
        if (len < 0) return []
        need(len)
        const name = data.toString('utf8', at, at + len)
        at += len
        need(4)
        const n = data.readInt32BE(at)
        at += 4
        if (n < 0) return []
        need(4 * n)
        for (let j = 0; j < n; j++, at += 4) out.push([name, data.readInt32BE(at)])
      }
      return at === data.length ? out : []
    } catch (_) {
      return []
    }
  }

  /**
   * The `copartitioned` assigner for @platformatic/kafka's classic consumer
   * groups, on the same WebAssembly core as the KafkaJS assigner:
   *
   *   const pw = platformaticAssigner()
   *   const consumer = new Consumer({ groupId, clientId, bootstrapBrokers, ...pw.options })
   *   pw.track(consumer)
   *
   * `options` are the consumer's group options: the protocol
   * (`protocols`), the subscription user data carrying what the member owns
   * (`protocolsMetadata`, read from the tracked consumer's assignments) and
   * the leader's `partitionAssigner`. The leader re-encodes each member's
   * subscription (its topics, and its owned partitions from the standard
   * field or else its `pwo\0` user data) and runs the Rust leader's code on
   * it, so it places what a partwise leader of any runtime places, with the
   * limits of @platformatic/kafka's interface: the assigner is handed no
   * `group.instance.id` (static members rank by member id) and only the
   * partition counts of the leader's own topics (a topic only other members
   * subscribe to is assigned to no one that generation), and the consumer
   * writes its static `assignmentUserData` in every assignment, so the
   * members do not receive the co-partition groups from it.
   */
  function platformaticAssigner() {
    let consumer = null
    const options = {
      protocols: [{ name: PROTOCOL, version: VERSION }],
      protocolsMetadata(_protocols, topics) {
        const owned = []
        for (const a of (consumer && consumer.assignments) || []) {
          for (const p of a.partitions) owned.push([a.topic, p])
        }
        const generation = consumer && consumer.memberId && owned.length > 0 ? consumer.generationId : -1
        return encodeOwned(owned, generation)
      },
      partitionAssigner(_current, members, _topics, metadata) {
        const joined = []
        const wanted = new Set()
        for (const [memberId, m] of members) {
          const topics = m.topics || []
          for (const t of topics) wanted.add(t)
          let owned = []
          for (const a of m.ownedPartitions || []) for (const p of a.partitions) owned.push([a.topic, p])
          if (owned.length === 0) owned = decodeOwned(m.metadata)
          joined.push({ memberId, memberMetadata: core.encodeSubscription(topics, owned, m.generationId ?? -1) })
        }
        const counts = {}
        for (const t of [...wanted].sort()) {
          const known = metadata && metadata.topics && metadata.topics.get(t)
          if (known && known.partitionsCount > 0) counts[t] = known.partitionsCount
        }
        const read = core.readMembers(joined)
        let out
        try {
          out = core.assign(read.handle, counts)
        } catch (e) {
          core.release(read.handle)
          throw e
        }
        return out.map(({ memberId, memberAssignment }) => {
          const assignments = new Map()
          for (const [topic, p] of core.decodeAssignment(memberAssignment).partitions) {
            if (!assignments.has(topic)) assignments.set(topic, { topic, partitions: [] })
            assignments.get(topic).partitions.push(p)
          }
          return { memberId, assignments }
        })
      },
    }
    return {
      options,
      track(c) {
        consumer = c
        return this
      },
      owned() {
        const owned = []
        for (const a of (consumer && consumer.assignments) || []) for (const p of a.partitions) owned.push([a.topic, p])
        return owned
      },
    }
  }

  /**
   * A KafkaJS partitioner (`createPartitioner` option of `kafka.producer`)
   * that places keyed records as partwise partitioner `spec` does, e.g.
   * 'java' (murmur2, Java's default), 'librdkafka:consistent_random' (CRC32),
   * 'fnv1a', or a priority spec. Key-less records follow the spec's
   * strategy (round-robin, random or sticky) over the available partitions.
   * A bad spec throws at once, naming it.
   */
  function createPartitioner(spec) {
    // Parsed once: a priority spec's regexes are compiled here, not per record.
    const partitioner = new core.Partitioner(String(spec))
    return () => {
      const counters = new Map()
      const sticky = new Map()
      return ({ topic, partitionMetadata, message }) => {
        const n = partitionMetadata.length
        const key = message.key == null ? null : message.key
        const got = partitioner.place(key, n, headerPairs(message.headers))
        if (got.kind === 'partition') return got.partition
        if (got.kind === 'rejected') {
          throw new Error(`partitioner '${spec}': rejects this record for topic '${topic}'`)
        }
        const available = partitionMetadata.filter(p => p.leader >= 0).map(p => p.partitionId)
        const pool = available.length > 0 ? available : partitionMetadata.map(p => p.partitionId)
        if (got.kind === 'roundrobin') {
          const next = counters.get(topic) || 0
          counters.set(topic, next + 1)
          return pool[next % pool.length]
        }
        if (got.kind === 'sticky') {
          // KafkaJS sends one batch per send(); a partition per topic until
          // the pool changes is the nearest it has to a sticky batch.
          const s = sticky.get(topic)
          if (s !== undefined && pool.includes(s)) return s
          const pick = pool[Math.floor(Math.random() * pool.length)]
          sticky.set(topic, pick)
          return pick
        }
        return pool[Math.floor(Math.random() * pool.length)]
      }
    }
  }

  // KafkaJS's message headers ({ name: value | [values] }, values strings or
  // Buffers) as the [name, value] byte pairs a priority header rule matches.
  function headerPairs(headers) {
    if (headers == null || typeof headers !== 'object') return undefined
    const pairs = []
    for (const [name, value] of Object.entries(headers)) {
      for (const v of Array.isArray(value) ? value : [value]) {
        if (v == null) continue
        pairs.push([Buffer.from(name), Buffer.isBuffer(v) ? v : Buffer.from(String(v))])
      }
    }
    return pairs.length > 0 ? pairs : undefined
  }

  return {
    CopartitionedAssigner,
    copartitionedAssigner,
    createPartitioner,
    platformaticAssigner,
    encodeOwned,
    decodeOwned,
    decodeAssignment: core.decodeAssignment,
    decodeSubscription: core.decodeSubscription,
    encodeSubscription: core.encodeSubscription,
    PROTOCOL,
  }
}
