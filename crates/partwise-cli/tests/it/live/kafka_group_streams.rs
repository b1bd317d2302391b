//! `partwise kafka group` on the streams-protocol group of a real Kafka
//! Streams application (kafka-streams pinned in `tests/streams-app/pom.xml`,
//! run through `tests/streams-app/run`, so Java and Maven must be
//! installed): a join of two topics on the broker at
//! PARTWISE_KAFKA_BOOTSTRAP under `group.protocol=streams`. Described whole
//! with exit 0 while the sources are co-partitioned; NOT_READY, with the
//! counts named and exit 1, when they are not.

use crate::common::repo;
use assert_cmd::Command as Cmd;
use partwise_faults::live::{kafka_bootstrap as bootstrap, unique};
use serde_json::Value;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The Streams application, stopped when dropped.
struct App(Child);

impl Drop for App {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the join of `left` and `right` (`NAME:COUNT`, created if missing)
/// as application `app` with `threads` stream threads under the streams
/// protocol.
fn start(b: &str, app: &str, left: &str, right: &str, threads: u32) -> App {
    start_on(b, app, left, right, threads, "streams")
}

/// [`start`] under `group.protocol=protocol` (`streams` or `classic`).
fn start_on(b: &str, app: &str, left: &str, right: &str, threads: u32, protocol: &str) -> App {
    start_with(b, app, left, right, threads, protocol, 0)
}

/// [`start_on`] with `num.standby.replicas=standbys`.
fn start_with(
    b: &str,
    app: &str,
    left: &str,
    right: &str,
    threads: u32,
    protocol: &str,
    standbys: u32,
) -> App {
    let log = std::env::temp_dir().join(format!("{app}-{}.log", unique("run")));
    let out = std::fs::File::create(&log).unwrap();
    let child = Command::new("bash")
        .arg(repo().join("tests/streams-app/run"))
        .args([b, app, left, right, &threads.to_string(), protocol])
        .arg(standbys.to_string())
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .stdin(Stdio::null())
        .spawn()
        .expect("tests/streams-app/run");
    App(child)
}

/// `kafka group --format json`: exit code and document, `None` while the
/// output is not a streams group's document (the application still starting).
fn describe(b: &str, group: &str) -> Option<(i32, Value)> {
    let out = Cmd::cargo_bin("partwise")
        .unwrap()
        .args(["kafka", "group", "-b", b, "-g", group, "--format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).ok()?;
    (v["group_protocol"] == "streams").then(|| (out.status.code().unwrap_or(-1), v))
}

/// Describes `group` until `done` holds of the document (three minutes at most:
/// the first run resolves kafka-streams from Maven Central).
fn until(b: &str, group: &str, app: &mut App, done: impl Fn(&Value) -> bool) -> (i32, Value) {
    let deadline = Instant::now() + Duration::from_secs(180);
    let mut last = None;
    while Instant::now() < deadline {
        if let Ok(Some(s)) = app.0.try_wait() {
            if last.is_none() {
                panic!("the Streams application exited ({s}) before its group was described");
            }
        }
        if let Some((code, v)) = describe(b, group) {
            if done(&v) {
                return (code, v);
            }
            last = Some((code, v));
        }
        std::thread::sleep(Duration::from_secs(2));
    }
    panic!("group {group} never reached the expected description; last: {last:?}");
}

#[test]
fn a_streams_group_is_described_with_partition_p_of_both_sources_in_each_task() {
    let b = bootstrap();
    let (left, right) = (unique("market-updates"), unique("notifications"));
    let app_id = unique("ticker-join");
    let mut app = start(&b, &app_id, &format!("{left}:6"), &format!("{right}:6"), 2);
    let (code, v) = until(&b, &app_id, &mut app, |v| {
        v["state"] == "Stable"
            && v["tasks"].as_array().is_some_and(|t| t.len() == 6)
            && v["members"].as_array().is_some_and(|m| m.len() == 2)
    });
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["findings"], Value::Array(vec![]), "{v:#}");
    let subs = v["subtopologies"].as_array().unwrap();
    assert_eq!(subs.len(), 1, "{v:#}");
    let mut sources: Vec<&str> = subs[0]["source_topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    sources.sort();
    let mut want = vec![left.as_str(), right.as_str()];
    want.sort();
    assert_eq!(sources, want);
    let mut tasks: Vec<String> = Vec::new();
    for t in v["tasks"].as_array().unwrap() {
        let task = t["task"].as_str().unwrap().to_string();
        let p: i64 = task.strip_prefix("0_").unwrap().parse().unwrap();
        let mut held: Vec<(String, i64)> = t["holds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| (h[0].as_str().unwrap().to_string(), h[1].as_i64().unwrap()))
            .collect();
        held.sort();
        let mut expect = vec![(left.clone(), p), (right.clone(), p)];
        expect.sort();
        assert_eq!(held, expect, "task {task}");
        assert_eq!(t["missing"], Value::Array(vec![]));
        tasks.push(task);
    }
    tasks.sort();
    assert_eq!(tasks, ["0_0", "0_1", "0_2", "0_3", "0_4", "0_5"]);
    // Each member names its process and client, and the tasks listed per
    // member are those the task table gives it.
    for m in v["members"].as_array().unwrap() {
        assert!(!m["process_id"].as_str().unwrap().is_empty());
        let client = m["client_id"].as_str().unwrap();
        assert!(client.contains("StreamThread-"), "{client}");
        let mine: Vec<&str> = v["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["member_id"] == m["member_id"])
            .map(|t| t["task"].as_str().unwrap())
            .collect();
        let active: Vec<&str> = m["assignment"]["active"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        assert_eq!(mine, active);
    }
    // The table says the same, with the state.
    let out = Cmd::cargo_bin("partwise")
        .unwrap()
        .args(["kafka", "group", "-b", &b, "-g", &app_id])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("state Stable, streams protocol"), "{text}");
    assert!(text.contains(&format!("{left}[5]")), "{text}");
}

#[test]
fn sources_of_different_counts_leave_the_group_not_ready_with_the_counts_named() {
    let b = bootstrap();
    let (left, right) = (unique("market-updates"), unique("notifications"));
    let app_id = unique("ticker-join-8");
    let mut app = start(&b, &app_id, &format!("{left}:6"), &format!("{right}:8"), 1);
    let (code, v) = until(&b, &app_id, &mut app, |v| v["state"] == "NotReady");
    assert_eq!(code, 1, "{v:#}");
    let f = &v["findings"][0];
    assert_eq!(f["kind"], "streams-not-ready", "{v:#}");
    let msg = f["message"].as_str().unwrap();
    assert!(msg.contains(&format!("{left} (6 partitions)")), "{msg}");
    assert!(msg.contains(&format!("{right} (8 partitions)")), "{msg}");
    assert!(v["tasks"].as_array().unwrap().is_empty(), "{v:#}");
}

/// `kafka group --readiness --format json`: exit code and document.
fn readiness(b: &str, group: &str) -> (i32, Value) {
    let out = Cmd::cargo_bin("partwise")
        .unwrap()
        .args(["kafka", "group", "-b", b, "-g", group, "--readiness"])
        .args(["--format", "json"])
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), v)
}

// Named without "readiness": scripts/test's broker matrix runs tests so named
// on releases before 4.2, which have no streams groups.
#[test]
fn a_streams_group_is_ready_by_its_state() {
    let b = bootstrap();
    let (left, right) = (unique("market-updates"), unique("notifications"));
    let app_id = unique("ticker-join-ready");
    let mut app = start(&b, &app_id, &format!("{left}:6"), &format!("{right}:6"), 1);
    until(&b, &app_id, &mut app, |v| {
        v["state"] == "Stable" && v["tasks"].as_array().is_some_and(|t| t.len() == 6)
    });
    let (code, v) = readiness(&b, &app_id);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["group_protocol"], "streams", "{v:#}");
    assert_eq!(v["state"], "Stable", "{v:#}");
    let words = v["readiness"]["summary"].as_str().unwrap();
    assert!(words.contains("group.protocol=streams"), "{words}");
}

#[test]
fn readiness_of_a_classic_streams_group_names_the_streams_protocol() {
    let b = bootstrap();
    let (left, right) = (unique("market-updates"), unique("notifications"));
    let app_id = unique("ticker-join-classic");
    let mut app = start_on(
        &b,
        &app_id,
        &format!("{left}:6"),
        &format!("{right}:6"),
        2,
        "classic",
    );
    // The classic group, Stable with both stream threads as members.
    let deadline = Instant::now() + Duration::from_secs(180);
    let (code, v) = loop {
        if let Ok(Some(s)) = app.0.try_wait() {
            panic!("the Streams application exited ({s})");
        }
        let (code, v) = readiness(&b, &app_id);
        if v["state"] == "Stable" && v["members"].as_array().is_some_and(|m| m.len() == 2) {
            break (code, v);
        }
        assert!(Instant::now() < deadline, "never Stable: {v:#}");
        std::thread::sleep(Duration::from_secs(2));
    };
    assert_eq!(code, 1, "{v:#}");
    let findings = v["findings"].as_array().unwrap();
    let streams = findings
        .iter()
        .find(|f| f["kind"] == "streams-group")
        .unwrap_or_else(|| panic!("{v:#}"));
    assert!(
        streams["fix"]
            .as_str()
            .unwrap()
            .contains("set group.protocol=streams"),
        "{streams:#}"
    );
    for f in findings {
        let fix = f["fix"].as_str().unwrap();
        assert!(!fix.contains("group.protocol=consumer"), "{f:#}");
        assert!(!fix.contains("group.remote.assignor"), "{f:#}");
    }
    let clients = v["readiness"]["clients"].as_array().unwrap();
    assert!(
        clients.iter().all(|c| c["client"] == "kafka-streams"),
        "{clients:#?}"
    );
}

/// `kafka group --format json` of a classic group: exit code and document,
/// whatever the group's state.
fn describe_classic(b: &str, group: &str) -> (i32, Value) {
    let out = Cmd::cargo_bin("partwise")
        .unwrap()
        .args(["kafka", "group", "-b", b, "-g", group, "--format", "json"])
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), v)
}

