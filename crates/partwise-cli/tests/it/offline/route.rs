//! `partwise route`: where keys land under each client's partitioner, its
//! fields, exit codes and messages.

use crate::common::{
    fails, fails_with, key_rows, ndjson, ndjson_exit, partwise, repo, temp_file, SYMBOLS,
};
use serde_json::Value;

#[test]
fn seed_bbca_is_0_of_6_and_2_of_8() {
    let rows = ndjson(&["route", "BBCA", "-p", "6", "-p", "8"]);
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["partitioner"], "java");
    assert_eq!(
        (
            rows[0]["partitions"].as_u64(),
            rows[0]["partition"].as_u64()
        ),
        (Some(6), Some(0))
    );
    assert_eq!(
        (
            rows[1]["partitions"].as_u64(),
            rows[1]["partition"].as_u64()
        ),
        (Some(8), Some(2))
    );
}

#[test]
fn ndjson_row_fields() {
    let rows = ndjson(&["route", "BBCA", "-p", "6"]);
    let keys: Vec<&str> = rows[0]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(
        keys,
        ["key", "key_hex", "partitioner", "partitions", "partition"]
    );
    assert_eq!(rows[0]["key"], "BBCA");
    assert_eq!(rows[0]["key_hex"], "42424341");
}

#[test]
fn random_placements_are_null_not_invented() {
    let rows = ndjson_exit(
        &[
            "route",
            "",
            "-p",
            "6",
            "-P",
            "librdkafka",
            "-P",
            "librdkafka:murmur2_random",
        ],
        1,
    );
    assert_eq!(rows[0]["partitioner"], "librdkafka:consistent_random");
    assert_eq!(rows[0]["partition"], Value::Null);
    assert_eq!(rows[0]["random"], true);
    assert_eq!(rows[1]["partition"].as_u64(), Some(0x106e_08d9 % 6));
    assert!(rows[1].get("random").is_none());
}

#[test]
fn all_marks_disagreement() {
    let rows = key_rows(ndjson_exit(&["route", "BBCA", "-p", "6", "-P", "all"], 1));
    assert!(rows.len() >= 26);
    assert!(rows.iter().all(|r| r["clients_agree"] == false));
    // One partition, every murmur2 client agrees.
    let rows = ndjson(&[
        "route",
        "BBCA",
        "-p",
        "6",
        "-P",
        "java",
        "-P",
        "kafkajs",
        "-P",
        "sarama:murmur2",
    ]);
    let agreement = rows.last().unwrap().clone();
    assert_eq!(agreement["type"], "agreement");
    assert_eq!(agreement["differ"], 0);
    assert_eq!(
        agreement["groups"],
        serde_json::json!([["java", "kafkajs", "sarama:murmur2"]])
    );
    assert!(key_rows(rows).iter().all(|r| r["clients_agree"] == true));
    let table = partwise()
        .args(["route", "BBCA", "-p", "6", "-P", "all"])
        .output()
        .unwrap();
    assert!(String::from_utf8(table.stdout)
        .unwrap()
        .contains("CLIENTS DISAGREE"));
}

/// The partition each real client put `key` on at `n` partitions, from a
/// vector file of tests/vectors.
fn vector(file: &str, key: &str, n: u64) -> u64 {
    let path = repo().join("tests/vectors").join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["key"] == key && v["partitions"] == n)
        .unwrap_or_else(|| panic!("{key} at {n} not in {file}"))["partition"]
        .as_u64()
        .unwrap()
}

