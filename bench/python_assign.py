#!/usr/bin/env python3
"""assign() of partwise's copartitioned assignor through kafka-python and aiokafka beside each
client's own round-robin, on the same members and partition counts: 1,000 members x 100,000
partitions (two co-partitioned topics of 50,000). partwise is timed on a fresh group and on a
sticky round (one member left, the others report what they own). Medians of RUNS runs after one
warm-up, the peers interleaved run by run; prints JSON (bench/python-assign writes it to
bench/results/python_assign.json).

    python bench/python_assign.py [RUNS]     # with partwise-copartitioned, kafka-python, aiokafka installed
"""

import gc
import json
import platform
import statistics
import sys
import time
from importlib.metadata import version
from types import SimpleNamespace

import partwise_copartitioned as pc
from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor as AioRoundRobin
from aiokafka.coordinator.protocol import ConsumerProtocol
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor as KpRoundRobin
from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription
from partwise_copartitioned.aiokafka import CopartitionedAssignor as AioCopartitioned
from partwise_copartitioned.kafka_python import CopartitionedAssignor as KpCopartitioned

MEMBERS, PARTITIONS = 1000, 100000
TOPICS = ["market-updates", "notifications"]
RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 5


class Cluster:
    def __init__(self, counts):
        self.counts = counts

    def partitions_for_topic(self, topic):
        n = self.counts.get(topic)
        return None if n is None else set(range(n))


def main():
    per = PARTITIONS // 2
    counts = {t: per for t in TOPICS}
    cluster = Cluster(counts)
    ids = ["consumer-%d-0a1b2c3d-4e5f-6789-abcd-ef0123456789" % i for i in range(MEMBERS)]
    fresh = [pc.Member(i, None, TOPICS, []) for i in ids]
    first = pc.assign(fresh, counts)
    sticky = [pc.Member(i, None, TOPICS, first.partitions[i]) for i in ids[:-1]]

    def kp_members(ms):
        out = []
        for m in ms:
            a = KpCopartitioned()
            a._owned, a._generation = list(m.owned), 1
            md = ConsumerProtocolSubscription.decode(a.metadata(set(m.topics)).encode())
            out.append(SimpleNamespace(member_id=m.id, group_instance_id=None, metadata=md))
        return out

    def aio_members(ms):
        out = {}
        for m in ms:
            a = AioCopartitioned.new()
            a._owned = list(m.owned)
            out[m.id] = ConsumerProtocol.METADATA.decode(a.metadata(m.topics).encode())
        return out

    kp_fresh, kp_sticky = kp_members(fresh), kp_members(sticky)
    aio_fresh, aio_sticky = aio_members(fresh), aio_members(sticky)
    peers = [
        ("core_fresh", lambda: pc.assign(fresh, counts)),
        ("core_sticky", lambda: pc.assign(sticky, counts)),
        ("kafka_python_copartitioned_fresh", lambda: KpCopartitioned().assign(cluster, kp_fresh)),
        ("kafka_python_copartitioned_sticky", lambda: KpCopartitioned().assign(cluster, kp_sticky)),
        ("kafka_python_roundrobin", lambda: KpRoundRobin().assign(cluster, kp_fresh)),
        ("aiokafka_copartitioned_fresh", lambda: AioCopartitioned.assign(cluster, aio_fresh)),
        ("aiokafka_copartitioned_sticky", lambda: AioCopartitioned.assign(cluster, aio_sticky)),
        ("aiokafka_roundrobin", lambda: AioRoundRobin.assign(cluster, aio_fresh)),
    ]
    times = {name: [] for name, _ in peers}
    for r in range(1 + RUNS):
        for name, run in peers:
            gc.collect()
            start = time.perf_counter()
            run()
            ms = (time.perf_counter() - start) * 1000
            if r > 0:
                times[name].append(ms)
    print(json.dumps({
        "members": MEMBERS, "partitions": PARTITIONS, "topics": TOPICS, "runs": RUNS, "warm_up": 1,
        "python": platform.python_version(), "kafka-python": version("kafka-python"), "aiokafka": version("aiokafka"),
        "results": {name + "_ms_median": round(statistics.median(ts), 1) for name, ts in times.items()},
    }, indent=1))


if __name__ == "__main__":
    main()