// Named without "readiness" and "kip848": the classic protocol works on the
// matrix's brokers too, but two Kafka Streams instances there add minutes
// for nothing the 4.4 broker does not already show.
#[test]
fn a_classic_streams_group_shows_each_threads_process_and_tasks() {
    let b = bootstrap();
    let (left, right) = (unique("market-updates"), unique("notifications"));
    let app_id = unique("ticker-join-classic-tasks");
    let (l, r) = (format!("{left}:6"), format!("{right}:6"));
    // Two instances of one thread each, one standby replica: every thread
    // has active tasks and standbys (never on the instance of the active).
    let mut first = start_with(&b, &app_id, &l, &r, 1, "classic", 1);
    std::thread::sleep(Duration::from_secs(5));
    let mut second = start_with(&b, &app_id, &l, &r, 1, "classic", 1);
    let deadline = Instant::now() + Duration::from_secs(180);
    let (code, v) = loop {
        for app in [&mut first, &mut second] {
            if let Ok(Some(s)) = app.0.try_wait() {
                panic!("a Streams instance exited ({s})");
            }
        }
        let (code, v) = describe_classic(&b, &app_id);
        let settled = v["state"] == "Stable"
            && v["streams"]["members"].as_array().is_some_and(|m| {
                m.len() == 2
                    && m.iter().all(|m| {
                        m["standby"].as_array().is_some_and(|s| !s.is_empty())
                            && m["active"].as_array().is_some_and(|a| !a.is_empty())
                    })
            });
        if settled {
            break (code, v);
        }
        assert!(Instant::now() < deadline, "never settled: {v:#}");
        std::thread::sleep(Duration::from_secs(2));
    };
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["protocol"], "stream", "{v:#}");
    let s = &v["streams"];
    assert_eq!(s["findings"], Value::Array(vec![]), "{s:#}");
    let holds = |p: i64| {
        let mut e = vec![
            Value::from(vec![Value::from(left.clone()), Value::from(p)]),
            Value::from(vec![Value::from(right.clone()), Value::from(p)]),
        ];
        e.sort_by_key(|x| x.to_string());
        Value::Array(e)
    };
    let mut processes = Vec::new();
    let mut standby_tasks = Vec::new();
    for m in s["members"].as_array().unwrap() {
        assert_eq!(m["unknown"], Value::Null, "{m:#}");
        // The default client id carries the process id the subscription names.
        let process = m["process_id"].as_str().unwrap();
        let client = m["client_id"].as_str().unwrap();
        assert!(
            client.contains(&format!("-{process}-StreamThread-1-consumer")),
            "{m:#}"
        );
        processes.push(process.to_string());
        let active: Vec<&str> = m["active"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["task"].as_str().unwrap())
            .collect();
        for h in m["active"]
            .as_array()
            .unwrap()
            .iter()
            .chain(m["standby"].as_array().unwrap())
        {
            let task = h["task"].as_str().unwrap();
            let p: i64 = task.strip_prefix("0_").unwrap().parse().unwrap();
            assert_eq!(h["partitions"], holds(p), "{task}: {m:#}");
        }
        for h in m["standby"].as_array().unwrap() {
            let task = h["task"].as_str().unwrap();
            assert!(
                !active.contains(&task),
                "{task} both active and standby: {m:#}"
            );
            standby_tasks.push(task.to_string());
        }
    }
    processes.dedup();
    assert_eq!(processes.len(), 2, "{s:#}");
    // Six active tasks, each holding partition p of both sources, and a
    // standby of each on the other instance.
    let tasks: Vec<&str> = s["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            assert_eq!(t["missing"], Value::Array(vec![]), "{t:#}");
            t["task"].as_str().unwrap()
        })
        .collect();
    assert_eq!(tasks, ["0_0", "0_1", "0_2", "0_3", "0_4", "0_5"]);
    standby_tasks.sort();
    assert_eq!(standby_tasks, tasks);
    // The table says the same.
    let out = Cmd::cargo_bin("partwise")
        .unwrap()
        .args(["kafka", "group", "-b", &b, "-g", &app_id])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("Kafka Streams (classic protocol, assignor stream): 2 members"),
        "{text}"
    );
    assert!(
        text.contains(&format!("{left}[5],{right}[5]"))
            || text.contains(&format!("{right}[5],{left}[5]")),
        "{text}"
    );
}