#[test]
fn two_clients_get_a_pairwise_total_and_exit_1_when_they_disagree() {
    let f = temp_file(SYMBOLS.join("\n").as_bytes());
    let path = f.path().to_str().unwrap();
    let java = "reference/java_builtin_partitioner_murmur2.jsonl";
    let sarama = "generated/sarama_hash_partitioner.jsonl";
    let differ = SYMBOLS
        .iter()
        .filter(|k| vector(java, k, 12) != vector(sarama, k, 12))
        .count();
    assert!(differ > 0);
    let out = partwise()
        .args([
            "route", "-i", path, "-p", "12", "-P", "java", "-P", "sarama",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let pct = 100.0 * differ as f64 / SYMBOLS.len() as f64;
    let line =
        format!("java vs sarama at n=12: {differ} of 10 keys ({pct:.1}%) on different partitions");
    assert!(text.contains(&line), "want {line:?} in {text}");
    // --only-differ prints the keys that differ and nothing else.
    let rows = key_rows(ndjson_exit(
        &[
            "route",
            "-i",
            path,
            "-p",
            "12",
            "-P",
            "java",
            "-P",
            "sarama",
            "--only-differ",
        ],
        1,
    ));
    assert_eq!(rows.len(), 2 * differ);
    assert!(rows.iter().all(|r| r["clients_agree"] == false));
    // Clients that agree exit 0, with the same total line.
    let out = partwise()
        .args([
            "route", "-i", path, "-p", "12", "-P", "java", "-P", "kafkajs",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .contains("java vs kafkajs at n=12: 0 of 10 keys (0.0%) on different partitions"));
}

#[test]
fn a_migration_names_the_keys_that_move_and_the_setting_that_moves_none() {
    let f = temp_file(SYMBOLS.join("\n").as_bytes());
    let path = f.path().to_str().unwrap();
    let java = "reference/java_builtin_partitioner_murmur2.jsonl";
    let rdk = "generated/librdkafka_consistent_random.jsonl";
    let rows = ndjson_exit(
        &[
            "route",
            "-i",
            path,
            "-p",
            "12",
            "--from",
            "java",
            "--to",
            "librdkafka",
        ],
        1,
    );
    let (summary, keys): (Vec<Value>, Vec<Value>) =
        rows.into_iter().partition(|r| r.get("type").is_some());
    assert_eq!(keys.len(), SYMBOLS.len());
    for r in &keys {
        let k = r["key"].as_str().unwrap();
        assert_eq!(r["from"].as_u64(), Some(vector(java, k, 12)), "{k}");
        assert_eq!(r["to"].as_u64(), Some(vector(rdk, k, 12)), "{k}");
        assert_eq!(r["moved"], vector(java, k, 12) != vector(rdk, k, 12), "{k}");
    }
    let moved = SYMBOLS
        .iter()
        .filter(|k| vector(java, k, 12) != vector(rdk, k, 12))
        .count();
    let s = &summary[0];
    assert_eq!(s["type"], "migration");
    assert_eq!(s["moved"], moved);
    let keep: Vec<&str> = s["move_nothing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(keep.contains(&"librdkafka:murmur2_random"), "{keep:?}");
    assert!(!keep.contains(&"librdkafka:consistent_random"));
    assert!(
        s["fix"]
            .as_str()
            .unwrap()
            .contains("partitioner=murmur2_random"),
        "{s}"
    );
    // The partitioner it names moves nothing, exit 0.
    let rows = ndjson(&[
        "route",
        "-i",
        path,
        "-p",
        "12",
        "--from",
        "java",
        "--to",
        "librdkafka:murmur2_random",
    ]);
    let s = rows.last().unwrap();
    assert_eq!(s["moved"], 0);
    assert_eq!(s["fix"], Value::Null);
    assert!(fails(&["route", "x", "-p", "6", "--from", "java"]).contains("--to"));
    assert!(fails(&["route", "x", "-p", "6", "--from", "java", "--to", "nope"]).contains("--to"));
}

#[test]
fn null_key_behaviour() {
    let rows = key_rows(ndjson_exit(
        &["route", "--null-key", "-p", "12", "-P", "all"],
        1,
    ));
    let get = |spec: &str| {
        rows.iter()
            .find(|r| r["partitioner"] == spec)
            .unwrap()
            .clone()
    };
    assert_eq!(get("java")["behaviour"], "sticky");
    assert_eq!(get("kafkajs")["behaviour"], "round-robin");
    assert_eq!(get("kafka-python")["behaviour"], "random");
    assert_eq!(get("librdkafka:consistent")["partition"].as_u64(), Some(0));
    assert_eq!(
        get("librdkafka:murmur2")["partition"].as_u64(),
        Some(0x106e_08d9 % 12)
    );
    assert!(rows
        .iter()
        .all(|r| r["null_key"] == true && r["key"].is_null()));
}

#[test]
fn summary_counts() {
    let f = temp_file(SYMBOLS.join("\n").as_bytes());
    let path = f.path().to_str().unwrap();
    let rows = ndjson(&[
        "route",
        "-i",
        path,
        "-p",
        "6",
        "--summary",
        "-P",
        "java",
        "-P",
        "librdkafka",
    ]);
    assert_eq!(rows.len(), 2);
    let keys: Vec<&str> = rows[0]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert!(keys.starts_with(&["partitioner", "partitions"]) && keys.contains(&"counts"));
    let counts: Vec<u64> = rows[0]["counts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(counts.len(), 6);
    assert_eq!(counts.iter().sum::<u64>(), 10);
    // The summary agrees with routing key by key.
    let single = ndjson(&["route", "-i", path, "-p", "6"]);
    for (p, c) in counts.iter().enumerate() {
        let n = single
            .iter()
            .filter(|r| r["partition"].as_u64() == Some(p as u64))
            .count() as u64;
        assert_eq!(n, *c);
    }
}

#[test]
fn summary_counts_sticky_keys_apart() {
    let f = temp_file(b"a\n\nb\n");
    let rows = ndjson(&[
        "route",
        "-i",
        f.path().to_str().unwrap(),
        "-p",
        "3",
        "--summary",
        "-P",
        "librdkafka",
    ]);
    assert_eq!(rows[0]["keys"], 3);
    assert_eq!(rows[0]["not_fixed"], 1);
}

#[test]
fn input_file_crlf_hex_base64() {
    let f = temp_file(b"BBCA\r\nANTM\r\n");
    let rows = ndjson(&["route", "-i", f.path().to_str().unwrap(), "-p", "6"]);
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["key_hex"], "42424341");
    let h = temp_file(b"42424341\nff00\n");
    let rows = ndjson(&[
        "route",
        "-i",
        h.path().to_str().unwrap(),
        "-p",
        "6",
        "--key-format",
        "hex",
    ]);
    assert_eq!(rows[0]["key"], "BBCA");
    assert_eq!(rows[0]["partition"], 0);
    assert_eq!(rows[1]["key"], Value::Null);
    assert_eq!(rows[1]["key_hex"], "ff00");
    let b = temp_file(b"QkJDQQ==\n");
    let rows = ndjson(&[
        "route",
        "-i",
        b.path().to_str().unwrap(),
        "-p",
        "6",
        "--key-format",
        "base64",
    ]);
    assert_eq!(rows[0]["key_hex"], "42424341");
}

#[test]
fn stdin_input() {
    let out = partwise()
        .args(["route", "-i", "-", "-p", "8", "--format", "ndjson"])
        .write_stdin("BBCA\n")
        .output()
        .unwrap();
    let row: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(row["partition"], 2);
}

#[test]
fn serializer_formats() {
    let rows = ndjson(&["route", "42", "-p", "6", "--key-format", "int32"]);
    assert_eq!(rows[0]["key"], "42");
    assert_eq!(rows[0]["key_hex"], "0000002a");
    let rows = ndjson(&["route", "BBCA", "-p", "6", "--key-format", "avro-sr:7"]);
    assert_eq!(rows[0]["key_hex"], "000000000708".to_string() + "42424341");
    let rows = ndjson(&["route", "-1", "-p", "6", "--key-format", "int64"]);
    assert_eq!(rows[0]["key_hex"], "ffffffffffffffff");
}

#[test]
fn bad_input_exits_2_naming_the_problem() {
    assert!(fails(&["route", "x", "-p", "0"]).contains("'0'"));
    assert!(fails(&["route", "x", "-p", "-4"]).contains("negative"));
    assert!(fails(&["route", "x", "-p", "six"]).contains("'six'"));
    assert!(fails(&["route", "x", "-p", "99999999999"]).contains("99999999999"));
    assert!(fails(&["route", "x", "-p", "6", "-P", "java:nope"]).contains("java:nope"));
    // A known partitioner with a bad argument: the argument is what is wrong.
    let err = fails(&[
        "route",
        "x",
        "-p",
        "6",
        "-P",
        "priority:prefix=VIP_,reserved=x",
    ]);
    assert!(
        err.contains("invalid priority spec 'priority:prefix=VIP_,reserved=x': reserved partition 'x' is not a partition number"),
        "{err}"
    );
    assert!(!err.contains("unknown partitioner"), "{err}");
    assert!(fails(&["route", "x", "-p", "6", "--key-format", "json"]).contains("json"));
    assert!(fails(&["route", "x", "-p", "6", "--key-format", "int32"]).contains("32-bit integer"));
    assert!(fails(&["route", "-p", "6"]).contains("no keys"));
    assert!(fails(&["route", "-p", "6", "-i", "/nonexistent/keys.txt"])
        .contains("/nonexistent/keys.txt"));
    let f = temp_file(b"4242\n42\nxyz\n");
    let err = fails(&[
        "route",
        "-i",
        f.path().to_str().unwrap(),
        "-p",
        "6",
        "--key-format",
        "hex",
    ]);
    assert!(err.contains("line 3"), "{err}");
    let f = temp_file(b"QkJDQQ==\n!!!\n");
    let err = fails(&[
        "route",
        "-i",
        f.path().to_str().unwrap(),
        "-p",
        "6",
        "--key-format",
        "base64",
        "--summary",
    ]);
    assert!(err.contains("line 2"), "{err}");
    let f = temp_file(b"1\n2\nthree\n");
    let err = fails(&[
        "slot",
        "-i",
        f.path().to_str().unwrap(),
        "--key-format",
        "int32",
    ]);
    assert!(err.contains("line 3"), "{err}");
    fails(&["route", "x"]);
}

/// The CLI end to end against a real client's vectors: keys fed as hex lines.
#[test]
fn cli_matches_vectors() {
    let dir = repo().join("tests/vectors/reference");
    for (file, spec) in [
        ("java_builtin_partitioner_murmur2", "java"),
        ("librdkafka_consistent_random", "librdkafka"),
        ("sarama_hash_partitioner", "sarama"),
    ] {
        let text = std::fs::read_to_string(dir.join(format!("{file}.jsonl"))).unwrap();
        let vs: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|v| v["partitions"] == 12 && v["key_hex"].is_string())
            .collect();
        let input: String = vs
            .iter()
            .map(|v| format!("{}\n", v["key_hex"].as_str().unwrap()))
            .collect();
        let f = temp_file(input.as_bytes());
        let rows = ndjson(&[
            "route",
            "-i",
            f.path().to_str().unwrap(),
            "-p",
            "12",
            "-P",
            spec,
            "--key-format",
            "hex",
        ]);
        assert_eq!(rows.len(), vs.len());
        for (r, v) in rows.iter().zip(&vs) {
            assert_eq!(r["key_hex"], v["key_hex"]);
            assert_eq!(r["partition"], v["partition"], "{spec} {}", v["key_hex"]);
        }
    }
}

/// Arbitrary bytes in a key file never crash the reader: exit 0 or 2, never a panic.
#[test]
fn random_key_files_never_panic() {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for case in 0..48 {
        let len = (next() % 300) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|_| match next() % 6 {
                0 => b'\n',
                1 => b'\r',
                2 => b"0123456789abcdefABCDEF+/="[(next() % 25) as usize],
                _ => next() as u8,
            })
            .collect();
        let f = temp_file(&bytes);
        let formats = "utf8 hex base64 string int32 int64 avro-sr:3";
        let format = formats.split(' ').nth(case % 7).unwrap();
        for cmd in [&["route", "-p", "7", "--summary"][..], &["slot"][..]] {
            let out = partwise()
                .args(cmd)
                .args([
                    "-i",
                    f.path().to_str().unwrap(),
                    "--key-format",
                    format,
                    "--format",
                    "ndjson",
                ])
                .output()
                .unwrap();
            let code = out.status.code();
            assert!(
                code == Some(0) || code == Some(2),
                "{format}: {code:?} {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// A priority spec that reserves every partition is legal (the seed's class
/// sends every other key to partition 0) but almost surely a mistake: route
/// answers and warns (issue 19, item 7).
#[test]
fn a_priority_spec_reserving_every_partition_warns() {
    let spec = "priority:prefix=VIP_,reserved=0-5";
    let out = partwise()
        .args(["route", "BBCA", "-p", "6", "-p", "8", "-P", spec])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("reserves all 6 partitions"), "{err}");
    assert!(!err.contains("reserves all 8"), "{err}");
}

#[test]
fn priority_partitioner_from_the_cli() {
    let out = partwise()
        .args([
            "route",
            "VIP_7",
            "user-1",
            "-p",
            "6",
            "-P",
            "priority:prefix=VIP_,reserved=0",
            "--format",
            "ndjson",
        ])
        .output()
        .unwrap();
    let rows: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows[0]["partition"], 0);
    assert_ne!(rows[1]["partition"], 0);
    fails_with(
        &["route", "x", "-p", "6", "-P", "priority:prefix=VIP_"],
        "reserved",
    );
}
