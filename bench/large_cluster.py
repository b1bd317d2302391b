"""Driver of bench/compare-large-cluster: grows one cluster in stages (topics
of --per partitions, replication 1, --records keyed records each, written by
librdkafka's murmur2_random partitioner, Java's hash) and at each stage times
partwise's whole-cluster reads beside TopicCommand --describe (what
kafka-topics.sh runs) and kcat -L, each under /usr/bin/time -v: wall time
(its "Elapsed") and peak RSS ("Maximum resident set size"). Every command's
output goes to a file whose size, and for the listings whose count of
topics, is checked, so a command that printed nothing or failed is never
timed as fast. Writes bench/results/large_cluster.{json,md} (overwritten)."""
import argparse, datetime, json, os, platform, re, shutil, statistics, subprocess, sys, tempfile, time

# `--md` alone: rewrite large_cluster.md from large_cluster.json.
MD_ONLY = sys.argv[1:] == ["--md"]
ap = argparse.ArgumentParser()
for a in ("--bootstrap", "--partwise", "--tools-cp", "--tools-version", "--broker-version", "--partitions"):
    ap.add_argument(a, required=True)
for a in ("--per", "--runs", "--records"):
    ap.add_argument(a, type=int, required=True)
args = None if MD_ONLY else ap.parse_args()
stages = [int(s) for s in args.partitions.split(",")] if args else []
assert not args or all(s % args.per == 0 for s in stages), "each stage must be a multiple of --per"
tag = f"{int(time.time()) % 100000}"
scratch = None if MD_ONLY else tempfile.mkdtemp(prefix="pw-large-")
kcat = shutil.which("kcat")


def topic(i):
    return f"lc{tag}-{i:05d}"


def grow(admin, producer, have, want):
    """Creates topics have..want-1 and writes --records records to each."""
    from confluent_kafka.admin import NewTopic
    names = [topic(i) for i in range(have, want)]
    for at in range(0, len(names), 50):
        fs = admin.create_topics([NewTopic(n, args.per, 1) for n in names[at:at + 50]],
                                 operation_timeout=120, request_timeout=180)
        for n, f in fs.items():
            f.result(300)
    # Every partition with a leader in the metadata before anything is timed.
    deadline = time.monotonic() + 600
    while True:
        md = admin.list_topics(timeout=60)
        ready = sum(1 for n in names if n in md.topics and md.topics[n].error is None
                    and len(md.topics[n].partitions) == args.per
                    and all(p.leader >= 0 for p in md.topics[n].partitions.values()))
        if ready == len(names):
            break
        if time.monotonic() > deadline:
            sys.exit(f"large_cluster: only {ready} of {len(names)} new topics have leaders after 600 s")
        time.sleep(2)
    for n in names:
        for r in range(args.records):
            while True:
                try:
                    producer.produce(n, key=b"user-%06d" % r, value=b"v" * 100)
                    break
                except BufferError:
                    producer.poll(0.1)
        producer.poll(0)
    left = producer.flush(300)
    assert left == 0, f"{left} records not delivered"


def topology(path, count):
    """Every topic declared, written by librdkafka's murmur2_random (Java's
    hash), co-partitioned in pairs, and one consumer group over the first
    pair (which does not exist on the cluster: report says so)."""
    with open(path, "w") as f:
        for i in range(count):
            f.write(f'[[topic]]\nname = "{topic(i)}"\npartitions = {args.per}\nkey = "user"\n\n'
                    f'[[topic.producer]]\nname = "p{i}"\npartitioner = "librdkafka:murmur2_random"\n'
                    f'key_format = "string"\n\n')
        for i in range(0, count - 1, 2):
            f.write(f'[[copartition]]\nname = "pair{i // 2}"\ntopics = ["{topic(i)}", "{topic(i + 1)}"]\n\n')
        f.write(f'[[consumer_group]]\nname = "lc{tag}-joiner"\nassignor = "java:range"\nmembers = 2\n'
                f'subscriptions = ["{topic(0)}", "{topic(1)}"]\n')


def commands(count, topo):
    pw = args.partwise
    audit = [pw, "kafka", "audit", "-b", args.bootstrap, "--sample", "0", "--timeout", "60s"]
    for i in range(count):
        audit += ["-t", topic(i)]
    c = {
        "partwise kafka topics": ([pw, "kafka", "topics", "-b", args.bootstrap, "--timeout", "60s"], (0,)),
        "partwise kafka audit --sample 0": (audit, (0, 1)),
        "partwise report -b": ([pw, "report", topo, "-b", args.bootstrap, "--timeout", "60s"], (0, 1)),
        "kafka-topics.sh --describe": (["java", "-Xmx1g", "-cp", args.tools_cp, "org.apache.kafka.tools.TopicCommand",
                                        "--bootstrap-server", args.bootstrap, "--describe"], (0,)),
    }
    if kcat:
        c["kcat -L"] = ([kcat, "-b", args.bootstrap, "-L", "-m", "60"], (0,))
    return c


