//! Clients beyond Java, librdkafka and KafkaJS, run for real against the
//! live broker (installed by `bash scripts/ensure clients` into
//! .cache/live-clients, versions pinned in `live/clients/`): a topic written
//! by @platformatic/kafka's default producer is identified as `platformatic`
//! by `kafka audit`, with the compatibilityPartitioner fix; a group of real
//! aiokafka consumers is never "ready" for the consumer protocol, nor is a
//! group whose members' subscriptions do not decode.

use super::kafka_group::try_describe;
use crate::common::{partwise as pw, repo, text, SYMBOLS};
use partwise_faults::live::{create_topics, kafka_bootstrap as bootstrap, unique};
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn clients() -> std::path::PathBuf {
    repo().join(".cache/live-clients")
}

/// Sends `keys` in order with @platformatic/kafka's default producer; the
/// partition of each from its produce result.
fn platformatic(b: &str, topic: &str, keys: &[String]) -> Vec<u32> {
    let script = repo().join("crates/partwise-cli/tests/it/live/clients/platformatic_produce.mjs");
    let mut child = Command::new("node")
        .arg(script)
        .args([b, topic])
        .arg(clients())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node runs (bash scripts/ensure clients)");
    let input: String = keys.iter().map(|k| format!("{k}\n")).collect();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "@platformatic/kafka producer failed (bash scripts/ensure clients installs it): {}",
        text(&out.stderr)
    );
    let rows: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), keys.len());
    rows.iter()
        .zip(keys)
        .map(|(r, k)| {
            assert_eq!(r["key"], k.as_str());
            r["partition"]
                .as_u64()
                .expect("the produce result names the partition") as u32
        })
        .collect()
}

