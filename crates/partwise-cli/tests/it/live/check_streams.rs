//! `partwise check --streams FILE -b BROKERS` on what a real Kafka Streams
//! application's `Topology#describe()` prints (`tests/streams-app/run
//! --describe`, kafka-streams pinned in its `pom.xml`; Java and Maven must be
//! installed): the join's two sources are one co-partition group whose
//! counts come from the cluster and whose producers come from a sample of
//! their records. Exit 0 while both are written by Java-compatible
//! producers over equal counts; exit 1 naming the counts when one has 8
//! partitions; exit 1 naming librdkafka's default partitioner when one was
//! written with it.

use crate::common::repo;
use assert_cmd::Command as Cmd;
use partwise_faults::live::{
    create_topics, kafka_bootstrap as bootstrap, keys, produce_with, unique,
};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

/// The application's own `describe()` of the join of `left` and `right`,
/// written to a file of this test's own.
fn describe(left: &str, right: &str) -> PathBuf {
    let out = Command::new("bash")
        .arg(repo().join("tests/streams-app/run"))
        .args(["--describe", left, right])
        .output()
        .expect("tests/streams-app/run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("Topologies:"), "{text}");
    let path = std::env::temp_dir().join(format!("{}.topology", unique("join")));
    std::fs::write(&path, text).unwrap();
    path
}

/// `check --streams FILE -b B --format json`: exit code and document.
fn check(b: &str, file: &PathBuf) -> (i32, Value) {
    let out = Cmd::cargo_bin("partwise")
        .unwrap()
        .args(["check", "--streams"])
        .arg(file)
        .args(["-b", b, "--format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), v)
}

/// The one group's reasons, as `kind: message` lines.
fn reasons(v: &Value) -> Vec<String> {
    let groups = v["copartition_groups"].as_array().expect("groups");
    assert_eq!(groups.len(), 1, "{v:#}");
    groups[0]["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{}: {}",
                r["kind"].as_str().unwrap(),
                r["message"].as_str().unwrap()
            )
        })
        .collect()
}

/// Three topics, each written by `partitioner` (librdkafka's names) over
/// the same keys: `(left, right)` of 6 partitions for the given writers.
fn topics(b: &str, counts: (i32, i32), writers: (&str, &str)) -> (String, String) {
    let (l, r) = (unique("market-updates"), unique("notifications"));
    create_topics(b, &[(&l, counts.0), (&r, counts.1)]);
    produce_with(b, &l, writers.0, &keys(300, "SYM"));
    produce_with(b, &r, writers.1, &keys(300, "SYM"));
    (l, r)
}

#[test]
fn sources_written_by_java_compatible_producers_over_equal_counts_hold() {
    let b = bootstrap();
    let (l, r) = topics(&b, (6, 6), ("murmur2_random", "murmur2_random"));
    let file = describe(&l, &r);
    let (code, v) = check(&b, &file);
    let _ = std::fs::remove_file(&file);
    assert_eq!(code, 0, "{v:#}");
    let g = &v["copartition_groups"][0];
    assert_eq!(g["copartitioned"], true, "{v:#}");
    let mut topics: Vec<&str> = g["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    topics.sort();
    let mut want = [l.as_str(), r.as_str()];
    want.sort();
    assert_eq!(topics, want, "{v:#}");
}

#[test]
fn a_source_of_8_partitions_is_named_with_both_counts() {
    let b = bootstrap();
    let (l, r) = topics(&b, (6, 8), ("murmur2_random", "murmur2_random"));
    let file = describe(&l, &r);
    let (code, v) = check(&b, &file);
    let _ = std::fs::remove_file(&file);
    assert_eq!(code, 1, "{v:#}");
    let rs = reasons(&v);
    let counts = rs
        .iter()
        .find(|m| m.starts_with("partition-counts-differ"))
        .unwrap_or_else(|| panic!("{rs:#?}"));
    assert!(counts.contains(&l) && counts.contains('6'), "{counts}");
    assert!(counts.contains(&r) && counts.contains('8'), "{counts}");
}

#[test]
fn a_source_written_with_librdkafkas_default_partitioner_is_named() {
    let b = bootstrap();
    let (l, r) = topics(&b, (6, 6), ("murmur2_random", "consistent_random"));
    let file = describe(&l, &r);
    let (code, v) = check(&b, &file);
    let _ = std::fs::remove_file(&file);
    assert_eq!(code, 1, "{v:#}");
    let rs = reasons(&v);
    let p = rs
        .iter()
        .find(|m| m.starts_with("partitioners-disagree"))
        .unwrap_or_else(|| panic!("{rs:#?}"));
    assert!(
        p.contains(&r) && p.contains("librdkafka:consistent_random"),
        "{p}"
    );
    let fix = v["copartition_groups"][0]["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["kind"] == "partitioners-disagree")
        .unwrap()["fix"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(fix.contains("partitioner=murmur2_random"), "{fix}");
}
