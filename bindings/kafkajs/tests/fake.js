'use strict'
// What the offline tests give a KafkaJS assigner in place of a connected
// cluster: partition metadata for the given topic counts, nothing else.
function fakeCluster(topics) {
  return {
    async addMultipleTargetTopics() {},
    findTopicPartitionMetadata(topic) {
      if (!(topic in topics)) throw new Error(`unknown topic ${topic}`)
      return Array.from({ length: topics[topic] }, (_, p) => ({ partitionId: p, leader: 0 }))
    },
  }
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

module.exports = { fakeCluster, decodeWithKafkajs }
