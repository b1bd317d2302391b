#!/usr/bin/env python3
"""One confluent-kafka (librdkafka) consumer on the consumer protocol (KIP-848) asking for the
broker's `copartitioned` assignor (group.protocol=consumer, group.remote.assignor=copartitioned),
a separate process for the live tests (bindings/kafkajs/tests/live/kip848.test.js): prints one
JSON line per assignment change ({"event":"assigned","partitions":[[t,p],...]}) and per record
handled ({"event":"record","value":...}); SIGTERM leaves the group.

    python kip848_member.py BOOTSTRAP GROUP CLIENT_ID TOPIC...
"""

import json
import signal
import sys

from confluent_kafka import Consumer


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    if len(sys.argv) < 5:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    bootstrap, group, client_id, topics = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "client.id": client_id,
        "group.protocol": "consumer",
        "group.remote.assignor": "copartitioned",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": True,
        "auto.commit.interval.ms": 300,
    })
    held = set()

    def report(_consumer, _partitions):
        say({"event": "assigned", "partitions": sorted([tp.topic, tp.partition] for tp in held)})

    def on_assign(c, partitions):
        held.update((tp.topic, tp.partition) for tp in partitions)
        say({"event": "assigned", "partitions": sorted([t, p] for t, p in held)})

    def on_revoke(c, partitions):
        held.difference_update((tp.topic, tp.partition) for tp in partitions)
        say({"event": "assigned", "partitions": sorted([t, p] for t, p in held)})

    consumer.subscribe(topics, on_assign=on_assign, on_revoke=on_revoke, on_lost=on_revoke)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    while not stop:
        msg = consumer.poll(0.2)
        if msg is None or msg.error():
            continue
        say({"event": "record", "topic": msg.topic(), "partition": msg.partition(), "value": msg.value().decode()})
    consumer.close()
    say({"event": "left"})


if __name__ == "__main__":
    main()
