//! `partwise kafka group` on live groups of every kind of member on the broker
//! at PARTWISE_KAFKA_BOOTSTRAP (Apache Kafka; `bash scripts/test` starts it):
//! librdkafka consumers, Java `KafkaConsumer`s (kafka-clients, run through
//! `tests/vectors/regen/java/run`, so Java and Maven must be installed) and
//! `partwise kafka consume` processes. The decoded assignments must equal what
//! the members themselves report, and the split count what their reports
//! imply.

use crate::common::process::Captured;
use crate::common::repo;
use assert_cmd::Command as Cmd;
use partwise_faults::live::{create_topics, kafka_bootstrap as bootstrap, unique};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

pub(super) type Owned = BTreeSet<(String, u32)>;

/// `partwise kafka group ... --format json`: exit code and document.
fn describe(b: &str, group: &str, extra: &[&str]) -> (i32, Value) {
    try_describe(b, group, extra).unwrap_or_else(|e| panic!("{e}"))
}

/// As [`describe`]; a group the coordinator does not know yet (members still
/// starting) is `Err`.
pub(super) fn try_describe(b: &str, group: &str, extra: &[&str]) -> Result<(i32, Value), String> {
    let out = Cmd::cargo_bin("partwise")
        .unwrap()
        .args(["kafka", "group", "-b", b, "-g", group, "--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    match serde_json::from_slice(&out.stdout) {
        Ok(v) => Ok((out.status.code().unwrap_or(-1), v)),
        Err(_) => Err(format!(
            "exit {:?}, not JSON: {} / {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )),
    }
}

pub(super) fn owned(list: &Value) -> Owned {
    list.as_array()
        .unwrap()
        .iter()
        .flat_map(|tp| {
            // `group` JSON is [topic, [partitions]]; member events are [topic, partition].
            let t = tp[0].as_str().unwrap().to_string();
            match &tp[1] {
                Value::Array(ps) => ps
                    .iter()
                    .map(|p| (t.clone(), p.as_u64().unwrap() as u32))
                    .collect::<Vec<_>>(),
                p => vec![(t, p.as_u64().unwrap() as u32)],
            }
        })
        .collect()
}

/// The decoded assignment of every described member, keyed by `key`
/// (`id` or `client_id`).
fn decoded(v: &Value, key: &str) -> BTreeMap<String, Owned> {
    v["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let a = if m["assignment"].is_null() {
                Owned::new()
            } else {
                owned(&m["assignment"])
            };
            (m[key].as_str().unwrap().to_string(), a)
        })
        .collect()
}

/// Indices `0..n` whose partitions of `topics` do not all have one owner,
/// from the members' own reports.
pub(super) fn split_from_reports(
    reports: &BTreeMap<String, Owned>,
    topics: &[&str],
    n: u32,
) -> usize {
    (0..n)
        .filter(|&p| {
            let owners: BTreeSet<Option<&String>> = topics
                .iter()
                .map(|t| {
                    reports
                        .iter()
                        .find(|(_, o)| o.contains(&(t.to_string(), p)))
                        .map(|(id, _)| id)
                })
                .collect();
            owners.len() != 1 || owners.contains(&None)
        })
        .count()
}

/// Describes until the group is Stable with assignment data equal to what the
/// members report (`reports` is called each round); the last document.
pub(super) fn wait_described(
    b: &str,
    group: &str,
    key: &str,
    mut reports: impl FnMut() -> BTreeMap<String, Owned>,
) -> (i32, Value, BTreeMap<String, Owned>) {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let want = reports();
        let (code, v) = match try_describe(b, group, &[]) {
            Ok(d) => d,
            // A broker that has hosted no group yet creates and loads its
            // offsets topic on the first FindCoordinator: until then
            // COORDINATOR_NOT_AVAILABLE (15) or _LOAD_IN_PROGRESS (14), and
            // NOT_COORDINATOR (16) while the offsets topic's partitions move in
            // (named by code from a describe, by name from FindCoordinator).
            Err(e)
                if (e.contains("not found")
                    || ["14", "15", "16"].iter().any(|c| {
                        e.contains(&format!("error code {c}")) || e.contains(&format!("({c})"))
                    }))
                    && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(300));
                continue;
            }
            Err(e) => panic!("{e}"),
        };
        if v["state"] == "Stable"
            && v["assignment_data"] == "returned"
            && !want.is_empty()
            && want.values().map(|o| o.len()).sum::<usize>() > 0
            && decoded(&v, key) == want
        {
            return (code, v, want);
        }
        assert!(
            Instant::now() < deadline,
            "group {group} never described what its members report:\n{v}\nmembers: {want:?}"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// A member process printing NDJSON `assigned` events with `member` and
/// `partitions` (the Java harness member, `partwise kafka consume`).
pub(super) struct Proc {
    pub(super) child: Child,
    stdin: Option<ChildStdin>,
    pub(super) out: Captured,
}

impl Proc {
    pub(super) fn spawn(mut cmd: Command) -> Proc {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
        let out = Captured::start(&mut child, false);
        Proc {
            stdin: child.stdin.take(),
            child,
            out,
        }
    }

    /// The last `assigned` event's member id and partitions; panics when the
    /// process has exited (a missing Java or Maven shows here).
    pub(super) fn holding(&mut self) -> Option<(String, Owned)> {
        if let Some(s) = self.child.try_wait().unwrap() {
            panic!(
                "member exited ({s}) before the test ended; stderr:\n{}",
                self.out.stderr.lock().unwrap()
            );
        }
        let ev = self.out.events.lock().unwrap();
        let last = ev
            .iter()
            .rev()
            .find(|e| e["event"] == "assigned" || e["event"] == "revoked")?;
        (last["event"] == "assigned").then(|| {
            (
                last["member"].as_str().unwrap().to_string(),
                owned(&last["partitions"]),
            )
        })
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        // Closing stdin ends the Java member; SIGTERM ends `partwise kafka consume`.
        self.stdin.take();
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if self.child.try_wait().unwrap().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What each librdkafka consumer reports it holds, named `{prefix}{i}`.
fn assignments(consumers: &[BaseConsumer], prefix: &str) -> BTreeMap<String, Owned> {
    consumers
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let a = c.assignment().unwrap();
            let o = a
                .elements()
                .iter()
                .map(|e| (e.topic().to_string(), e.partition() as u32))
                .collect();
            (format!("{prefix}{i}"), o)
        })
        .collect()
}

pub(super) fn reports_of(procs: &mut [Proc]) -> BTreeMap<String, Owned> {
    // None until every member has reported: a group described before its
    // last member joined is Stable and reconciled, the first members
    // holding everything, and would pass for the group under test.
    let reports: BTreeMap<String, Owned> = procs.iter_mut().filter_map(|p| p.holding()).collect();
    if reports.len() == procs.len() {
        reports
    } else {
        BTreeMap::new()
    }
}

/// Builds the Java harness once (a second build racing the first would
/// share its class directory).
fn java_harness() -> PathBuf {
    static BUILT: std::sync::Once = std::sync::Once::new();
    let run = repo().join("tests/vectors/regen/java/run");
    BUILT.call_once(|| {
        let out = Command::new("bash")
            .arg(&run)
            .arg("--classpath")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "the Java harness does not build (Java 17 JDK and Maven are needed; `bash scripts/ensure java`):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    });
    run
}

pub(super) fn java_member(
    b: &str,
    group: &str,
    topics: &[&str],
    strategy: &str,
    client: &str,
) -> Proc {
    java_member_with(b, group, topics, strategy, client, "classic")
}

pub(super) fn java_member_with(
    b: &str,
    group: &str,
    topics: &[&str],
    strategy: &str,
    client: &str,
    protocol: &str,
) -> Proc {
    let mut cmd = Command::new("bash");
    cmd.arg(java_harness()).args([
        "member",
        "--bootstrap",
        b,
        "--group",
        group,
        "--topics",
        &topics.join(","),
        "--strategy",
        strategy,
        "--client-id",
        client,
        "--group-protocol",
        protocol,
    ]);
    Proc::spawn(cmd)
}

pub(super) fn partwise_member(b: &str, group: &str, topics: &[&str]) -> Proc {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_partwise"));
    cmd.args(["kafka", "consume", "-b", b, "-g", group]);
    for t in topics {
        cmd.args(["-t", t]);
    }
    cmd.args([
        "--assignor",
        "copartitioned",
        "--heartbeat-interval-ms",
        "300",
        "--session-timeout-ms",
        "10000",
        "--format",
        "ndjson",
    ]);
    Proc::spawn(cmd)
}

/// Four librdkafka `roundrobin` members over two 6-partition topics: 4 does
/// not divide 6, so round-robin dealing splits every index; the decoded
/// assignments are each consumer's own `assignment()`, and the librdkafka
/// prediction equals the live result.
#[test]
fn librdkafka_roundrobin_group_is_decoded_and_splits_every_index() {
    let b = bootstrap();
    let (x, y) = (unique("pwgl-rx"), unique("pwgl-ry"));
    create_topics(&b, &[(&x, 6), (&y, 6)]);
    let group = unique("pwgl-rr");
    let consumers: Vec<BaseConsumer> = (0..4)
        .map(|i| {
            let c: BaseConsumer = ClientConfig::new()
                .set("bootstrap.servers", &b)
                .set("group.id", &group)
                .set("client.id", format!("rr{i}"))
                .set("partition.assignment.strategy", "roundrobin")
                .set("enable.auto.commit", "false")
                .create()
                .unwrap();
            c.subscribe(&[&x, &y]).unwrap();
            c
        })
        .collect();
    let (code, v, reports) = wait_described(&b, &group, "client_id", || {
        for c in &consumers {
            let _ = c.poll(Duration::from_millis(20));
        }
        assignments(&consumers, "rr")
    });
    assert_eq!(v["protocol"], "roundrobin", "{v}");
    assert_eq!(v["members"].as_array().unwrap().len(), 4);
    for m in v["members"].as_array().unwrap() {
        assert_eq!(m["subscription"], serde_json::json!([x, y]), "{v}");
    }
    let names = [x.as_str(), y.as_str()];
    assert_eq!(split_from_reports(&reports, &names, 6), 6);
    assert_eq!(v["split_count"], 6, "{v}");
    assert_eq!(
        v["colocation"][0]["split_indices"]
            .as_array()
            .unwrap()
            .len(),
        6
    );
    assert_eq!(code, 1, "split indices are findings");
    let (_, p) = describe(&b, &group, &["--assignor", "librdkafka:roundrobin"]);
    assert_eq!(p["prediction"]["matches_live"], true, "{p}");
    assert_eq!(p["prediction"]["split_count"], 6);
    // Range would have kept every index together.
    let (_, p) = describe(&b, &group, &["--assignor", "librdkafka:range"]);
    assert_eq!(p["prediction"]["matches_live"], false, "{p}");
    assert_eq!(p["prediction"]["split_count"], 0);
}

/// Java `KafkaConsumer`s with the range assignor and unequal subscriptions
/// (j2 reads only the second topic): decoded subscriptions and assignments
/// equal the members' own, the split count what their reports imply, and
/// `java:range` predicts the live assignment from the decoded subscriptions.
#[test]
fn java_range_group_with_unequal_subscriptions_is_decoded() {
    let b = bootstrap();
    let (x, y) = (unique("pwgl-jx"), unique("pwgl-jy"));
    create_topics(&b, &[(&x, 4), (&y, 4)]);
    let group = unique("pwgl-java");
    let mut procs = vec![
        java_member(&b, &group, &[&x, &y], "range", "j0"),
        java_member(&b, &group, &[&x, &y], "range", "j1"),
        java_member(&b, &group, &[&y], "range", "j2"),
    ];
    let (code, v, reports) = wait_described(&b, &group, "id", || reports_of(&mut procs));
    assert_eq!(v["protocol"], "range", "{v}");
    let subs: BTreeMap<String, Value> = v["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["client_id"].as_str().unwrap().to_string(),
                m["subscription"].clone(),
            )
        })
        .collect();
    assert_eq!(subs["j0"], serde_json::json!([x, y]));
    assert_eq!(subs["j2"], serde_json::json!([y]));
    let names = [x.as_str(), y.as_str()];
    let split = split_from_reports(&reports, &names, 4);
    // Range deals x over two members and y over three: contiguous runs differ.
    assert!(split > 0, "{reports:?}");
    assert_eq!(v["split_count"], split as u64, "{v}");
    assert_eq!(code, 1);
    let (_, p) = describe(&b, &group, &["--assignor", "java:range"]);
    assert_eq!(p["prediction"]["matches_live"], true, "{p}");
}

/// Java `cooperative-sticky` members: the assignment bytes of the cooperative
/// protocol (with its owned partitions and generation in the subscription)
/// decode to what each member holds.
#[test]
fn java_cooperative_sticky_group_is_decoded() {
    let b = bootstrap();
    let (x, y) = (unique("pwgl-cx"), unique("pwgl-cy"));
    create_topics(&b, &[(&x, 6), (&y, 6)]);
    let group = unique("pwgl-coop");
    let mut procs = vec![
        java_member(&b, &group, &[&x, &y], "cooperative-sticky", "c0"),
        java_member(&b, &group, &[&x, &y], "cooperative-sticky", "c1"),
    ];
    let (_, v, _) = wait_described(&b, &group, "id", || reports_of(&mut procs));
    assert_eq!(v["protocol"], "cooperative-sticky", "{v}");
    // A third member joins: the cooperative rounds move partitions to it.
    procs.push(java_member(
        &b,
        &group,
        &[&x, &y],
        "cooperative-sticky",
        "c2",
    ));
    // The first cooperative round is Stable too, with the moving partitions
    // withheld; the second gives every member 4 of the 12.
    let (_, v, reports) = wait_described(&b, &group, "id", || {
        let r = reports_of(&mut procs);
        if r.len() == 3 && r.values().all(|o| o.len() == 4) {
            r
        } else {
            BTreeMap::new()
        }
    });
    assert_eq!(v["members"].as_array().unwrap().len(), 3);
    let names = [x.as_str(), y.as_str()];
    assert_eq!(
        v["split_count"],
        split_from_reports(&reports, &names, 6) as u64,
        "{v}"
    );
}

/// KIP-848 groups (`group.protocol=consumer`, the broker assigns): Apache
/// Kafka's DescribeGroups calls them dead, so they are described with
/// ConsumerGroupDescribe. Java members with the server's `range` keep every
/// index together; with `uniform` two members over two 6-partition topics
/// get one topic each, splitting all six.
#[test]
fn kip848_groups_are_described_with_consumer_group_describe() {
    let b = bootstrap();
    let (x, y) = (unique("pwgl-kx"), unique("pwgl-ky"));
    create_topics(&b, &[(&x, 6), (&y, 6)]);
    let names = [x.as_str(), y.as_str()];
    for (assignor, split) in [("range", 0), ("uniform", 6)] {
        let group = unique(&format!("pwgl-848-{assignor}"));
        let mut procs: Vec<Proc> = (0..2)
            .map(|i| java_member_with(&b, &group, &names, assignor, &format!("k{i}"), "consumer"))
            .collect();
        let (code, v, reports) = wait_described(&b, &group, "id", || {
            let r = reports_of(&mut procs);
            // Reconciliation hands partitions over one by one: wait for all 12.
            if r.len() == 2 && r.values().map(|o| o.len()).sum::<usize>() == 12 {
                r
            } else {
                BTreeMap::new()
            }
        });
        assert_eq!(v["group_protocol"], "consumer", "{v}");
        assert_eq!(v["protocol"], assignor, "{v}");
        assert_eq!(
            split_from_reports(&reports, &names, 6),
            split,
            "{reports:?}"
        );
        assert_eq!(v["split_count"], split as u64, "{v}");
        assert_eq!(code, if split > 0 { 1 } else { 0 });
        // The prediction names the model the broker's own release runs, read
        // from its API versions (a 4.0 broker leaves uniform undecided).
        let spec = format!("kip848:{assignor}");
        let (_, p) = describe(&b, &group, &["--assignor", &spec]);
        let p = &p["prediction"];
        let line = p["broker_release_line"]
            .as_str()
            .unwrap_or_else(|| panic!("{p}"));
        assert!(line.starts_with("4."), "{p}");
        if assignor == "range" || line != "4.0" {
            assert_eq!(p["server_assignor_model"], spec.as_str(), "{p}");
        } else {
            assert!(p["server_assignor_model"].is_null(), "{p}");
        }
        assert!(
            p["server_assignor_evidence"]
                .as_str()
                .unwrap()
                .contains(line),
            "{p}"
        );
    }
    // librdkafka (2.12) members of a KIP-848 group, decoded the same way.
    let group = unique("pwgl-848-rdk");
    let consumers: Vec<BaseConsumer> = (0..2)
        .map(|i| {
            let c: BaseConsumer = ClientConfig::new()
                .set("bootstrap.servers", &b)
                .set("group.id", &group)
                .set("client.id", format!("r{i}"))
                .set("group.protocol", "consumer")
                .set("group.remote.assignor", "range")
                .set("enable.auto.commit", "false")
                .create()
                .unwrap();
            c.subscribe(&names).unwrap();
            c
        })
        .collect();
    let (_, v, reports) = wait_described(&b, &group, "client_id", || {
        for c in &consumers {
            let _ = c.poll(Duration::from_millis(20));
        }
        let r = assignments(&consumers, "r");
        if r.values().map(|o: &Owned| o.len()).sum::<usize>() == 12 {
            r
        } else {
            BTreeMap::new()
        }
    });
    assert_eq!(v["group_protocol"], "consumer", "{v}");
    assert_eq!(v["protocol"], "range", "{v}");
    assert_eq!(split_from_reports(&reports, &names, 6), 0);
    assert_eq!(v["split_count"], 0, "{v}");
}

/// `partwise kafka consume` members (copartitioned assignor): the decoded
/// assignments are the units each member reports, and no index is split.
#[test]
fn partwise_copartitioned_group_is_decoded_and_splits_none() {
    let b = bootstrap();
    let (x, y) = (unique("pwgl-px"), unique("pwgl-py"));
    create_topics(&b, &[(&x, 6), (&y, 6)]);
    let group = unique("pwgl-pw");
    let mut procs: Vec<Proc> = (0..4)
        .map(|_| partwise_member(&b, &group, &[&x, &y]))
        .collect();
    let (code, v, reports) = wait_described(&b, &group, "id", || {
        let r = reports_of(&mut procs);
        if r.len() == 4 {
            r
        } else {
            BTreeMap::new()
        }
    });
    assert_eq!(v["protocol"], "copartitioned", "{v}");
    let names = [x.as_str(), y.as_str()];
    assert_eq!(split_from_reports(&reports, &names, 6), 0);
    assert_eq!(v["split_count"], 0, "{v}");
    assert_eq!(code, 0, "{v}");
    let (_, p) = describe(&b, &group, &["--assignor", "java:roundrobin"]);
    assert_eq!(p["prediction"]["split_count"], 6, "{p}");
    assert_eq!(p["prediction"]["matches_live"], false);
}

/// Apache Kafka describes the members of a group that is still rebalancing
/// without their subscriptions and assignments (the first join waits out
/// group.initial.rebalance.delay.ms, 3 s by default): reported as no
/// assignment data (exit 1), never as an empty group, with the prediction
/// on request; once the group is Stable the same member's assignment is
/// decoded.
#[test]
fn a_rebalancing_group_is_reported_without_assignment_data() {
    let b = bootstrap();
    let (x, y) = (unique("pwgl-gx"), unique("pwgl-gy"));
    create_topics(&b, &[(&x, 4), (&y, 4)]);
    let group = unique("pwgl-rebal");
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &b)
        .set("group.id", &group)
        .set("client.id", "m0")
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    c.subscribe(&[&x, &y]).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let (code, v) = loop {
        let _ = c.poll(Duration::from_millis(20));
        let Ok((code, v)) = try_describe(&b, &group, &[]) else {
            assert!(Instant::now() < deadline, "the member never joined");
            continue;
        };
        if !v["members"].as_array().is_none_or(|m| m.is_empty()) {
            break (code, v);
        }
        assert!(Instant::now() < deadline, "the member never joined: {v}");
    };
    assert_ne!(v["state"], "Stable", "caught only after the rebalance: {v}");
    assert_eq!(v["assignment_data"], "not returned by the broker", "{v}");
    assert!(v["members"][0]["assignment"].is_null());
    assert_eq!(code, 1);
    let out = Cmd::cargo_bin("partwise")
        .unwrap()
        .args(["kafka", "group", "-b", &b, "-g", &group])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    if text.contains("state PreparingRebalance") || text.contains("state CompletingRebalance") {
        assert!(
            text.contains("broker returned no assignment data"),
            "{text}"
        );
        assert!(text.contains("until it is Stable"), "{text}");
    }
    let (_, p) = describe(
        &b,
        &group,
        &["--assignor", "librdkafka:range", "-t", &x, "-t", &y],
    );
    if p["assignment_data"] != "returned" {
        assert_eq!(
            p["colocation_source"], "predicted by librdkafka:range",
            "{p}"
        );
        assert_eq!(p["split_count"], 0);
        assert_eq!(p["colocation"][0]["owners"].as_array().unwrap().len(), 4);
    }
    let out = Cmd::cargo_bin("partwise")
        .unwrap()
        .args(["kafka", "group", "-b", &b, "-g", &group])
        .args(["--assignor", "nosuch", "-t", &x])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--assignor"));
    // Stable: one member owns every index of both topics.
    let (code, v, _) = wait_described(&b, &group, "client_id", || {
        let _ = c.poll(Duration::from_millis(20));
        let a = c.assignment().unwrap();
        let o = a
            .elements()
            .iter()
            .map(|e| (e.topic().to_string(), e.partition() as u32))
            .collect();
        BTreeMap::from([("m0".to_string(), o)])
    });
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["split_count"], 0);
}

