#!/usr/bin/env python3
"""Cross-check regenerated vectors against the reference vectors.

1. For every generated/<name>.jsonl that also exists in reference/, every
   (key, partitions) case present in both files must have the same partition
   (Redis: the same slot). NULL-key lines are compared as the key "NULL".
2. Every generated file must cover the whole corpus (generated/keys.jsonl) for
   every partition count, except the cases documented as dropped.
3. Clients that implement the same function must agree with each other on the
   extended corpus (e.g. kafka-python = KafkaJS Default = librdkafka murmur2).

Prints counts and exits non-zero on any disagreement or missing case.
"""
import json
import os
import sys

from corpus import GENERATED, PARTITION_COUNTS, REFERENCE, load_keys

NULL = "NULL"


def load(path):
    """Map case -> result. Kafka: (key_hex|NULL, partitions) -> partition; Redis: key_hex -> slot."""
    out = {}
    with open(path) as f:
        for line in f:
            d = json.loads(line)
            kh = NULL if d.get("null_key") else d["key_hex"]
            if "slot" in d:
                case, val = kh, d["slot"]
            else:
                case, val = (kh, d["partitions"]), d["partition"]
            if case in out and out[case] != val:
                raise SystemExit(f"{path}: conflicting duplicate case {case}")
            out[case] = val
    return out


def expected_cases(name, keys):
    """The cases a generated file must contain."""
    if name.startswith("redis_"):
        return set(k.hex() for k in keys)
    cases = set((k.hex(), n) for k in keys for n in PARTITION_COUNTS)
    if name in ("librdkafka_consistent_random.jsonl", "kafkago_crc32_balancer.jsonl"):
        cases -= set(("", n) for n in PARTITION_COUNTS)   # empty key is random
    if name in ("librdkafka_consistent.jsonl", "librdkafka_murmur2.jsonl", "librdkafka_fnv1a.jsonl",
                "kafkago_crc32_balancer_consistent.jsonl", "kafkago_murmur2_balancer_consistent.jsonl"):
        cases |= set((NULL, n) for n in PARTITION_COUNTS)  # NULL key deterministic
    return cases


EXPECTED_FILES = [
    "kafka_python_default_partitioner.jsonl",
    "kafkajs_default_partitioner.jsonl",
    "kafkajs_legacy_partitioner.jsonl",
    "librdkafka_consistent.jsonl",
    "librdkafka_consistent_random.jsonl",
    "librdkafka_murmur2.jsonl",
    "librdkafka_murmur2_random.jsonl",
    "librdkafka_fnv1a.jsonl",
    "librdkafka_fnv1a_random.jsonl",
    "sarama_hash_partitioner.jsonl",
    "sarama_reference_hash_partitioner.jsonl",
    "sarama_consistent_crc_hash_partitioner.jsonl",
    "sarama_murmur2_partitioner.jsonl",
    "franzgo_default_partitioner.jsonl",
    "franzgo_stickykey_kafkahasher_murmur2.jsonl",
    "franzgo_saramacompathasher_fnv1a.jsonl",
    "franzgo_saramahasher_fnv1a_64bit.jsonl",
    "franzgo_saramahasher_crc32_64bit.jsonl",
    "kafkago_hash_balancer.jsonl",
    "kafkago_reference_hash_balancer.jsonl",
    "kafkago_crc32_balancer.jsonl",
    "kafkago_crc32_balancer_consistent.jsonl",
    "kafkago_murmur2_balancer.jsonl",
    "kafkago_murmur2_balancer_consistent.jsonl",
    "redis_server_cluster_keyslot.jsonl",
]

# groups of generated files that must be identical on their common cases
SAME_FUNCTION = [
    ("murmur2 (Java-compatible)", [
        "kafka_python_default_partitioner.jsonl",
        "kafkajs_default_partitioner.jsonl",
        "librdkafka_murmur2.jsonl",
        "librdkafka_murmur2_random.jsonl",
        "sarama_murmur2_partitioner.jsonl",
        "franzgo_default_partitioner.jsonl",
        "franzgo_stickykey_kafkahasher_murmur2.jsonl",
        "kafkago_murmur2_balancer.jsonl",
        "kafkago_murmur2_balancer_consistent.jsonl",
    ]),
    ("crc32 unsigned", [
        "librdkafka_consistent.jsonl",
        "librdkafka_consistent_random.jsonl",
        "sarama_consistent_crc_hash_partitioner.jsonl",
        "franzgo_saramahasher_crc32_64bit.jsonl",
        "kafkago_crc32_balancer.jsonl",
        "kafkago_crc32_balancer_consistent.jsonl",
    ]),
    ("fnv1a & 0x7fffffff (Sarama reference)", [
        "sarama_reference_hash_partitioner.jsonl",
        "kafkago_reference_hash_balancer.jsonl",
    ]),
    ("fnv1a abs (Sarama default)", [
        "sarama_hash_partitioner.jsonl",
        "librdkafka_fnv1a.jsonl",
        "librdkafka_fnv1a_random.jsonl",
        "kafkago_hash_balancer.jsonl",
        "franzgo_saramacompathasher_fnv1a.jsonl",
    ]),
]


def main():
    keys = load_keys()
    names = sorted(f for f in os.listdir(GENERATED) if f.endswith(".jsonl") and f != "keys.jsonl")
    failures = 0
    data = {}
    for name in EXPECTED_FILES:
        if name not in names:
            print(f"MISSING FILE generated/{name}")
            failures += 1
    print(f"corpus: {len(keys)} keys, partition counts {PARTITION_COUNTS}")
    print(f"{'file':45} {'gen':>6} {'ref':>6} {'common':>7} {'differ':>6} {'ref-not-in-gen':>14} {'missing':>7}")
    for name in names:
        gen = load(os.path.join(GENERATED, name))
        data[name] = gen
        missing = expected_cases(name, keys) - set(gen)
        ref_path = os.path.join(REFERENCE, name)
        if os.path.exists(ref_path):
            ref = load(ref_path)
            common = set(gen) & set(ref)
            differ = sorted((c for c in common if gen[c] != ref[c]), key=str)
            ref_only = len(set(ref) - set(gen))
            nref = len(ref)
        else:
            common, differ, ref_only, nref = set(), [], 0, 0
        print(f"{name:45} {len(gen):6} {nref:6} {len(common):7} {len(differ):6} {ref_only:14} {len(missing):7}")
        for c in differ[:20]:
            print(f"   DIFFER {c}: generated={gen[c]} reference={ref[c]}")
        for c in sorted(missing, key=str)[:20]:
            print(f"   MISSING {c}")
        failures += len(differ) + len(missing)
    print()
    print("same-function groups (generated files, extended corpus):")
    for label, group in SAME_FUNCTION:
        present = [g for g in group if g in data]
        if len(present) != len(group):
            print(f"  {label}: MISSING FILES {sorted(set(group) - set(present))}")
            failures += 1
            continue
        base = data[present[0]]
        for other in present[1:]:
            common = set(base) & set(data[other])
            differ = [c for c in common if base[c] != data[other][c]]
            print(f"  {label}: {present[0]} vs {other}: {len(common)} common, {len(differ)} differ")
            for c in sorted(differ, key=str)[:10]:
                print(f"     DIFFER {c}: {base[c]} vs {data[other][c]}")
            failures += len(differ)
    print()
    if failures:
        print(f"CROSSCHECK FAILED: {failures} problems")
        return 1
    print(f"CROSSCHECK OK: {len(names)} generated files, 0 disagreements, 0 missing cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
