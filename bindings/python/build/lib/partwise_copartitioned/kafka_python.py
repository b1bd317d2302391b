"""partwise's co-partitioned assignor for kafka-python (3.x):

    from partwise_copartitioned.kafka_python import CopartitionedAssignor
    KafkaConsumer('orders', 'payments', group_id='g',
                  partition_assignment_strategy=[CopartitionedAssignor])

A kafka-python leader then places exactly what a partwise leader of any runtime places (kafka-python
hands the assignor every member's group.instance.id), and writes the co-partition groups in every
member's assignment user data.
"""

from __future__ import annotations

from collections import defaultdict

from kafka.coordinator.assignors.abstract import AbstractPartitionAssignor, RebalanceProtocol
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)

from ._core import NAME, Member, assign, decode_owned, encode_owned

#: The ConsumerProtocolSubscription version members send (owned partitions and generation).
SUBSCRIPTION_VERSION = 2
#: The ConsumerProtocolAssignment version the leader writes, as the Rust leader.
ASSIGNMENT_VERSION = 3


def members_of(members):
    """kafka-python's JoinGroup members (decoded subscriptions) as the assignor takes them:
    owned partitions from the standard field, or when that is empty from b'pwo\\0' user data."""
    out = []
    for member in members:
        md = member.metadata
        owned = [(tp.topic, p) for tp in (getattr(md, "owned_partitions", None) or ()) for p in tp.partitions]
        if not owned:
            decoded = decode_owned(md.user_data)
            owned = decoded[0] if decoded else []
        out.append(Member(member.member_id, getattr(member, "group_instance_id", None), list(md.topics), owned))
    return out


def assignments_of(result, member_ids):
    """The leader's result as kafka-python sends it: every member, with the user data."""
    TP = ConsumerProtocolAssignment.TopicPartition
    out = {}
    for mid in member_ids:
        by_topic = defaultdict(list)
        for t, p in result.partitions.get(mid, ()):
            by_topic[t].append(p)
        out[mid] = ConsumerProtocolAssignment(
            version=ASSIGNMENT_VERSION,
            assigned_partitions=[TP(topic=t, partitions=sorted(ps)) for t, ps in sorted(by_topic.items())],
            user_data=result.user_data,
        )
    return out


class CopartitionedAssignor(AbstractPartitionAssignor):
    """kafka-python's AbstractPartitionAssignor for the 'copartitioned' protocol.

    EAGER: the leader hands a unit straight to its next owner, as every partwise leader does.
    Each consumer gets its own instance (kafka-python instantiates the class), which remembers
    the member's assignment and sends it in its next subscription.
    """

    name = NAME

    def __init__(self):
        self._owned = []
        self._generation = -1

    def supported_protocols(self):
        return [RebalanceProtocol.EAGER]

    def metadata(self, topics):
        SubTP = ConsumerProtocolSubscription.TopicPartition
        by_topic = defaultdict(list)
        for t, p in self._owned:
            by_topic[t].append(p)
        return ConsumerProtocolSubscription(
            version=SUBSCRIPTION_VERSION,
            topics=sorted(topics),
            user_data=encode_owned(self._owned, self._generation),
            owned_partitions=[SubTP(topic=t, partitions=sorted(ps)) for t, ps in sorted(by_topic.items())],
            generation_id=self._generation,
        )

    def assign(self, cluster, members):
        ms = members_of(members)
        counts = {}
        for t in {t for m in ms for t in m.topics}:
            ps = cluster.partitions_for_topic(t)
            if ps is not None:
                counts[t] = len(ps)
        return assignments_of(assign(ms, counts), [m.id for m in ms])

    def on_assignment(self, assignment, generation):
        self._owned = [(tp.topic, tp.partition) for tp in assignment.partitions()]
        self._generation = -1 if generation is None else int(generation)
