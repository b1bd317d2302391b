"""Aggregates bench/broker-assign/run's JSON lines into bench/results/NAME.json and NAME.md:
per (size, subscription, scenario, assignor) the median over the runs of each run's median
wall time, CPU time and bytes allocated per assign() call, the runs' spread, and the
copartitioned / uniform ratios of the medians."""
import argparse
import json
import platform
import statistics
import subprocess

ap = argparse.ArgumentParser()
ap.add_argument("raw")
ap.add_argument("out")
ap.add_argument("--load-before")
ap.add_argument("--load-after")
ap.add_argument("--jar")
ap.add_argument("--warmup", type=int)
ap.add_argument("--timed", type=int)
a = ap.parse_args()

rows = {}
for line in open(a.raw):
    d = json.loads(line)
    k = (d["size"], d["subscription"], d["scenario"], d["assignor"])
    r = rows.setdefault(k, {"wall": [], "cpu": [], "read": [], "bytes": [], "checksums": set()})
    if "read_cpu_ms" in d:
        r["read"].append(statistics.median(d["read_cpu_ms"]))
    r["wall"].append(statistics.median(d["ms"]))
    r["cpu"].append(statistics.median(d["cpu_ms"]))
    r["bytes"].append(statistics.median(d["bytes"]))
    r["checksums"].add(d["checksum"])

sizes = ["100x1000", "1000x10000", "5000x100000"]
results = []
for (size, sub, scen, asg), r in sorted(rows.items(), key=lambda kv: (sizes.index(kv[0][0]), kv[0][1:])):
    med = statistics.median(r["wall"])
    results.append({
        "size": size, "subscription": sub, "scenario": scen, "assignor": asg,
        "runs": len(r["wall"]),
        "wall_ms_median": round(med, 3),
        "wall_ms_runs": [round(x, 3) for x in r["wall"]],
        "wall_noise_pct": round(100 * (max(r["wall"]) - min(r["wall"])) / med, 1) if med else 0,
        "cpu_ms_median": round(statistics.median(r["cpu"]), 3),
        "cpu_ms_runs": [round(x, 3) for x in r["cpu"]],
        "bytes_per_call": int(statistics.median(r["bytes"])),
        # Leave only: the CPU time of reading every partition of the call's current assignment.
        "read_current_cpu_ms": round(statistics.median(r["read"]), 3) if r["read"] else None,
        # Every run computes the same answer: one checksum per row.
        "checksum": sorted(r["checksums"]),
    })

def get(size, sub, scen, asg, field):
    for x in results:
        if (x["size"], x["subscription"], x["scenario"], x["assignor"]) == (size, sub, scen, asg):
            return x[field]
    return None

ratios = []
for size in sizes:
    for sub in ["homogeneous", "heterogeneous"]:
        for scen in ["scratch", "leave", "steady"]:
            u, c = get(size, sub, scen, "uniform", "wall_ms_median"), get(size, sub, scen, "copartitioned", "wall_ms_median")
            uc, cc = get(size, sub, scen, "uniform", "cpu_ms_median"), get(size, sub, scen, "copartitioned", "cpu_ms_median")
            if u and c:
                ratios.append({"size": size, "subscription": sub, "scenario": scen,
                               "copartitioned_over_uniform_wall": round(c / u, 2),
                               "copartitioned_over_uniform_cpu": round(cc / uc, 2) if uc else None})

java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
meta = {
    "what": "assign() per call through the broker's plug-in API (kafka-group-coordinator-api 4.4.0): "
            "Kafka 4.4.0's UniformAssignor and RangeAssignor beside partwise's BrokerCopartitionedAssignor; "
            "members x partitions over 10 topics; scratch = no current assignment, leave = the scratch result "
            "minus the first member (new objects throughout, as after a computation that rewrote every member's target); "
            "steady = the same leave given objects an earlier call was already handed (as the coordinator hands a member's "
            "target object again until its target changes); heterogeneous = even members on the first 6 topics, odd on the last 6",
    "partwise_jar": a.jar, "java": java, "cores": subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip(),
    "machine": platform.machine(), "warmup_calls": a.warmup, "timed_calls_per_run": a.timed,
    "load_average_before": a.load_before, "load_average_after": a.load_after,
}
json.dump({"meta": meta, "results": results, "ratios": ratios}, open(a.out + ".json", "w"), indent=1)

with open(a.out + ".md", "w") as f:
    f.write("# Broker-side assignors, ms per assign() (bench/broker-assign/run)\n\n")
    f.write(f"{meta['what']}.\n\npartwise: {a.jar}; {java}; {meta['cores']} cores; "
            f"{results[0]['runs']} JVM runs x {a.timed} timed calls after {a.warmup} warm-ups; "
            f"load average (1, 5, 15 min) {a.load_before} before, {a.load_after} after.\n\n")
    f.write("Medians over the runs of each run's median; wall (CPU time of the calling thread) in ms; "
            "noise = (slowest run - fastest run) / median, wall; KB allocated per call.\n\n")
    f.write("Read: the CPU time of reading every partition of the current assignment the call is given "
            "(leave only), the floor of an assignor that reads each partition a member holds.\n\n")
    f.write("| members x partitions | subscription | scenario | uniform | range | copartitioned | copartitioned / uniform, wall (CPU) | read (CPU) | noise u / r / c | KB u / r / c |\n")
    f.write("|---|---|---|---|---|---|---|---|---|---|\n")
    for size in sizes:
        for sub in ["homogeneous", "heterogeneous"]:
            for scen in ["scratch", "leave", "steady"]:
                cells = []
                for asg in ["uniform", "range", "copartitioned"]:
                    cells.append(f"{get(size, sub, scen, asg, 'wall_ms_median'):.2f} ({get(size, sub, scen, asg, 'cpu_ms_median'):.2f})")
                rat = next(x for x in ratios if (x["size"], x["subscription"], x["scenario"]) == (size, sub, scen))
                noise = " / ".join(f"{get(size, sub, scen, asg, 'wall_noise_pct'):.0f}%" for asg in ["uniform", "range", "copartitioned"])
                kb = " / ".join(f"{get(size, sub, scen, asg, 'bytes_per_call') / 1024:.0f}" for asg in ["uniform", "range", "copartitioned"])
                m, p = size.split("x")
                rd = get(size, sub, scen, "copartitioned", "read_current_cpu_ms")
                rd = f"{rd:.2f}" if rd is not None else "-"
                f.write(f"| {int(m):,} x {int(p):,} | {sub} | {scen} | {' | '.join(cells)} | "
                        f"{rat['copartitioned_over_uniform_wall']:.2f}x ({rat['copartitioned_over_uniform_cpu']:.2f}x) | {rd} | {noise} | {kb} |\n")
print(open(a.out + ".md").read())
