//! `partwise assign`: fields, exit codes, co-location matrix, sweep, owned input.

use crate::common::{fails_with as fails, partwise, repo};
use serde_json::Value;
use std::io::Write;

fn json(args: &[&str]) -> (Option<i32>, Value) {
    let out = partwise()
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code(), v)
}

#[test]
fn roundrobin_splits_four_members_over_six() {
    let (code, v) = json(&[
        "assign",
        "--assignor",
        "java:roundrobin",
        "--members",
        "4",
        "--topic",
        "orders:6",
        "--topic",
        "payments:6",
    ]);
    assert_eq!(code, Some(1), "splits are findings");
    assert_eq!(v["assignor"], "java:roundrobin");
    assert_eq!(
        v["members"],
        serde_json::json!(["m00", "m01", "m02", "m03"])
    );
    assert_eq!(v["split_count"], 6);
    assert_eq!(v["split_indices"], serde_json::json!([0, 1, 2, 3, 4, 5]));
    // orders 0..6 then payments 0..6 dealt in turn: m00 gets orders 0, 4 and payments 2.
    assert_eq!(
        v["assignment"]["m00"],
        serde_json::json!([["orders", 0], ["orders", 4], ["payments", 2]])
    );
}

#[test]
fn range_and_copartitioned_colocate() {
    for spec in [
        "java:range",
        "copartitioned",
        "kip848:range",
        "librdkafka:range",
    ] {
        let (code, v) = json(&[
            "assign",
            "-a",
            spec,
            "-m",
            "4",
            "-t",
            "orders:6",
            "-t",
            "payments:6",
        ]);
        assert_eq!(code, Some(0), "{spec}");
        assert_eq!(v["split_count"], 0, "{spec}");
        let total: usize = v["assignment"]
            .as_object()
            .unwrap()
            .values()
            .map(|l| l.as_array().unwrap().len())
            .sum();
        assert_eq!(total, 12, "{spec}");
    }
}

