//! The contract of `partwise check` and `partwise resize`: verdicts, reasons,
//! fields and exit codes, on the seeds' ticker and variants of it.

use crate::common::{example, output, partwise, temp_file};
use serde_json::Value;

fn ticker() -> String {
    std::fs::read_to_string(example("ticker.toml")).unwrap()
}

/// The ticker with the `nth` occurrence of `from` replaced by `to`.
fn variant(from: &str, to: &str, nth: usize) -> String {
    let t = ticker();
    let (i, _) = t
        .match_indices(from)
        .nth(nth)
        .expect("pattern in ticker.toml");
    format!("{}{}{}", &t[..i], to, &t[i + from.len()..])
}

/// Runs `check` on `text` with the example symbols: exit code, stdout, stderr.
fn check(text: &str, format: &str) -> (i32, String, String) {
    let f = temp_file(text);
    let out = partwise()
        .args([
            "check",
            f.path().to_str().unwrap(),
            "-i",
            &example("symbols.txt"),
        ])
        .args(["--format", format])
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!err.contains("panicked"), "{err}");
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        err,
    )
}

fn json(args: &[&str]) -> Value {
    let out = output(&[args, &["--format", "json"]].concat(), 0);
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn ticker_is_copartitioned() {
    let out = partwise()
        .args([
            "check",
            &example("ticker.toml"),
            "-i",
            &example("symbols.txt"),
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("co-partition group ticker (market-updates, notifications): co-partitioned"),
        "{text}"
    );
    assert!(text.contains("10 of 10 sample keys in one slot"), "{text}");
    // No sample keys: the same verdict.
    partwise()
        .args(["check", &example("ticker.toml")])
        .assert()
        .code(0);
}

#[test]
fn check_json_fields() {
    let (code, out, _) = check(&ticker(), "json");
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["sample_keys"], 10);
    let g = &v["copartition_groups"][0];
    assert_eq!(g["name"], "ticker");
    assert_eq!(g["copartitioned"], true);
    assert_eq!(g["aligned_keys"], 10);
    assert_eq!(g["reasons"], Value::Array(vec![]));
    let f = &v["redis_families"][0];
    assert_eq!(f["shared_hash_tag"], true);
    assert_eq!(f["hash_tags"], serde_json::json!(["%s", "%s"]));
    assert_eq!(f["colocated_fraction"], 1.0);
}

/// Runs a variant that must fail: exit 1, and the reason in table and JSON.
fn breaks(text: &str, kind: &str, says: &str) -> Value {
    let (code, out, err) = check(text, "table");
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("NOT CO-"), "{out}");
    assert!(out.contains(says), "expected {says:?} in:\n{out}");
    let (code, out, _) = check(text, "json");
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["ok"], false);
    let reasons: Vec<Value> = v["copartition_groups"][0]["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .chain(v["redis_families"][0]["reasons"].as_array().unwrap())
        .cloned()
        .collect();
    // Every finding carries its fix, in the table and in JSON.
    assert!(
        reasons
            .iter()
            .all(|r| r["fix"].as_str().is_some_and(|f| !f.is_empty())),
        "a reason without a fix: {out}"
    );
    let (_, table, _) = check(text, "table");
    assert_eq!(
        table.matches("    fix: ").count(),
        reasons.len(),
        "one fix line per reason: {table}"
    );
    reasons
        .into_iter()
        .find(|r| r["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in {out}"))
}

#[test]
fn eight_partitions_fail() {
    let r = breaks(
        &variant("partitions = 6", "partitions = 8", 1),
        "partition-counts-differ",
        "partition counts differ: market-updates 6, notifications 8",
    );
    assert_eq!(r["partitions"]["notifications"], 8);
    // BBCA is 0 of 6 and 2 of 8, so at least that key differs.
    assert!(r["differ"].as_u64().unwrap() >= 1);
}

