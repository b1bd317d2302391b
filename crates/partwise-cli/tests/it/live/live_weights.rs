//! `--counts live:DURATION` of `report -b` and `check --streams -b`: the
//! weights are the keys of the topics' newest records, sampled as `kafka
//! audit --since` samples them. Both topics' old records (stamped an hour
//! ago) are the ten symbols evenly; their last minutes are 60% BBCA. The
//! known answers are what the test produced and the real clients' hashes.

use super::kafka_audit_window::{now_ms, produce, recent};
use crate::common::{partwise as pw, repo, temp_file, text, SYMBOLS};
use partwise_faults::live::{create_topics, kafka_bootstrap as bootstrap, unique};
use serde_json::Value;

/// The partition of `key` over `n` as the Java-compatible clients compute
/// it, from the hash the real clients produced.
fn java_partition(key: &str, n: u32) -> u64 {
    let path = repo().join("tests/vectors/reference/key_hashes.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    let row: Value = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["key"] == key)
        .unwrap_or_else(|| panic!("no hash of {key}"));
    let h = row["murmur2_u32"].as_u64().unwrap() as u32;
    u64::from((h & 0x7fff_ffff) % n)
}

fn json(args: &[&str]) -> (Option<i32>, Value) {
    let out = pw().args(args).args(["--format", "json"]).output().unwrap();
    let err = text(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    (
        out.status.code(),
        serde_json::from_slice(&out.stdout).unwrap(),
    )
}

/// Two co-partitioned topics of 6 partitions, even an hour ago, 60% BBCA now.
fn topics(b: &str) -> (String, String) {
    let (l, r) = (unique("lw-left"), unique("lw-right"));
    create_topics(b, &[(&l, 6), (&r, 6)]);
    let even: Vec<(&str, u64)> = SYMBOLS.iter().map(|&s| (s, 60)).collect();
    for t in [&l, &r] {
        produce(b, t, &even, now_ms() - 3_600_000);
        produce(b, t, &recent(), now_ms());
    }
    (l, r)
}

/// The window's counts over both topics, typed as a file.
fn typed() -> tempfile::NamedTempFile {
    temp_file(
        recent()
            .iter()
            .map(|(k, c)| format!("{k},{}\n", 2 * c))
            .collect::<String>(),
    )
}

/// The hot partitions of the report's topic `t`.
fn hot(v: &Value, t: &str) -> Value {
    let s = v["skew"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["topic"] == t)
        .unwrap_or_else(|| panic!("no skew of {t}: {}", v["skew"]));
    s["hot_partitions"].clone()
}

#[test]
fn report_weighs_by_the_last_minutes_and_names_their_hot_partition() {
    let b = bootstrap();
    let (l, r) = topics(&b);
    let topology = temp_file(format!(
        r#"
[[topic]]
name = "{l}"
partitions = 6
producer = [{{ partitioner = "java", key_format = "string" }}]
[[topic]]
name = "{r}"
partitions = 6
producer = [{{ partitioner = "java", key_format = "string" }}]
[[copartition]]
name = "pair"
topics = ["{l}", "{r}"]
"#
    ));
    let f = topology.path().to_str().unwrap();
    let bbca = java_partition("BBCA", 6);

    // The last 10 minutes: 450 keyed records over both topics, BBCA's
    // partition hot, said in the document and on the page.
    let (code, live) = json(&["report", f, "-b", &b, "--counts", "live:10m"]);
    assert_eq!(code, Some(1), "{}", live["verdict"]);
    let w = &live["weights"];
    assert_eq!(w["counts"], "live:10m", "{w}");
    assert_eq!(w["records"], 450, "{w}");
    assert_eq!(w["keys"], 10, "{w}");
    assert_eq!(w["window"], "the records of the last 10m (by timestamp)");
    let mut read: Vec<&str> = w["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    read.sort();
    let mut want = vec![l.as_str(), r.as_str()];
    want.sort();
    assert_eq!(read, want);
    assert_eq!(hot(&live, &l), serde_json::json!([bbca]));
    // The same verdict as the window's counts typed in a file.
    let file = typed();
    let (code_f, from_file) = json(&["report", f, "--counts", file.path().to_str().unwrap()]);
    assert_eq!(code_f, code);
    assert_eq!(live["skew"], from_file["skew"]);
    assert_eq!(live["resize"], from_file["resize"]);
    assert_eq!(from_file["weights"], Value::Null);
    // The newest 20 of each partition: as many records of every partition,
    // so no partition is hot by them (the window is per partition).
    let (_, last) = json(&["report", f, "-b", &b, "--counts", "live:last=20"]);
    assert_eq!(last["weights"]["counts"], "live:last=20");
    let mut used: Vec<u64> = SYMBOLS.iter().map(|s| java_partition(s, 6)).collect();
    used.sort();
    used.dedup();
    assert_eq!(last["weights"]["records"], 2 * 20 * used.len() as u64);
    assert_eq!(last["weights"]["per_partition"], 20);
    assert_eq!(hot(&last, &r), serde_json::json!([]));
    // The HTML page says which window weighed it.
    let out = pw()
        .args(["report", f, "-b", &b, "--counts", "live:10m"])
        .output()
        .unwrap();
    let page = text(&out.stdout);
    assert!(
        page.contains("weights from --counts live:10m: the records of the last 10m (by timestamp)"),
        "{}",
        text(&out.stderr)
    );
    assert!(page.contains("450 keyed records, 10 keys"));

    // The oldest records (the even hour-old ones): no hot partition.
    let (_, old) = json(&["report", f, "-b", &b]);
    assert_eq!(old["weights"], Value::Null);

    // Live weights need the cluster.
    let out = pw()
        .args(["report", f, "--counts", "live:10m"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("give -b"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn check_weighs_a_streams_join_by_its_sources_last_minutes() {
    let b = bootstrap();
    let (l, r) = topics(&b);
    // Kafka Streams' own describe() of a stream-table join, its two source
    // topics renamed to this test's.
    let text_ = std::fs::read_to_string(repo().join("tests/vectors/streams/stream-table.txt"))
        .unwrap()
        .replace("market-updates", &l)
        .replace("notifications", &r);
    let d = temp_file(text_);
    let d = d.path().to_str().unwrap();

    let (code, live) = json(&["check", "--streams", d, "-b", &b, "--counts", "live:10m"]);
    assert_eq!(code, Some(0), "{live}");
    let w = &live["weights"];
    assert_eq!(w["records"], 450, "{w}");
    assert_eq!(w["per_partition"], 1000, "{w}");
    let g = &live["copartition_groups"][0];
    // Every record of the window lands on one partition number in both.
    assert_eq!(g["records"], 450, "{g}");
    assert_eq!(g["aligned_records"], 450, "{g}");
    // The same as the window's counts typed in a file.
    let file = typed();
    let (code_f, mut from_file) = json(&[
        "check",
        "--streams",
        d,
        "-b",
        &b,
        "--counts",
        file.path().to_str().unwrap(),
    ]);
    assert_eq!(code_f, code);
    let mut live = live.clone();
    live.as_object_mut().unwrap().remove("weights");
    from_file["file"] = live["file"].clone();
    assert_eq!(live, from_file);
    // The table says it first.
    let out = pw()
        .args(["check", "--streams", d, "-b", &b, "--counts", "live:10m"])
        .output()
        .unwrap();
    let t = text(&out.stdout);
    assert!(
        t.lines().next().unwrap().starts_with(
            "weights from --counts live:10m: the records of the last 10m (by timestamp) of "
        ),
        "{t}"
    );
    // Without -b the live weights have nowhere to come from.
    let out = pw()
        .args(["check", "--streams", d, "--counts", "live:10m"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--counts live:10m"));
}
