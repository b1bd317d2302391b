"""Known answers for the Python clients' partition assignors.

Calls kafka-python's and aiokafka's assignors through their public
``assign(cluster, members)`` API on groups with fresh members, owned claims,
mixed generations, unequal subscriptions and static members, each under
several PYTHONHASHSEED values (a child interpreter per seed: Python fixes the
string hash at start-up, and the sticky assignors walk sets whose order
follows it). Every distinct outcome is written with the number of seeds that
gave it. No broker: the cluster is the two methods the assignors call on the
leader's metadata (``topics()``, ``partitions_for_topic()``), and each
member's subscription is encoded by the assignor's own ``metadata()`` (or the
consumer protocol's schema) and decoded as the leader's coordinator does.

    python gen.py OUT.jsonl [SEEDS]
"""

import json
import os
import random
import signal
import subprocess
import sys
from types import SimpleNamespace

SPECS = [
    ("kafka-python", "kafka-python:range"),
    ("kafka-python", "kafka-python:roundrobin"),
    ("kafka-python", "kafka-python:sticky"),
    ("kafka-python", "kafka-python:cooperative-sticky"),
    ("aiokafka", "aiokafka:roundrobin"),
    ("aiokafka", "aiokafka:range"),
    ("aiokafka", "aiokafka:sticky"),
]


def member(mid, topics, owned=None, generation=None, instance=None):
    return {
        "id": mid,
        "instance_id": instance,
        "subscription": list(topics),
        "owned_partitions": owned or [],
        "generation": generation,
    }


def claim(m, topic, p):
    for c in m["owned_partitions"]:
        if c[0] == topic:
            c[1].append(p)
            return
    m["owned_partitions"].append([topic, [p]])


COUNTS = [1, 2, 3, 4, 5, 6, 8, 12]
NAMES = ["orders", "payments", "market-updates", "notifications", "t", "t-1", "a", "zz"]


def rand_topics(rng, k):
    names = NAMES[:]
    rng.shuffle(names)
    return [{"name": names[i], "partitions": rng.choice(COUNTS)} for i in range(k)]


def mixed_id(rng):
    base = rng.randrange(7)
    return lambda i: "c%d-%x" % ((i * 7 + base) % 13, i)


def uniform(n, topics, ident):
    return [member(ident(i), [t["name"] for t in topics]) for i in range(n)]