#[test]
fn librdkafka_default_partitioner_fails() {
    let r = breaks(
        &variant(
            "partitioner = \"kafkajs\"",
            "partitioner = \"librdkafka\"",
            1,
        ),
        "partitioners-disagree",
        "partitioners disagree",
    );
    assert_eq!(
        r["producers"][1]["partitioner"],
        "librdkafka:consistent_random"
    );
    assert_eq!(r["producers"][1]["topic"], "notifications");
    // The librdkafka setting that hashes as KafkaJS does, null keys spread too.
    assert!(
        r["fix"]
            .as_str()
            .unwrap()
            .contains("partitioner=murmur2_random"),
        "{r}"
    );
    assert_eq!(r["sample_keys"], 10);
    assert!(r["differ"].as_u64().unwrap() > 0);
}

#[test]
fn other_key_encodings_fail() {
    let r = breaks(
        &variant("key_format = \"string\"", "key_format = \"int32\"", 1),
        "key-encodings-differ",
        "key encodings differ",
    );
    assert_eq!(r["unencodable"], 10);
    let r = breaks(
        &variant("key_format = \"string\"", "key_format = \"avro-sr:1\"", 1),
        "key-encodings-differ",
        "writes avro-sr:1",
    );
    assert_eq!(r["unencodable"], 0);
}

#[test]
fn keyless_producer_fails() {
    breaks(
        &variant("partitioner = \"kafkajs\"", "partitioner = \"kafka-go\"", 1),
        "keyless-producer",
        "ignores keys (round-robin)",
    );
    let r = breaks(
        &variant("partitioner = \"kafkajs\"", "partitioner = \"kafka-go\"", 1),
        "keyless-producer",
        "fix: make notifications producer",
    );
    assert!(
        r["fix"].as_str().unwrap().contains("kafka.Murmur2Balancer"),
        "{r}"
    );
}

#[test]
fn untagged_redis_family_fails() {
    let text = variant("\"notif:{%s}\"", "\"notif:%s\"", 0);
    let r = breaks(&text, "no-hash-tag", "no hash tag in notif:%s");
    assert!(r["fix"].as_str().unwrap().contains("notif:{%s}"), "{r}");
    let (_, out, _) = check(&text, "json");
    let v: Value = serde_json::from_str(&out).unwrap();
    // The seed: untagged, 0 of 10 symbols co-locate; the Kafka group still holds.
    assert_eq!(v["redis_families"][0]["colocated_keys"], 0);
    assert_eq!(v["copartition_groups"][0]["copartitioned"], true);
}

#[test]
fn a_group_whose_assignor_splits_units_fails_with_the_counts_and_the_fix() {
    // The case: four KafkaJS pods under its round-robin assigner.
    let four = variant("members = 3", "members = 4", 0);
    let (code, out, _) = check(&four, "table");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("co-partitioned;"), "layout still holds: {out}");
    assert!(
        out.contains("consumer group ticker-joiner (kafkajs:roundrobin, 4 members) on ticker"),
        "{out}"
    );
    assert!(out.contains("UNITS SPLIT"), "{out}");
    assert!(
        out.contains("at 4 members: 6 of 6 partition indices split"),
        "{out}"
    );
    assert!(
        out.contains("fix: KafkaJS has only its round-robin assigner"),
        "{out}"
    );
    assert!(out.contains("1, 2, 3 or 6 members"), "{out}");
    let (code, out, _) = check(&four, "json");
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["ok"], false);
    let p = &v["placements"][0];
    assert_eq!(p["consumer_group"], "ticker-joiner");
    assert_eq!(p["kind"], "units-split");
    assert_eq!(p["splitting_counts"], serde_json::json!([4]));
    assert_eq!(
        p["counts"][0]["split_indices"],
        serde_json::json!([0, 1, 2, 3, 4, 5])
    );
    let fixes: Vec<&str> = p["fix"]["assignors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    for a in ["copartitioned", "java:range", "librdkafka:range"] {
        assert!(fixes.contains(&a), "{a} missing from {fixes:?}");
    }
    assert!(!fixes.contains(&"kafkajs:roundrobin"));
    assert_eq!(p["fix"]["member_counts"], serde_json::json!([1, 2, 3, 6]));

    // A range of counts names every count that splits.
    let (code, out, _) = check(&variant("members = 3", "members = \"1..8\"", 0), "json");
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["placements"][0]["splitting_counts"],
        serde_json::json!([4, 5, 7, 8])
    );
    // The same range under the co-partitioned assignor holds.
    let cp = variant("members = 3", "members = \"1..8\"", 0).replace(
        "assignor = \"kafkajs:roundrobin\"",
        "assignor = \"copartitioned\"",
    );
    let (code, out, _) = check(&cp, "table");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("(copartitioned, 1..8 members)"), "{out}");
    assert!(out.contains("units whole"), "{out}");
}

