// Types of partwise-kafkajs (KafkaJS 2.2.4's own types for its interfaces).
import type { Consumer, ICustomPartitioner, PartitionAssigner } from 'kafkajs'

/** A topic and a partition index. */
export type TopicPartition = [topic: string, partition: number]

/**
 * An assigner factory for `partitionAssigners` whose members remember what
 * they were assigned, so each JoinGroup tells the leader what the member
 * owns and the leader keeps units with their owners.
 */
export interface CopartitionedAssignerFactory extends PartitionAssigner {
  /** Follows `consumer`'s GROUP_JOIN events (call once after `kafka.consumer(...)`); returns the factory. */
  track(consumer: Consumer): CopartitionedAssignerFactory
  /** What this member owns now, as [topic, partition] pairs. */
  owned(): TopicPartition[]
}

/** A new sticky `copartitioned` assigner factory: call `.track(consumer)` on it. */
export function copartitionedAssigner(): CopartitionedAssignerFactory

/** A ready-made `copartitioned` assigner factory (whole units, not sticky across generations). */
export const CopartitionedAssigner: CopartitionedAssignerFactory

/**
 * A KafkaJS partitioner (`createPartitioner` of `kafka.producer`) placing
 * keyed records as partwise partitioner `spec` does: 'java' (murmur2),
 * 'librdkafka:consistent_random' (CRC32), 'fnv1a', a priority spec, ...
 * Throws at once on a bad spec, naming it.
 */
export function createPartitioner(spec: string): ICustomPartitioner

/** Subscription bytes (consumer protocol v3) of topics, owned partitions and their generation (-1: unknown). */
export function encodeSubscription(topics: string[], owned: TopicPartition[], generation: number): Buffer

/** Subscription bytes of any version, decoded; throws when they do not decode. */
export function decodeSubscription(metadata: Buffer): {
  topics: string[]
  owned: TopicPartition[]
  generation: number
}

/** Assignment bytes of any version, decoded, with the leader's co-partition groups when a partwise leader wrote them. */
export function decodeAssignment(assignment: Buffer): {
  partitions: TopicPartition[]
  unitGroups?: string[][]
}

/** The protocol name members offer: 'copartitioned'. */
export const PROTOCOL: 'copartitioned'
