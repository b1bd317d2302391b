#!/usr/bin/env python3
"""kafka-python (PyPI kafka-python==3.0.12): DefaultPartitioner().partition(...)
with a fake cluster object -> generated/kafka_python_default_partitioner.jsonl.

The NULL key is random in kafka-python (random.choice over available partitions),
so no NULL-key lines are written.
"""
import sys

import kafka
from kafka.partitioner import DefaultPartitioner

from corpus import PARTITION_COUNTS, kafka_line, load_keys, write_lines


class FakeCluster:
    """The three ClusterMetadata methods DefaultPartitioner.partition uses."""

    def __init__(self, topic, n):
        self._topic = topic
        self._parts = set(range(n))

    def topics(self):
        return {self._topic}

    def partitions_for_topic(self, topic):
        return set(self._parts)

    def available_partitions_for_topic(self, topic):
        return set(self._parts)


def main():
    assert kafka.__version__ == "3.0.12", kafka.__version__
    keys = load_keys()
    part = DefaultPartitioner()
    lines = []
    for key in keys:
        for n in PARTITION_COUNTS:
            cluster = FakeCluster("t", n)
            p = part.partition("t", key, key, b"v", b"v", cluster)
            lines.append(kafka_line(key, n, p))
    write_lines("kafka_python_default_partitioner.jsonl", lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
