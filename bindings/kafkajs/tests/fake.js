'use strict'
// What the offline tests give a KafkaJS assigner in place of a connected
// cluster, modelled on KafkaJS 2.2.4's Cluster against a broker that
// creates topics on demand (auto.create.topics.enable, Kafka's default):
// - its metadata cache holds the consumer's target topics (by default every
//   topic: a leader subscribed to all of them), loaded as KafkaJS loads it
//   before it calls assign; findTopicPartitionMetadata answers from the
//   cache, [] for a topic not in it;
// - a Metadata request naming topics creates the legal names that are
//   missing (one partition each) and fails as a whole, with
//   INVALID_TOPIC_EXCEPTION, when a name is not a legal topic name;
//   addMultipleTargetTopics keeps the new names as target topics (refreshed
//   from then on) unless that request failed so;
// - a Metadata request naming no topic lists every topic and creates none;
//   the first `failListings` of them fail, as KafkaJS fails a listing when
//   any topic of the cluster has an error (one being created or deleted).
// `created` lists the topics requests created, `requests` the topics each
// request named.
function legal(name) {
  return /^[a-zA-Z0-9._-]{1,249}$/.test(name) && name !== '.' && name !== '..'
}

function fakeCluster(topics, { targetTopics = Object.keys(topics), failListings = 0 } = {}) {
  let listingsFailed = 0
  const existing = new Map(Object.entries(topics))
  const created = []
  const requests = []
  let target = new Set(targetTopics)
  const describe = name => ({
    topic: name,
    partitionMetadata: Array.from({ length: existing.get(name) }, (_, p) => ({ partitionId: p, leader: 0 })),
  })
  const answer = names => ({ topicMetadata: names.filter(n => existing.has(n)).map(describe) })
  const request = async names => {
    requests.push(names.slice())
    if (names.length === 0) {
      if (listingsFailed < failListings) {
        listingsFailed++
        const e = new Error('This server does not host this topic-partition')
        Object.assign(e, { name: 'KafkaJSProtocolError', type: 'UNKNOWN_TOPIC_OR_PARTITION', retriable: true })
        throw e
      }
      return answer([...existing.keys()])
    }
    const bad = names.find(n => !legal(n))
    if (bad !== undefined) {
      const e = new Error(`The request attempted to perform an operation on an invalid topic (${JSON.stringify(bad)})`)
      Object.assign(e, { name: 'KafkaJSProtocolError', type: 'INVALID_TOPIC_EXCEPTION', retriable: false })
      throw e
    }
    for (const n of names) {
      if (!existing.has(n)) {
        existing.set(n, 1)
        created.push(n)
      }
    }
    return answer(names)
  }
  let cache = answer([...target])
  return {
    created,
    requests,
    targetTopics: () => [...target].sort(),
    async refreshMetadata() {
      cache = await request([...target])
    },
    async addMultipleTargetTopics(names) {
      const previous = new Set(target)
      for (const n of names) target.add(n)
      try {
        cache = await request([...target])
      } catch (e) {
        if (e.type === 'INVALID_TOPIC_EXCEPTION') target = previous
        throw e
      }
    },
    async metadata({ topics: names = [] } = {}) {
      return request(names)
    },
    findTopicPartitionMetadata(topic) {
      const t = cache.topicMetadata.find(x => x.topic === topic)
      return t ? t.partitionMetadata : []
    },
  }
}

// A KafkaJS-style logger that keeps what it is told: [level, message, extra].
function captureLogger() {
  const lines = []
  const at = level => (message, extra) => lines.push([level, message, extra])
  const logger = { lines, error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') }
  logger.namespace = () => logger
  return logger
}

// Partitions by member from KafkaJS's own decoding of the assignments.
function decodeWithKafkajs(results) {
  const { AssignerProtocol } = require('kafkajs')
  const out = {}
  for (const { memberId, memberAssignment } of results) {
    const a = AssignerProtocol.MemberAssignment.decode(memberAssignment)
    const list = []
    for (const [t, ps] of Object.entries(a.assignment)) for (const p of ps) list.push([t, p])
    list.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] - y[1]))
    out[memberId] = { partitions: list, userData: a.userData, version: a.version }
  }
  return out
}

module.exports = { fakeCluster, captureLogger, decodeWithKafkajs }
