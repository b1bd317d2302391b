#!/usr/bin/env python3
"""One consumer-group member of kafka-python or aiokafka with partwise's copartitioned
assignor, a separate process for the live mixed-group tests (bindings/kafkajs/tests/live):
prints one JSON line per assignment ({"event":"assigned","leader":bool,"partitions":[[t,p],...]})
and per record handled ({"event":"record","value":...}, committed after); SIGTERM leaves the
group cleanly.

    python live_member.py kafka-python|aiokafka BOOTSTRAP GROUP CLIENT_ID TOPIC...
"""

import asyncio
import json
import signal
import sys
import threading

led = threading.Event()
out_lock = threading.Lock()


def say(obj):
    with out_lock:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


def pairs(tps):
    return sorted([tp.topic, tp.partition] for tp in tps)


def run_kafka_python(bootstrap, group, client_id, topics):
    from kafka import ConsumerRebalanceListener, KafkaConsumer

    from partwise_copartitioned.kafka_python import CopartitionedAssignor

    class Leader(CopartitionedAssignor):
        def assign(self, cluster, members):
            led.set()
            return super().assign(cluster, members)

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, group_id=group, client_id=client_id,
        partition_assignment_strategy=[Leader], auto_offset_reset="earliest",
        enable_auto_commit=True, auto_commit_interval_ms=300,
        session_timeout_ms=6000, heartbeat_interval_ms=500, max_poll_interval_ms=20000,
    )

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked):
            pass

        def on_partitions_assigned(self, assigned):
            say({"event": "assigned", "leader": led.is_set(), "partitions": pairs(consumer.assignment())})
            led.clear()

    consumer.subscribe(topics, listener=Listener())
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    while not stop.is_set():
        for records in consumer.poll(timeout_ms=200).values():
            for r in records:
                say({"event": "record", "topic": r.topic, "partition": r.partition, "value": r.value.decode()})
    consumer.close()  # commits and leaves the group


async def run_aiokafka(bootstrap, group, client_id, topics):
    from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener

    from partwise_copartitioned.aiokafka import CopartitionedAssignor

    base = CopartitionedAssignor.new()

    class Leader(base):
        @classmethod
        def assign(cls, cluster, members):
            led.set()
            return super().assign(cluster, members)

    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, group_id=group, client_id=client_id,
        partition_assignment_strategy=(Leader,), auto_offset_reset="earliest",
        enable_auto_commit=True, auto_commit_interval_ms=300,
        session_timeout_ms=6000, heartbeat_interval_ms=500, rebalance_timeout_ms=20000,
    )

    class Listener(ConsumerRebalanceListener):
        async def on_partitions_revoked(self, revoked):
            pass

        async def on_partitions_assigned(self, assigned):
            say({"event": "assigned", "leader": led.is_set(), "partitions": pairs(assigned)})
            led.clear()

    consumer.subscribe(topics, listener=Listener())
    await consumer.start()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    try:
        while not stop.is_set():
            batches = await consumer.getmany(timeout_ms=200)
            for records in batches.values():
                for r in records:
                    say({"event": "record", "topic": r.topic, "partition": r.partition, "value": r.value.decode()})
    finally:
        await consumer.stop()  # commits and leaves the group


def main():
    if len(sys.argv) < 6:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    client, bootstrap, group, client_id, topics = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
    if client == "kafka-python":
        run_kafka_python(bootstrap, group, client_id, topics)
    elif client == "aiokafka":
        asyncio.run(run_aiokafka(bootstrap, group, client_id, topics))
    else:
        print("unknown client %r" % client, file=sys.stderr)
        sys.exit(2)
    say({"event": "left"})


if __name__ == "__main__":
    main()
