#!/usr/bin/env python3
"""Build the extended key corpus for the regenerated known-answer vectors.

Writes tests/vectors/generated/keys.jsonl, one key per line:
    {"key_hex": "<hex of the raw key bytes>", "key": "<UTF-8 text>" | null}
("key" is null when the bytes are not valid UTF-8.)

The corpus is: every key_hex of reference/java_builtin_partitioner_murmur2.jsonl
and reference/redis_server_cluster_keyslot.jsonl (in file order), then the
extra keys below. Duplicates are dropped (first occurrence wins). The NULL key
is not part of this file; generators add NULL-key lines themselves where the
client's result is deterministic.

Also importable: load_keys() and PARTITION_COUNTS are used by the generators.
"""
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
VECTORS = os.path.dirname(HERE)
REFERENCE = os.path.join(VECTORS, "reference")
GENERATED = os.path.join(VECTORS, "generated")
KEYS_FILE = os.path.join(GENERATED, "keys.jsonl")

PARTITION_COUNTS = [1, 2, 3, 6, 7, 8, 12, 100, 1000]
SEED = 0x5EED2024


def reference_keys():
    out = []
    for name in ("java_builtin_partitioner_murmur2.jsonl", "redis_server_cluster_keyslot.jsonl"):
        with open(os.path.join(REFERENCE, name)) as f:
            for line in f:
                d = json.loads(line)
                if d.get("key_hex") is not None:
                    out.append(bytes.fromhex(d["key_hex"]))
    return out


def extra_keys():
    rng = random.Random(SEED)
    out = []
    # one key of each length 1..16, random-ish bytes (fixed seed)
    for n in range(1, 17):
        out.append(bytes(rng.randrange(256) for _ in range(n)))
    # non-ASCII UTF-8 keys
    for s in [
        "é",                      # U+00E9 (NFC)
        "e\u0301",                # e + combining acute (NFD)
        "Ελληνικά",
        "привет",
        "中文键",
        "한국어",
        "עברית",
        "العربية",
        "👍🏽",                     # emoji + skin-tone modifier
        "👨‍👩‍👧",                    # ZWJ sequence
        "𝄞",                      # 4-byte UTF-8 (U+1D11E)
        "\ufeffbom",              # BOM prefix
        "nul\u0000inside",
        "tab\tnew\nline",
        "Ω≈ç√∫",
        "ＡＢＣ",                  # full-width
        "\u00a0",                 # NBSP alone
        "日本:{日本}",
    ]:
        out.append(s.encode("utf-8"))
    # non-UTF-8 byte keys
    out += [
        b"\x80",
        b"\xc3\x28",              # invalid continuation
        b"\xc0\xaf",              # overlong '/'
        b"\xed\xa0\x80",          # UTF-16 surrogate encoded
        b"\xf8\x88\x80\x80\x80",  # 5-byte form
        b"\xf4\x90\x80\x80",      # > U+10FFFF
        b"abc\xff",
        b"\xfe\xff\x00\x41",      # UTF-16BE BOM + 'A'
        b"\x00\x00\x00\x00",
        b"\xff\xff\xff\xff",
        b"\x7f\x80\x81",
    ]
    # long keys: 4096 and 10000 bytes, ASCII and binary
    for n in (4096, 10000):
        out.append((b"0123456789abcdefghijklmnopqrstuvwxyz" * (n // 36 + 1))[:n])
        out.append(bytes(rng.randrange(256) for _ in range(n)))
    # 1-byte keys
    out += [b"\x00", b"\xff", b"{"]
    # Redis tricky-brace keys
    out += [
        b"{}", b"{{a}}", b"a{b}{c}", b"}{a}", b"{a", b"a}", b"{}{a}", b"{{}}",
        b"x{}y{z}", "{日本}".encode("utf-8"), b"{\xff\xfe}x",
    ]
    return out


def build():
    seen = set()
    keys = []
    for k in reference_keys() + extra_keys():
        if k not in seen:
            seen.add(k)
            keys.append(k)
    return keys


def key_text(k):
    try:
        return k.decode("utf-8")
    except UnicodeDecodeError:
        return None


def load_keys(path=KEYS_FILE):
    with open(path) as f:
        return [bytes.fromhex(json.loads(line)["key_hex"]) for line in f]


def kafka_line(key, n, p):
    """One Kafka vector line; key=None means the NULL key."""
    if key is None:
        d = {"key_hex": None, "key": None, "partitions": n, "partition": p, "null_key": True}
    else:
        d = {"key_hex": key.hex(), "key": key_text(key), "partitions": n, "partition": p}
    return json.dumps(d, ensure_ascii=False, separators=(",", ":"))


def write_lines(name, lines):
    os.makedirs(GENERATED, exist_ok=True)
    path = os.path.join(GENERATED, name)
    with open(path, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(line + "\n")
    print(f"wrote {path} ({len(lines)} lines)")


def main():
    keys = build()
    write_lines("keys.jsonl", [json.dumps({"key_hex": k.hex(), "key": key_text(k)}, ensure_ascii=False, separators=(",", ":")) for k in keys])
    return 0


if __name__ == "__main__":
    sys.exit(main())