/// A member's client id is whatever the client sent: one that tries to clear
/// the operator's screen, retitle the window and reverse the text after it
/// prints escaped in `kafka group`'s table (the JSON keeps it exact).
#[test]
fn a_hostile_client_id_prints_escaped_in_the_table() {
    let b = bootstrap();
    let x = unique("pwgl-hx");
    create_topics(&b, &[(&x, 2)]);
    let group = unique("pwgl-hostile");
    let hostile = "c\u{1b}[2J\u{1b}]0;pwned\u{7}\u{202e}gnp.exe";
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &b)
        .set("group.id", &group)
        .set("client.id", hostile)
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    c.subscribe(&[&x]).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let v = loop {
        let _ = c.poll(Duration::from_millis(20));
        if let Ok((_, v)) = try_describe(&b, &group, &[]) {
            if v["members"].as_array().is_some_and(|m| !m.is_empty()) {
                break v;
            }
        }
        assert!(Instant::now() < deadline, "the member never joined");
    };
    assert_eq!(v["members"][0]["client_id"], hostile, "{v}");
    for extra in [&[][..], &["--readiness"]] {
        let out = Cmd::cargo_bin("partwise")
            .unwrap()
            .args(["kafka", "group", "-b", &b, "-g", &group])
            .args(extra)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            !text.contains(['\u{1b}', '\u{7}', '\u{202e}']),
            "{extra:?}: a control character reached the terminal: {text:?}"
        );
        assert!(
            text.contains("c\\u{1b}[2J\\u{1b}]0;pwned\\u{7}\\u{202e}gnp.exe"),
            "{extra:?}: {text}"
        );
    }
}
