"""Driver of bench/compare-consume: produces the records once, then runs
`partwise kafka consume` (its ndjson read from a pipe) and Kafka's own
ConsumerPerformance (kafka-tools, printing nothing) RUNS times each, paired
(round r runs both back to back, the order alternating), and writes
bench/results/consume.json (overwritten; earlier runs are in git history).

Rate after the first assignment, both sides: records / (time of the last
record - time of the assignment). partwise's assignment is its "assigned"
event on stdout and its last record the line that brings the count to
RECORDS (it flushes after every poll's records, so the line comes out when
the record is handled); ConsumerPerformance's is its own fetch.nMsg.sec
(records / (elapsed - rebalance.time.ms), measured inside the JVM). Peak
memory: the process's maximum resident set size from wait4."""
import argparse, datetime, json, os, platform, selectors, signal, statistics, subprocess, sys, tempfile, time

ap = argparse.ArgumentParser()
for a in ("--bootstrap", "--partwise", "--perf-cp", "--perf-version", "--broker-version", "--formats"):
    ap.add_argument(a, required=True)
for a in ("--records", "--value", "--runs"):
    ap.add_argument(a, type=int, required=True)
args = ap.parse_args()
PARTS = 6
tag = f"{os.getpid()}-{int(time.time())}"
topics = [f"bench-consume-{tag}-a", f"bench-consume-{tag}-b"]
formats = args.formats.split(",")