#[test]
fn a_pair_caught_mid_resize_gets_the_procedures_not_an_assignor() {
    // market-updates raised to 9, notifications still at 6; four members.
    let mid = variant("partitions = 6", "partitions = 9", 0)
        .replace("members = 3", "members = 4")
        .replace(
            "assignor = \"kafkajs:roundrobin\"",
            "assignor = \"copartitioned\"",
        );
    let (code, out, _) = check(&mid, "table");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("PARTITION COUNTS DIFFER"), "{out}");
    assert!(out.contains("no assignor keeps the join"), "{out}");
    assert!(!out.contains("()"), "an empty list: {out}");
    assert!(!out.contains("or run"), "a member count offered: {out}");
    assert!(out.contains("1. drain and resize in one window"), "{out}");
    assert!(
        out.contains("--alter --topic notifications --partitions 9"),
        "{out}"
    );
    assert!(out.contains("2. new topics at 9 partitions"), "{out}");
    let (code, out, _) = check(&mid, "json");
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).unwrap();
    let p = &v["placements"][0];
    assert_eq!(p["kind"], "counts-differ");
    assert_eq!(p["fix"]["assignors"], serde_json::json!([]));
    assert_eq!(p["fix"]["member_counts"], serde_json::json!([]));
    let r = &p["fix"]["realign"];
    assert_eq!(r["to"], 9);
    assert_eq!(r["raise"][0]["topic"], "notifications");
    assert_eq!(r["raise"][0]["moved"], "2/3");
    // The moved count itself is held to the partitioner in the core's tests.
    assert_eq!(r["raise"][0]["sample_keys"]["of"], 10);
    assert!(r["raise"][0]["sample_keys"]["moved"].as_u64().unwrap() <= 10);
    let kinds: Vec<&str> = r["procedures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["drain_and_resize", "new_topics"]);
}

#[test]
fn a_group_reading_half_a_unit_is_named() {
    let half = variant(
        "subscriptions = [\"market-updates\", \"notifications\"]",
        "subscriptions = [\"market-updates\"]",
        0,
    );
    let (code, out, _) = check(&half, "json");
    assert_eq!(code, 1, "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let p = &v["placements"][0];
    assert_eq!(p["kind"], "unsubscribed-topics");
    assert_eq!(p["unsubscribed"], serde_json::json!(["notifications"]));
    assert!(p["fix"]["advice"].as_str().unwrap().contains("subscribe"));
}

#[test]
fn bad_files_exit_2_naming_line_and_field() {
    let cases = [
        (
            variant("partitions = 6", "partitions = 6 six", 0),
            "line 9,",
            "partitions",
        ),
        (
            variant("key = \"symbol\"", "kee = \"symbol\"", 1),
            "line 20,",
            "topic[1].kee",
        ),
        (
            variant("partitions = 6", "partitions = 0", 1),
            "line 19,",
            "topic[1].partitions",
        ),
        (
            variant("partitioner = \"kafkajs\"", "partitioner = \"kafka.js\"", 0),
            "line 14,",
            "topic[0].producer[0].partitioner",
        ),
        (
            variant("\"notifications\"]", "\"notification\"]", 0),
            "line 31,",
            "copartition[0].topics[1]",
        ),
        (
            format!(
                "{}\n[[topic]]\nname = \"notifications\"\npartitions = 6\n",
                ticker()
            ),
            "line 51,",
            "topic[2].name",
        ),
        (
            variant("\"kafkajs:roundrobin\"", "\"kafkajs:range\"", 0),
            "line 40,",
            "consumer_group[0].assignor",
        ),
        (
            variant("members = 3", "members = \"8..1\"", 0),
            "line 41,",
            "consumer_group[0].members",
        ),
        (
            variant("members = 3", "members = \"1..100000\"", 0),
            "line 41,",
            "consumer_group[0].members",
        ),
    ];
    for (text, line, field) in cases {
        let f = temp_file(&text);
        let path = f.path().to_str().unwrap();
        let out = partwise().args(["check", path]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{field}");
        assert!(out.stdout.is_empty());
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains(&format!("{path}: {line}")) && err.contains(&format!("field '{field}'")),
            "want {path}: {line} {field}: {err}"
        );
    }
    let err = String::from_utf8(
        partwise()
            .args(["check", "/nonexistent/ticker.toml"])
            .assert()
            .code(2)
            .get_output()
            .stderr
            .clone(),
    )
    .unwrap();
    assert!(err.contains("/nonexistent/ticker.toml"), "{err}");
}

/// `resize --from/--to` became `--from-count/--to-count` (`route`'s
/// `--from/--to` are partitioner specs); the old spelling answers the same
/// and says on stderr that it goes in the next release.
#[test]
fn resize_counts_renamed_old_spelling_kept_with_a_note() {
    let new = partwise()
        .args(["resize", "--from-count", "6", "--to-count", "8", "BBCA"])
        .output()
        .unwrap();
    let old = partwise()
        .args(["resize", "--from", "6", "--to", "8", "BBCA"])
        .output()
        .unwrap();
    assert_eq!(new.status.code(), Some(0));
    assert_eq!(old.status.code(), Some(0));
    assert_eq!(new.stdout, old.stdout);
    assert!(
        new.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&new.stderr)
    );
    let note = String::from_utf8_lossy(&old.stderr);
    assert!(
        note.contains("resize --from is now --from-count")
            && note.contains("resize --to is now --to-count"),
        "{note}"
    );
}

