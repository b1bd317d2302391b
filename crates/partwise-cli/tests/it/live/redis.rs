//! `partwise redis` against real Redis Clusters: the shared one that
//! `scripts/services` starts (found through `PARTWISE_REDIS`), and
//! throwaway ones on other ports for the tests that stop a node.

use crate::common::{self, repo, SYMBOLS};
use partwise::redis::slot::key_slot;
use partwise_faults::live::{free_port, redis_node, RedisStandalone};
use partwise_redis::{redis, NodeAddr, NodeConn, SlotMap};
use serde_json::Value;
use std::process::Output;
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(2);

fn partwise(args: &[&str]) -> Output {
    common::partwise().args(args).output().unwrap()
}

/// The shared cluster. Unset is a failure, not a skip.
fn cluster() -> String {
    redis_node()
}

fn code(o: &Output) -> Option<i32> {
    o.status.code()
}

fn stderr(o: &Output) -> String {
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!e.contains("panicked"), "{e}");
    e
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", String::from_utf8_lossy(&o.stdout), stderr(o)))
}

fn check_args<'a>(seed: &'a str, families: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["redis", "check", "-c", seed];
    for f in families {
        a.extend(["--family", f]);
    }
    a.extend(extra);
    a.extend(SYMBOLS);
    a
}

#[test]
fn slots_shows_three_primaries_and_counts() {
    let seed = cluster();
    let o = partwise(&[
        "redis", "slots", "-c", &seed, "--counts", "--format", "json",
    ]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["cluster_state"], "ok");
    assert_eq!(v["source"], "CLUSTER SHARDS");
    let shards = v["shards"].as_array().unwrap();
    assert_eq!(shards.len(), 3);
    let total: u64 = shards
        .iter()
        .map(|s| s["slot_count"].as_u64().unwrap())
        .sum();
    assert_eq!(total, 16384);
    assert!(shards.iter().all(|s| s["primary"]["keys"].is_u64()));
    assert_eq!(v["unassigned"].as_array().unwrap().len(), 0);

    let o = partwise(&["redis", "slots", "-c", &seed]);
    assert_eq!(code(&o), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("0-5460") && text.contains("cluster_state:ok"),
        "{text}"
    );
}

#[test]
fn check_seed_symbols_tagged_10_of_10_untagged_0_of_10() {
    let seed = cluster();
    let map = SlotMap::fetch(&[seed.parse().unwrap()], TIMEOUT).unwrap();
    let node_of = |k: &str| {
        map.owner(key_slot(k.as_bytes()))
            .unwrap()
            .primary
            .addr
            .to_string()
    };

    let o = partwise(&check_args(
        &seed,
        &["market:{%s}", "notif:{%s}"],
        &["--format", "json"],
    ));
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(
        (v["keys"].as_u64(), v["co_located"].as_u64()),
        (Some(10), Some(10))
    );
    assert_eq!(v["lints"].as_array().unwrap().len(), 0);
    for row in v["rows"].as_array().unwrap() {
        for m in row["members"].as_array().unwrap() {
            let key = m["key"].as_str().unwrap();
            assert_eq!(m["slot"], m["live_slot"]);
            assert_eq!(m["node"].as_str().unwrap(), node_of(key));
        }
    }

    let o = partwise(&check_args(
        &seed,
        &["market:%s", "notif:%s"],
        &["--format", "json"],
    ));
    assert_eq!(code(&o), Some(1), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(
        (v["keys"].as_u64(), v["co_located"].as_u64()),
        (Some(10), Some(0))
    );
    let kinds: Vec<&str> = v["lints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["no-hash-tag", "no-hash-tag"]);
    let same_node = SYMBOLS
        .iter()
        .filter(|s| node_of(&format!("market:{s}")) == node_of(&format!("notif:{s}")))
        .count();
    assert_eq!(v["same_node"].as_u64(), Some(same_node as u64));

    // NDJSON: one line per key, then the summary; keys from a file.
    let mut f = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut f, SYMBOLS.join("\n").as_bytes()).unwrap();
    let path = f.path().to_str().unwrap();
    let o = partwise(&[
        "redis",
        "check",
        "-c",
        &seed,
        "--family",
        "market:{%s}",
        "--family",
        "notif:{%s}",
        "-i",
        path,
        "--format",
        "ndjson",
    ]);
    assert_eq!(code(&o), Some(0));
    let lines: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 11);
    assert_eq!(lines[10]["summary"], true);
    assert_eq!(lines[10]["co_located"], 10);
}

