//! `partwise report -b` and `-c` against the services `scripts/services`
//! starts: the live state beside the declared one, differences marked.

use crate::common::{example, partwise, temp_file, text};
use partwise_faults::live::{
    create_topics, kafka_bootstrap, keys, produce_with, redis_node, unique,
};
use serde_json::Value;

fn report(args: &[&str], code: i32) -> Value {
    let out = partwise()
        .arg("report")
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A topology of two co-partitioned topics, each declared with
/// `partitions` and written by `partitioner`, and a consumer group `group`.
fn topology(a: &str, b: &str, partitions: u32, partitioner: &str, group: &str) -> String {
    format!(
        r#"
[[topic]]
name = "{a}"
partitions = {partitions}
producer = [{{ partitioner = "{partitioner}", key_format = "string" }}]
[[topic]]
name = "{b}"
partitions = {partitions}
producer = [{{ partitioner = "{partitioner}", key_format = "string" }}]
[[copartition]]
name = "pair"
topics = ["{a}", "{b}"]
[[consumer_group]]
name = "{group}"
assignor = "java:range"
members = 2
subscriptions = ["{a}", "{b}"]
"#
    )
}

#[test]
fn kafka_live_state_beside_the_declared() {
    let bootstrap = kafka_bootstrap();
    let (a, b, g) = (unique("pwr-a"), unique("pwr-b"), unique("pwr-g"));
    create_topics(&bootstrap, &[(&a, 6), (&b, 8)]);
    // murmur2 is Java's partitioner: the records say `java` wrote them.
    produce_with(&bootstrap, &a, "murmur2_random", &keys(120, "k"));
    produce_with(&bootstrap, &b, "murmur2_random", &keys(120, "k"));

    // Declared as 6 and 6 by java: b has 8 on the cluster.
    let f = temp_file(topology(&a, &b, 6, "java", &g));
    let v = report(&[f.path().to_str().unwrap(), "-b", &bootstrap], 1);
    let audit = &v["live"]["kafka"]["audits"][0];
    assert_eq!(audit["copartition_group"], "pair");
    let topics = audit["topics"].as_array().unwrap();
    assert_eq!(topics[0]["live_partitions"], 6);
    assert_eq!(topics[0]["differences"], serde_json::json!([]));
    assert!(
        topics[0]["inferred"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p.as_str().unwrap().starts_with("java")),
        "{audit}"
    );
    assert_eq!(topics[1]["live_partitions"], 8);
    assert!(topics[1]["differences"][0]
        .as_str()
        .unwrap()
        .contains("declared 6 partitions, the cluster has 8"));
    // The audit's own verdict: not co-partitioned live.
    assert_eq!(audit["audit"]["copartitioning"]["copartitioned"], false);
    let live: Vec<&Value> = v["verdict"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["area"] == "live")
        .collect();
    assert_eq!(live.len(), 2, "{live:?}");
    assert_eq!(live[0]["ok"], false);
    assert!(live[0]["text"].as_str().unwrap().contains("DIFFERS"));
    // The declared group runs nowhere.
    assert_eq!(live[1]["ok"], false);
    assert!(
        live[1]["text"].as_str().unwrap().contains("has no members"),
        "{}",
        live[1]
    );

    // Declared librdkafka (CRC32) for a topic written by murmur2: the records say otherwise.
    let f = temp_file(topology(&a, &b, 6, "librdkafka", &g));
    let v = report(&[f.path().to_str().unwrap(), "-b", &bootstrap], 1);
    let t0 = &v["live"]["kafka"]["audits"][0]["topics"][0];
    assert!(
        t0["differences"][0]
            .as_str()
            .unwrap()
            .contains("declared librdkafka"),
        "{t0}"
    );

    // The page marks the differences and names no secret.
    let out = partwise()
        .args([
            "report",
            f.path().to_str().unwrap(),
            "-b",
            &bootstrap,
            "-X",
            "sasl.password=hunter2",
        ])
        .output()
        .unwrap();
    let page = text(&out.stdout);
    assert!(
        page.contains("id=\"live-kafka-0\"") && page.contains("&#10007; DIFFERS"),
        "{}",
        text(&out.stderr)
    );
    assert!(!page.contains("hunter2") && !text(&out.stderr).contains("hunter2"));
}

#[test]
fn redis_live_nodes_beside_the_slots() {
    let seed = redis_node();
    let v = report(
        &[
            &example("ticker.toml"),
            "-i",
            &example("symbols.txt"),
            "-c",
            &seed,
        ],
        // Sample keys carry no traffic: nothing is hot, and the live Redis
        // state agrees with the file.
        0,
    );
    let fam = &v["live"]["redis"]["families"][0];
    assert_eq!(fam["name"], "ticker");
    assert_eq!(fam["co_located"], 10);
    let rows = fam["rows"].as_array().unwrap();
    // The live slot is partwise's, and both members are on one node.
    for (r, offline) in rows
        .iter()
        .zip(v["redis_families"][0]["rows"].as_array().unwrap())
    {
        assert_eq!(r["members"][0]["live_slot"], offline["slots"][0]);
        assert!(r["members"][0]["node"].is_string());
        assert_eq!(r["same_node"], true);
    }
    let live: Vec<&Value> = v["verdict"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["area"] == "live")
        .collect();
    assert_eq!(live.len(), 1);
    assert_eq!(live[0]["ok"], true, "{}", live[0]);
    // Each primary's load, by the measure `redis check` takes on this cluster.
    let load = &v["live"]["redis"]["node_load"];
    let o = partwise()
        .args([
            "redis", "check", "-c", &seed, "--family", "a:{%s}", "--family", "b:{%s}",
        ])
        .args(["k1", "--format", "json"])
        .output()
        .unwrap();
    let check: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(load["measure"], check["node_load"]["measure"], "{load}");
    let map =
        partwise_redis::SlotMap::fetch(&[seed.parse().unwrap()], std::time::Duration::from_secs(5))
            .unwrap();
    assert_eq!(load["nodes"].as_array().unwrap().len(), map.shards.len());
    let page = partwise()
        .args([
            "report",
            &example("ticker.toml"),
            "-i",
            &example("symbols.txt"),
            "-c",
            &seed,
        ])
        .output()
        .unwrap();
    assert!(text(&page.stdout).contains("Load per primary of the cluster at"));
}

#[test]
fn a_running_group_as_declared_is_ok() {
    let bootstrap = kafka_bootstrap();
    let (a, b, g) = (unique("pwr-ok-a"), unique("pwr-ok-b"), unique("pwr-ok-g"));
    create_topics(&bootstrap, &[(&a, 6), (&b, 6)]);
    produce_with(&bootstrap, &a, "murmur2_random", &keys(60, "k"));
    produce_with(&bootstrap, &b, "murmur2_random", &keys(60, "k"));
    let f = temp_file(topology(&a, &b, 6, "java", &g).replace("java:range", "copartitioned"));
    /// The member processes, ended however the test ends (they never exit alone).
    struct Members(Vec<std::process::Child>);
    impl Drop for Members {
        fn drop(&mut self) {
            for m in &mut self.0 {
                let _ = m.kill();
                let _ = m.wait();
            }
        }
    }
    let members = Members(
        (0..2)
            .map(|_| {
                std::process::Command::new(env!("CARGO_BIN_EXE_partwise"))
                    .args([
                        "kafka", "consume", "-b", &bootstrap, "-g", &g, "-t", &a, "-t", &b,
                    ])
                    .args(["--format", "ndjson"])
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect(),
    );
    // The group settles within a few rebalances; the report is asked until it has.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let v = loop {
        let out = partwise()
            .args([
                "report",
                f.path().to_str().unwrap(),
                "-b",
                &bootstrap,
                "--format",
                "json",
            ])
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let settled = v["live"]["kafka"]["groups"][0]["group"]["state"] == "Stable"
            && v["live"]["kafka"]["groups"][0]["group"]["members"]
                .as_array()
                .is_some_and(|m| m.len() == 2);
        if settled || std::time::Instant::now() > deadline {
            break (out.status.code(), v);
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    };
    drop(members);
    let (code, v) = v;
    let live: Vec<&Value> = v["verdict"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["area"] == "live")
        .collect();
    assert!(live.iter().all(|x| x["ok"] == true), "{live:?}");
    assert!(
        live[1]["text"]
            .as_str()
            .unwrap()
            .contains("2 members, assignor copartitioned"),
        "{}",
        live[1]
    );
    assert_eq!(v["live"]["kafka"]["groups"][0]["group"]["split_count"], 0);
    assert_eq!(code, Some(0));
}

/// A consumer group declared with `kip848:uniform` (no release) is predicted
/// with the model of the broker's own release, read from its API versions,
/// and the report names it: in JSON beside the group, on the page in words.
#[test]
fn kip848_report_names_the_brokers_server_assignor_model() {
    let bootstrap = kafka_bootstrap();
    let (a, b, g) = (unique("pwr-ka"), unique("pwr-kb"), unique("pwr-kg"));
    create_topics(&bootstrap, &[(&a, 6), (&b, 6)]);
    let toml = topology(&a, &b, 6, "java", &g).replace("java:range", "kip848:uniform");
    let f = temp_file(toml);
    let path = f.path().to_str().unwrap();
    let v = report(&[path, "-b", &bootstrap], 1);
    let m = &v["live"]["kafka"]["groups"][0]["server_assignor_model"];
    let line = m["broker_release_line"]
        .as_str()
        .unwrap_or_else(|| panic!("{m}"));
    assert!(line.starts_with("4."), "{m}");
    let evidence = m["evidence"].as_str().unwrap();
    assert!(evidence.contains(line), "{m}");
    if line == "4.0" {
        assert!(m["model"].is_null(), "{m}");
    } else {
        assert_eq!(m["model"], "kip848:uniform", "{m}");
        assert_eq!(m["kafka_versions"], "4.0.1 to 4.4.0", "{m}");
    }
    let out = partwise()
        .args(["report", path, "-b", &bootstrap])
        .output()
        .unwrap();
    let page = text(&out.stdout);
    assert!(
        page.contains("Server assignor model: "),
        "{}",
        text(&out.stderr)
    );
    // A group declared with another assignor names no server model.
    let f = temp_file(topology(&a, &b, 6, "java", &g));
    let v = report(&[f.path().to_str().unwrap(), "-b", &bootstrap], 1);
    assert!(
        v["live"]["kafka"]["groups"][0]
            .get("server_assignor_model")
            .is_none(),
        "{v}"
    );
}

/// Keys of this test's own: `pwrep:{t0}` .. `pwrep:{t99}` (one key each)
/// and `pwrep:{busy}`, which takes most of the reads; with no reads, the
/// keys are deleted.
fn hot_workload(seed: &str, reads: usize) {
    use partwise_redis::{redis, NodeConn, SlotMap};
    let t = std::time::Duration::from_secs(5);
    let map = SlotMap::fetch(&[seed.parse().unwrap()], t).unwrap();
    let keys: Vec<String> = (0..100)
        .map(|i| format!("pwrep:{{t{i}}}"))
        .chain(std::iter::once("pwrep:{busy}".to_string()))
        .collect();
    for k in &keys {
        let node = &map
            .owner(partwise::redis::slot::key_slot(k.as_bytes()))
            .unwrap()
            .primary
            .addr;
        let mut c = NodeConn::open(node, t).unwrap();
        if reads == 0 {
            let () = c.query(redis::cmd("DEL").arg(k), "DEL").unwrap();
            continue;
        }
        let () = c.query(redis::cmd("SET").arg(k).arg("v"), "SET").unwrap();
        if k.ends_with("{busy}") {
            for _ in 0..reads / 1000 {
                let mut pipe = redis::pipe();
                for _ in 0..1000 {
                    pipe.cmd("GET").arg(k).ignore();
                }
                let () = c.query_pipe(&pipe, "GET").unwrap();
            }
        }
    }
}

#[test]
fn redis_hot_tags_of_a_family_by_the_clusters_measure() {
    let seed = redis_node();
    hot_workload(&seed, 20_000);
    let f = temp_file(
        "[[redis_family]]\nname = \"rep\"\npatterns = [\"pwrep:{%s}\", \"pwrep2:{%s}\"]\n",
    );
    let keys = temp_file("t1\n");
    let v = report(
        &[
            f.path().to_str().unwrap(),
            "-c",
            &seed,
            "-i",
            keys.path().to_str().unwrap(),
        ],
        0,
    );
    let fam = &v["live"]["redis"]["families"][0];
    let measure = v["live"]["redis"]["node_load"]["measure"].clone();
    assert_eq!(fam["hot_tags_measure"], measure);
    // The same tags `redis hot` names over the same keys.
    let o = partwise()
        .args([
            "redis",
            "hot",
            "-c",
            &seed,
            "--match",
            "pwrep:{*}",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let hot: Value = serde_json::from_slice(&o.stdout).unwrap();
    hot_workload(&seed, 0);
    let names = |a: &Value| -> Vec<String> {
        let mut n: Vec<String> = a
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["tag"].as_str().unwrap().to_string())
            .collect();
        n.sort();
        n
    };
    if measure == "cpu" {
        assert_eq!(hot["measure"], "cpu", "{hot}");
        // A slot's work is every command on it: a tag whose slot other
        // keys of a shared cluster keep busy can be named beside it.
        assert!(
            names(&fam["hot_tags"]).contains(&"busy".to_string()),
            "{fam}"
        );
    } else {
        // One key a tag: nothing is hot by keys.
        assert_eq!(measure, "keys");
        assert_eq!(names(&fam["hot_tags"]), Vec::<String>::new(), "{fam}");
    }
    assert_eq!(names(&fam["hot_tags"]), names(&hot["hot_tags"]), "{hot}");
}