/// `skew`'s and `salt`'s switch that reads `-i` as `KEY,COUNT` lines is
/// `--weighted` (`--counts FILE` is a file everywhere else); the old
/// spelling gives the same output with a note.
#[test]
fn weighted_switch_old_spelling_kept_with_a_note() {
    let ticks = example("ticks.csv");
    for cmd in [
        &["skew", "-p", "6"][..],
        &["salt", "-p", "6", "--consumers", "3"][..],
    ] {
        let run = |switch: &str| {
            partwise()
                .args(cmd)
                .arg("-i")
                .arg(&ticks)
                .arg(switch)
                .output()
                .unwrap()
        };
        let (new, old) = (run("--weighted"), run("--counts"));
        assert_eq!(new.status.code(), old.status.code(), "{cmd:?}");
        assert_eq!(new.stdout, old.stdout, "{cmd:?}");
        assert!(!new.stdout.is_empty(), "{cmd:?}");
        assert!(
            new.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&new.stderr)
        );
        let note = String::from_utf8_lossy(&old.stderr);
        assert!(
            note.contains(&format!("{} --counts is now --weighted", cmd[0])),
            "{note}"
        );
    }
}

#[test]
fn resize_bbca_6_to_8() {
    let v = json(&["resize", "--from", "6", "--to", "8", "BBCA"]);
    assert_eq!(v["partitioner"], "java");
    assert_eq!(v["moved_fraction"], 1.0);
    assert_eq!(
        v["moved"],
        serde_json::json!([{"key": "BBCA", "key_hex": "42424341", "from": 0, "to": 2}])
    );
    // lcm(6, 8) = 24 hash residues, of which 0..5 stay: 18/24.
    assert_eq!(v["expected_moved_fraction"], 0.75);
    assert!(v["note"]
        .as_str()
        .unwrap()
        .starts_with("existing records stay where they are"));
    // The fix: 12, a multiple of 6, moves half instead of three quarters;
    // the drain order comes with every resize that moves keys.
    let fixes: Vec<&str> = v["fix"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert!(
        fixes[0].starts_with("12 partitions (a multiple of 6) would move 1/2"),
        "{fixes:?}"
    );
    assert!(fixes.iter().any(|f| f.contains("drain first")), "{fixes:?}");
    let v = json(&["resize", "--from", "6", "--to", "6", "BBCA"]);
    assert_eq!(v["fix"], serde_json::json!([]));
}

#[test]
fn resize_expected_fractions() {
    // 6 -> 12: a hash h with h mod 12 in 0..=5 has h mod 6 = h mod 12 and stays;
    // with h mod 12 in 6..=11, h mod 6 = h mod 12 - 6 and it moves: exactly half.
    let v = json(&["resize", "--from", "6", "--to", "12"]);
    assert_eq!(v["expected_moved_fraction"], 0.5);
    assert_eq!(v["expected_moved_exact"], "1/2");
    assert_eq!(v["moved_fraction"], Value::Null);
    // N -> N moves nothing.
    let v = json(&[
        "resize",
        "--from",
        "7",
        "--to",
        "7",
        "-i",
        &example("symbols.txt"),
    ]);
    assert_eq!(v["expected_moved_fraction"], 0.0);
    assert_eq!(v["moved_fraction"], 0.0);
    assert_eq!(v["moved"], Value::Array(vec![]));
    // A partitioner that ignores keys has no expectation.
    let v = json(&["resize", "--from", "6", "--to", "12", "-P", "kafka-go"]);
    assert_eq!(v["expected_moved_fraction"], Value::Null);
}

#[test]
fn resize_many_keys_near_expectation() {
    let keys: String = (0..4000).map(|i| format!("user-{i}\n")).collect();
    let f = temp_file(&keys);
    let v = json(&[
        "resize",
        "--from",
        "6",
        "--to",
        "8",
        "-i",
        f.path().to_str().unwrap(),
    ]);
    let moved = v["moved_fraction"].as_f64().unwrap();
    assert!((moved - 0.75).abs() < 0.03, "{moved}");
    // The first 2,000 moved keys are listed, the rest counted.
    let count = v["moved_count"].as_u64().unwrap() as usize;
    assert_eq!(v["moved"].as_array().unwrap().len(), 2000);
    assert_eq!(v["moved_omitted"], count - 2000);
    assert_eq!(v["moved"][0]["key"], "user-0");
    assert_eq!(v["keys"], 4000);
    // The table lists as many, and says how to see every key.
    let path = f.path().to_str().unwrap();
    let out = output(&["resize", "--from", "6", "--to", "8", "-i", path], 0);
    let table = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        table.lines().filter(|l| l.starts_with("user-")).count(),
        2000
    );
    assert!(
        table.contains(&format!(
            "{} more moved keys not listed (partwise route -P java -p 6 -p 8 prints",
            count - 2000
        )),
        "{table}"
    );
}