#[test]
fn check_lints_patterns() {
    let seed = cluster();
    let kinds = |families: &[&str]| -> (Option<i32>, Vec<String>) {
        let o = partwise(&check_args(&seed, families, &["--format", "json"]));
        let v = json(&o);
        let k = v["lints"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["kind"].as_str().unwrap().to_string())
            .collect();
        (code(&o), k)
    };
    // One tag for everything: co-located, but every key in one hot slot.
    let (c, k) = kinds(&["{ticker}:market:%s", "{ticker}:notif:%s"]);
    assert_eq!((c, k), (Some(1), vec!["tag-without-key".to_string(); 2]));
    let (c, k) = kinds(&["market:{}%s", "notif:{%s}"]);
    assert_eq!((c, k), (Some(1), vec!["empty-tag".to_string()]));
    let (c, k) = kinds(&["{market:%s}", "{notif:%s}"]);
    assert_eq!(c, Some(1));
    assert_eq!(
        k,
        ["tag-not-just-key", "tag-not-just-key", "hash-tags-differ"]
    );
    // A tag with more than the key is only a note while every pattern shares it.
    let (c, k) = kinds(&["{t:%s}:market", "{t:%s}:notif"]);
    assert_eq!((c, k.len()), (Some(0), 2));
}

#[test]
fn bad_input_exits_2_with_a_clear_message() {
    let seed = cluster();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            check_args(&seed, &["market", "notif:{%s}"], &[]),
            "bad key pattern 'market': no %s",
        ),
        (
            check_args(&seed, &["a:{%s}:%s", "notif:{%s}"], &[]),
            "more than one %s",
        ),
        (
            check_args(&seed, &["market:{%s}"], &[]),
            "at least two patterns",
        ),
        (
            vec![
                "redis", "check", "-c", &seed, "--family", "a:{%s}", "--family", "b:{%s}",
            ],
            "no keys",
        ),
        (
            vec!["redis", "slots", "-c", "localhost"],
            "bad node address 'localhost'",
        ),
        (
            vec!["redis", "slots", "-c", &seed, "--timeout", "-1"],
            "--timeout",
        ),
        (
            vec!["redis", "hot", "-c", &seed, "--sample", "0"],
            "invalid value '0' for '--sample <N>'",
        ),
        (
            vec!["redis", "hot", "-c", &seed, "--top", "-3"],
            "invalid value '-3' for '--top <N>'",
        ),
        (
            vec!["redis", "hot", "-c", &seed, "--min-share", "2"],
            "invalid value '2' for '--min-share <F>'",
        ),
        (
            vec!["redis", "hot", "-c", &seed, "--margin", "0.5"],
            "invalid value '0.5' for '--margin <X>'",
        ),
        (
            vec!["redis", "hot", "-c", &seed, "--min-keys", "0"],
            "invalid value '0' for '--min-keys <N>'",
        ),
        (
            vec!["redis", "hot", "-c", &seed, "--match", " "],
            "invalid value ' ' for '--match <GLOB>'",
        ),
    ];
    for (args, msg) in cases {
        let o = partwise(&args);
        assert_eq!(code(&o), Some(2), "{args:?}");
        assert!(stderr(&o).contains(msg), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn unreachable_node_exits_2_naming_it() {
    let dead = format!("127.0.0.1:{}", free_port());
    for sub in ["slots", "hot"] {
        let start = Instant::now();
        let o = partwise(&["redis", sub, "-c", &dead, "--timeout", "1s"]);
        assert_eq!(code(&o), Some(2));
        assert!(start.elapsed() < Duration::from_secs(10));
        let e = stderr(&o);
        assert!(
            e.contains(&format!("cannot reach Redis node {dead}")),
            "{e}"
        );
    }
}

#[test]
fn a_standalone_server_exits_2_not_a_cluster() {
    let server = RedisStandalone::start();
    let addr = NodeAddr::new("127.0.0.1", server.port);
    let a = addr.to_string();
    for args in [
        vec!["redis", "slots", "-c", &a],
        check_args(&a, &["market:{%s}", "notif:{%s}"], &[]),
        vec!["redis", "hot", "-c", &a],
    ] {
        let o = partwise(&args);
        assert_eq!(code(&o), Some(2), "{args:?}");
        let e = stderr(&o);
        assert!(
            e.contains(&format!("{a} is not a Redis Cluster node")),
            "{e}"
        );
    }
}

/// Writes `n` keys with hash tag `tag` (all on one slot); the node that
/// holds them, a connection to it (to delete them) and the keys.
fn write_tagged(seed: &str, tag: &str, n: usize) -> (NodeAddr, NodeConn, Vec<String>) {
    write_tagged_in(seed, "partwise-cli-test", tag, n)
}

/// [`write_tagged`] under a namespace of the test's own (`PREFIX:{tag}:i`).
fn write_tagged_in(
    seed: &str,
    prefix: &str,
    tag: &str,
    n: usize,
) -> (NodeAddr, NodeConn, Vec<String>) {
    let map = SlotMap::fetch(&[seed.parse().unwrap()], TIMEOUT).unwrap();
    let keys: Vec<String> = (0..n).map(|i| format!("{prefix}:{{{tag}}}:{i}")).collect();
    let home = map
        .owner(key_slot(tag.as_bytes()))
        .unwrap()
        .primary
        .addr
        .clone();
    let mut conn = NodeConn::open(&home, TIMEOUT).unwrap();
    let mut pipe = redis::pipe();
    for k in &keys {
        pipe.cmd("SET").arg(k).arg("1").ignore();
    }
    let _: () = conn.query_pipe(&pipe, "SET").unwrap();
    (home, conn, keys)
}

#[test]
fn hot_names_the_tag_that_crowds_one_node() {
    let seed = cluster();
    let (home, mut conn, keys) = write_tagged(&seed, "cli-hot", 200);
    // Only this test's keys: what other tests write meanwhile is no slot of its.
    let glob = "partwise-cli-test:{cli-hot}:*";
    let o = partwise(&[
        "redis", "hot", "-c", &seed, "--match", glob, "--by", "keys", "--format", "json",
    ]);
    let _: i64 = conn.query(redis::cmd("DEL").arg(&keys), "DEL").unwrap();

    assert_eq!(code(&o), Some(1), "{}", stderr(&o));
    let v = json(&o);
    let hot = v["hot_tags"].as_array().unwrap();
    assert_eq!(hot[0]["tag"], "cli-hot");
    assert_eq!(hot[0]["node"], home.to_string());
    assert_eq!(hot[0]["slot"], key_slot(b"cli-hot"));
    assert_eq!(hot[0]["sampled"], 200);
    assert_eq!(v["nodes"].as_array().unwrap().len(), 3);
}

#[test]
fn hot_reports_nothing_for_even_tags_and_names_the_one_that_holds_many_slots_worth() {
    // A namespace of this test's own, read alone through --match, so keys
    // other tests write meanwhile change nothing here.
    const NS: &str = "partwise-cli-test-hotrule";
    let seed = cluster();
    let glob = format!("{NS}:*");
    let hot_args = [
        "redis", "hot", "-c", &seed, "--match", &glob, "--top", "20", "--by", "keys", "--format",
        "json",
    ];
    let mut written: Vec<(NodeConn, Vec<String>)> = Vec::new();
    for i in 0..10 {
        let (_, conn, keys) = write_tagged_in(&seed, NS, &format!("sym{i}"), 60);
        written.push((conn, keys));
    }
    let healthy = partwise(&hot_args);
    let (home, conn, keys) = write_tagged_in(&seed, NS, "whale", 250);
    written.push((conn, keys));
    let crowded = partwise(&hot_args);
    for (mut conn, keys) in written {
        let _: i64 = conn.query(redis::cmd("DEL").arg(&keys), "DEL").unwrap();
    }

    // Ten tags of 60 keys: each a tenth of the keys, none hot.
    assert_eq!(code(&healthy), Some(0), "{}", stderr(&healthy));
    let v = json(&healthy);
    let keys: u64 = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["keys"].as_u64().unwrap())
        .sum();
    assert_eq!(keys, 600);
    let tags = v["tags"].as_array().unwrap();
    assert_eq!(tags.len(), 10);
    assert_eq!(v["hot_tags"].as_array().unwrap().len(), 0, "{v}");
    for t in tags {
        assert_eq!(t["hot"], false, "{t}");
        // What used to make a tag hot, at least 5% of its node's keys and 1%
        // of the cluster's, holds for every one of them.
        assert!(t["node_share"].as_f64().unwrap() >= 0.05, "{t}");
        assert!(t["cluster_share"].as_f64().unwrap() >= 0.01, "{t}");
    }

    // A tag of 250 keys beside them is over four slots' worth: it alone is
    // hot. (Fewer keys than the library's own hot-tag test writes, so that
    // test's top tag stays its own if both run at once.)
    assert_eq!(code(&crowded), Some(1), "{}", stderr(&crowded));
    let v = json(&crowded);
    let hot = v["hot_tags"].as_array().unwrap();
    assert_eq!(hot.len(), 1, "{v}");
    assert_eq!(hot[0]["tag"], "whale");
    assert_eq!(hot[0]["node"], home.to_string());
    assert_eq!(hot[0]["sampled"], 250);
    assert!(
        (hot[0]["cluster_ratio"].as_f64().unwrap() - 250.0 / 60.0).abs() < 1e-9,
        "{}",
        hot[0]
    );
}

/// A throwaway cluster on its own ports, torn down on drop (even after a
/// failed assertion), so that stopping its nodes disturbs no other test.
struct Throwaway {
    base: u16,
    dir: tempfile::TempDir,
}

impl Throwaway {
    fn up(base: u16) -> Throwaway {
        let dir = tempfile::tempdir().unwrap();
        let t = Throwaway { base, dir };
        let o = t.script("redis-cluster-up");
        assert!(
            o.status.success(),
            "redis-cluster-up {base}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        t
    }

    fn script(&self, name: &str) -> Output {
        std::process::Command::new("bash")
            .arg(repo().join("scripts").join(name))
            .arg(self.base.to_string())
            .env("PARTWISE_REDIS_DIR", self.dir.path())
            .output()
            .unwrap()
    }

    fn pid(&self, port: u16) -> String {
        std::fs::read_to_string(self.dir.path().join(port.to_string()).join("redis.pid"))
            .unwrap()
            .trim()
            .to_string()
    }

    fn signal(&self, port: u16, sig: &str) {
        let ok = std::process::Command::new("kill")
            .args([sig, &self.pid(port)])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill {sig} node {port}");
    }
}

impl Drop for Throwaway {
    fn drop(&mut self) {
        let _ = self.script("redis-cluster-down");
    }
}

#[test]
fn a_stopped_node_gives_a_partial_report_and_exit_2_within_the_timeout() {
    let t = Throwaway::up(7200);
    let seed = "127.0.0.1:7200".to_string();
    let victim = NodeAddr::new("127.0.0.1", 7202).to_string();
    let args = check_args(&seed, &["market:{%s}", "notif:{%s}"], &["--timeout", "1s"]);
    let o = partwise(&args);
    assert_eq!(code(&o), Some(0), "healthy first: {}", stderr(&o));

    // Frozen: the kernel still accepts connections, the node never answers.
    t.signal(7202, "-STOP");
    let start = Instant::now();
    let o = partwise(&args);
    let took = start.elapsed();
    t.signal(7202, "-CONT");
    assert_eq!(code(&o), Some(2));
    assert!(
        took < Duration::from_secs(4),
        "took {took:?} with --timeout 1s"
    );
    let e = stderr(&o);
    assert!(
        e.contains(&format!(
            "cannot reach Redis node {victim}: no answer within the timeout"
        )),
        "{e}"
    );
    assert!(e.contains("partial report"), "{e}");
    let out = String::from_utf8_lossy(&o.stdout);
    // Keys on the live nodes are verified; those on the frozen one are not.
    assert!(out.contains("(unverified)") && out.contains("yes"), "{out}");
    assert!(out.contains("not verified"), "{out}");

    // Killed: refused at once, and the JSON says which keys were not verified.
    t.signal(7202, "-KILL");
    let mut json_args = args.clone();
    json_args.extend(["--format", "json"]);
    let start = Instant::now();
    let o = partwise(&json_args);
    assert!(start.elapsed() < Duration::from_secs(6));
    assert_eq!(code(&o), Some(2));
    assert!(stderr(&o).contains(&victim));
    let v = json(&o);
    assert_eq!(v["keys"], 10);
    let unverified: Vec<&Value> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["verified"] == false)
        .collect();
    assert_eq!(v["unverified"].as_u64(), Some(unverified.len() as u64));
    assert!(!unverified.is_empty() && unverified.len() < 10);
    for r in unverified {
        assert_eq!(r["members"][0]["node"], victim.as_str());
    }
    let o = partwise(&["redis", "slots", "-c", &seed, "--counts", "--timeout", "1s"]);
    assert_eq!(code(&o), Some(2));
    assert!(String::from_utf8_lossy(&o.stdout).contains("127.0.0.1:7200"));
}

/// `--format ndjson` is one JSON object per line in `slots` and `hot` too
/// (`check`'s lines are read above).
#[test]
fn ndjson_is_one_object_per_line() {
    let seed = cluster();
    // `hot` prints one line per sampled tag, so the test writes its own
    // keys rather than rely on what other tests have left in the cluster.
    let (_, mut conn, keys) = write_tagged(&seed, "cli-ndjson", 20);
    let outputs: Vec<(Vec<&str>, Output)> = [
        vec!["redis", "slots", "-c", &seed, "--key-counts"],
        vec!["redis", "hot", "-c", &seed, "--sample", "100"],
    ]
    .into_iter()
    .map(|mut args| {
        args.extend(["--format", "ndjson"]);
        let o = partwise(&args);
        (args, o)
    })
    .collect();
    let _: i64 = conn.query(redis::cmd("DEL").arg(&keys), "DEL").unwrap();
    for (args, o) in outputs {
        assert!(matches!(code(&o), Some(0 | 1)), "{args:?}: {}", stderr(&o));
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(!out.is_empty(), "{args:?} printed nothing");
        for l in out.lines() {
            let v: Value = serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{args:?}: not one JSON value ({e}): {l}"));
            assert!(v.is_object(), "{args:?}: not an object: {l}");
        }
    }
}

/// A Redis Cluster of this test's own (it stops a node), on three free
/// ports whose cluster-bus ports (+10000) are free too; torn down on drop.
struct PrivateCluster {
    base: u16,
    dir: tempfile::TempDir,
}

impl PrivateCluster {
    fn start() -> PrivateCluster {
        let free = |p: u16| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok();
        let base = (0..200)
            .map(|i| 21000 + (std::process::id() as u16 % 300) * 10 + i * 37)
            .find(|&b| (0..3).all(|k| free(b + k) && free(b + k + 10000)))
            .expect("three free ports with free bus ports");
        let dir = tempfile::tempdir().unwrap();
        let up = std::process::Command::new("bash")
            .arg(repo().join("scripts/redis-cluster-up"))
            .arg(base.to_string())
            .env("PARTWISE_REDIS_DIR", dir.path())
            .output()
            .unwrap();
        assert!(
            up.status.success(),
            "{}",
            String::from_utf8_lossy(&up.stderr)
        );
        PrivateCluster { base, dir }
    }

    fn node(&self, k: u16) -> String {
        format!("127.0.0.1:{}", self.base + k)
    }

    fn pid(&self, k: u16) -> String {
        let f = self
            .dir
            .path()
            .join((self.base + k).to_string())
            .join("redis.pid");
        std::fs::read_to_string(f).unwrap().trim().to_string()
    }

    fn signal(&self, k: u16, sig: &str) {
        let s = std::process::Command::new("kill")
            .args([sig, &self.pid(k)])
            .status()
            .unwrap();
        assert!(s.success());
    }

    fn signal_all_cont(&self) -> Option<()> {
        for k in 0..3 {
            std::process::Command::new("kill")
                .args(["-CONT", &self.pid(k)])
                .status()
                .ok()?;
        }
        Some(())
    }
}

impl Drop for PrivateCluster {
    fn drop(&mut self) {
        let _ = self.signal_all_cont();
        let _ = std::process::Command::new("bash")
            .arg(repo().join("scripts/redis-cluster-down"))
            .arg(self.base.to_string())
            .env("PARTWISE_REDIS_DIR", self.dir.path())
            .output();
    }
}

/// A node that froze is still "online" in the cluster's view for a while:
/// `redis slots` asks every node itself and reports the silent one (exit 1,
/// not 0). A cluster that serves not every slot (cluster_state:fail) makes
/// `redis hot` exit 1 even when every sampled node answers, not 0 (issue 19,
/// item 8).
#[test]
fn a_frozen_node_and_a_failed_cluster_are_findings() {
    let c = PrivateCluster::start();
    c.signal(1, "-STOP");
    let o = partwise(&[
        "redis",
        "slots",
        "-c",
        &c.node(0),
        "--timeout",
        "1s",
        "--format",
        "json",
    ]);
    c.signal(1, "-CONT");
    assert_eq!(code(&o), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains(&c.node(1)), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let silent: Vec<&Value> = v["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["primary"])
        .filter(|p| p["answered"] == false)
        .collect();
    assert_eq!(silent.len(), 1, "{v}");
    assert_eq!(silent[0]["addr"], c.node(1));
    // Slot 0 unserved: the cluster says fail while every node answers.
    let del = std::process::Command::new("redis-cli")
        .args(["-p", &c.base.to_string(), "cluster", "delslots", "0"])
        .output()
        .unwrap();
    assert!(del.status.success());
    let asked = Instant::now();
    loop {
        let o = partwise(&["redis", "hot", "-c", &c.node(0), "--timeout", "1s"]);
        if stderr(&o).contains("cluster_state:fail") {
            assert_eq!(code(&o), Some(1), "{}", stderr(&o));
            break;
        }
        assert!(
            asked.elapsed() < Duration::from_secs(20),
            "never cluster_state:fail: {}",
            stderr(&o)
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// Whether the server at `seed` counts CPU per slot, in its own words:
/// `CLUSTER SLOT-STATS` answers and `cluster-slot-stats-enabled` is yes.
fn counts_cpu(seed: &str) -> bool {
    let mut c = NodeConn::open(&seed.parse().unwrap(), TIMEOUT).unwrap();
    let stats: Result<redis::Value, _> = c.query(
        redis::cmd("CLUSTER")
            .arg("SLOT-STATS")
            .arg("SLOTSRANGE")
            .arg(0)
            .arg(0),
        "CLUSTER SLOT-STATS",
    );
    let setting: Vec<String> = c
        .query(
            redis::cmd("CONFIG")
                .arg("GET")
                .arg("cluster-slot-stats-enabled"),
            "CONFIG GET",
        )
        .unwrap_or_default();
    stats.is_ok() && setting.get(1).is_some_and(|v| v == "yes")
}

fn slot_stats_setting(seed: &str) -> Vec<String> {
    let mut c = NodeConn::open(&seed.parse().unwrap(), TIMEOUT).unwrap();
    c.query(
        redis::cmd("CONFIG")
            .arg("GET")
            .arg("cluster-slot-stats-enabled"),
        "CONFIG GET",
    )
    .unwrap_or_default()
}

/// `redis check --format json`'s per-primary load.
fn node_load(seed: &str) -> Value {
    let o = partwise(&[
        "redis", "check", "-c", seed, "--family", "a:{%s}", "--family", "b:{%s}", "k1", "--format",
        "json",
    ]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["node_load"].clone()
}

#[test]
fn check_shows_each_primarys_load_by_cpu_where_the_server_counts_it_else_by_keys() {
    let seed = cluster();
    let before_setting = slot_stats_setting(&seed);
    let map = SlotMap::fetch(&[seed.parse().unwrap()], TIMEOUT).unwrap();
    let keys: Vec<String> = (0..50)
        .map(|i| format!("partwise-cli-test-load:{{busy}}:{i}"))
        .collect();
    let busy = map
        .owner(key_slot(keys[0].as_bytes()))
        .unwrap()
        .primary
        .addr
        .to_string();
    let before = node_load(&seed);
    // The test's own work: 50 keys on one primary, read 5,000 times.
    let mut c = NodeConn::open(&busy.parse().unwrap(), TIMEOUT).unwrap();
    let mut pipe = redis::pipe();
    for k in &keys {
        pipe.cmd("SET").arg(k).arg("v").ignore();
    }
    let () = c.query_pipe(&pipe, "SET").unwrap();
    for _ in 0..5 {
        let mut pipe = redis::pipe();
        for i in 0..1000 {
            pipe.cmd("GET").arg(&keys[i % keys.len()]).ignore();
        }
        let () = c.query_pipe(&pipe, "GET").unwrap();
    }
    let after = node_load(&seed);
    let mut pipe = redis::pipe();
    for k in &keys {
        pipe.cmd("DEL").arg(k).ignore();
    }
    let () = c.query_pipe(&pipe, "DEL").unwrap();

    let nodes = after["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), map.shards.len(), "{after}");
    let load = |v: &Value, n: &str| {
        v["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["node"] == n)
            .unwrap_or_else(|| panic!("no {n}: {v}"))["load"]
            .as_u64()
            .unwrap()
    };
    let why = after["measure_reason"].as_str().unwrap();
    if counts_cpu(&seed) {
        assert_eq!(after["measure"], "cpu", "{after}");
        assert!(why.contains("CLUSTER SLOT-STATS"), "{why}");
        // The busy primary's CPU grew the most.
        let grew = |n: &str| load(&after, n).saturating_sub(load(&before, n));
        for s in &map.shards {
            let n = s.primary.addr.to_string();
            if n != busy {
                assert!(grew(&busy) > grew(&n), "{before}\n{after}");
            }
        }
    } else {
        assert_eq!(after["measure"], "keys", "{after}");
        assert!(why.starts_with("fell back to key counts"), "{why}");
        assert!(why.contains("DBSIZE"), "{why}");
        assert!(load(&after, &busy) >= 50, "{after}");
    }
    let shares: f64 = nodes.iter().map(|n| n["share"].as_f64().unwrap()).sum();
    assert!((shares - 1.0).abs() < 1e-6, "{after}");
    // Reading changed no server setting.
    assert_eq!(slot_stats_setting(&seed), before_setting);
    // The table says the measure and why.
    let o = partwise(&[
        "redis", "check", "-c", &seed, "--family", "a:{%s}", "--family", "b:{%s}", "k1",
    ]);
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(t.contains("load per primary by "), "{t}");
}
