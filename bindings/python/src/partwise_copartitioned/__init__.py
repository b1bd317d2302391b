"""partwise's co-partitioned assignor for Python Kafka consumers.

Keeps partition p of every co-partitioned topic in one consumer, sticky across generations,
exactly as partwise's Rust, Java, Go and KafkaJS members place it (group protocol
'copartitioned'). Plug it in:

    from partwise_copartitioned.kafka_python import CopartitionedAssignor   # kafka-python
    KafkaConsumer('orders', 'payments', group_id='g',
                  partition_assignment_strategy=[CopartitionedAssignor])

    from partwise_copartitioned.aiokafka import CopartitionedAssignor       # aiokafka
    AIOKafkaConsumer('orders', 'payments', group_id='g',
                     partition_assignment_strategy=(CopartitionedAssignor,))

This module itself imports no Kafka client: assign() is the placement alone.
"""

from ._core import (
    NAME,
    Member,
    Result,
    assign,
    decode_owned,
    decode_unit_groups,
    encode_owned,
    encode_unit_groups,
)

__all__ = [
    "NAME",
    "Member",
    "Result",
    "assign",
    "decode_owned",
    "decode_unit_groups",
    "encode_owned",
    "encode_unit_groups",
]
__version__ = "0.1.0"
