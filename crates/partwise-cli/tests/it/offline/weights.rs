//! `--counts FILE`: real traffic weights for `check`, `report`, `resize`
//! (and `--suggest`) and `plan`. The ten symbols of `examples/ticker.toml`
//! with BBCA carrying 45% of the ticks; every expected figure is computed
//! here from the real clients' murmur2 hashes (`tests/vectors/reference/
//! key_hashes.jsonl`, equal across Java, KafkaJS and Sarama), not from
//! partwise.

use crate::common::{example, output, repo, temp_file, SYMBOLS};
use serde_json::Value;

/// BBCA 81 of 180 records (45%), each other symbol 11 (the 55% shared).
fn ticks() -> Vec<(&'static str, u64)> {
    SYMBOLS
        .iter()
        .map(|&s| (s, if s == "BBCA" { 81 } else { 11 }))
        .collect()
}

fn counts_file() -> tempfile::NamedTempFile {
    let text: String = ticks().iter().map(|(k, c)| format!("{k},{c}\n")).collect();
    temp_file(text)
}

/// The partition of `key` over `n` as the Java-compatible clients compute
/// it (KafkaJS's default partitioner): `toPositive(murmur2) % n`, from the
/// hash the real clients produced.
fn partition(key: &str, n: u32) -> u32 {
    let path = repo().join("tests/vectors/reference/key_hashes.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    let row: Value = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["key"] == key)
        .unwrap_or_else(|| panic!("no hash of {key}"));
    let h = row["murmur2_u32"].as_u64().unwrap() as u32;
    (h & 0x7fff_ffff) % n
}

/// Keys and records that move from 6 to `to` partitions.
fn moves(to: u32) -> (u64, u64) {
    ticks()
        .iter()
        .filter(|(k, _)| partition(k, 6) != partition(k, to))
        .fold((0, 0), |(k, r), (_, c)| (k + 1, r + c))
}

/// The busiest of `m` round-robin members reading one topic of `n`
/// partitions (KafkaJS's RoundRobinAssigner deals partition q to the
/// member q mod m), in records.
fn busiest_round_robin(n: u32, m: u32) -> u64 {
    let mut load = vec![0u64; m as usize];
    for (k, c) in ticks() {
        load[(partition(k, n) % m) as usize] += c;
    }
    load.into_iter().max().unwrap()
}

fn json(args: &[&str], code: i32) -> Value {
    let out = output(args, code);
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_hand_counts_are_the_issue_s_figures() {
    // 9 moves 6 of the ten symbols and 12 moves 7; of 4 round-robin
    // workers the busiest carries 92 of 180 records (51%) at 9, 114 (63%) at 12.
    assert_eq!((moves(9).0, moves(12).0), (6, 7));
    assert_eq!(
        (busiest_round_robin(9, 4), busiest_round_robin(12, 4)),
        (92, 114)
    );
}

#[test]
fn resize_does_not_offer_twelve_when_it_moves_more_of_the_given_keys() {
    let ticker = example("ticker.toml");
    let symbols = example("symbols.txt");
    // The ten symbols without counts: 12 moves 7, 9 moves 6.
    let v = json(
        &[
            "resize",
            "--topology",
            &ticker,
            "--topic",
            "market-updates",
            "--to",
            "9",
            "-i",
            &symbols,
            "--format",
            "json",
        ],
        0,
    );
    assert_eq!(v["moved_count"], moves(9).0);
    let fixes = v["fix"].as_array().unwrap();
    assert!(
        !fixes
            .iter()
            .any(|f| f.as_str().unwrap().contains("12 partitions")),
        "{fixes:?}"
    );
    assert_eq!(v["multiple_no_better"]["partitions"], 12);
    assert_eq!(v["multiple_no_better"]["keys_moved"], moves(12).0);
    assert_eq!(v["records_moved_share"], Value::Null);
}

#[test]
fn resize_counts_gives_the_records_moved() {
    let ticker = example("ticker.toml");
    let counts = counts_file();
    let c = counts.path().to_str().unwrap();
    for to in [9u32, 12] {
        let v = json(
            &[
                "resize",
                "--topology",
                &ticker,
                "--topic",
                "market-updates",
                "--to",
                &to.to_string(),
                "--counts",
                c,
                "--format",
                "json",
            ],
            0,
        );
        let (keys, records) = moves(to);
        assert_eq!(v["moved_count"], keys, "{to}");
        assert_eq!(v["records"], 180);
        assert_eq!(v["records_moved"], records, "{to}");
        let share = v["records_moved_share"].as_f64().unwrap();
        assert!((share - records as f64 / 180.0).abs() < 1e-12);
    }
}

#[test]
fn suggest_with_counts_ranks_by_the_busiest_worker() {
    let ticker = example("ticker.toml");
    let counts = counts_file();
    let c = counts.path().to_str().unwrap();
    let v = json(
        &[
            "resize",
            "--suggest",
            "--target",
            "9",
            "--consumers",
            "4",
            "--topology",
            &ticker,
            "--topic",
            "market-updates",
            "--counts",
            c,
            "--format",
            "json",
        ],
        0,
    );
    assert_eq!(v["ranked_by"], "busiest_consumer");
    assert_eq!(v["assignor"], "kafkajs:roundrobin");
    let rows = v["suggestions"].as_array().unwrap();
    let at = |n: u32| {
        rows.iter()
            .position(|r| r["partitions"] == n)
            .unwrap_or_else(|| panic!("{n} not judged: {rows:?}"))
    };
    // Without weights 12 comes first and 9 is left out (4 does not divide it).
    assert!(at(9) < at(12), "{rows:?}");
    for n in [9u32, 12] {
        let r = &rows[at(n)];
        let share = r["busiest_consumer"][0]["share"].as_f64().unwrap();
        assert!(
            (share - busiest_round_robin(n, 4) as f64 / 180.0).abs() < 1e-12,
            "{n}: {r}"
        );
        assert_eq!(r["keys_moved"], moves(n).0);
        assert_eq!(r["records_moved"], moves(n).1);
    }
    assert_eq!(rows[at(9)]["divides_evenly"], false);
    assert_eq!(v["target_left_out"], Value::Null);
    // The table says the same.
    let out = output(
        &[
            "resize",
            "--suggest",
            "--target",
            "9",
            "--consumers",
            "4",
            "--topology",
            &ticker,
            "--topic",
            "market-updates",
            "--counts",
            c,
        ],
        0,
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("BUSIEST OF 4"), "{text}");
    assert!(text.contains("51.1%") && text.contains("63.3%"), "{text}");
}

#[test]
fn report_without_counts_calls_nothing_hot() {
    // Three of the ten symbols share partition 0 of 6: equally weighted,
    // that would be "hot", but keys are not traffic.
    assert_eq!(SYMBOLS.iter().filter(|s| partition(s, 6) == 0).count(), 3);
    let out = output(
        &[
            "report",
            &example("ticker.toml"),
            "-i",
            &example("symbols.txt"),
            "--format",
            "json",
        ],
        0,
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["verdict"]
        .as_array()
        .unwrap()
        .iter()
        .all(|x| x["area"] != "skew" && x["ok"] == true));
    let page = output(
        &[
            "report",
            &example("ticker.toml"),
            "-i",
            &example("symbols.txt"),
        ],
        0,
    );
    let page = String::from_utf8(page.stdout).unwrap();
    assert!(!page.contains("HOT"), "a partition called hot from keys");
    assert!(page.contains("the load is unknown without --counts"));
}

#[test]
fn report_on_a_balanced_weighted_topology_exits_0() {
    // Each symbol's count is 660 shared among the symbols of its partition
    // of 6, so every partition that has a symbol carries 660 records.
    let per = |s: &str| {
        let p = partition(s, 6);
        660 / SYMBOLS.iter().filter(|x| partition(x, 6) == p).count() as u64
    };
    let text: String = SYMBOLS
        .iter()
        .map(|s| format!("{s},{}\n", per(s)))
        .collect();
    let counts = temp_file(text);
    let v = json(
        &[
            "report",
            &example("ticker.toml"),
            "--counts",
            counts.path().to_str().unwrap(),
            "--format",
            "json",
        ],
        0,
    );
    let skew = &v["verdict"].as_array().unwrap()[3];
    assert_eq!(skew["area"], "skew");
    assert_eq!(skew["ok"], true, "{skew}");
    let loads: Vec<u64> = v["skew"][0]["loads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert!(loads.iter().all(|&l| l == 0 || l == 660), "{loads:?}");
    // The ticks themselves are not balanced: BBCA's partition is hot.
    let ticks = counts_file();
    let v = json(
        &[
            "report",
            &example("ticker.toml"),
            "--counts",
            ticks.path().to_str().unwrap(),
            "--format",
            "json",
        ],
        1,
    );
    let hot = partition("BBCA", 6);
    assert_eq!(v["skew"][0]["hot_partitions"], serde_json::json!([hot]));
}

#[test]
fn check_counts_weighs_the_keys_that_keep_the_join() {
    // Caught mid-resize: market-updates at 9, notifications still at 6.
    let toml = std::fs::read_to_string(example("ticker.toml")).unwrap();
    let mid = toml.replacen("partitions = 6", "partitions = 9", 1);
    assert_ne!(mid, toml);
    let mid = temp_file(mid);
    let counts = counts_file();
    let args = [
        "check",
        mid.path().to_str().unwrap(),
        "--counts",
        counts.path().to_str().unwrap(),
        "--format",
        "json",
    ];
    let v = json(&args, 1);
    let g = &v["copartition_groups"][0];
    let keys = ticks()
        .iter()
        .filter(|(k, _)| partition(k, 9) == partition(k, 6))
        .count();
    let records: u64 = ticks()
        .iter()
        .filter(|(k, _)| partition(k, 9) == partition(k, 6))
        .map(|(_, c)| c)
        .sum();
    assert_eq!(g["aligned_keys"], keys);
    assert_eq!(g["records"], 180);
    assert_eq!(g["aligned_records"], records);
    // BBCA keeps its partition: most records still join though most keys do not.
    assert_eq!(partition("BBCA", 9), partition("BBCA", 6));
    assert!(records * 2 > 180 && keys * 2 < 10, "{records} {keys}");
    let table = output(&args[..4], 1);
    let table = String::from_utf8(table.stdout).unwrap();
    assert!(
        table.contains(&format!("{records} of their 180 records")),
        "{table}"
    );
    // Without counts the fields are there, and null.
    let symbols = example("symbols.txt");
    let v = json(
        &[
            "check",
            mid.path().to_str().unwrap(),
            "-i",
            &symbols,
            "--format",
            "json",
        ],
        1,
    );
    assert_eq!(v["copartition_groups"][0]["records"], Value::Null);
}

#[test]
fn plan_counts_sizes_by_the_hottest_partition() {
    let counts = counts_file();
    let c = counts.path().to_str().unwrap();
    // 10 MB/s into consumers of 5 MB/s per partition: 2 partitions when
    // every partition takes half; weighed, the hottest must take at most half.
    let v = json(
        &[
            "plan",
            "--produce-mbps",
            "10",
            "--partition-produce-mbps",
            "10",
            "--consume-mbps",
            "10",
            "--partition-consume-mbps",
            "5",
            "--headroom",
            "0",
            "--counts",
            c,
            "-P",
            "kafkajs",
            "--format",
            "json",
        ],
        0,
    );
    assert_eq!(v["with_headroom"], 2);
    let hottest = |n: u32| {
        let mut load = vec![0u64; n as usize];
        for (k, w) in ticks() {
            load[partition(k, n) as usize] += w;
        }
        *load.iter().max().unwrap()
    };
    let needed = (2..).find(|&n| hottest(n) * 2 <= 180).unwrap();
    assert!(needed > 2);
    assert_eq!(v["weights"]["required"], needed);
    assert_eq!(v["weights"]["heaviest_key"], "BBCA");
    let at2 = v["weights"]["nearby"][0]["hottest_partition_share"]
        .as_f64()
        .unwrap();
    assert!((at2 - hottest(2) as f64 / 180.0).abs() < 1e-12);
    // The seed's rates: BBCA alone is 22.5 MB/s for a 2.5 MB/s consumer.
    let v = json(
        &[
            "plan",
            "--produce-mbps",
            "50",
            "--partition-produce-mbps",
            "10",
            "--consume-mbps",
            "50",
            "--partition-consume-mbps",
            "2.5",
            "--counts",
            c,
            "-P",
            "kafkajs",
            "--format",
            "json",
        ],
        1,
    );
    assert_eq!(v["weights"]["key_too_hot"], true);
    assert_eq!(v["weights"]["required"], Value::Null);
    assert_eq!(v["with_headroom"], 24);
    // Without --counts, no weights.
    let v = json(
        &[
            "plan",
            "--produce-mbps",
            "50",
            "--partition-produce-mbps",
            "10",
            "--consume-mbps",
            "50",
            "--partition-consume-mbps",
            "2.5",
            "--format",
            "json",
        ],
        0,
    );
    assert_eq!(v["weights"], Value::Null);
}

#[test]
fn bad_counts_are_exit_2_naming_the_file_and_line() {
    let ticker = example("ticker.toml");
    let bad = temp_file("BBCA,12\nANTM\n");
    let zero = temp_file("BBCA,0\n");
    let negative = temp_file("BBCA,-3\n");
    let rates = [
        "plan",
        "--produce-mbps",
        "1",
        "--partition-produce-mbps",
        "1",
        "--consume-mbps",
        "1",
        "--partition-consume-mbps",
        "1",
    ];
    let commands: Vec<Vec<&str>> = vec![
        vec!["check", &ticker],
        vec!["report", &ticker],
        vec!["resize", "--from", "6", "--to", "9"],
        vec!["resize", "--suggest", "--target", "9", "--from", "6"],
        rates.to_vec(),
    ];
    for cmd in &commands {
        for (file, needle) in [
            (&bad, "line 2: expected KEY,COUNT (no comma)"),
            (&zero, "every count is 0"),
            (&negative, "line 1: count '-3' is negative"),
        ] {
            let path = file.path().to_str().unwrap();
            let mut args = cmd.clone();
            args.extend(["--counts", path]);
            crate::common::fails_with(&args, &format!("{path}: {needle}"));
        }
    }
    // --assignor weighs --suggest's consumers, and needs --counts.
    let c = counts_file();
    let c = c.path().to_str().unwrap();
    crate::common::fails_with(
        &[
            "resize",
            "--from",
            "6",
            "--to",
            "9",
            "--counts",
            c,
            "--assignor",
            "java:range",
        ],
        "--assignor java:range",
    );
    crate::common::fails_with(
        &[
            "resize",
            "--suggest",
            "--target",
            "9",
            "--assignor",
            "java:range",
        ],
        "--counts",
    );
    // A key the producer's key format cannot write is named.
    let counts = counts_file();
    crate::common::fails_with(
        &[
            "resize",
            "--from",
            "6",
            "--to",
            "9",
            "--key-format",
            "int32",
            "--counts",
            counts.path().to_str().unwrap(),
        ],
        "key 'BBCA'",
    );
}

#[test]
fn a_counts_file_given_as_sample_keys_is_warned_about() {
    for cmd in ["check", "report"] {
        let out = output(
            &[cmd, &example("ticker.toml"), "-i", &example("ticks.csv")],
            0,
        );
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains("looks like KEY,COUNT"), "{cmd}: {err}");
        assert!(err.contains("--counts"), "{cmd}: {err}");
    }
    // The keys themselves: no warning.
    let out = output(
        &[
            "check",
            &example("ticker.toml"),
            "-i",
            &example("symbols.txt"),
        ],
        0,
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn live_counts_are_refused_without_a_cluster_and_a_bad_window_is_named() {
    let ticker = example("ticker.toml");
    // live:... needs the cluster it is read from.
    for args in [
        vec!["check", ticker.as_str(), "--counts", "live:10m"],
        vec!["report", ticker.as_str(), "--counts", "live:last=50"],
    ] {
        let out = output(&args, 2);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--counts live:"), "{args:?}: {err}");
        assert!(err.contains("-b"), "{args:?}: {err}");
    }
    for bad in [
        "live:",
        "live:soon",
        "live:last=0",
        "live:last=x",
        "live:0s",
    ] {
        let out = output(&["check", ticker.as_str(), "--counts", bad], 2);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--counts"), "{bad}: {err}");
        assert!(err.contains("live:"), "{bad}: {err}");
    }
    // A file whose name starts with live: is given by its path.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("live:1h"), "BBCA,3\n").unwrap();
    let f = dir.path().join("live:1h");
    let out = output(
        &["check", ticker.as_str(), "--counts", f.to_str().unwrap()],
        0,
    );
    assert!(!out.stdout.is_empty());
}
