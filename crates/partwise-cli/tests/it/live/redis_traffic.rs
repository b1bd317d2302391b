//! `redis hot` by the work a slot costs: on Valkey 8.1 (`PARTWISE_VALKEY`,
//! `CLUSTER SLOT-STATS` with `cluster-slot-stats-enabled yes`), a tag with
//! 1% of the keys and 70% of the commands is hot by CPU while a tag of many
//! idle keys is not; on Debian's Redis 7 (`PARTWISE_REDIS`, no SLOT-STATS)
//! the same command falls back to key counts and says so. The workload is
//! what this test sends; the loads are the servers' own counters.

use crate::common;
use partwise::redis::slot::key_slot;
use partwise_faults::live::{env, redis_node};
use partwise_redis::{redis, NodeAddr, NodeConn, SlotMap};
use serde_json::Value;
use std::collections::HashMap;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(5);
/// A namespace of this test's own, read alone through --match. Its names
/// are fixed, so that a rerun on the same servers adds to the same slots.
const NS: &str = "partwise-cli-test-traffic";
/// Ordinary tags, their keys, and the reads each gets.
const TAGS: usize = 100;
const KEYS: usize = 30;
const READS: usize = 400;
/// The hot tag's keys (1% of all) and the idle tag's.
const HOT_KEYS: usize = 36;
const IDLE_KEYS: usize = 600;

fn key(tag: &str, i: usize) -> String {
    format!("{NS}:{{{tag}}}:{i}")
}

/// Sends `cmds` (command, key) to the primaries that own their keys, in
/// pipelines of 1000.
fn send(seed: &str, cmds: &[(&str, String)]) {
    let map = SlotMap::fetch(&[seed.parse().unwrap()], TIMEOUT).unwrap();
    let mut by_node: HashMap<NodeAddr, Vec<&(&str, String)>> = HashMap::new();
    for c in cmds {
        let node = map
            .owner(key_slot(c.1.as_bytes()))
            .unwrap()
            .primary
            .addr
            .clone();
        by_node.entry(node).or_default().push(c);
    }
    for (node, cs) in by_node {
        let mut conn = NodeConn::open(&node, TIMEOUT).unwrap();
        for chunk in cs.chunks(1000) {
            let mut pipe = redis::pipe();
            for (cmd, k) in chunk {
                let c = pipe.cmd(cmd).arg(k);
                if *cmd == "SET" {
                    c.arg("v");
                }
                c.ignore();
            }
            let () = conn.query_pipe(&pipe, "workload").unwrap();
        }
    }
}

/// Every key the workload writes.
fn all_keys() -> Vec<String> {
    let mut keys: Vec<String> = (0..TAGS)
        .flat_map(|t| (0..KEYS).map(move |i| key(&format!("t{t}"), i)))
        .collect();
    keys.extend((0..IDLE_KEYS).map(|i| key("idle", i)));
    keys.extend((0..HOT_KEYS).map(|i| key("hot", i)));
    keys
}

/// Deletes the workload's keys.
fn clean(seed: &str) {
    let cmds: Vec<(&str, String)> = all_keys().into_iter().map(|k| ("DEL", k)).collect();
    send(seed, &cmds);
}

/// Writes the keys and, with `reads`, sends the reads: {hot} takes 70% of
/// every command.
fn workload(seed: &str, reads: bool) {
    let mut cmds: Vec<(&str, String)> = Vec::new();
    for t in 0..TAGS {
        for i in 0..KEYS {
            cmds.push(("SET", key(&format!("t{t}"), i)));
        }
    }
    for i in 0..IDLE_KEYS {
        cmds.push(("SET", key("idle", i)));
    }
    for i in 0..HOT_KEYS {
        cmds.push(("SET", key("hot", i)));
    }
    for r in 0..if reads { READS } else { 0 } {
        for t in 0..TAGS {
            cmds.push(("GET", key(&format!("t{t}"), r % KEYS)));
        }
    }
    // (hot + others) * 0.7 = hot: hot = others * 7 / 3.
    let others = cmds.len() - HOT_KEYS;
    let hot_reads = if reads { others * 7 / 3 - HOT_KEYS } else { 0 };
    for r in 0..hot_reads {
        cmds.push(("GET", key("hot", r % HOT_KEYS)));
    }
    send(seed, &cmds);
}

fn hot(seed: &str, extra: &[&str]) -> (Option<i32>, Value, String) {
    let glob = format!("{NS}:*");
    let o = common::partwise()
        .args(["redis", "hot", "-c", seed, "--match", &glob, "--top", "200"])
        .args(extra)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let v = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{err}", String::from_utf8_lossy(&o.stdout)));
    (o.status.code(), v, err)
}

