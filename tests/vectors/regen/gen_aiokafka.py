#!/usr/bin/env python3
"""aiokafka (PyPI aiokafka==0.14.0): DefaultPartitioner()(key, all_partitions,
available), the partitioner AIOKafkaProducer uses when given none
-> generated/aiokafka_default_partitioner.jsonl.

Run it with any Python 3: unless aiokafka 0.14.0 is importable it installs it
from PyPI into a venv of its own (.cache/aiokafka-0.14.0 of the repository,
ignored by git) and runs itself there. It then compares every line with
kafka-python's file (generated/kafka_python_default_partitioner.jsonl) and
prints how many agree. The NULL key is random in aiokafka (random.choice over
the available partitions), so no NULL-key lines are written.
"""
import os
import subprocess
import sys

VERSION = "0.14.0"
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
VENV = os.path.join(REPO, ".cache", f"aiokafka-{VERSION}")


def ensure_aiokafka():
    try:
        import aiokafka

        if aiokafka.__version__ == VERSION:
            return
    except ImportError:
        pass
    if os.environ.get("PARTWISE_AIOKAFKA_VENV") == "1":
        sys.exit(f"gen_aiokafka.py: aiokafka {VERSION} is still not importable in {VENV}")
    py = os.path.join(VENV, "bin", "python")
    if not os.path.exists(py):
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
    subprocess.check_call(
        [py, "-m", "pip", "install", "-q", "--disable-pip-version-check", f"aiokafka=={VERSION}"]
    )
    env = dict(os.environ, PARTWISE_AIOKAFKA_VENV="1")
    os.execve(py, [py, os.path.abspath(__file__)] + sys.argv[1:], env)


def main():
    ensure_aiokafka()
    import json

    import aiokafka
    from aiokafka.partitioner import DefaultPartitioner

    sys.path.insert(0, HERE)
    from corpus import GENERATED, PARTITION_COUNTS, kafka_line, load_keys, write_lines

    assert aiokafka.__version__ == VERSION, aiokafka.__version__
    keys = load_keys()
    part = DefaultPartitioner()
    lines = []
    for key in keys:
        for n in PARTITION_COUNTS:
            everything = list(range(n))
            p = part(key, everything, everything)
            lines.append(kafka_line(key, n, p))
    write_lines("aiokafka_default_partitioner.jsonl", lines)

    # The same answers as kafka-python's DefaultPartitioner, line for line?
    theirs = {}
    with open(os.path.join(GENERATED, "kafka_python_default_partitioner.jsonl")) as f:
        for line in f:
            d = json.loads(line)
            theirs[(d["key_hex"], d["partitions"])] = d["partition"]
    ours = [json.loads(line) for line in lines]
    same = sum(1 for d in ours if theirs.get((d["key_hex"], d["partitions"])) == d["partition"])
    print(f"aiokafka {VERSION}: {len(ours)} lines, {same} identical to kafka-python's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