#[test]
fn sweep_shows_roundrobin_splitting_for_some_sizes_only() {
    let out = partwise()
        .args([
            "assign",
            "-a",
            "java:roundrobin",
            "--sweep",
            "1..6",
            "-t",
            "a:6",
            "-t",
            "b:6",
            "--format",
            "ndjson",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let rows: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let splits: Vec<u64> = rows
        .iter()
        .map(|r| r["split_count"].as_u64().unwrap())
        .collect();
    // Co-located exactly when the member count divides 6.
    assert_eq!(splits, vec![0, 0, 0, 6, 6, 0]);
}

#[test]
fn table_has_the_matrix() {
    let out = partwise()
        .args([
            "assign",
            "-a",
            "java:range",
            "--member",
            "b",
            "--member",
            "a",
            "-t",
            "x:2",
            "-t",
            "y:2",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("INDEX  x  y  CO-LOCATED"), "{text}");
    assert!(text.contains("0      a  a  yes"), "{text}");
    assert!(text.contains("0 of 2 indices split"), "{text}");
}

#[test]
fn owned_file_makes_copartitioned_sticky() {
    let (_, first) = json(&[
        "assign",
        "-a",
        "copartitioned",
        "-m",
        "3",
        "-t",
        "a:6",
        "-t",
        "b:6",
    ]);
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(first.to_string().as_bytes()).unwrap();
    // m02 leaves: only its 4 partitions move.
    let path = f.path().to_str().unwrap();
    let (code, second) = json(&[
        "assign",
        "-a",
        "copartitioned",
        "--member",
        "m00",
        "--member",
        "m01",
        "-t",
        "a:6",
        "-t",
        "b:6",
        "--owned",
        path,
    ]);
    assert_eq!(code, Some(0));
    for m in ["m00", "m01"] {
        for tp in first["assignment"][m].as_array().unwrap() {
            assert!(
                second["assignment"][m].as_array().unwrap().contains(tp),
                "{m} lost {tp}"
            );
        }
    }
}

#[test]
fn bad_input_names_the_flag() {
    fails(
        &["assign", "-a", "java:nope", "-m", "2", "-t", "a:3"],
        "--assignor",
    );
    fails(
        &["assign", "-a", "java:range", "-m", "0", "-t", "a:3"],
        "--members",
    );
    fails(
        &["assign", "-a", "java:range", "-m", "2", "-t", "a"],
        "--topic",
    );
    fails(
        &["assign", "-a", "java:range", "-m", "2", "-t", "a:0"],
        "--topic",
    );
    fails(&["assign", "-a", "java:range", "-t", "a:3"], "--members");
    fails(
        &["assign", "-a", "java:range", "--sweep", "5..2", "-t", "a:3"],
        "--sweep",
    );
    fails(
        &[
            "assign",
            "-a",
            "java:range",
            "--member",
            "x",
            "--member",
            "x",
            "-t",
            "a:3",
        ],
        "given twice",
    );
    fails(
        &[
            "assign",
            "-a",
            "java:range",
            "-m",
            "2",
            "-t",
            "a:3",
            "--owned",
            "/nonexistent/owned.json",
        ],
        "--owned",
    );
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(b"{\"m00\": [[\"a\"]]}").unwrap();
    fails(
        &[
            "assign",
            "-a",
            "copartitioned",
            "-m",
            "2",
            "-t",
            "a:3",
            "--owned",
            f.path().to_str().unwrap(),
        ],
        "--owned",
    );
}

#[test]
fn a_split_comes_with_the_assignors_and_counts_that_avoid_it() {
    let args = [
        "assign",
        "-a",
        "kafkajs:roundrobin",
        "-m",
        "4",
        "-t",
        "market-updates:6",
        "-t",
        "notifications:6",
    ];
    let (code, v) = json(&args);
    assert_eq!(code, Some(1));
    let fix = &v["fix"];
    assert_eq!(fix["member_counts"], serde_json::json!([1, 2, 3, 6]));
    let specs: Vec<&str> = fix["assignors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(
        specs.contains(&"copartitioned") && specs.contains(&"java:range"),
        "{specs:?}"
    );
    // Each named assignor really keeps the indices whole at 4 members.
    for spec in &specs {
        let mut a = args.to_vec();
        a[2] = spec;
        let (code, v) = json(&a);
        assert_eq!(
            (code, v["split_count"].as_u64()),
            (Some(0), Some(0)),
            "{spec}"
        );
        assert_eq!(v["fix"], Value::Null);
    }
    let out = partwise().args(args).output().unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table.contains("fix: KafkaJS has only its round-robin assigner"),
        "{table}"
    );
}

/// `partwise assign` on the equal-subscription leader calls of real
/// kafka-clients groups on Apache Kafka (`tests/vectors/assignors/java_live_*.jsonl`):
/// the members in the leader's order, the topics, and for the sticky
/// assignors what each member owned (`--owned`) give the live assignment.
#[test]
fn assign_reproduces_live_java_groups() {
    let dir = repo().join("tests/vectors/assignors");
    let mut checked = 0;
    for (file, spec) in [
        ("java_live_range.jsonl", "java:range"),
        ("java_live_roundrobin.jsonl", "java:roundrobin"),
        ("java_live_sticky.jsonl", "java:sticky"),
        (
            "java_live_cooperative_sticky.jsonl",
            "java:cooperative-sticky",
        ),
    ] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let c: Value = serde_json::from_str(line).unwrap();
            let members = c["members"].as_array().unwrap();
            let all: Vec<&Value> = members.iter().map(|m| &m["topics"]).collect();
            if all.iter().any(|t| *t != all[0]) {
                continue; // `assign` subscribes every member to every topic
            }
            let mut args: Vec<String> = vec!["assign".into(), "-a".into(), spec.into()];
            for m in members {
                args.push("--member".into());
                args.push(m["member_id"].as_str().unwrap().into());
            }
            for (t, n) in c["topics"].as_object().unwrap() {
                args.push("-t".into());
                args.push(format!("{t}:{n}"));
            }
            let mut owned = serde_json::Map::new();
            for m in members {
                let o = m
                    .get("member_data")
                    .map_or(&m["owned_partitions"], |d| &d["partitions"]);
                owned.insert(m["member_id"].as_str().unwrap().into(), o.clone());
            }
            let mut f = tempfile::NamedTempFile::new().unwrap();
            writeln!(f, "{}", Value::Object(owned)).unwrap();
            args.push("--owned".into());
            args.push(f.path().display().to_string());
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            let (_, v) = json(&refs);
            assert_eq!(
                v["assignment"], c["assignment"],
                "{file}: {} event {} call {}",
                c["scenario"], c["event"], c["call"]
            );
            checked += 1;
        }
    }
    assert!(checked >= 28, "{checked} equal-subscription calls");
}