fn tag<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["tags"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tag"] == name)
        .unwrap_or_else(|| panic!("no tag {name}: {v}"))
}

fn setting(seed: &str) -> Vec<Value> {
    let mut c = NodeConn::open(&seed.parse().unwrap(), TIMEOUT).unwrap();
    let v: redis::Value = c
        .query(
            redis::cmd("CONFIG")
                .arg("GET")
                .arg("cluster-slot-stats-enabled"),
            "CONFIG GET",
        )
        .unwrap();
    match v {
        redis::Value::Array(a) => a.iter().map(|x| Value::String(format!("{x:?}"))).collect(),
        other => vec![Value::String(format!("{other:?}"))],
    }
}

#[test]
fn on_valkey_the_tag_with_most_of_the_commands_is_hot_by_cpu_and_idle_keys_are_not() {
    let seed = env("PARTWISE_VALKEY");
    let before = setting(&seed);
    workload(&seed, true);
    let (code, v, err) = hot(&seed, &[]);
    let (_, by_net, _) = hot(&seed, &["--by", "net"]);
    let (_, by_keys, _) = hot(&seed, &["--by", "keys"]);
    clean(&seed);
    assert_eq!(code, Some(1), "{err}\n{v}");
    assert_eq!(v["measure"], "cpu", "{v}");
    let why = v["measure_reason"].as_str().unwrap();
    assert!(
        why.contains("CLUSTER SLOT-STATS") && why.contains("valkey 8.1"),
        "{why}"
    );
    let h = tag(&v, "hot");
    assert_eq!(h["hot"], true, "{h}");
    // A slot's counters count every key of the slot, and other tests on the
    // same cluster may touch a slot one of this test's tags hashes to: so
    // {hot} is asked to lead the listing by far, not to be the only hot tag.
    assert!(h["cluster_share"].as_f64().unwrap() > 0.3, "{h}");
    let hot_tags: Vec<&Value> = v["hot_tags"].as_array().unwrap().iter().collect();
    assert_eq!(hot_tags[0]["tag"], "hot", "{v}");
    let load = |t: &Value| t["load"].as_f64().unwrap();
    assert!(hot_tags[1..].iter().all(|t| load(t) * 2.0 < load(h)), "{v}");
    let idle = tag(&v, "idle");
    assert_eq!(idle["hot"], false, "{idle}");
    assert_eq!(v["nodes"].as_array().unwrap().len(), 3);
    // By network bytes too.
    let v = by_net;
    assert_eq!(v["measure"], "net", "{v}");
    assert_eq!(tag(&v, "hot")["hot"], true);
    // By keys the picture turns over: the idle tag holds keys, the hot one
    // too few of them.
    let v = by_keys;
    assert_eq!(v["measure"], "keys", "{v}");
    let by_keys = |name: &str| {
        v["tags"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["tag"] == name)
            .map(|t| t["hot"].clone())
    };
    assert_eq!(by_keys("idle"), Some(Value::Bool(true)), "{v}");
    assert_eq!(by_keys("hot"), Some(Value::Bool(false)), "{v}");
    // Reading changed no server setting.
    assert_eq!(setting(&seed), before);
}

#[test]
fn on_redis_7_the_same_command_says_it_fell_back_to_key_counts() {
    let seed = redis_node();
    workload(&seed, false);
    let (code, v, err) = hot(&seed, &[]);
    let glob = format!("{NS}:*");
    let o = common::partwise()
        .args(["redis", "hot", "-c", &seed, "--match", &glob, "--by", "cpu"])
        .output()
        .unwrap();
    clean(&seed);
    assert_eq!(code, Some(1), "{err}\n{v}");
    assert_eq!(v["measure"], "keys", "{v}");
    let why = v["measure_reason"].as_str().unwrap();
    assert!(
        why.starts_with("fell back to key counts") && why.contains("no CLUSTER SLOT-STATS"),
        "{why}"
    );
    assert!(why.contains("redis 7."), "{why}");
    // Judged by keys: the idle tag's 600 keys are hot, the busy tag's 36 are not.
    let hot: Vec<&str> = v["hot_tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tag"].as_str().unwrap())
        .collect();
    assert_eq!(hot, ["idle"], "{v}");
    // The table says it too.
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.starts_with("measure: keys (fell back to key counts (no CPU us per slot):"),
        "{table}"
    );
}
