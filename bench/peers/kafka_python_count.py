#!/usr/bin/env python3
"""Count keys per partition with kafka-python's own DefaultPartitioner.

Usage: kafka_python_count.py FILE PARTITIONS

Reads FILE as bytes, one key per line; a trailing "\n" and then one "\r" are
removed from each line (so "\n" and "\r\n" endings both work; a final line
without a newline still counts). Every key is routed by calling the real

    kafka.partitioner.default.DefaultPartitioner().partition(
        topic, key, serialized_key, value, serialized_value, cluster)

exactly as KafkaProducer does for a keyed record, so the per-key cost includes
what the real partitioner does on every call (topic lookup, sorting the
partition list, murmur2, & 0x7fffffff, % n). The only stand-in is `cluster`:
a minimal object with the three methods DefaultPartitioner uses, returning
prebuilt sets (cheaper than kafka.cluster.ClusterMetadata, which builds new
sets on every call, so if anything this flatters kafka-python).

Prints one NDJSON line, the same shape as `partwise route --summary
--format ndjson`:
    {"partitioner":"java","partitions":N,"counts":[c0,c1,...]}
"""
import json
import sys

import kafka
from kafka.partitioner.default import DefaultPartitioner

TOPIC = "bench"


class FakeCluster:
    """The part of kafka.cluster.ClusterMetadata that DefaultPartitioner reads:
    one topic with partitions 0..n-1, all with a leader (available)."""

    def __init__(self, topic, n):
        self._topics = frozenset([topic])
        self._all = frozenset(range(n))

    def topics(self, exclude_internal_topics=True):
        return self._topics

    def partitions_for_topic(self, topic):
        return self._all if topic in self._topics else None

    def available_partitions_for_topic(self, topic):
        return self._all if topic in self._topics else None


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    path, n = sys.argv[1], int(sys.argv[2])
    if n < 1:
        print("kafka_python_count: PARTITIONS must be >= 1", file=sys.stderr)
        return 2

    partition = DefaultPartitioner().partition
    cluster = FakeCluster(TOPIC, n)
    counts = [0] * n
    topic = TOPIC
    with open(path, "rb", buffering=1 << 20) as f:
        for line in f:
            if line[-1:] == b"\n":
                line = line[:-1]
                if line[-1:] == b"\r":
                    line = line[:-1]
            counts[partition(topic, line, line, None, None, cluster)] += 1

    sys.stdout.write(json.dumps(
        {"partitioner": "java", "partitions": n, "counts": counts},
        separators=(",", ":")) + "\n")
    print("kafka-python %s DefaultPartitioner: %d keys"
          % (kafka.__version__, sum(counts)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