/// `skew --consumers` and `assign` must name members alike at any count:
/// past 100 members a fixed two-digit padding would sort `m100` before `m11`
/// and hand range/roundrobin shares to different names in the two commands.
#[test]
fn skew_and_assign_name_150_members_alike() {
    let mut keys = tempfile::NamedTempFile::new().unwrap();
    for i in 0..3000 {
        writeln!(keys, "key-{i}").unwrap();
    }
    let path = keys.path().to_str().unwrap();
    for assignor in ["java:range", "java:roundrobin"] {
        let (code, assign) = json(&["assign", "-a", assignor, "-m", "150", "-t", "t:300"]);
        assert_eq!(code, Some(0), "{assignor}: {assign}");
        let (code, skew) = json(&[
            "skew",
            "-i",
            path,
            "-p",
            "300",
            "--consumers",
            "150",
            "--assignor",
            assignor,
        ]);
        assert!(matches!(code, Some(0 | 1)), "{assignor}: {skew}");
        let members = skew["consumers"]["members"].as_array().unwrap();
        assert_eq!(members.len(), 150);
        assert_eq!(assign["members"].as_array().unwrap().len(), 150);
        for m in members {
            let name = m["member"].as_str().unwrap();
            let from_assign: Vec<u64> = assign["assignment"][name]
                .as_array()
                .unwrap_or_else(|| panic!("{assignor}: assign has no member {name}"))
                .iter()
                .map(|tp| tp[1].as_u64().unwrap())
                .collect();
            let from_skew: Vec<u64> = m["partitions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_u64().unwrap())
                .collect();
            assert_eq!(from_skew, from_assign, "{assignor}: member {name}");
        }
        assert!(members.iter().any(|m| m["member"] == "m149"), "{assignor}");
    }
}

/// `--owned` claims the group cannot have are never silent (issue 19, item
/// 7): a claim of an unknown topic is dropped; a claim past a topic's count
/// is dropped by every assignor but Java's sticky ones, which keep it as
/// kafka-clients does and say what the Java leader then does.
#[test]
fn owned_partitions_the_group_cannot_have_are_warned_about() {
    let f =
        crate::common::temp_file(r#"{"m00": [["a", 7], ["zz", 1], ["a", 1]], "m01": [["a", 1]]}"#);
    let run = |assignor: &str| {
        partwise()
            .args([
                "assign", "-t", "a:6", "-t", "b:6", "-m", "2", "-a", assignor,
            ])
            .arg("--owned")
            .arg(f.path())
            .output()
            .unwrap()
    };
    let out = run("java:range");
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8(out.stderr).unwrap();
    for w in [
        "'m00' owns a:7, but a has 6 partitions (java:range drops the claim)",
        "'m00' owns zz:1, but there is no topic 'zz'",
        "a:1 is owned by both 'm00' and 'm01'",
    ] {
        assert!(err.contains(w), "{w}: {err}");
    }
    let out = run("java:sticky");
    assert_eq!(
        out.status.code(),
        Some(1),
        "what the Java leader does is a finding"
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("'m00' owns a:7, but a has 6 partitions (java:sticky keeps the claim, as kafka-clients does)"),
        "{err}"
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("java-leader-"), "{text}");
}

/// `assign --group FILE` became `--group-file FILE` (`-g/--group` is a group
/// id in `kafka`); the old spelling answers the same and says on stderr that
/// it goes in the next release.
#[test]
fn group_file_old_spelling_kept_with_a_note() {
    let path = repo().join("tests/vectors/assignors/java_group_cases.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap();
    let c: Value = serde_json::from_str(line).unwrap();
    let spec = c["assignor"].as_str().unwrap();
    let run = |flag: &str| {
        partwise()
            .args(["assign", "-a", spec, flag, "-", "--format", "json"])
            .write_stdin(c["group"].to_string())
            .output()
            .unwrap()
    };
    let (new, old) = (run("--group-file"), run("--group"));
    assert_eq!(new.status.code(), old.status.code());
    assert_eq!(new.stdout, old.stdout);
    assert!(!new.stdout.is_empty());
    assert!(!String::from_utf8_lossy(&new.stderr).contains("note:"));
    let note = String::from_utf8_lossy(&old.stderr);
    assert!(
        note.contains("assign --group is now --group-file"),
        "{note}"
    );
}

/// `assign --group-file` replays every known answer of kafka-clients 4.4.0's
/// Range, RoundRobin, Sticky and CooperativeSticky assignors on groups with
/// unequal subscriptions, mixed generations and claims past a topic's count
/// (`tests/vectors/regen/java-groups`): the same assignment, including the
/// partitions that do not exist and those given twice, or the exception, and
/// a finding for each.
#[test]
fn group_file_replays_kafka_clients_4_4_0() {
    let path = repo().join("tests/vectors/assignors/java_group_cases.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut seen = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let c: Value = serde_json::from_str(line).unwrap();
        let spec = c["assignor"].as_str().unwrap();
        let what = format!("{} {spec}", c["case"]);
        let out = partwise()
            .args([
                "assign",
                "-a",
                spec,
                "--group-file",
                "-",
                "--format",
                "json",
            ])
            .write_stdin(c["group"].to_string())
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{what}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        let kinds: Vec<&str> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["kind"].as_str().unwrap())
            .collect();
        if c["error"].is_null() {
            let sorted = |a: &Value| -> std::collections::BTreeMap<String, Vec<(String, u64)>> {
                a.as_object()
                    .unwrap()
                    .iter()
                    .map(|(m, ps)| {
                        let mut l: Vec<(String, u64)> = ps
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|p| (p[0].as_str().unwrap().to_string(), p[1].as_u64().unwrap()))
                            .collect();
                        l.sort();
                        (m.clone(), l)
                    })
                    .collect()
            };
            assert_eq!(sorted(&v["assignment"]), sorted(&c["assignment"]), "{what}");
            let counts: std::collections::HashMap<&str, u64> = c["group"]["topics"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    (
                        t["name"].as_str().unwrap(),
                        t["partitions"].as_u64().unwrap(),
                    )
                })
                .collect();
            let missing = sorted(&c["assignment"])
                .values()
                .flatten()
                .filter(|(t, p)| *p >= counts[t.as_str()])
                .count();
            let said = kinds
                .iter()
                .filter(|k| **k == "java-leader-assigns-missing-partition")
                .count();
            assert_eq!(said, missing, "{what}");
        } else {
            assert_eq!(out.status.code(), Some(1), "{what}: a throw is a finding");
            assert_eq!(v["assignment"], Value::Null, "{what}");
            assert_eq!(v["exception"], c["error"], "{what}");
            assert_eq!(kinds, ["java-leader-throws"], "{what}");
        }
        seen += 1;
    }
    assert_eq!(seen, 244);
}

