#!/usr/bin/env python3
"""Partition loads and exact heavy hitters with kafka-python's DefaultPartitioner.

Usage: kafka_python_skew.py FILE PARTITIONS [TOP]

The same computation as `partwise skew -P java`, done the way a Python user
would with the real client: count every key exactly (collections.Counter),
route every distinct key once with the real

    kafka.partitioner.default.DefaultPartitioner().partition(
        topic, key, serialized_key, value, serialized_value, cluster)

(the stand-in cluster is the one kafka_python_count.py uses), add its count
to that partition's load, and report the TOP (default 10) heaviest keys.

Reading: FILE is read as bytes in 64 MiB chunks, split on "\n" (one "\r"
before it is dropped), so lines mean exactly what they mean to
kafka_python_count.py and partwise: an empty line is an empty key, a last
line without a newline is a key, nothing after the last newline is not.
Counting is Counter.update() over each chunk's lines (C speed); routing a
distinct key once and adding its count gives the same loads as routing every
line, and is what keeps this peer as fast as it can be: the partitioner runs
once per distinct key, not once per line.

Ties in the top list are broken by key bytes, ascending, so two correct
peers print the same list.

Prints one JSON line:
    {"partitioner":"java","partitions":N,"keys":LINES,"distinct":D,
     "loads":[l0,l1,...],"top":[[key,count],...],"top_hex":[[hex,count],...]}
("key" is the key decoded as UTF-8 with replacement; "top_hex" is exact.)
Memory grows with the number of distinct keys (about 150 bytes each).
"""
import heapq
import json
import sys
from collections import Counter

import kafka
from kafka.partitioner.default import DefaultPartitioner

TOPIC = "bench"
CHUNK = 64 << 20


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


def strip_cr(lines):
    return [l[:-1] if l[-1:] == b"\r" else l for l in lines]


def count_keys(path):
    exact = Counter()
    rest = b""
    with open(path, "rb", buffering=0) as f:
        while True:
            chunk = f.read(CHUNK)
            if not chunk:
                break
            if rest:
                chunk = rest + chunk
            cut = chunk.rfind(b"\n")
            if cut < 0:
                rest = chunk
                continue
            rest = chunk[cut + 1:]
            lines = chunk[:cut].split(b"\n")
            if b"\r" in chunk:
                lines = strip_cr(lines)
            exact.update(lines)
    if rest:  # a last line without a newline is a key
        exact.update(strip_cr([rest]))
    return exact


def top_keys(exact, k):
    """The k heaviest (key, count) pairs, heaviest first, ties by key bytes."""
    if k <= 0 or not exact:
        return []
    kth = heapq.nlargest(k, exact.values())[-1]
    above = [kv for kv in exact.items() if kv[1] > kth]
    tied = heapq.nsmallest(k - len(above), (key for key, c in exact.items() if c == kth))
    above.sort(key=lambda kv: (-kv[1], kv[0]))
    return above + [(key, kth) for key in tied]


def main() -> int:
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    path, n = sys.argv[1], int(sys.argv[2])
    top_n = int(sys.argv[3]) if len(sys.argv) == 4 else 10
    if n < 1 or top_n < 0:
        print("kafka_python_skew: PARTITIONS must be >= 1, TOP >= 0", file=sys.stderr)
        return 2

    exact = count_keys(path)

    partition = DefaultPartitioner().partition
    cluster = FakeCluster(TOPIC, n)
    topic = TOPIC
    loads = [0] * n
    for key, c in exact.items():
        loads[partition(topic, key, key, None, None, cluster)] += c

    top = top_keys(exact, top_n)
    sys.stdout.write(json.dumps({
        "partitioner": "java", "partitions": n, "keys": sum(loads), "distinct": len(exact),
        "loads": loads,
        "top": [[k.decode("utf-8", "replace"), c] for k, c in top],
        "top_hex": [[k.hex(), c] for k, c in top],
    }, separators=(",", ":")) + "\n")
    print("kafka-python %s DefaultPartitioner: %d keys, %d distinct"
          % (kafka.__version__, sum(loads), len(exact)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
