"""Driver of bench/compare-group: produces the records once, then runs each
consumer RUNS times (alternating), timing assignment and the last record from
its output, and writes bench/results/group.json (overwritten; earlier runs are in git history)."""
import argparse, datetime, json, os, platform, selectors, signal, statistics, subprocess, sys, time

ap = argparse.ArgumentParser()
for a in ("--bootstrap", "--partwise", "--kcat-version", "--java-cp", "--java-version", "--repo"):
    ap.add_argument(a, required=True)
for a in ("--records", "--value", "--runs", "--session-ms", "--kcat-fetch-wait-ms"):
    ap.add_argument(a, type=int, required=True)
args = ap.parse_args()
PARTS = 6
tag = f"{os.getpid()}-{int(time.time())}"
topics = [f"bench-group-{tag}-a", f"bench-group-{tag}-b"]


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
        t = topics[i % 2]
        while True:
            try:
                # Key i lands in unit i % 6 of its topic: co-partitioned keys.
                p.produce(t, key=b"user-%08d" % (i // 2), value=value, partition=(i // 2) % PARTS)
                break
            except BufferError:
                p.poll(0.1)
        if i % 10000 == 0:
            p.poll(0)
    left = p.flush(120)
    assert left == 0, f"{left} records not delivered"


def run(cmd, env, assigned_marker, eof_marker, record_marker, assigned_on_stderr=False):
    """Runs cmd until it has consumed `args.records` records; returns
    (assigned s, end s). The end is the last record printed (partwise flushes
    each batch) or, with `eof_marker`, the stderr line of the last of the 12
    partitions reaching its end (kcat's stdout is block-buffered, so its last
    lines only show when it exits). Either way, every record must come out."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, "out")
    sel.register(proc.stderr, selectors.EVENT_READ, "err")
    rem = {"out": b"", "err": b""}
    records, t_assigned, t_end, errtail, eofs, stopped = 0, None, None, b"", set(), False
    deadline = t0 + 600
    while sel.get_map() and time.monotonic() < deadline:
        if t_end is not None and not stopped:
            proc.send_signal(signal.SIGTERM)
            stopped = True
        for key, _ in sel.select(timeout=1):
            chunk = os.read(key.fileobj.fileno(), 1 << 20)
            if not chunk:
                sel.unregister(key.fileobj)
                continue
            data = rem[key.data] + chunk
            cut = data.rfind(b"\n") + 1
            lines, rem[key.data] = data[:cut], data[cut:]
            now = time.monotonic() - t0
            if key.data == "err":
                errtail = (errtail + lines)[-4000:]
                if eof_marker is not None:
                    for line in lines.splitlines():
                        if eof_marker in line:
                            eofs.add(line.split(b" at offset")[0])
                    if t_end is None and len(eofs) == 2 * PARTS:
                        t_end = now
            src = proc.stderr if eof_marker is not None or assigned_on_stderr else proc.stdout
            if t_assigned is None and key.fileobj is src and assigned_marker in lines:
                t_assigned = now
            if key.data == "out":
                records += lines.count(b"\n") if record_marker is None else lines.count(record_marker)
                if eof_marker is None and t_end is None and records >= args.records:
                    t_end = now
    if not stopped:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
    if t_end is None or t_assigned is None or records != args.records:
        sys.exit(f"{cmd[0]}: {records} of {args.records} records, assigned={t_assigned}, end={t_end}; "
                 f"stderr: {errtail.decode(errors='replace')}")
    return t_assigned, t_end


def partwise(i):
    cmd = [args.partwise, "kafka", "consume", "-b", args.bootstrap, "-g", f"bench-pw-{tag}-{i}",
           "-t", topics[0], "-t", topics[1], "--offset-reset", "earliest",
           "--session-timeout-ms", str(args.session_ms), "--format", "ndjson"]
    return run(cmd, dict(os.environ), b'"event":"assigned"', None, b'"event":"record"')


def kcat(i):
    env = dict(os.environ, LD_LIBRARY_PATH=os.environ["LD_LIBRARY_PATH_KCAT"])
    cmd = ["kcat", "-b", args.bootstrap, "-G", f"bench-kc-{tag}-{i}", topics[0], topics[1],
           "-X", "partition.assignment.strategy=range", "-X", "auto.offset.reset=earliest",
           "-X", f"session.timeout.ms={args.session_ms}", "-f", "%t %p %o %k\n"]
    if args.kcat_fetch_wait_ms >= 0:
        # kcat's end is its last end-of-partition event, which takes one more
        # fetch that the broker holds for fetch.wait.max.ms (500 ms by
        # default) when no data is left; partwise's end is its last record
        # line. Shortening the hold keeps kcat from being charged for it.
        cmd += ["-X", f"fetch.wait.max.ms={args.kcat_fetch_wait_ms}"]
    return run(cmd, env, b"assigned:", b"Reached end of topic", None)


def java(i):
    # kafka-clients' KafkaConsumer (range), the harness of tests/vectors/regen/java:
    # records on stdout flushed after every poll, so the end is its last record
    # line, as for partwise; "assigned:" on stderr from its rebalance listener.
    cmd = ["java", "-cp", args.java_cp, "dev.partwise.regen.Main", args.repo, "bench-consume",
           "--bootstrap", args.bootstrap, "--group", f"bench-jv-{tag}-{i}", "--topics", ",".join(topics),
           "--session-timeout-ms", str(args.session_ms)]
    return run(cmd, dict(os.environ), b"assigned:", None, None, assigned_on_stderr=True)


print(f"producing {args.records} records ({args.value}-byte values) to {topics} ({PARTS} partitions each) on {args.bootstrap}")
load_before = os.getloadavg()
produce()
rows = {"partwise": [], "kcat": [], "java": []}
for i in range(args.runs):
    for name, f in (("partwise", partwise), ("kcat", kcat), ("java", java)):
        a, e = f(i)
        rows[name].append({"assigned_s": a, "end_s": e, "consume_s": e - a,
                           "records_per_second": args.records / (e - a)})
        print(f"run {i + 1} {name:<9} assigned {a:6.3f} s, last record {e:6.3f} s, {args.records / (e - a):>12,.0f} records/s")

best = {n: {"assigned_s": min(r["assigned_s"] for r in rs),
            "records_per_second": max(r["records_per_second"] for r in rs)} for n, rs in rows.items()}
thr = best["partwise"]["records_per_second"] / best["kcat"]["records_per_second"]
join = best["partwise"]["assigned_s"] / best["kcat"]["assigned_s"]
print(f"\n{'tool':<44}{'join->assigned s':>18}{'records/s':>14}")
print(f"{'partwise kafka consume':<44}{best['partwise']['assigned_s']:>18.3f}{best['partwise']['records_per_second']:>14,.0f}")
print(f"{'kcat -G (range, ' + args.kcat_version.split('with ')[-1] + ')':<44}{best['kcat']['assigned_s']:>18.3f}{best['kcat']['records_per_second']:>14,.0f}")
print(f"{'KafkaConsumer (range, ' + args.java_version.split(',')[0] + ')':<44}{best['java']['assigned_s']:>18.3f}{best['java']['records_per_second']:>14,.0f}")
thr_java = best["partwise"]["records_per_second"] / best["java"]["records_per_second"]
join_java = best["partwise"]["assigned_s"] / best["java"]["assigned_s"]
print(f"throughput partwise / Java: {thr_java:.2f}x; assignment time partwise / Java: {join_java:.3f}x")
print(f"throughput partwise / kcat: {thr:.2f}x (target >= 0.7x){'' if thr >= 0.7 else '  TARGET MISSED'}")
delta_ms = (best["partwise"]["assigned_s"] - best["kcat"]["assigned_s"]) * 1000
print(f"assignment time partwise / kcat: {join:.3f}x ({delta_ms:+.0f} ms; target <= 1.0x){'' if join <= 1.0 else '  TARGET MISSED'}")
# Ratios of medians: single runs on a shared 2-core machine swing; the best
# figures above are kept for comparison with earlier result files.
median = {n: {"assigned_s": statistics.median(r["assigned_s"] for r in rs),
              "records_per_second": statistics.median(r["records_per_second"] for r in rs)}
          for n, rs in rows.items()}
med_ratio = {
    "throughput_kcat": median["partwise"]["records_per_second"] / median["kcat"]["records_per_second"],
    "throughput_java": median["partwise"]["records_per_second"] / median["java"]["records_per_second"],
    "assignment_time_kcat": median["partwise"]["assigned_s"] / median["kcat"]["assigned_s"],
    "assignment_time_java": median["partwise"]["assigned_s"] / median["java"]["assigned_s"],
}
print(f"\nmedians of {args.runs} runs:")
for n in ("partwise", "kcat", "java"):
    print(f"  {n:<9} join->assigned {median[n]['assigned_s']:.3f} s, {median[n]['records_per_second']:>12,.0f} records/s")
print(f"ratios of medians: throughput partwise / kcat {med_ratio['throughput_kcat']:.2f}x, partwise / Java {med_ratio['throughput_java']:.2f}x; "
      f"join partwise / kcat {med_ratio['assignment_time_kcat']:.3f}x, partwise / Java {med_ratio['assignment_time_java']:.3f}x")
out = {"benchmark": "consumer group join and throughput (bench/compare-group)",
       "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H%M%SZ"),
       "records": args.records, "value_bytes": args.value, "topics": 2, "partitions_per_topic": PARTS,
       "session_timeout_ms": args.session_ms, "kcat_fetch_wait_ms": args.kcat_fetch_wait_ms, "kcat": args.kcat_version, "java": args.java_version, "runs": rows, "best": best, "median": median, "ratios_of_medians": med_ratio,
       "label": os.environ.get("LABEL", ""), "partwise_bin": args.partwise,
       "throughput_ratio": thr, "assignment_time_ratio": join,
       "throughput_ratio_java": thr_java, "assignment_time_ratio_java": join_java,
       "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
       "machine": {"cpus": os.cpu_count(), "platform": platform.platform()}}
os.makedirs("bench/results", exist_ok=True)
path = "bench/results/group.json"  # one current file: its history is git's
json.dump(out, open(path, "w"), indent=2)
print(f"results: {path}")
