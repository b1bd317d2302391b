#!/usr/bin/env python3
"""librdkafka partitioners, end to end, through confluent-kafka (PyPI confluent-kafka==2.16.1,
which bundles librdkafka 2.16.x) producing to a REAL broker on loopback.

Broker: Apache Kafka, started by regen.sh with scripts/kafka-up in its own --dir; its
bootstrap comes from PARTWISE_KAFKA_BOOTSTRAP (or --bootstrap) and its version, recorded
in the run file, from PARTWISE_KAFKA_VERSION (or --broker-version). Topics pw-n<N> with N
partitions are created through confluent_kafka.admin.AdminClient where missing.
Fallback (--mock): librdkafka's built-in mock cluster ('test.mock.num.brokers': 1). The
broker that was used is printed and recorded in generated/librdkafka_run.json.

For each partitioner in consistent, consistent_random, murmur2, murmur2_random, fnv1a,
fnv1a_random, every corpus key (and the NULL key, key=None) is produced to every topic
in three rounds, each round with a fresh Producer; the partition is read from the
delivery report, and the three rounds must agree. Nondeterministic cases are not
produced: the NULL key of *_random and the empty key of consistent_random. Finally every
record is consumed back and must be stored, with its key, in the partition its delivery
report named.
Output: generated/librdkafka_<partitioner>.jsonl.
"""
import argparse
import json
import os
import sys
import time

import confluent_kafka
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from corpus import GENERATED, PARTITION_COUNTS, kafka_line, load_keys, write_lines

PARTITIONERS = ["consistent", "consistent_random", "murmur2", "murmur2_random", "fnv1a", "fnv1a_random"]
ROUNDS = 3


def topic_for(n):
    return f"pw-n{n}"


class ApacheKafka:
    """A running Apache Kafka (regen.sh starts it with scripts/kafka-up and stops it)."""

    def __init__(self, bootstrap=None, version=None):
        self.bootstrap = bootstrap or os.environ.get("PARTWISE_KAFKA_BOOTSTRAP")
        if not self.bootstrap:
            print("gen_librdkafka.py: no broker: pass --bootstrap HOST:PORT or set PARTWISE_KAFKA_BOOTSTRAP "
                  "(regen.sh starts one with scripts/kafka-up), or use --mock", file=sys.stderr)
            sys.exit(2)
        self.version = version or os.environ.get("PARTWISE_KAFKA_VERSION", "unknown")
        self.desc = f"Apache Kafka {self.version} (scripts/kafka-up, KRaft, 1 node, 127.0.0.1)"

    def conf(self):
        return {"bootstrap.servers": self.bootstrap}

    def stop(self):
        pass


