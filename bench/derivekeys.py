#!/usr/bin/env python3
"""Derive a bigger (or hot-key) key file from a genkeys.py file, fast.

Usage: derivekeys.py SRC OUT LINES [--hot]

SRC must be a genkeys.py file with fixed-width records (every line KEYLEN
bytes + "\n") whose keys start with "user-" (bench/data/keys-5m.txt). OUT
gets LINES lines: copy 0 of SRC unchanged, then copy 1, 2, ... with the
5-byte prefix "user-" replaced by "u001-", "u002-", ... (so every key is
distinct and as long as in SRC), the last copy cut to fit. The first
len(SRC) bytes of OUT are SRC itself. Copies are made with bytes.replace on
whole 85 MB blocks, so 1 GiB takes seconds, not minutes.

--hot: line i (0-based) becomes the hot key "hot-key-000...", padded or cut
to KEYLEN, whenever i % 10 is 0, 3 or 6: 30% of the lines (exactly, when
LINES is a multiple of 10) are that one key, spread evenly over the file.

Writes OUT.tmp then renames it, and OUT.meta.json with the line count, byte
count, method and, with --hot, the hot key and its exact count (bench/compare
skew checks partwise's heavy-hitter estimate against it on the 1 GiB file,
where no peer runs).
"""
import json
import os
import sys

HOT_RESIDUES = (0, 3, 6)


def main() -> int:
    args = [a for a in sys.argv[1:] if a != "--hot"]
    hot = "--hot" in sys.argv[1:]
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    src_path, out, lines = args[0], args[1], int(args[2])
    with open(src_path, "rb") as f:
        src = f.read()
    first = src.find(b"\n")
    rec = first + 1
    if first < 5 or len(src) % rec or not src.startswith(b"user-"):
        print("derivekeys: %s is not a fixed-width genkeys.py file with 'user-' keys" % src_path,
              file=sys.stderr)
        return 2
    src_lines = len(src) // rec
    if src.count(b"user-") != src_lines or src.count(b"\n") != src_lines:
        print("derivekeys: %s: 'user-' must start every line and nowhere else" % src_path,
              file=sys.stderr)
        return 2
    copies = -(-lines // src_lines)
    if lines < 1 or copies > 1000:
        print("derivekeys: LINES must be 1 .. 1000 x the lines of SRC", file=sys.stderr)
        return 2
    keylen = rec - 1
    hot_key = (b"hot-key-" + b"0" * keylen)[:keylen]
    hot_count = 0

    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        for c in range(copies):
            take = min(src_lines, lines - c * src_lines)
            block = src if c == 0 else src.replace(b"user-", b"u%03d-" % c)
            block = block[:take * rec]
            if hot:
                block = bytearray(block)
                g = c * src_lines  # global index of the block's first line
                for r in HOT_RESIDUES:
                    j0 = (r - g) % 10
                    if j0 >= take:
                        continue
                    hot_count += len(range(j0, take, 10))
                    for b in range(keylen):
                        sl = slice(j0 * rec + b, take * rec, 10 * rec)
                        block[sl] = hot_key[b:b + 1] * len(range(*sl.indices(len(block))))
            f.write(block)
    os.replace(tmp, out)
    meta = {
        "file": os.path.basename(out),
        "lines": lines,
        "bytes": lines * rec,
        "key_bytes": keylen,
        "method": "derivekeys.py: %s repeated %d time(s) with per-copy prefixes "
                  "user-, u001-, u002-, ...%s" % (
                      os.path.basename(src_path), copies,
                      "; lines i % 10 in {0,3,6} replaced by the hot key" if hot else ""),
        "source": os.path.basename(src_path),
        "source_bytes": len(src),
    }
    if hot:
        meta.update(hot_key=hot_key.decode(), hot_key_hex=hot_key.hex(), hot_count=hot_count)
    with open(out + ".meta.json", "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
