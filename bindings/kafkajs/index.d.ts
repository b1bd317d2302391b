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

/**
 * @platformatic/kafka's group options the `copartitioned` assigner sets
 * (its `GroupOptions`: `protocols`, `protocolsMetadata`, `partitionAssigner`),
 * typed structurally so that this package does not depend on it.
 */
export interface PlatformaticGroupOptions {
  protocols: { name: 'copartitioned'; version: number }[]
  /** This member's subscription user data: what it owns (`pwo\0`). */
  protocolsMetadata(protocols: unknown[], topics: string[], metadata: unknown): Buffer
  /** The leader's placement, as @platformatic/kafka's `GroupPartitionsAssigner`. */
  partitionAssigner(
    current: string,
    members: Map<
      string,
      {
        memberId: string
        topics?: string[]
        metadata?: Buffer | string
        ownedPartitions?: { topic: string; partitions: number[] }[]
        generationId?: number
      }
    >,
    topics: Set<string>,
    metadata: { topics: Map<string, { partitionsCount: number }> }
  ): { memberId: string; assignments: Map<string, { topic: string; partitions: number[] }> }[]
}

/** The `copartitioned` assigner for an @platformatic/kafka `Consumer` (classic protocol). */
export interface PlatformaticAssigner {
  /** Spread into the consumer's options: `new Consumer({ ...pw.options, groupId, ... })`. */
  options: PlatformaticGroupOptions
  /** The consumer whose assignments this member reports when it joins (call once); returns the assigner. */
  track(consumer: { assignments: { topic: string; partitions: number[] }[] | null; memberId: string | null; generationId: number }): PlatformaticAssigner
  /** What the tracked consumer owns now, as [topic, partition] pairs. */
  owned(): TopicPartition[]
}

/** A new `copartitioned` assigner for @platformatic/kafka: spread its `options`, then `track(consumer)`. */
export function platformaticAssigner(): PlatformaticAssigner

/** Owned partitions and their generation as `pwo\0` subscription user data, as every partwise member writes them. */
export function encodeOwned(owned: TopicPartition[], generation: number): Buffer

/** The claims in `pwo\0` user data; [] for anything else. */
export function decodeOwned(data: Buffer): TopicPartition[]