class MockCluster:
    """librdkafka's in-process mock cluster (fallback). Created through ctypes on the very
    librdkafka shared object that confluent-kafka bundles (rd_kafka_mock_cluster_new, the
    public mock API of rdkafka_mock.h), because the AdminClient cannot create topics on the
    mock cluster (it never gets a controller). The Producers connect to its 127.0.0.1
    bootstrap listener like to any broker."""

    def __init__(self):
        import ctypes
        import glob

        libdir = os.path.join(os.path.dirname(os.path.dirname(confluent_kafka.__file__)), "confluent_kafka.libs")
        cands = glob.glob(os.path.join(libdir, "librdkafka*.so*"))
        lib = ctypes.CDLL(cands[0] if cands else "librdkafka.so.1")
        lib.rd_kafka_conf_new.restype = ctypes.c_void_p
        lib.rd_kafka_new.restype = ctypes.c_void_p
        lib.rd_kafka_new.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
        lib.rd_kafka_mock_cluster_new.restype = ctypes.c_void_p
        lib.rd_kafka_mock_cluster_new.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
        lib.rd_kafka_mock_cluster_bootstraps.argtypes = [ctypes.c_void_p]
        lib.rd_kafka_mock_topic_create.restype = ctypes.c_int
        lib.rd_kafka_mock_topic_create.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
        lib.rd_kafka_mock_cluster_destroy.argtypes = [ctypes.c_void_p]
        lib.rd_kafka_destroy.argtypes = [ctypes.c_void_p]
        lib.rd_kafka_version_str.restype = ctypes.c_char_p
        errstr = ctypes.create_string_buffer(512)
        self.lib = lib
        self.rk = lib.rd_kafka_new(0, lib.rd_kafka_conf_new(), errstr, 512)  # RD_KAFKA_PRODUCER
        if not self.rk:
            raise RuntimeError(errstr.value.decode())
        self.mcluster = lib.rd_kafka_mock_cluster_new(self.rk, 1)
        if not self.mcluster:
            raise RuntimeError("rd_kafka_mock_cluster_new failed")
        self.bootstrap = lib.rd_kafka_mock_cluster_bootstraps(self.mcluster).decode()
        self.desc = (f"librdkafka {lib.rd_kafka_version_str().decode()} built-in mock cluster "
                     f"(1 broker) at {self.bootstrap}")

    def create_topic(self, name, n):
        err = self.lib.rd_kafka_mock_topic_create(self.mcluster, name.encode(), n, 1)
        if err:
            raise RuntimeError(f"rd_kafka_mock_topic_create({name}, {n}) = {err}")

    def conf(self):
        return {"bootstrap.servers": self.bootstrap}

    def stop(self):
        self.lib.rd_kafka_mock_cluster_destroy(self.mcluster)
        self.lib.rd_kafka_destroy(self.rk)


def create_topics(broker):
    admin = AdminClient(broker.conf())
    if isinstance(broker, MockCluster):
        for n in PARTITION_COUNTS:
            broker.create_topic(topic_for(n), n)
    existing = admin.list_topics(timeout=20).topics
    new = [NewTopic(topic_for(n), num_partitions=n, replication_factor=1)
           for n in PARTITION_COUNTS if topic_for(n) not in existing]
    if new:
        for t, f in admin.create_topics(new, operation_timeout=60, request_timeout=60).items():
            f.result()
    deadline = time.time() + 60
    while True:
        md = admin.list_topics(timeout=20)
        ok = all(topic_for(n) in md.topics and len(md.topics[topic_for(n)].partitions) == n
                 for n in PARTITION_COUNTS)
        if ok:
            break
        if time.time() > deadline:
            raise RuntimeError("topics did not appear with the right partition counts")
        time.sleep(0.5)
    print("topics:", {topic_for(n): len(md.topics[topic_for(n)].partitions) for n in PARTITION_COUNTS})


def cases_for(partitioner, keys):
    cases = []
    if not partitioner.endswith("_random"):
        cases.append(None)  # NULL key: deterministic for consistent, murmur2, fnv1a
    for k in keys:
        if partitioner == "consistent_random" and len(k) == 0:
            continue  # empty key is sticky-random in consistent_random
        cases.append(k)
    return cases


def run_round(broker, partitioner, cases, rnd, ledger):
    """Produce every (case, n) once with a fresh Producer; return {(i, n): partition}.
    ledger[value] = (topic, partition, key) for every delivered record."""
    results = {}
    errors = []

    def on_delivery(err, msg):
        i, n = (int(x) for x in msg.value().decode().split(":")[2:])
        if err is not None:
            errors.append((i, n, err))
        else:
            results[(i, n)] = msg.partition()
            ledger[msg.value()] = (msg.topic(), msg.partition(), msg.key())

    conf = dict(broker.conf())
    conf.update({"partitioner": partitioner, "linger.ms": 5, "acks": "all",
                 "max.in.flight.requests.per.connection": 1,
                 "message.max.bytes": 1000000, "queue.buffering.max.messages": 1000000})
    p = Producer(conf)
    sent = 0
    for n in PARTITION_COUNTS:
        for i, key in enumerate(cases):
            value = f"{partitioner}:{rnd}:{i}:{n}".encode()
            while True:
                try:
                    p.produce(topic_for(n), key=key, value=value, on_delivery=on_delivery)
                    break
                except BufferError:
                    p.poll(0.1)
            sent += 1
            p.poll(0)
    remaining = p.flush(120)
    if remaining or errors or len(results) != sent:
        raise RuntimeError(f"{partitioner}: {remaining} undelivered, {len(errors)} errors "
                           f"(first: {errors[:3]}), {len(results)}/{sent} delivered")
    return results