def produce():
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": args.bootstrap})
    for t, f in admin.create_topics([NewTopic(t, PARTS, 1) for t in topics]).items():
        f.result(30)
    p = Producer({"bootstrap.servers": args.bootstrap, "linger.ms": 20,
                  "batch.num.messages": 10000, "queue.buffering.max.messages": 1000000})
    value = b"v" * args.value
    for i in range(args.records):
        while True:
            try:
                # Key i of both topics in partition i % 6: co-partitioned keys.
                p.produce(topics[i % 2], key=b"user-%08d" % (i // 2), value=value,
                          partition=(i // 2) % PARTS)
                break
            except BufferError:
                p.poll(0.1)
        if i % 10000 == 0:
            p.poll(0)
    left = p.flush(120)
    assert left == 0, f"{left} records not delivered"


def reap(proc, timeout=20):
    """Waits for proc (killing it after `timeout` s); its max RSS in KB and
    its CPU time (user + system, the whole process) in seconds."""
    deadline = time.monotonic() + timeout
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return ru.ru_maxrss, ru.ru_utime + ru.ru_stime
        if time.monotonic() > deadline:
            proc.kill()
            deadline = time.monotonic() + 5
        time.sleep(0.02)


def partwise(i, fmt):
    cmd = [args.partwise, "kafka", "consume", "-b", args.bootstrap, "-g", f"bench-pw-{tag}-{fmt}-{i}",
           "-t", topics[0], "-t", topics[1], "--offset-reset", "earliest", "--format", "ndjson"]
    if fmt == "count":
        cmd.append("--count-only")
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, "out")
    sel.register(proc.stderr, selectors.EVENT_READ, "err")
    out_fd = proc.stdout.fileno()
    # The reader counts lines and parses nothing (records after the
    # "assigned" line; with --count-only, the running total each line carries).
    lines, t_assigned, t_end, errtail, head, stopped = 0, None, None, b"", b"", False
    last = b""
    deadline = t0 + 600
    while sel.get_map() and time.monotonic() < deadline:
        if t_end is not None and not stopped:
            os.kill(proc.pid, signal.SIGTERM)
            stopped = True
        for key, _ in sel.select(timeout=1):
            chunk = os.read(key.fileobj.fileno(), 1 << 20)
            if not chunk:
                sel.unregister(key.fileobj)
                continue
            if key.data == "err":
                errtail = (errtail + chunk)[-4000:]
                continue
            now = time.monotonic() - t0
            if t_assigned is None:
                head += chunk
                at = head.find(b'"event":"assigned"')
                if at < 0:
                    continue
                t_assigned = now
                nl = head.find(b"\n", at)
                chunk = head[nl + 1:] if nl >= 0 else b""
            if t_end is not None:
                continue
            if fmt == "count":
                last = (last + chunk)[-200:]
                done = records_in(last) >= args.records
            else:
                lines += chunk.count(b"\n")
                done = lines >= args.records
            if done:
                t_end = now
    if not stopped:
        os.kill(proc.pid, signal.SIGTERM)
    rss, cpu = reap(proc)
    if t_end is None or t_assigned is None:
        sys.exit(f"partwise ({fmt}): {lines} of {args.records} records, assigned={t_assigned}, "
                 f"end={t_end}; stderr: {errtail.decode(errors='replace')}")
    return {"assigned_s": t_assigned, "end_s": t_end, "consume_s": t_end - t_assigned,
            "records_per_second": args.records / (t_end - t_assigned), "max_rss_kb": rss, "cpu_s": cpu}


def records_in(tail):
    """The record count of the last complete `count` line in `tail`."""
    for line in reversed(tail.split(b"\n")[:-1]):
        at = line.find(b'"total":')
        if at >= 0:
            digits = line[at + 8:].split(b",")[0].split(b"}")[0]
            return int(digits)
    return 0


def java(i):
    cmd = ["java", "-cp", args.perf_cp, "org.apache.kafka.tools.ConsumerPerformance",
           "--bootstrap-server", args.bootstrap, "--include", f"^bench-consume-{tag}-[ab]$",
           "--num-records", str(args.records), "--group", f"bench-perf-{tag}-{i}",
           "--hide-header", "--timeout", "30000"]
    t0 = time.monotonic()
    with tempfile.TemporaryFile() as errf:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errf)
        out = proc.stdout.read()
        rss, cpu = reap(proc, 60)
        errf.seek(0)
        err = errf.read()
    wall = time.monotonic() - t0
    rows = [l for l in out.decode().splitlines() if l.count(",") >= 9]
    if proc.returncode != 0 or not rows:
        sys.exit(f"ConsumerPerformance failed ({proc.returncode}): {out.decode()} {err.decode()[-2000:]}")
    f = [x.strip() for x in rows[-1].split(",")]
    # start.time, end.time, MB, MB.sec, nMsg, nMsg.sec, rebalance.time.ms,
    # fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
    n, rebalance_ms, fetch_ms, rate = int(f[4]), float(f[6]), float(f[7]), float(f[9])
    if n < args.records:
        sys.exit(f"ConsumerPerformance read {n} of {args.records} records")
    return {"assigned_s": rebalance_ms / 1000, "consume_s": fetch_ms / 1000, "records": n,
            "records_per_second": rate, "wall_s": wall, "max_rss_kb": rss, "cpu_s": cpu}


print(f"producing {args.records} records ({args.value}-byte values) to {topics} "
      f"({PARTS} partitions each) on {args.bootstrap}", flush=True)
load_before = os.getloadavg()
t = time.monotonic()
produce()
print(f"produced in {time.monotonic() - t:.1f} s", flush=True)
names = [f"partwise-{f}" for f in formats] + ["consumer-perf"]
rows = {n: [] for n in names}
for i in range(args.runs):
    order = names if i % 2 == 0 else names[::-1]
    for name in order:
        r = java(i) if name == "consumer-perf" else partwise(i, name.split("-", 1)[1])
        rows[name].append(r)
        print(f"run {i + 1} {name:<16} assigned {r['assigned_s']:6.3f} s, "
              f"{r['records_per_second']:>12,.0f} records/s, peak RSS {r['max_rss_kb'] / 1024:.0f} MB, "
              f"CPU {r['cpu_s']:.2f} s",
              flush=True)

median = {n: {"records_per_second": statistics.median(r["records_per_second"] for r in rs),
              "max_rss_kb": statistics.median(r["max_rss_kb"] for r in rs),
              "cpu_s": statistics.median(r["cpu_s"] for r in rs)} for n, rs in rows.items()}
spread = {n: [min(r["records_per_second"] for r in rs), max(r["records_per_second"] for r in rs)]
          for n, rs in rows.items()}
ref = median["consumer-perf"]["records_per_second"]
ratios = {n: median[n]["records_per_second"] / ref for n in names if n != "consumer-perf"}
paired = {n: [a["records_per_second"] / b["records_per_second"]
              for a, b in zip(rows[n], rows["consumer-perf"])] for n in ratios}
TARGET = 1.5
print(f"\nmedians of {args.runs} runs (records/s after the first assignment; min-max; peak RSS):")
for n in names:
    print(f"  {n:<16} {median[n]['records_per_second']:>12,.0f}  ({spread[n][0]:,.0f}-{spread[n][1]:,.0f})"
          f"  {median[n]['max_rss_kb'] / 1024:.0f} MB, CPU {median[n]['cpu_s']:.2f} s")
for n, r in ratios.items():
    tgt = f" (target >= {TARGET}x{'' if r >= TARGET else ', MISSED'})" if n == "partwise-ndjson" else ""
    print(f"{n} / ConsumerPerformance, ratio of medians: {r:.2f}x{tgt}; paired "
          + ", ".join(f"{p:.2f}" for p in paired[n]))
out = {"benchmark": "kafka consume vs ConsumerPerformance (bench/compare-consume)",
       "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H%M%SZ"),
       "records": args.records, "value_bytes": args.value, "topics": 2, "partitions_per_topic": PARTS,
       "broker": args.broker_version, "consumer_performance": args.perf_version,
       "partwise_bin": args.partwise, "runs": rows, "median": median, "spread_records_per_second": spread,
       "ratios_of_medians": ratios, "paired_ratios": paired, "target_ndjson": TARGET,
       "target_met": ratios.get("partwise-ndjson", 0) >= TARGET,
       "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
       "machine": {"cpus": os.cpu_count(), "platform": platform.platform()}}
os.makedirs("bench/results", exist_ok=True)
path = os.environ.get("RESULTS", "bench/results/consume.json")
json.dump(out, open(path, "w"), indent=2)
print(f"results: {path}")