def cases():
    out = []

    def add(name, kind, topics, members):
        out.append({"case": name, "kind": kind,
                    "group": {"group": name, "topics": topics, "members": members}})

    two6 = [{"name": "market-updates", "partitions": 6}, {"name": "notifications", "partitions": 6}]
    for n in range(1, 8):
        add("fresh-%d-members-2x6" % n, "fresh", two6, uniform(n, two6, lambda i: "m%02d" % i))
    two12 = [{"name": "mu12", "partitions": 12}, {"name": "mu12b", "partitions": 12}]
    add("fresh-12-members-ids-m2-m10", "fresh", two12, uniform(12, two12, lambda i: "m%d" % i))
    three = [{"name": "a", "partitions": 4}, {"name": "b", "partitions": 8}, {"name": "c", "partitions": 3}]
    add("fresh-3-members-unequal-counts", "fresh", three, uniform(3, three, lambda i: "m%02d" % i))
    rng = random.Random(35)
    for i in range(6):
        ts = rand_topics(rng, 1 + rng.randrange(3))
        ms = uniform(1 + rng.randrange(6), ts, mixed_id(rng))
        rng.shuffle(ms)
        add("fresh-random-%d" % i, "fresh", ts, ms)
    # Owned claims of one generation, some members new, some partitions unclaimed.
    for i in range(10):
        ts = rand_topics(rng, 1 + rng.randrange(3))
        n = 2 + rng.randrange(5)
        ms = uniform(n, ts, mixed_id(rng))
        holders = 1 + rng.randrange(n)
        for h in range(holders):
            ms[h]["generation"] = 7
        for t in ts:
            for p in range(t["partitions"]):
                if rng.randrange(5) == 0:
                    continue
                claim(ms[rng.randrange(holders)], t["name"], p)
        rng.shuffle(ms)
        add("owned-%d" % i, "owned-claims", ts, ms)
    ms = uniform(2, two6, lambda i: "m%02d" % i)
    for m in ms:
        m["generation"] = 3
    for p in range(6):
        claim(ms[p % 2], "market-updates", p)
        claim(ms[(p + 1) % 2], "notifications", p)
    add("owned-2x6-crossed", "owned-claims", two6, ms)
    add("owned-2x6-crossed-plus-one", "owned-claims", two6,
        [member("m02", ["market-updates", "notifications"])] + json.loads(json.dumps(ms)))
    # Mixed generations: partitions claimed twice, by older and newer generations.
    for i in range(10):
        ts = rand_topics(rng, 1 + rng.randrange(3))
        n = 2 + rng.randrange(4)
        ms = uniform(n, ts, mixed_id(rng))
        for m in ms:
            m["generation"] = rng.choice([0, 3, 4, 5])
        if rng.randrange(3) == 0:
            ms[rng.randrange(n)]["generation"] = None
        for t in ts:
            for p in range(t["partitions"]):
                claim(ms[rng.randrange(n)], t["name"], p)
                if rng.randrange(3) == 0:
                    claim(ms[rng.randrange(n)], t["name"], p)
        add("generations-%d" % i, "mixed-generations", ts, ms)
    # Unequal subscriptions, fresh and with claims.
    for i in range(12):
        ts = rand_topics(rng, 2 + rng.randrange(3))
        n = 2 + rng.randrange(5)
        ident = mixed_id(rng)
        ms = []
        for k in range(n):
            sub = [t["name"] for t in ts if rng.randrange(3) != 0] or [ts[0]["name"]]
            rng.shuffle(sub)
            ms.append(member(ident(k), sub))
        if i % 2 == 1:
            for m in ms:
                m["generation"] = 9
                for t in ts:
                    if t["name"] not in m["subscription"] and rng.randrange(2):
                        continue
                    for p in range(t["partitions"]):
                        if rng.randrange(n) == 0:
                            claim(m, t["name"], p)
        add("unequal-%d" % i, "unequal-subscriptions", ts, ms)
    # Static members (group.instance.id), alone and among dynamic ones, in
    # the coordinator's order: kafka-python groups them with itertools.groupby.
    for i in range(8):
        ts = rand_topics(rng, 1 + rng.randrange(3))
        n = 2 + rng.randrange(5)
        ms = uniform(n, ts, mixed_id(rng))
        for k, m in enumerate(ms):
            if i < 3 or rng.randrange(2):
                m["instance_id"] = "inst-%d" % ((k * 5 + i) % 11)
        if i >= 5:
            # the last member alone subscribes to one more topic
            extra = {"name": "solo-%d" % i, "partitions": 3}
            ts = ts + [extra]
            ms[-1]["subscription"].append(extra["name"])
        add("static-%d" % i, "static-members", ts, ms)
    # A claim made by an older generation of a member that has since left
    # the claim's topic: the sticky executors hand the partition back to it
    # (a partition of a topic it does not subscribe to), or raise when that
    # member's assignment is fixed.
    tu = [{"name": "t", "partitions": 6}, {"name": "u", "partitions": 2}]
    add("left-topic-claim-raises", "leader-flaws", tu,
        [member("a", ["t"], [["t", [0, 1, 2, 3, 4, 5]]], 5), member("b", ["u"], [["t", [0]]], 3),
         member("c", ["t"])])
    add("left-topic-claim-handed-back", "leader-flaws", tu,
        [member("a", ["t"], [["t", [0, 1, 2, 3, 4, 5]]], 5), member("b", ["u"], [["t", [0]]], 3),
         member("c", ["t"]), member("d", ["u"])])
    return out


class Cluster:
    """The leader's metadata, as the assignors read it."""

    def __init__(self, topics):
        self._parts = {t["name"]: set(range(t["partitions"])) for t in topics}

    def topics(self, exclude_internal_topics=True):
        return set(self._parts)

    def partitions_for_topic(self, topic):
        return self._parts.get(topic)


def owned_tps(m, TP):
    return [TP(t, p) for t, ps in m["owned_partitions"] for p in ps]


