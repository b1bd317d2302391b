'use strict'
/**
 * partwise for KafkaJS: the `copartitioned` consumer-group assigner and the
 * partwise partitioners for producers. Both are computed by the Rust core
 * through the native module (native/partwise.node, built by `bash build`),
 * so a KafkaJS leader writes the same assignment bytes as a partwise (Rust)
 * leader, and a KafkaJS member reads a Rust leader's assignment.
 *
 * This file owns only the adaptation to KafkaJS's interfaces: the assigner
 * factory ({ cluster, groupId, logger }) => { name, version, assign, protocol }
 * and the partitioner factory () => ({ topic, partitionMetadata, message }).
 */

const path = require('path')

let native
try {
  native = require(path.join(__dirname, 'native', 'partwise.node'))
} catch (e) {
  throw new Error(
    `partwise-kafkajs: the native module native/partwise.node is missing or does not load (${e.message}); build it with: bash ${path.join(__dirname, 'build')}`
  )
}

const PROTOCOL = 'copartitioned'
// Consumer protocol v3, what the partwise runtime and the Java client send.
const VERSION = 3

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
  const factory = ({ cluster }) => ({
    name: PROTOCOL,
    version: VERSION,

    async assign({ members }) {
      const joined = members.map(m => ({
        memberId: m.memberId,
        groupInstanceId: typeof m.groupInstanceId === 'string' ? m.groupInstanceId : undefined,
        memberMetadata: m.memberMetadata,
      }))
      // KafkaJS hands the leader its own topics; the Rust leader (and so
      // this one) assigns every topic any member subscribes to.
      const topics = native.subscribedTopics(joined)
      await cluster.addMultipleTargetTopics(topics)
      const counts = {}
      for (const t of topics) {
        let parts
        try {
          parts = cluster.findTopicPartitionMetadata(t)
        } catch (_) {
          continue // a topic that does not exist is not assigned
        }
        if (parts && parts.length > 0) counts[t] = parts.length
      }
      return native.assign(joined, counts)
    },

    protocol({ topics }) {
      return {
        name: PROTOCOL,
        metadata: native.encodeSubscription(topics, state.owned, -1),
      }
    },
  })
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

/**
 * A KafkaJS partitioner (`createPartitioner` option of `kafka.producer`)
 * that places keyed records as partwise partitioner `spec` does, e.g.
 * 'java' (murmur2, Java's default), 'librdkafka:consistent_random' (CRC32),
 * 'fnv1a', or a priority spec. Key-less records follow the spec's
 * strategy (round-robin, random or sticky) over the available partitions.
 * A bad spec throws at once, naming it.
 */
function createPartitioner(spec) {
  native.partitionerSpec(String(spec))
  return () => {
    const counters = new Map()
    const sticky = new Map()
    return ({ topic, partitionMetadata, message }) => {
      const n = partitionMetadata.length
      const key = message.key == null ? null : message.key
      const got = native.place(String(spec), key, n)
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

module.exports = {
  CopartitionedAssigner,
  copartitionedAssigner,
  createPartitioner,
  decodeAssignment: native.decodeAssignment,
  decodeSubscription: native.decodeSubscription,
  encodeSubscription: native.encodeSubscription,
  PROTOCOL,
}
