//! `kafka audit --since`/`--from-end`: the newest records instead of the
//! oldest. The topic's old records (stamped an hour ago) are the ten symbols
//! evenly; its last minutes are 60% BBCA. The known answers are what the
//! test produced, never partwise's reading of it.

use crate::common::{example, partwise as pw, temp_file, text, SYMBOLS};
use partwise_faults::live::{create_topics, kafka_bootstrap as bootstrap, unique};
use serde_json::Value;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Sends `(key, count)` records of each key, interleaved, stamped `at_ms`,
/// with librdkafka's Java-compatible partitioner.
pub(crate) fn produce(b: &str, topic: &str, counts: &[(&str, u64)], at_ms: i64) {
    use rdkafka::config::ClientConfig;
    use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
    let p: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", b)
        .set("partitioner", "murmur2_random")
        .set("linger.ms", "5")
        .create()
        .unwrap();
    let most = counts.iter().map(|c| c.1).max().unwrap_or(0);
    for round in 0..most {
        for (k, c) in counts {
            if round < *c {
                let r: BaseRecord<'_, str, str> = BaseRecord::to(topic)
                    .key(*k)
                    .payload("tick")
                    .timestamp(at_ms);
                p.send(r).map_err(|(e, _)| e).unwrap();
                p.poll(Duration::ZERO);
            }
        }
    }
    p.flush(Duration::from_secs(60)).unwrap();
}

pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn audit_json(args: &[&str]) -> Value {
    let out = pw().args(args).args(["--format", "json"]).output().unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        text(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The recent window: BBCA 135 of 225 records (60%), each other symbol 10.
pub(crate) fn recent() -> Vec<(&'static str, u64)> {
    SYMBOLS
        .iter()
        .map(|&s| (s, if s == "BBCA" { 135 } else { 10 }))
        .collect()
}

fn run(args: &[&str]) -> (Option<i32>, String) {
    let out = pw().args(args).output().unwrap();
    (out.status.code(), text(&out.stdout))
}

#[test]
fn the_last_minutes_name_their_hot_key_and_the_oldest_records_stay_even() {
    let b = bootstrap();
    let topic = unique("window");
    create_topics(&b, &[(&topic, 6)]);
    let even: Vec<(&str, u64)> = SYMBOLS.iter().map(|&s| (s, 60)).collect();
    produce(&b, &topic, &even, now_ms() - 3_600_000);
    produce(&b, &topic, &recent(), now_ms());

    // The last 10 minutes: BBCA carries 60% of the records, and the skew is
    // of those records.
    let v = audit_json(&["kafka", "audit", "-b", &b, "-t", &topic, "--since", "10m"]);
    let t = &v["topics"][0];
    let w = &t["window"];
    assert_eq!(w["kind"], "since", "{w}");
    assert_eq!(w["since"], "10m");
    let h = &w["heavy_hitters"];
    assert_eq!(h["records"], 225, "{h}");
    assert_eq!(h["by_records"][0]["key"], "BBCA", "{h}");
    assert_eq!(h["by_records"][0]["records"], 135);
    assert!((h["by_records"][0]["record_share"].as_f64().unwrap() - 0.6).abs() < 1e-9);
    assert_eq!(t["skew"]["total"], 225, "{t}");
    // Per partition: BBCA's own partition has it on top.
    let bbca_partition = h["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["by_records"][0]["key"] == "BBCA")
        .expect("BBCA tops its partition");
    assert!(bbca_partition["records"].as_u64().unwrap() >= 135);
    assert!(t["skew"]["hot_partitions"]
        .as_array()
        .unwrap()
        .contains(&bbca_partition["partition"]));
    // The partitioner is inferred from the window as well.
    assert!(
        t["routing"]["inferred"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c == "java"),
        "{}",
        t["routing"]
    );
    // The same with the newest 20 of each partition.
    let v = audit_json(&["kafka", "audit", "-b", &b, "-t", &topic, "--from-end", "20"]);
    assert_eq!(v["topics"][0]["window"]["kind"], "from_end");
    assert_eq!(
        v["topics"][0]["window"]["heavy_hitters"]["by_records"][0]["key"],
        "BBCA"
    );

    // Without a window, the oldest records: even, BBCA one symbol of ten.
    let v = audit_json(&["kafka", "audit", "-b", &b, "-t", &topic, "--sample", "50"]);
    let w = &v["topics"][0]["window"];
    assert_eq!(w["kind"], "oldest", "{w}");
    let h = &w["heavy_hitters"];
    for x in h["by_records"].as_array().unwrap() {
        assert!(x["record_share"].as_f64().unwrap() < 0.35, "{h}");
    }
    let bbca = h["by_records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["key"] == "BBCA");
    assert!(
        bbca.is_none_or(|x| x["record_share"].as_f64().unwrap() < 0.35),
        "{h}"
    );
    // The table says which window it read.
    let (_, table) = run(&["kafka", "audit", "-b", &b, "-t", &topic, "--since", "10m"]);
    assert!(
        table.contains("window: the records of the last 10m (by timestamp)"),
        "{table}"
    );
    assert!(table.contains("heavy hitters by records:"), "{table}");

    // --counts-out writes the window's KEY,COUNT lines, which feed check
    // and resize --suggest exactly as the same counts typed in a file.
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.csv");
    let live_s = live.to_str().unwrap();
    run(&[
        "kafka",
        "audit",
        "-b",
        &b,
        "-t",
        &topic,
        "--since",
        "10m",
        "--counts-out",
        live_s,
    ]);
    let written = std::fs::read_to_string(&live).unwrap();
    let mut got: Vec<(String, u64)> = written
        .lines()
        .map(|l| {
            let (k, c) = l.rsplit_once(',').unwrap();
            (k.to_string(), c.parse().unwrap())
        })
        .collect();
    got.sort();
    let mut want: Vec<(String, u64)> = recent().iter().map(|(k, c)| (k.to_string(), *c)).collect();
    want.sort();
    assert_eq!(got, want, "{written}");
    let typed = temp_file(
        recent()
            .iter()
            .map(|(k, c)| format!("{k},{c}\n"))
            .collect::<String>(),
    );
    let typed_s = typed.path().to_str().unwrap();
    let ticker = example("ticker.toml");
    for cmd in [
        vec!["check", ticker.as_str(), "--format", "json", "--counts"],
        vec![
            "resize",
            "--suggest",
            "--target",
            "9",
            "--consumers",
            "4",
            "--topology",
            ticker.as_str(),
            "--topic",
            "market-updates",
            "--format",
            "json",
            "--counts",
        ],
    ] {
        let with = |f: &str| {
            let mut a = cmd.clone();
            a.push(f);
            let (code, out) = run(&a);
            (code, out.replace(f, "FILE"))
        };
        let (a, b2) = (with(live_s), with(typed_s));
        assert_eq!(a, b2, "{cmd:?}");
        assert!(matches!(a.0, Some(0 | 1)), "{cmd:?}: {}", a.1);
    }
    // The file is an output: never one of the inputs.
    let props = temp_file("# no properties\n");
    let p = props.path().to_str().unwrap();
    let out = pw()
        .args([
            "kafka",
            "audit",
            "-b",
            &b,
            "-t",
            &topic,
            "-F",
            p,
            "--since",
            "10m",
            "--counts-out",
            p,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("--counts-out"),
        "{}",
        text(&out.stderr)
    );
}
