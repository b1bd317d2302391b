#!/usr/bin/env python3
"""Check and report one bench/compare run.

Usage: report.py MANIFEST OUT_JSON

MANIFEST is written by bench/compare: a JSON object with the run's settings
("keys", "keylen", "partitions", "keyfile", "env") and "tools", a list of
{"tool", "version", "seconds": [run, ...], "stdout": path, "command"}.

Each tool's stdout must hold an NDJSON line
    {"partitioner":"java","partitions":N,"counts":[...]}
All tools' counts must be identical and sum to the number of keys; if not,
this prints what differs and exits 1 (no results file is written). Otherwise
it prints the table (best run per tool; partwise speedup over each peer and
the target for it) and writes OUT_JSON. Exit 0 either way the targets go;
exit 3 instead when STRICT_TARGETS=1 and a target is missed.
"""
import hashlib
import json
import os
import statistics
import sys

# partwise end to end must be at least this many times faster than the peer
TARGETS = {"kafka-python": 50.0, "kafkajs": 30.0, "java-careful": 15.0}


def read_counts(path):
    with open(path, "rb") as f:
        lines = f.read().decode("utf-8", "replace").splitlines()
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if obj.get("partitioner") == "java":
            return obj
    return None


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main() -> int:
    manifest_path, out_path = sys.argv[1], sys.argv[2]
    with open(manifest_path) as f:
        m = json.load(f)
    keys, n = m["keys"], m["partitions"]

    ok = True
    results = []
    for t in m["tools"]:
        obj = read_counts(t["stdout"])
        if obj is None:
            print('MISMATCH: %s printed no {"partitioner":"java",...} NDJSON line (see %s)'
                  % (t["tool"], t["stdout"]), file=sys.stderr)
            ok = False
            continue
        counts = obj.get("counts")
        if obj.get("partitions") != n or not isinstance(counts, list) or len(counts) != n:
            print("MISMATCH: %s reports partitions=%r with %s counts, expected %d"
                  % (t["tool"], obj.get("partitions"),
                     len(counts) if isinstance(counts, list) else "no", n), file=sys.stderr)
            ok = False
        elif sum(counts) != keys:
            print("MISMATCH: %s counted %d keys, the file has %d"
                  % (t["tool"], sum(counts), keys), file=sys.stderr)
            ok = False
        results.append(dict(t, counts=counts))

    if len(results) >= 2:
        ref = results[0]
        for r in results[1:]:
            if r["counts"] != ref["counts"]:
                ok = False
                diff = [p for p in range(max(len(r["counts"] or []), len(ref["counts"] or [])))
                        if (ref["counts"] or [None] * n)[p:p + 1] != (r["counts"] or [None] * n)[p:p + 1]]
                print("MISMATCH: %s and %s disagree on %d partition(s), first %s:\n  %s: %s\n  %s: %s"
                      % (ref["tool"], r["tool"], len(diff), diff[:8],
                         ref["tool"], ref["counts"], r["tool"], r["counts"]), file=sys.stderr)
    if not ok:
        print("FAIL: the tools do not produce identical per-partition counts; no results written",
              file=sys.stderr)
        return 1

    rows = []
    for r in results:
        best = min(r["seconds"])
        rows.append({
            "tool": r["tool"],
            "version": r["version"],
            "command": r["command"],
            "runs_seconds": [round(s, 6) for s in r["seconds"]],
            "seconds": round(best, 6),
            "median_seconds": round(statistics.median(r["seconds"]), 6),
            "keys_per_second": round(keys / best, 1),
            "max_rss_kb": r.get("max_rss_kb"),
        })
    by_tool = {r["tool"]: r for r in rows}
    pw = by_tool.get("partwise")
    ratios = []
    if pw:
        for r in rows:
            if r["tool"] == "partwise":
                continue
            speedup = r["seconds"] / pw["seconds"]
            target = TARGETS.get(r["tool"])
            r["partwise_speedup"] = round(speedup, 2)
            # bench/compare pairs run i of every tool back to back; on a shared
            # machine the ratio of medians is the figure to quote.
            r["partwise_speedup_of_medians"] = round(r["median_seconds"] / pw["median_seconds"], 2)
            pairs = list(zip(r["runs_seconds"], pw["runs_seconds"]))
            r["paired_ratios"] = [round(a / b, 2) for a, b in pairs]
            r["target_speedup"] = target
            # Targets are held to the ratio of medians, the figure quoted.
            r["target_met"] = (None if target is None
                               else r["partwise_speedup_of_medians"] >= target)
            ratios.append((r["tool"], r["partwise_speedup_of_medians"], target))

    # table
    print()
    print("%d keys x %d bytes, %d partitions, Java murmur2 (default) partitioner"
          % (keys, m["keylen"], n))
    print("all %d tools agree: counts %s" % (len(rows), results[0]["counts"]))
    print()
    hdr = ("tool", "version", "best s", "median s", "keys/s", "partwise speedup", "of medians", "target")
    fmt = "%-13s %-10s %10s %10s %14s %17s %11s %12s"
    print(fmt % hdr)
    print(fmt % tuple("-" * len(h) for h in hdr))
    for r in rows:
        if r["tool"] == "partwise":
            sp, spm, tg = "1.00x", "1.00x", ""
        elif "partwise_speedup" in r:
            sp = "%.2fx" % r["partwise_speedup"]
            spm = "%.2fx" % r["partwise_speedup_of_medians"]
            tg = ">= %gx %s" % (r["target_speedup"], "ok" if r["target_met"] else "MISSED") \
                if r["target_speedup"] else ""
        else:
            sp, spm, tg = "-", "-", ""
        print(fmt % (r["tool"], r["version"], "%.3f" % r["seconds"], "%.3f" % r["median_seconds"],
                     "{:,.0f}".format(r["keys_per_second"]), sp, spm, tg))
    for r in rows:
        if len(r["runs_seconds"]) > 1:
            print("%s runs: %s s%s" % (r["tool"], ", ".join("%.3f" % s for s in r["runs_seconds"]),
                  "" if r["tool"] == "partwise" else "; paired ratios %s" % r["paired_ratios"]))

    if any(r["max_rss_kb"] for r in rows):
        print("peak RSS (one untimed run each): %s" % ", ".join(
            "%s %.1f MB" % (r["tool"], r["max_rss_kb"] / 1024) for r in rows if r["max_rss_kb"]))

    out = {
        "benchmark": "end-to-end per-partition key counting (bench/compare)",
        "date": m["date"],
        "keys": keys,
        "key_bytes": m["keylen"],
        "partitions": n,
        "seed": m["seed"],
        "keyfile": os.path.relpath(m["keyfile"], m["root"]),
        "keyfile_bytes": os.path.getsize(m["keyfile"]),
        "keyfile_sha256": sha256(m["keyfile"]),
        "counts": results[0]["counts"],
        "tools": rows,
        "targets": TARGETS,
        "env": m["env"],
    }
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    with open(out_path, "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")
    rel = os.path.relpath(out_path, m["root"])
    print("\nwrote %s" % (out_path if rel.startswith("..") else rel))

    missed = [t for t, s, tg in ratios if tg is not None and s < tg]
    if missed and os.environ.get("STRICT_TARGETS") == "1":
        print("STRICT_TARGETS=1: target missed for %s" % ", ".join(missed), file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
