#!/usr/bin/env python3
"""Deterministic key-file generator for bench/compare.

Writes COUNT keys, one per line ("\n"), each exactly KEYLEN bytes of ASCII:

    user-<zero-padded index><alnum filler>

The index is padded to the width of str(COUNT - 1); the filler comes from a
splitmix64 stream seeded with SEED, so the same (COUNT, KEYLEN, SEED) always
gives the same bytes on any machine and any Python 3 version. When KEYLEN is
too short for "user-" + index, the prefix is dropped, then the index; the
filler alone is used for very short keys (keys may then repeat, which is fine
for a partition count).

Usage: genkeys.py OUT COUNT KEYLEN [SEED]
The file is written to OUT.tmp and renamed, so a half-written file is never
mistaken for a finished one.
"""
import os
import sys

MASK64 = (1 << 64) - 1
ALNUM = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def main() -> int:
    if len(sys.argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    out, count, keylen = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    seed = int(sys.argv[4]) if len(sys.argv) == 5 else 0x5EED_0001
    if count < 1 or keylen < 1:
        print("genkeys: COUNT and KEYLEN must be >= 1", file=sys.stderr)
        return 2

    width = len(str(count - 1))
    if keylen >= 5 + width:
        fmt, fill = "user-%0" + str(width) + "d", keylen - 5 - width
    elif keylen >= width:
        fmt, fill = "%0" + str(width) + "d", keylen - width
    else:
        fmt, fill = None, keylen

    alnum = ALNUM
    state = seed & MASK64
    tmp = out + ".tmp"
    with open(tmp, "wb", buffering=1 << 20) as f:
        batch = []
        for i in range(count):
            # filler: splitmix64, 10 base-62 digits per 64-bit draw
            chars = bytearray()
            while len(chars) < fill:
                state = (state + 0x9E3779B97F4A7C15) & MASK64
                z = state
                z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
                z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
                z ^= z >> 31
                for _ in range(10):
                    z, r = divmod(z, 62)
                    chars.append(alnum[r])
            key = (fmt % i).encode() if fmt else b""
            key += bytes(chars[:fill])
            batch.append(key)
            if len(batch) == 65536:
                f.write(b"\n".join(batch) + b"\n")
                batch = []
        if batch:
            f.write(b"\n".join(batch) + b"\n")
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
