"""A real aiokafka consumer with its defaults (client id aiokafka-<version>,
RoundRobinPartitionAssignor): joins GROUP subscribed to TOPICS, prints
"assigned N" once it holds its partitions, and stays until stdin closes.

    python aiokafka_member.py BOOTSTRAP GROUP TOPIC [TOPIC...]

aiokafka comes from the venv .cache/live-clients/venv (bash scripts/ensure clients).
"""
import asyncio
import sys

from aiokafka import AIOKafkaConsumer


async def main() -> None:
    bootstrap, group, *topics = sys.argv[1:]
    consumer = AIOKafkaConsumer(*topics, bootstrap_servers=bootstrap, group_id=group)
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