def kafka_python_members(spec, group):
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription as Sub
    from kafka.structs import TopicPartition as TP
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
    from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
    name = spec.split(":")[1]
    cls = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor,
           "sticky": StickyPartitionAssignor, "cooperative-sticky": CooperativeStickyAssignor}[name]
    members = []
    for m in group["members"]:
        if name == "sticky":
            a = StickyPartitionAssignor()
            if m["owned_partitions"]:
                a.member_assignment = owned_tps(m, TP)
                a.generation = -1 if m["generation"] is None else m["generation"]
            sub = a.metadata(m["subscription"])
        elif name == "cooperative-sticky":
            a = CooperativeStickyAssignor()
            if m["generation"] is None:
                if m["owned_partitions"]:
                    a.member_assignment = owned_tps(m, TP)
                sub = a.metadata(m["subscription"])
            else:
                # A member that sends its generation (schema v2+, as the Java
                # client does), its topics sorted as kafka-python's own
                # cooperative members send them.
                sub = Sub(version=3, topics=sorted(m["subscription"]), user_data=b"",
                          owned_partitions=[Sub.TopicPartition(topic=t, partitions=ps)
                                            for t, ps in m["owned_partitions"]],
                          generation_id=m["generation"], rack_id=None)
        else:
            sub = cls.metadata(m["subscription"])
        members.append(SimpleNamespace(member_id=m["id"], group_instance_id=m["instance_id"],
                                       metadata=Sub.decode(sub.encode())))
    result = cls().assign(Cluster(group["topics"]), members)
    return {mid: a.assigned_partitions for mid, a in result.items()}


def aiokafka_members(spec, group):
    from aiokafka.coordinator.protocol import ConsumerProtocolMemberMetadata as Meta
    from aiokafka.structs import TopicPartition as TP
    from aiokafka.coordinator.assignors.range import RangePartitionAssignor
    from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from aiokafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
    name = spec.split(":")[1]
    cls = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor,
           "sticky": StickyPartitionAssignor}[name]
    members = {}
    for m in group["members"]:
        if name == "sticky":
            if m["owned_partitions"]:
                gen = -1 if m["generation"] is None else m["generation"]
                meta = cls._metadata(m["subscription"], owned_tps(m, TP), gen)
            else:
                meta = cls._metadata(m["subscription"], None)
        else:
            meta = cls.metadata(m["subscription"])
        members[m["id"]] = Meta.decode(meta.encode())
    result = cls.assign(Cluster(group["topics"]), members)
    return {mid: a.assignment for mid, a in result.items()}


class Hang(Exception):
    pass


def on_alarm(signum, frame):
    raise Hang("the assignor did not return within 5 s")


def one_seed():
    """Runs every case under this interpreter's hash seed: one JSON line each."""
    signal.signal(signal.SIGALRM, on_alarm)
    for c in cases():
        for client, spec in SPECS:
            fn = kafka_python_members if client == "kafka-python" else aiokafka_members
            signal.alarm(5)
            try:
                got = fn(spec, json.loads(json.dumps(c["group"])))
                res = {"assignment": {mid: sorted([t, p] for t, ps in parts for p in ps)
                                      for mid, parts in got.items()}}
            except Hang as e:
                res = {"error": "hang: " + str(e)}
            except Exception as e:  # noqa: BLE001 - the library's own failure is the answer
                res = {"error": "%s: %s" % (type(e).__name__, e)}
            finally:
                signal.alarm(0)
            print(json.dumps({"case": c["case"], "assignor": spec, **res}), flush=True)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--one-seed":
        one_seed()
        return
    out_path = sys.argv[1]
    seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    import aiokafka
    import kafka
    versions = {"kafka-python": kafka.__version__, "aiokafka": aiokafka.__version__}
    results = {}
    for seed in range(seeds):
        env = dict(os.environ, PYTHONHASHSEED=str(seed))
        text = subprocess.run([sys.executable, __file__, "--one-seed"], env=env, check=True,
                              capture_output=True, text=True).stdout
        for line in text.splitlines():
            r = json.loads(line)
            key = (r["case"], r["assignor"])
            outcome = json.dumps(r.get("assignment"), sort_keys=True) if "error" not in r else None
            err = r.get("error")
            slot = results.setdefault(key, {})
            k = (outcome, err)
            slot.setdefault(k, []).append(seed)
    with open(out_path, "w") as f:
        for c in cases():
            for client, spec in SPECS:
                slot = results[(c["case"], spec)]
                outcomes = []
                errors = []
                for (outcome, err), ss in sorted(slot.items(), key=lambda kv: (-len(kv[1]), kv[1][0])):
                    if err is not None:
                        errors.append({"error": err, "seeds": ss})
                    else:
                        outcomes.append({"assignment": json.loads(outcome), "seeds": ss})
                f.write(json.dumps({"client": client, "version": versions[client], "assignor": spec,
                                    "case": c["case"], "kind": c["kind"], "group": c["group"],
                                    "hash_seeds": seeds, "outcomes": outcomes, "errors": errors},
                                   separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