/// `report -b` of a topology file that declares the application's group:
/// the streams group is listed with its state and tasks (JSON
/// `live.streams_groups`, a section of the page), not as a missing
/// consumer group.
#[test]
fn report_lists_a_declared_streams_group_with_its_tasks() {
    let b = bootstrap();
    let (left, right) = (unique("market-updates"), unique("notifications"));
    let app_id = unique("ticker-join-report");
    let mut app = start(&b, &app_id, &format!("{left}:6"), &format!("{right}:6"), 1);
    until(&b, &app_id, &mut app, |v| {
        v["state"] == "Stable" && v["tasks"].as_array().is_some_and(|t| t.len() == 6)
    });
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        file.path(),
        format!(
            "[[topic]]\nname = \"{left}\"\npartitions = 6\n\n[[topic]]\nname = \"{right}\"\npartitions = 6\n\n\
             [[consumer_group]]\nname = \"{app_id}\"\nassignor = \"java:range\"\nmembers = 1\nsubscriptions = [\"{left}\", \"{right}\"]\n"
        ),
    )
    .unwrap();
    let out = Cmd::cargo_bin("partwise")
        .unwrap()
        .args([
            "report",
            file.path().to_str().unwrap(),
            "-b",
            &b,
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    let streams = v["live"]["kafka"]["streams_groups"]
        .as_array()
        .unwrap_or_else(|| panic!("{v:#}"));
    assert_eq!(streams.len(), 1, "{v:#}");
    assert_eq!(streams[0]["group"], app_id.as_str());
    assert_eq!(streams[0]["state"], "Stable");
    assert_eq!(streams[0]["tasks"].as_array().unwrap().len(), 6);
    assert_eq!(streams[0]["findings"], Value::Array(vec![]));
    let line = v["verdict"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| {
            l["text"]
                .as_str()
                .unwrap()
                .starts_with(&format!("live streams group {app_id}"))
        })
        .unwrap_or_else(|| panic!("{v:#}"));
    assert_eq!(line["ok"], true, "{line:#}");
    assert!(
        !v["verdict"]
            .to_string()
            .contains(&format!("live consumer group {app_id}")),
        "{v:#}"
    );
}

/// `report -b` of a file that declares only the topics a streams group
/// reads, not the group: ListGroups' type finds it, and it is described as
/// a declared one is (`live.kafka.streams_groups`, a verdict line), said to
/// be undeclared. With a file of other topics it is listed, not described.
#[test]
fn report_finds_an_undeclared_streams_group_by_its_type() {
    let b = bootstrap();
    let (left, right) = (unique("market-updates"), unique("notifications"));
    let app_id = unique("ticker-join-found");
    let mut app = start(&b, &app_id, &format!("{left}:6"), &format!("{right}:6"), 1);
    until(&b, &app_id, &mut app, |v| {
        v["state"] == "Stable" && v["tasks"].as_array().is_some_and(|t| t.len() == 6)
    });
    let report = |topics: &[&str], format: &str| {
        let file = tempfile::NamedTempFile::new().unwrap();
        let body: String = topics
            .iter()
            .map(|t| format!("[[topic]]\nname = \"{t}\"\npartitions = 6\n\n"))
            .collect();
        std::fs::write(file.path(), body).unwrap();
        let out = Cmd::cargo_bin("partwise")
            .unwrap()
            .args(["report", file.path().to_str().unwrap(), "-b", &b])
            .args(["--format", format])
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (code, out, err) = report(&[&left, &right], "json");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("{err}"));
    assert_eq!(code, Some(0), "{v:#}");
    // Every group of the 4.4 broker has a known type; the application's is streams.
    let listed = v["live"]["kafka"]["cluster_groups"]["groups"]
        .as_array()
        .unwrap_or_else(|| panic!("{v:#}"));
    for g in listed {
        let ty = g["type"].as_str().unwrap();
        assert!(
            ["classic", "consumer", "streams", "share"].contains(&ty),
            "{g:#}"
        );
    }
    assert_eq!(
        v["live"]["kafka"]["cluster_groups"]["types_unknown"],
        Value::Null
    );
    let ours = listed
        .iter()
        .find(|g| g["group"] == app_id.as_str())
        .unwrap_or_else(|| panic!("{app_id} not listed: {v:#}"));
    assert_eq!(ours["type"], "streams", "{ours:#}");
    assert_eq!(ours["declared"], false, "{ours:#}");
    assert_eq!(ours["described"], true, "{ours:#}");
    let streams = v["live"]["kafka"]["streams_groups"].as_array().unwrap();
    let s = streams
        .iter()
        .find(|s| s["group"] == app_id.as_str())
        .unwrap_or_else(|| panic!("{v:#}"));
    assert_eq!(s["state"], "Stable");
    assert_eq!(s["tasks"].as_array().unwrap().len(), 6);
    assert_eq!(s["findings"], Value::Array(vec![]));
    let line = v["verdict"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| {
            l["text"]
                .as_str()
                .unwrap()
                .starts_with(&format!("live streams group {app_id}"))
        })
        .unwrap_or_else(|| panic!("{v:#}"));
    assert_eq!(line["ok"], true, "{line:#}");
    assert!(
        line["text"].as_str().unwrap().contains("not declared"),
        "{line:#}"
    );
    // The page lists it with its type.
    let (code, page, err) = report(&[&left, &right], "html");
    assert_eq!(code, Some(0), "{err}");
    assert!(page.contains("Groups on the cluster"), "{page}");
    assert!(
        page.contains(&format!(
            "<tr><th scope=\"row\">{app_id}</th><td>streams</td>"
        )),
        "{page}"
    );
    // A file of other topics: listed, not described.
    let other = unique("unrelated");
    partwise_faults::live::create_topics(&b, &[(&other, 6)]);
    let (code, out, err) = report(&[&other], "json");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("{err}"));
    assert_eq!(code, Some(0), "{v:#}");
    let ours = v["live"]["kafka"]["cluster_groups"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["group"] == app_id.as_str())
        .unwrap_or_else(|| panic!("{v:#}"))
        .clone();
    assert_eq!(
        (&ours["type"], &ours["described"]),
        (&"streams".into(), &false.into())
    );
    assert!(
        !v["live"]["kafka"]["streams_groups"]
            .to_string()
            .contains(&app_id),
        "{v:#}"
    );
}