/// A bad group file is exit 2, naming the file and the field.
#[test]
fn group_file_errors_name_the_file_and_field() {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    write!(
        f,
        r#"{{"topics": [{{"name": "a", "partitions": 2}}], "members": [{{"id": "m0", "subscription": ["a"], "owned_partitions": [["a", ["x"]]]}}]}}"#
    )
    .unwrap();
    let p = f.path().to_str().unwrap().to_string();
    fails(
        &["assign", "-a", "java:sticky", "--group-file", &p],
        &format!("--group-file {p}: invalid members[0].owned_partitions[0][1][0]"),
    );
    fails(
        &[
            "assign",
            "-a",
            "java:sticky",
            "--group-file",
            "/nonexistent/g.json",
        ],
        "/nonexistent/g.json",
    );
}

#[test]
fn topics_of_different_counts_get_the_procedures_not_an_assignor() {
    let args = [
        "assign",
        "-a",
        "java:range",
        "-m",
        "4",
        "-t",
        "market-updates:9",
        "-t",
        "notifications:6",
    ];
    let (code, v) = json(&args);
    assert_eq!(code, Some(1));
    let fix = &v["fix"];
    assert_eq!(fix["assignors"], serde_json::json!([]));
    assert_eq!(fix["member_counts"], serde_json::json!([]));
    assert!(
        fix["advice"]
            .as_str()
            .unwrap()
            .contains("no assignor keeps the join"),
        "{fix}"
    );
    assert_eq!(fix["realign"]["to"], 9);
    assert_eq!(fix["realign"]["raise"][0]["topic"], "notifications");
}