def timed(name, argv, ok_codes, count):
    out = os.path.join(scratch, "out")
    err = os.path.join(scratch, "err")
    with open(out, "wb") as o, open(err, "wb") as e:
        rc = subprocess.run(["/usr/bin/time", "-v"] + argv, stdout=o, stderr=e).returncode
    text = open(err, errors="replace").read()
    if rc not in ok_codes:
        sys.exit(f"large_cluster: {name} exited {rc}:\n{text[-3000:]}")
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", text)
    wall = int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1))
    user = float(re.search(r"User time \(seconds\): ([\d.]+)", text).group(1))
    system = float(re.search(r"System time \(seconds\): ([\d.]+)", text).group(1))
    body = open(out, "rb").read()
    # Each listing names every topic of the stage (the report, at least its
    # first and last): a short or failed one is not a result.
    if name == "partwise report -b":
        seen = sum(1 for i in (0, count - 1) if topic(i).encode() in body)
        want = 2
    else:
        seen = sum(1 for i in range(count) if topic(i).encode() in body)
        want = count
    if seen != want:
        sys.exit(f"large_cluster: {name} named {seen} of {want} topics:\n{text[-2000:]}")
    return {"wall_s": wall, "user_s": user, "system_s": system, "max_rss_kb": rss,
            "exit": rc, "output_bytes": len(body)}


def kcat_version():
    if not kcat:
        return "not installed"
    out = subprocess.run([kcat, "-V"], capture_output=True, text=True).stdout
    line = next((l for l in out.splitlines() if l.startswith("Version")), "version unknown")
    return "kcat " + line.split(" builtin.features")[0].removeprefix("Version ") + ")"


def main():
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient
    admin = AdminClient({"bootstrap.servers": args.bootstrap})
    producer = Producer({"bootstrap.servers": args.bootstrap, "partitioner": "murmur2_random",
                         "linger.ms": 50, "queue.buffering.max.messages": 1000000,
                         # Topics just created: librdkafka warns of each partition not
                         # yet in its metadata cache while it catches up.
                         "log_level": 3})
    results = {"benchmark": "whole-cluster reads on a large cluster (bench/compare-large-cluster)",
               "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H%M%SZ"),
               "broker": args.broker_version, "kafka_tools": args.tools_version,
               "kcat": kcat_version(),
               "partwise_bin": args.partwise, "partitions_per_topic": args.per,
               "records_per_topic": args.records, "runs": args.runs,
               "machine": f"{platform.machine()}, {os.cpu_count()} cores", "stages": []}
    have = 0
    for stage in stages:
        count = stage // args.per
        t0 = time.monotonic()
        grow(admin, producer, have, count)
        have = count
        print(f"large_cluster: {count} topics, {stage} partitions ready in {time.monotonic() - t0:.0f} s",
              file=sys.stderr)
        topo = os.path.join(scratch, "topology.toml")
        topology(topo, count)
        cmds = commands(count, topo)
        names = list(cmds)
        runs = {n: [] for n in names}
        load = []
        for r in range(args.runs):
            order = names[r % len(names):] + names[:r % len(names)]
            for n in order:
                argv, ok = cmds[n]
                runs[n].append(timed(n, argv, ok, count))
            load.append(os.getloadavg()[0])
        med = {n: {"wall_s": statistics.median(x["wall_s"] for x in runs[n]),
                   "max_rss_kb": statistics.median(x["max_rss_kb"] for x in runs[n]),
                   "cpu_s": statistics.median(x["user_s"] + x["system_s"] for x in runs[n])}
               for n in names}
        results["stages"].append({"partitions": stage, "topics": count, "runs": runs,
                                  "medians": med, "load_average_1m": load})
        for n in names:
            print(f"  {n}: {med[n]['wall_s']:.2f} s, {med[n]['max_rss_kb'] / 1024:.0f} MB", file=sys.stderr)
    os.makedirs("bench/results", exist_ok=True)
    with open("bench/results/large_cluster.json", "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")
    write_md(results)
    shutil.rmtree(scratch, ignore_errors=True)


def write_md(res):
    st = res["stages"]
    names = list(st[0]["medians"])
    lines = [f"# Whole-cluster reads on a large cluster ({res['date']})", "",
             f"{res['broker']}; {res['kafka_tools']}; kcat: {res['kcat']}; "
             f"{res['partitions_per_topic']} partitions per topic, replication 1, "
             f"{res['records_per_topic']} records per topic; median of {res['runs']} runs "
             f"(wall time from /usr/bin/time -v, peak RSS; CPU is user + system).", ""]
    lines.append("| command | " + " | ".join(f"{s['partitions']:,} partitions" for s in st) +
                 f" | {st[-1]['partitions']:,} / {st[0]['partitions']:,} |")
    lines.append("| --- |" + " ---: |" * (len(st) + 1))
    for n in names:
        cells = [f"{s['medians'][n]['wall_s']:.2f} s, CPU {s['medians'][n]['cpu_s']:.2f} s, "
                 f"{s['medians'][n]['max_rss_kb'] / 1024:.0f} MB" for s in st]
        growth = st[-1]["medians"][n]["wall_s"] / max(st[0]["medians"][n]["wall_s"], 1e-9)
        rss = st[-1]["medians"][n]["max_rss_kb"] / max(st[0]["medians"][n]["max_rss_kb"], 1)
        lines.append(f"| `{n}` | " + " | ".join(cells) + f" | time {growth:.1f}x, RSS {rss:.1f}x |")
    lines.append("")
    lines.append(f"Partitions grow {st[-1]['partitions'] / st[0]['partitions']:.0f}x from the first stage to the last.")
    with open("bench/results/large_cluster.md", "w") as f:
        f.write("\n".join(lines) + "\n")


if MD_ONLY:
    write_md(json.load(open("bench/results/large_cluster.json")))
else:
    main()