#[test]
fn resize_with_topology() {
    let v = json(&[
        "resize",
        "--to",
        "12",
        "--topology",
        &example("ticker.toml"),
        "--topic",
        "notifications",
        "-i",
        &example("symbols.txt"),
    ]);
    assert_eq!(v["from"], 6);
    assert_eq!(v["partitioner"], "kafkajs");
    assert_eq!(v["key_format"], "string");
    assert_eq!(v["change_together"][0]["group"], "ticker");
    assert_eq!(
        v["change_together"][0]["topics"][0]["topic"],
        "market-updates"
    );
    assert!(
        v["fix"].as_array().unwrap().iter().any(|f| f
            .as_str()
            .unwrap()
            .starts_with("resize market-updates to 12 in the same window")),
        "{}",
        v["fix"]
    );
    // BBCA: 0 of 6, 6 of 12 (murmur2 & 0x7fffffff = 3387733778 & 0x7fffffff; mod 12 = 6).
    let bbca = v["moved"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["key"] == "BBCA")
        .unwrap();
    assert_eq!(
        (bbca["from"].as_u64(), bbca["to"].as_u64()),
        (Some(0), Some(6))
    );

    let bad = |args: &[&str], says: &str| {
        let out = partwise()
            .args(args)
            .assert()
            .code(2)
            .get_output()
            .stderr
            .clone();
        let err = String::from_utf8(out).unwrap();
        assert!(err.contains(says), "want {says:?}: {err}");
    };
    bad(
        &[
            "resize",
            "--from",
            "8",
            "--to",
            "12",
            "--topology",
            &example("ticker.toml"),
            "--topic",
            "notifications",
        ],
        "has 6 partitions",
    );
    bad(
        &[
            "resize",
            "--to",
            "12",
            "--topology",
            &example("ticker.toml"),
            "--topic",
            "alerts",
        ],
        "no topic 'alerts'",
    );
    bad(&["resize", "--from", "0", "--to", "12"], "--from");
    bad(&["resize", "--to", "12"], "--from");
    bad(
        &["resize", "--from", "6", "--to", "12", "-P", "nope"],
        "unknown partitioner",
    );
}