/// Sarama's sticky strategies are simulated over several runs: `assign`
/// says they are not deterministic, names the release, and at 3 members on
/// two 6-partition topics some run splits a unit (every one of the
/// library's 100 calls did, `sarama_sticky_cases.jsonl`).
#[test]
fn sarama_sticky_strategies_are_simulated_over_runs() {
    for spec in ["sarama:sticky", "sarama:cooperative-sticky"] {
        let (code, v) = json(&[
            "assign",
            "-a",
            spec,
            "-m",
            "3",
            "-t",
            "market-updates:6",
            "-t",
            "notifications:6",
        ]);
        assert_eq!(code, Some(1), "{spec}");
        assert_eq!(v["assignor"], spec);
        assert_eq!(v["library"], "Sarama 1.61.1");
        assert_eq!(v["deterministic"], false);
        assert!(v["split_runs"].as_u64().unwrap() > 0, "{v}");
        assert!(v["outcomes"].as_array().unwrap().len() > 1, "{v}");
    }
    // assign --help lists every spec, with its client and whether it is
    // deterministic.
    let out = partwise().args(["assign", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for a in partwise::assign::Assignor::every() {
        assert!(
            help.contains(&format!("{} [{}", a.spec(), a.client())),
            "{a}: {help}"
        );
    }
    assert!(
        help.contains("sarama:sticky [sarama, not deterministic]"),
        "{help}"
    );
    assert!(
        help.contains("aiokafka:cooperative-sticky [aiokafka, refused]"),
        "{help}"
    );
}

/// The real franz-go 1.22.3 `CooperativeStickyBalancer` (franz-go's default)
/// splits every index of two 6-partition topics at 3 members and 3 of 6 at
/// 4, in one of two outcomes that follow Go's map order
/// (`tests/vectors/assignors/go_group_cases.jsonl`): `assign` says it is not
/// deterministic, shows the runs, and its outcomes are the library's.
#[test]
fn franz_go_default_splits_as_the_library_does() {
    let vectors =
        std::fs::read_to_string(repo().join("tests/vectors/assignors/go_group_cases.jsonl"))
            .unwrap();
    for (k, split) in [(3, 6), (4, 3)] {
        let case = format!("fresh-{k}-members-2x6");
        let line: Value = vectors
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|v| v["case"] == case.as_str() && v["assignor"] == "franz-go:cooperative-sticky")
            .unwrap();
        let k = k.to_string();
        let (code, v) = json(&[
            "assign",
            "-a",
            "franz-go",
            "-m",
            &k,
            "-t",
            "market-updates:6",
            "-t",
            "notifications:6",
        ]);
        assert_eq!(code, Some(1));
        assert_eq!(v["assignor"], "franz-go:cooperative-sticky");
        assert_eq!(v["library"], "franz-go 1.22.3");
        assert_eq!(v["deterministic"], false);
        assert_eq!(v["split_count"], split);
        assert_eq!(v["split_runs"], v["runs"], "every run splits");
        let ours: std::collections::BTreeSet<String> = v["outcomes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["assignment"].to_string())
            .collect();
        let theirs: std::collections::BTreeSet<String> = line["outcomes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["assignment"].to_string())
            .collect();
        assert_eq!(ours, theirs, "{case}");
    }
    // The deterministic ones say so.
    let (_, v) = json(&["assign", "-a", "sarama", "-m", "3", "-t", "a:6"]);
    assert_eq!(v["assignor"], "sarama:range");
    assert_eq!(v["deterministic"], true);
    assert!(v.get("outcomes").is_none());
}

/// `check` with a consumer group declared `franz-go` judges its default
/// balancer, not Java's: units split at 3 members, and it says the
/// balancer is not deterministic.
#[test]
fn check_judges_a_franz_go_group_by_its_own_balancer() {
    let toml = std::fs::read_to_string(repo().join("examples/ticker.toml"))
        .unwrap()
        .replace(
            "assignor = \"kafkajs:roundrobin\"",
            "assignor = \"franz-go\"",
        );
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(toml.as_bytes()).unwrap();
    let path = f.path().to_str().unwrap().to_string();
    let out = partwise()
        .args(["check", &path, "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let p = &v["placements"][0];
    assert_eq!(p["assignor"], "franz-go:cooperative-sticky");
    assert_eq!(p["deterministic"], false);
    assert_eq!(p["units_whole"], false);
    assert_eq!(p["counts"][0]["split_count"], 6);
    let fix: Vec<&str> = p["fix"]["assignors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(
        fix.iter()
            .all(|a| a.starts_with("franz-go:") || a.starts_with("kip848:")),
        "{fix:?}"
    );
    let text = partwise().args(["check", &path]).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("UNITS SPLIT") && text.contains("not deterministic"),
        "{text}"
    );
}

/// The Python clients' assignors: a client's name alone is its default,
/// the answers are the libraries' own (the vectors of
/// `tests/vectors/regen/python-groups`), the sticky ones say they are not
/// deterministic, and aiokafka's missing cooperative-sticky is refused.
#[test]
fn python_clients_assign_as_their_libraries_do() {
    let vectors =
        std::fs::read_to_string(repo().join("tests/vectors/assignors/python_group_cases.jsonl"))
            .unwrap();
    let line = |case: &str, spec: &str| -> Value {
        vectors
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|v| v["case"] == case && v["assignor"] == spec)
            .unwrap()
    };
    for (client, spec, library) in [
        ("kafka-python", "kafka-python:range", "kafka-python 3.0.12"),
        ("aiokafka", "aiokafka:roundrobin", "aiokafka 0.14.0"),
    ] {
        let (code, v) = json(&[
            "assign",
            "-a",
            client,
            "-m",
            "4",
            "-t",
            "market-updates:6",
            "-t",
            "notifications:6",
        ]);
        assert_eq!(v["assignor"], spec);
        assert_eq!(v["library"], library);
        assert_eq!(v["deterministic"], true);
        let theirs = &line("fresh-4-members-2x6", spec)["outcomes"][0]["assignment"];
        assert_eq!(&v["assignment"], theirs, "{spec}");
        // Range keeps 4 members' units whole; round-robin splits them.
        assert_eq!(
            code,
            Some(if spec.ends_with("range") { 0 } else { 1 }),
            "{v}"
        );
    }
    let (_, v) = json(&[
        "assign",
        "-a",
        "kafka-python:sticky",
        "-m",
        "3",
        "-t",
        "a:6",
        "-t",
        "b:6",
    ]);
    assert_eq!(v["deterministic"], false);
    assert_eq!(v["library"], "kafka-python 3.0.12");
    fails(
        &[
            "assign",
            "-a",
            "aiokafka:cooperative-sticky",
            "-m",
            "2",
            "-t",
            "a:6",
        ],
        "aiokafka 0.14.0 has no cooperative-sticky assignor",
    );
}

/// kafka-python's round-robin leader raises on unequal subscriptions: the
/// finding names the library's release and tells the team its own option.
#[test]
fn kafka_python_roundrobin_raises_on_unequal_subscriptions() {
    let group = r#"{"topics": [{"name": "a", "partitions": 2}, {"name": "b", "partitions": 2}],
        "members": [{"id": "m0", "subscription": ["a", "b"]}, {"id": "m1", "subscription": ["b"]}]}"#;
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(group.as_bytes()).unwrap();
    let path = f.path().to_str().unwrap().to_string();
    let (code, v) = json(&[
        "assign",
        "-a",
        "kafka-python:roundrobin",
        "--group-file",
        &path,
    ]);
    assert_eq!(code, Some(1), "{v}");
    let finding = &v["findings"][0];
    assert_eq!(finding["kind"], "python-leader-raises");
    let message = finding["message"].as_str().unwrap();
    assert!(
        message.contains("kafka-python 3.0.12 RoundRobinPartitionAssignor")
            && message.contains("KeyError: (None, 'm0')"),
        "{message}"
    );
    let fix = finding["fix"].as_str().unwrap();
    assert!(
        fix.contains("KafkaConsumer(partition_assignment_strategy=[RangePartitionAssignor])")
            && !fix.contains("org.apache.kafka"),
        "{fix}"
    );
}

/// `check` with a consumer group declared `aiokafka` judges aiokafka's
/// default round-robin (4 members split the units), and its fix speaks
/// aiokafka's own option.
#[test]
fn check_judges_an_aiokafka_group_in_its_own_words() {
    let toml = std::fs::read_to_string(repo().join("examples/ticker.toml"))
        .unwrap()
        .replace(
            "assignor = \"kafkajs:roundrobin\"",
            "assignor = \"aiokafka\"",
        )
        // 3 members deal two 6-partition topics in step; 4 do not.
        .replace("members = 3", "members = 4");
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(toml.as_bytes()).unwrap();
    let path = f.path().to_str().unwrap().to_string();
    let out = partwise()
        .args(["check", &path, "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let p = &v["placements"][0];
    assert_eq!(p["assignor"], "aiokafka:roundrobin");
    assert_eq!(p["units_whole"], false);
    let fix = &p["fix"];
    assert!(
        fix["assignors"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a.as_str().unwrap().starts_with("aiokafka:")),
        "{fix}"
    );
    let advice = fix["advice"].as_str().unwrap();
    assert!(
        advice
            .contains("AIOKafkaConsumer(partition_assignment_strategy=(RangePartitionAssignor,))")
            && !advice.contains("org.apache.kafka"),
        "{advice}"
    );
}

/// @platformatic/kafka's assigners from a group file that names its leader:
/// the leader's own subscription is what is dealt (the package's answer on
/// the `leader-*` groups of `tests/vectors/assignors/node_group_cases.jsonl`),
/// the JSON names the leader, and a leader that is no member is exit 2.
#[test]
fn platformatic_deals_the_named_leaders_topics() {
    let vectors =
        std::fs::read_to_string(repo().join("tests/vectors/assignors/node_group_cases.jsonl"))
            .unwrap();
    let mut seen = 0;
    for line in vectors
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
    {
        if !line["case"].as_str().unwrap().starts_with("leader-") {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("group.json");
        std::fs::write(&path, line["group"].to_string()).unwrap();
        let spec = line["assignor"].as_str().unwrap();
        let (_, v) = json(&["assign", "-a", spec, "--group-file", path.to_str().unwrap()]);
        assert_eq!(v["assignor"], spec);
        assert_eq!(v["library"], "@platformatic/kafka 2.12.1");
        assert_eq!(v["deterministic"], true);
        assert_eq!(v["leader"], line["group"]["leader"], "{v}");
        let want = &line["outcomes"][0]["assignment"];
        for (id, list) in want.as_object().unwrap() {
            assert_eq!(&v["assignment"][id], list, "{} {spec} {id}", line["case"]);
        }
        seen += 1;
    }
    assert!(seen >= 10, "{seen}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("group.json");
    std::fs::write(
        &path,
        r#"{"topics": [["a", 2]], "leader": "zz", "members": [{"id": "m0", "subscription": ["a"]}]}"#,
    )
    .unwrap();
    let out = partwise()
        .args([
            "assign",
            "-a",
            "platformatic",
            "--group-file",
            path.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("invalid leader: 'zz' is not the id of a member"));
}

/// Specs of assignors a client does not ship are refused with the reason
/// (exit 2).
#[test]
fn unshipped_assignors_are_refused_with_the_reason() {
    for (spec, says) in [
        (
            "aiokafka:cooperative-sticky",
            "not in its client: aiokafka 0.14.0 has no cooperative-sticky assignor",
        ),
        (
            "platformatic:range",
            "not in its client: @platformatic/kafka 2.12.1 ships two assigners",
        ),
    ] {
        let out = partwise()
            .args(["assign", "-a", spec, "-m", "3", "-t", "a:6"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{spec}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{spec}: {err}");
    }
}
