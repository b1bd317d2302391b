"""A real aiokafka consumer with its defaults (client id aiokafka-<version>,
RoundRobinPartitionAssignor): joins GROUP subscribed to TOPICS, prints
"assigned N" once it holds its partitions, and stays until stdin closes.

    python aiokafka_member.py [--negative-version] BOOTSTRAP GROUP TOPIC [TOPIC...]

--negative-version: the round-robin assignor, but its subscription bytes
declare version -1 before a version-0 body. aiokafka's own decoder reads
the body whatever the version says, so its leader assigns and the group
becomes Stable; the consumer protocol has no negative version, so to
partwise (and Apache Kafka's ConsumerProtocol) the member does not decode.

aiokafka comes from the venv .cache/live-clients/venv (bash scripts/ensure clients).
"""
import asyncio
import sys

from aiokafka import AIOKafkaConsumer
from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor


class NegativeVersion(RoundRobinPartitionAssignor):
    @classmethod
    def metadata(cls, topics):
        body = super().metadata(topics).encode()
        return b"\xff\xff" + body[2:]


async def main() -> None:
    args = sys.argv[1:]
    strategy = {}
    if args and args[0] == "--negative-version":
        args = args[1:]
        strategy = {"partition_assignment_strategy": (NegativeVersion,)}
    bootstrap, group, *topics = args
    consumer = AIOKafkaConsumer(
        *topics, bootstrap_servers=bootstrap, group_id=group, **strategy
    )
    await consumer.start()
    try:
        while not consumer.assignment():
            await consumer.getmany(timeout_ms=200)
        print(f"assigned {len(consumer.assignment())}", flush=True)
        loop = asyncio.get_running_loop()
        done = loop.run_in_executor(None, sys.stdin.read)
        while not done.done():
            await consumer.getmany(timeout_ms=200)
    finally:
        await consumer.stop()


asyncio.run(main())
