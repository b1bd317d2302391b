"""partwise's co-partitioned assignor for aiokafka (0.14):

    from partwise_copartitioned.aiokafka import CopartitionedAssignor
    AIOKafkaConsumer('orders', 'payments', group_id='g',
                     partition_assignment_strategy=(CopartitionedAssignor,))

aiokafka calls its assignors' methods on the class, so the class remembers its member's
assignment: with several consumers in one process give each its own, CopartitionedAssignor.new().

What aiokafka does not hand an assignor: the members' group.instance.id (it drops them) and the
owned-partitions field (it reads version 0 of the subscription). Owned partitions travel in
b'pwo\\0' user data, which every partwise member writes; but an aiokafka leader ranks every member
by member id, so in a group with static members its placement can differ from the other
runtimes' (each is still whole units, each partition once).
"""

from __future__ import annotations

from collections import defaultdict

from aiokafka.coordinator.assignors.abstract import AbstractPartitionAssignor
from aiokafka.coordinator.protocol import (
    ConsumerProtocolMemberAssignment,
    ConsumerProtocolMemberMetadata,
)

from ._core import NAME, Member, assign, decode_owned, encode_owned

#: The ConsumerProtocolAssignment version the leader writes, as the Rust leader (the layout of
#: versions 0 to 3 is the same).
ASSIGNMENT_VERSION = 3


class CopartitionedAssignor(AbstractPartitionAssignor):
    """aiokafka's AbstractPartitionAssignor for the 'copartitioned' protocol."""

    name = NAME
    version = 0
    _owned: list = []
    _generation = -1

    @classmethod
    def new(cls):
        """A subclass with its own memory, for one more consumer in this process."""
        return type(cls.__name__, (cls,), {"_owned": [], "_generation": -1})

    @classmethod
    def metadata(cls, topics):
        return ConsumerProtocolMemberMetadata(cls.version, sorted(topics), encode_owned(cls._owned, cls._generation))

    @classmethod
    def assign(cls, cluster, members):
        ms = []
        for mid, md in members.items():
            decoded = decode_owned(md.user_data)
            ms.append(Member(mid, None, list(md.subscription), decoded[0] if decoded else []))
        counts = {}
        for t in {t for m in ms for t in m.topics}:
            ps = cluster.partitions_for_topic(t)
            if ps is not None:
                counts[t] = len(ps)
        result = assign(ms, counts)
        out = {}
        for m in ms:
            by_topic = defaultdict(list)
            for t, p in result.partitions.get(m.id, ()):
                by_topic[t].append(p)
            out[m.id] = ConsumerProtocolMemberAssignment(
                ASSIGNMENT_VERSION, [(t, sorted(ps)) for t, ps in sorted(by_topic.items())], result.user_data
            )
        return out

    @classmethod
    def on_assignment(cls, assignment):
        cls._owned = [(tp.topic, tp.partition) for tp in assignment.partitions()]