/// A topic written by @platformatic/kafka's default producer and one
/// written Java-compatibly (KafkaJS's partitioner, through partwise's
/// producer): the audit names `platformatic` for the first, says the two
/// disagree, and the fix is compatibilityPartitioner with its release.
#[test]
fn a_topic_platformatic_wrote_is_identified_with_the_compatibility_fix() {
    let b = bootstrap();
    let (tp, tj) = (unique("pwc-platformatic"), unique("pwc-kafkajs"));
    create_topics(&b, &[(&tp, 6), (&tj, 6)]);
    let keys: Vec<String> = (0..20)
        .flat_map(|i| SYMBOLS.iter().map(move |s| format!("{s}-{i}")))
        .collect();
    let placed = platformatic(&b, &tp, &keys);
    // The known answer is the client's, and it is not Java's for these keys.
    let java: partwise::Partitioner = "java".parse().unwrap();
    let six = partwise::PartitionCount::new(6).unwrap();
    let differ = keys
        .iter()
        .zip(&placed)
        .filter(|(k, p)| java.place(Some(k.as_bytes()), six).partition() != Some(**p))
        .count();
    assert!(
        differ > keys.len() / 4,
        "{differ} of {} differ from Java",
        keys.len()
    );
    let input: String = keys.iter().map(|k| format!("{k}\tjs\n")).collect();
    let out = pw()
        .args(["kafka", "produce", "-b", &b, "-t", &tj, "-P", "kafkajs"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = pw()
        .args([
            "kafka", "audit", "-b", &b, "-t", &tp, "-t", &tj, "--format", "json",
        ])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", text(&out.stdout), text(&out.stderr)));
    assert_eq!(out.status.code(), Some(1), "{v}");
    let topic = v["topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["topic"] == tp.as_str())
        .unwrap_or_else(|| panic!("{v}"));
    let inferred: Vec<&str> = topic["routing"]["inferred"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert_eq!(inferred.len(), 1, "{topic}");
    assert!(inferred[0].starts_with("platformatic"), "{topic}");
    let doc = v.to_string();
    assert!(doc.contains("partitioners-disagree"), "{v}");
    assert!(
        doc.contains("partitioner: compatibilityPartitioner (import { compatibilityPartitioner } from '@platformatic/kafka') (@platformatic/kafka 1.32.0 or later)"),
        "{v}"
    );
}

/// One aiokafka consumer of the group; stdin kept open until dropped.
struct Member(Child);

impl Drop for Member {
    fn drop(&mut self) {
        drop(self.0.stdin.take());
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn aiokafka_member(b: &str, group: &str, topics: &[&str]) -> Member {
    aiokafka_member_with(&[], b, group, topics)
}

fn aiokafka_member_with(flags: &[&str], b: &str, group: &str, topics: &[&str]) -> Member {
    let python = clients().join("venv/bin/python");
    let script = repo().join("crates/partwise-cli/tests/it/live/clients/aiokafka_member.py");
    let mut child = Command::new(&python)
        .arg(script)
        .args(flags)
        .args([b, group])
        .args(topics)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e} (bash scripts/ensure clients)", python.display()));
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("assigned"), "aiokafka member: {line:?}");
    Member(child)
}

/// Two real aiokafka 0.14 consumers (their default client id and
/// round-robin assignor): `--readiness` identifies aiokafka, says it cannot
/// join a consumer-protocol group, gives aiokafka's own setting, and exits 1.
#[test]
fn an_aiokafka_group_readiness_says_it_cannot_join_and_exits_1() {
    let b = bootstrap();
    let (x, y) = (unique("pwc-aio-x"), unique("pwc-aio-y"));
    create_topics(&b, &[(&x, 6), (&y, 6)]);
    let group = unique("pwc-aio");
    let _m1 = aiokafka_member(&b, &group, &[&x, &y]);
    let _m2 = aiokafka_member(&b, &group, &[&x, &y]);
    let deadline = Instant::now() + Duration::from_secs(60);
    let (code, v) = loop {
        let (code, v) =
            try_describe(&b, &group, &["--readiness"]).unwrap_or_else(|e| panic!("{e}"));
        if (v["state"] == "Stable" && v["members"].as_array().is_some_and(|m| m.len() == 2))
            || Instant::now() > deadline
        {
            break (code, v);
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    assert_eq!(v["state"], "Stable", "{v}");
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["ready"], false, "{v}");
    assert_eq!(v["readiness"]["clients"][0]["client"], "aiokafka", "{v}");
    assert_eq!(v["readiness"]["upgrade"]["verdict"], "blocked", "{v}");
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "client-without-consumer-protocol")
        .unwrap_or_else(|| panic!("{v}"));
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("aiokafka has no consumer-protocol"),
        "{f}"
    );
    assert!(
        f["fix"]
            .as_str()
            .unwrap()
            .contains("partition_assignment_strategy=(RangePartitionAssignor,)"),
        "{f}"
    );
    assert!(!v.to_string().contains("org.apache.kafka.clients"), "{v}");
}

/// Two aiokafka members whose subscription bytes declare version -1 (their
/// own leader reads them, so the group is Stable): partwise cannot decode
/// them, and `--readiness` names each member with its client id, predicts
/// nothing for it, never says ready and exits 1.
#[test]
fn a_group_whose_members_do_not_decode_is_never_ready() {
    let b = bootstrap();
    let (x, y) = (unique("pwc-ux"), unique("pwc-uy"));
    create_topics(&b, &[(&x, 6), (&y, 6)]);
    let group = unique("pwc-undecodable");
    let _m1 = aiokafka_member_with(&["--negative-version"], &b, &group, &[&x, &y]);
    let _m2 = aiokafka_member_with(&["--negative-version"], &b, &group, &[&x, &y]);
    let deadline = Instant::now() + Duration::from_secs(60);
    let (code, v) = loop {
        let (code, v) =
            try_describe(&b, &group, &["--readiness"]).unwrap_or_else(|e| panic!("{e}"));
        if v["state"] == "Stable" && v["members"].as_array().is_some_and(|m| m.len() == 2) {
            break (code, v);
        }
        assert!(Instant::now() < deadline, "never stable: {v}");
        std::thread::sleep(Duration::from_millis(300));
    };
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["ready"], false, "{v}");
    let undecodable: Vec<&Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "member-undecodable")
        .collect();
    assert_eq!(undecodable.len(), 2, "{v}");
    for f in &undecodable {
        let m = f["message"].as_str().unwrap();
        assert!(m.contains("client id 'aiokafka-0.14.0'"), "{m}");
        assert!(
            f["fix"].as_str().unwrap().contains("check which client"),
            "{f}"
        );
    }
    // No server assignor's target is predicted as if they read nothing.
    assert!(v["readiness"]["server_range"].is_null(), "{v}");
}