#[test]
fn resize_suggest() {
    let v = json(&["resize", "--suggest", "--target", "10"]);
    let s = v["suggestions"].as_array().unwrap();
    assert_eq!(s[0]["partitions"], 12);
    assert_eq!(s[0]["highly_composite"], true);
    assert_eq!(s[0]["divisors"], serde_json::json!([1, 2, 3, 4, 6, 12]));
    let v = json(&[
        "resize",
        "--suggest",
        "--target",
        "20",
        "--consumers",
        "4,6",
        "--from",
        "6",
    ]);
    let s = v["suggestions"].as_array().unwrap();
    assert!(
        s.iter()
            .all(|x| x["partitions"].as_u64().unwrap() % 12 == 0),
        "{v}"
    );
    // 24 is a multiple of 6: only 1 - 6/24 of keys move.
    let x24 = s.iter().find(|x| x["partitions"] == 24).unwrap();
    assert_eq!(x24["expected_moved_fraction"], 0.75);
    assert_eq!(
        v["target_left_out"]["not_divided_by"],
        serde_json::json!([6])
    );
    let v = json(&[
        "resize",
        "--suggest",
        "--target",
        "24",
        "--consumers",
        "4,6",
    ]);
    assert_eq!(
        v["target_left_out"],
        Value::Null,
        "24 is offered, nothing left out"
    );
    // The case: 16 is dropped because 6 does not divide it, which
    // is said; the current count is marked; fractions are decimals.
    let args = [
        "resize",
        "--suggest",
        "--target",
        "16",
        "--consumers",
        "4,6",
        "--from",
        "12",
    ];
    let v = json(&args);
    assert_eq!(
        v["target_left_out"],
        serde_json::json!({"partitions": 16, "not_divided_by": [6]})
    );
    let s = v["suggestions"].as_array().unwrap();
    let x12 = s.iter().find(|x| x["partitions"] == 12).unwrap();
    assert_eq!(x12["current"], true);
    assert_eq!(x12["expected_moved_fraction"], 0.0);
    assert!(s.iter().filter(|x| x["current"] == true).count() == 1);
    let out = partwise().args(args).output().unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("12 (current)"), "{table}");
    assert!(table.contains("not suggested: 16, the target"), "{table}");
    assert!(
        table.contains("0.0000") && !table.contains("0/1"),
        "{table}"
    );
    partwise()
        .args(["resize", "--suggest", "--target", "0"])
        .assert()
        .code(2);
    partwise()
        .args(["resize", "--suggest", "--target", "12", "--consumers", "x"])
        .assert()
        .code(2);
}

/// A sample key a producer cannot place (its priority rule reserves a
/// partition the topic lacks; a key that is not UTF-8 under `string`) is a
/// finding, exit 1, not "co-partitioned" (issue 19, item 5).
#[test]
fn sample_keys_a_producer_cannot_place_fail_the_check() {
    let ticker = ticker();
    let priority = ticker.replace(
        "partitioner = \"kafkajs\"",
        "partitioner = \"priority:prefix=VIP_,reserved=9\"",
    );
    assert_ne!(priority, ticker, "the ticker names kafkajs producers");
    for (text, keys, why) in [
        (priority, &b"VIP_1\nBBCA\n"[..], "rejected"),
        (ticker.clone(), &b"BBCA\n\xff\xfe\n"[..], "unencodable"),
    ] {
        let f = temp_file(text.as_bytes());
        let k = temp_file(keys);
        let out = partwise()
            .args(["check", f.path().to_str().unwrap(), "-i"])
            .arg(k.path())
            .args(["--format", "json"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{why}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let found = v.to_string();
        assert!(
            found.contains("\"kind\":\"sample-keys-unplaced\""),
            "{why}: {found}"
        );
        assert!(
            found.contains(&format!("\"why\":\"{why}\"")),
            "{why}: {found}"
        );
    }
}