def check_broker_contents(broker, ledger):
    """Consume every partition of every topic back from the broker: each produced record
    (identified by its value) must be stored, with its key, in the partition its delivery
    report named."""
    c = Consumer({**broker.conf(), "group.id": "partwise-regen-check", "enable.auto.commit": False})
    c.assign([TopicPartition(topic_for(n), p, OFFSET_BEGINNING) for n in PARTITION_COUNTS for p in range(n)])
    seen = {}
    dup = 0
    deadline = time.time() + 300
    while len(seen) < len(ledger) and time.time() < deadline:
        for m in c.consume(1000, 1.0):
            if m.error():
                raise RuntimeError(f"consume error: {m.error()}")
            if m.value() in seen:
                dup += 1
            seen[m.value()] = (m.topic(), m.partition(), m.key())
    c.close()
    missing = [v for v in ledger if v not in seen]
    wrong = [v for v in ledger if v in seen and seen[v] != ledger[v]]
    extra = [v for v in seen if v not in ledger]
    print(f"consumed back {len(seen)} of {len(ledger)} produced records: {len(missing)} missing, "
          f"{len(wrong)} in another partition or with another key, {len(extra)} unexpected, {dup} duplicates")
    if missing or wrong or extra:
        raise RuntimeError(f"broker contents disagree with delivery reports, e.g. {(missing + wrong + extra)[:5]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mock", action="store_true", help="use librdkafka's mock cluster instead of Apache Kafka")
    ap.add_argument("--bootstrap", help="Apache Kafka bootstrap (default $PARTWISE_KAFKA_BOOTSTRAP)")
    ap.add_argument("--broker-version", help="its version, for the run file (default $PARTWISE_KAFKA_VERSION)")
    args = ap.parse_args()
    print(f"confluent-kafka {confluent_kafka.version()}, librdkafka {confluent_kafka.libversion()[0]}")
    keys = load_keys()
    broker = MockCluster() if args.mock else ApacheKafka(args.bootstrap, args.broker_version)
    create_topics(broker)
    print("broker:", broker.desc)
    ledger = {}
    try:
        for partitioner in PARTITIONERS:
            cases = cases_for(partitioner, keys)
            t0 = time.time()
            rounds = [run_round(broker, partitioner, cases, rnd, ledger) for rnd in range(ROUNDS)]
            for r in rounds[1:]:
                bad = [c for c in rounds[0] if rounds[0][c] != r[c]]
                if bad:
                    raise RuntimeError(f"{partitioner}: rounds disagree on {len(bad)} cases, e.g. {bad[:5]}")
            lines = [kafka_line(key, n, rounds[0][(i, n)])
                     for i, key in enumerate(cases) for n in PARTITION_COUNTS]
            print(f"{partitioner}: {len(cases)} cases x {len(PARTITION_COUNTS)} topics x {ROUNDS} rounds "
                  f"agree ({time.time() - t0:.1f}s)")
            write_lines(f"librdkafka_{partitioner}.jsonl", lines)
        check_broker_contents(broker, ledger)
        with open(os.path.join(GENERATED, "librdkafka_run.json"), "w") as f:
            json.dump({"broker": broker.desc,
                       "date": time.strftime("%Y-%m-%d", time.gmtime()),
                       "confluent_kafka": confluent_kafka.version(),
                       "librdkafka": confluent_kafka.libversion()[0],
                       "rounds": ROUNDS,
                       "partitioners": PARTITIONERS,
                       "partition_counts": PARTITION_COUNTS}, f, indent=1)
            f.write("\n")
    finally:
        broker.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
