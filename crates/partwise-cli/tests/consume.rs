//! `partwise kafka consume` against a real broker: members as separate processes
//! over two topics of 6 partitions. The broker comes from
//! PARTWISE_TEST_BROKER (start one with `eval "$(bash scripts/tansu-up)"`);
//! without it these tests fail rather than pass unseen.

use bytes::Bytes;
use partwise_group::cluster::Cluster;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const PARTITIONS: i32 = 6;

fn broker() -> String {
    std::env::var("PARTWISE_TEST_BROKER").unwrap_or_else(|_| {
        panic!(
            "PARTWISE_TEST_BROKER is not set: these tests need a live broker. \
             Run `eval \"$(bash scripts/tansu-up)\"` first (bash scripts/test does)."
        )
    })
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Fresh topic and group names, so tests share one broker without meeting.
fn names(test: &str) -> (String, String, String) {
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
        % 1_000_000_000;
    let base = format!("pw-{test}-{}-{n}", std::process::id());
    (
        format!("{base}-a"),
        format!("{base}-b"),
        format!("{base}-g"),
    )
}

fn create(topics: &[&str]) {
    let b = broker();
    rt().block_on(async {
        let mut c = Cluster::new(vec![b], "partwise-test", Duration::from_secs(10));
        let list: Vec<(&str, i32)> = topics.iter().map(|t| (*t, PARTITIONS)).collect();
        c.create_topics(&list).await.unwrap();
        // Creation is asynchronous on some brokers: wait for leaders.
        let names: Vec<String> = topics.iter().map(|t| t.to_string()).collect();
        for _ in 0..100 {
            let m = c.metadata(&names).await.unwrap();
            if m.len() == topics.len() && m.values().all(|t| t.leaders.iter().all(|&l| l >= 0)) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("topics {topics:?} did not get leaders");
    });
}

/// One `partwise kafka consume` process and everything it printed.
struct MemberProc {
    child: Child,
    events: Arc<Mutex<Vec<Value>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl MemberProc {
    fn start(group: &str, topics: &[&str], extra: &[&str]) -> MemberProc {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_partwise"));
        cmd.args(["kafka", "consume", "-b", &broker(), "-g", group]);
        for t in topics {
            cmd.args(["-t", t]);
        }
        cmd.args([
            "--offset-reset",
            "earliest",
            "--heartbeat-interval-ms",
            "300",
            "--session-timeout-ms",
            "6000",
            "--rebalance-timeout-ms",
            "8000",
            "--commit-interval-ms",
            "300",
            "--format",
            "ndjson",
        ]);
        cmd.args(extra);
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = events.clone();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                let v: Value =
                    serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON: {line}: {e}"));
                sink.lock().unwrap().push(v);
            }
        });
        MemberProc {
            child,
            events,
            reader: Some(reader),
        }
    }

    fn events(&self) -> Vec<Value> {
        self.events.lock().unwrap().clone()
    }

    /// The member's assignment now: its last `assigned` unless revoked since.
    fn holding(&self) -> Option<Value> {
        let ev = self.events();
        let last = ev
            .iter()
            .rev()
            .find(|e| e["event"] == "assigned" || e["event"] == "revoked")?;
        (last["event"] == "assigned").then(|| last.clone())
    }

    /// SIGTERM, then the exit code; the member commits and leaves.
    fn terminate(mut self) -> i32 {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let status = wait_exit(&mut self.child, Duration::from_secs(20));
        if let Some(r) = self.reader.take() {
            r.join().unwrap();
        }
        status
    }

    fn kill(mut self) -> Vec<Value> {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        if let Some(r) = self.reader.take() {
            r.join().unwrap();
        }
        self.events()
    }
}

impl Drop for MemberProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_exit(child: &mut Child, limit: Duration) -> i32 {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s.code().unwrap_or(-1);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("member did not exit within {limit:?} of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn partitions_of(a: &Value) -> BTreeSet<(String, i64)> {
    a["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_str().unwrap().to_string(), p[1].as_i64().unwrap()))
        .collect()
}

fn units_of(a: &Value) -> BTreeSet<i64> {
    a["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_i64().unwrap())
        .collect()
}

/// Waits until every member holds an assignment of one generation and
/// together they own each of the topics' partitions exactly once; returns
/// each member's assignment.
fn wait_stable(members: &[&MemberProc], topics: &[&str], limit: Duration) -> Vec<Value> {
    let start = Instant::now();
    let mut last = String::new();
    while start.elapsed() < limit {
        let held: Vec<Option<Value>> = members.iter().map(|m| m.holding()).collect();
        if held.iter().all(Option::is_some) {
            let held: Vec<Value> = held.into_iter().map(Option::unwrap).collect();
            let gens: BTreeSet<i64> = held
                .iter()
                .map(|a| a["generation"].as_i64().unwrap())
                .collect();
            let mut all = Vec::new();
            for a in &held {
                all.extend(partitions_of(a));
            }
            let distinct: BTreeSet<_> = all.iter().cloned().collect();
            last = format!("generations {gens:?}, {} partitions held", all.len());
            if gens.len() == 1
                && all.len() == distinct.len()
                && distinct.len() == topics.len() * PARTITIONS as usize
            {
                return held;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!(
        "group of {} did not settle within {limit:?}: {last}",
        members.len()
    );
}

/// In every generation any member printed: each member's partitions are
/// whole units (partition p of both topics), no partition has two owners,
/// and every record a member printed was of a unit it held at that moment.
fn check_generations(all_events: &[Vec<Value>], topics: &[&str]) {
    let mut by_gen: BTreeMap<i64, Vec<BTreeSet<(String, i64)>>> = BTreeMap::new();
    for events in all_events {
        let mut holding: Option<BTreeSet<(String, i64)>> = None;
        for e in events {
            match e["event"].as_str().unwrap() {
                "assigned" => {
                    let parts = partitions_of(e);
                    let units = units_of(e);
                    assert_eq!(parts.len(), units.len() * topics.len(), "split unit: {e}");
                    for u in &units {
                        for t in topics {
                            assert!(
                                parts.contains(&(t.to_string(), *u)),
                                "unit {u} not whole: {e}"
                            );
                        }
                    }
                    by_gen
                        .entry(e["generation"].as_i64().unwrap())
                        .or_default()
                        .push(parts.clone());
                    holding = Some(parts);
                }
                "revoked" => holding = None,
                "record" => {
                    let tp = (
                        e["topic"].as_str().unwrap().to_string(),
                        e["partition"].as_i64().unwrap(),
                    );
                    let h = holding
                        .as_ref()
                        .unwrap_or_else(|| panic!("record outside an assignment: {e}"));
                    assert!(h.contains(&tp), "record of a partition not held: {e}");
                }
                other => panic!("unknown event {other}"),
            }
        }
    }
    for (g, owners) in by_gen {
        let mut seen = BTreeSet::new();
        for parts in owners {
            for tp in parts {
                assert!(
                    seen.insert(tp.clone()),
                    "generation {g}: {tp:?} owned twice"
                );
            }
        }
    }
}

#[test]
fn one_to_six_members_own_whole_units_and_leave_cleanly() {
    let (a, b, g) = names("sizes");
    create(&[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let mut members: Vec<MemberProc> = Vec::new();
    for n in 1..=6 {
        members.push(MemberProc::start(&g, &topics, &[]));
        let refs: Vec<&MemberProc> = members.iter().collect();
        let held = wait_stable(&refs, &topics, Duration::from_secs(60));
        let mut sizes: Vec<usize> = held.iter().map(|h| units_of(h).len()).collect();
        sizes.sort();
        assert_eq!(sizes.iter().sum::<usize>(), 6, "{n} members: {sizes:?}");
        assert!(
            sizes[sizes.len() - 1] - sizes[0] <= 1,
            "{n} members unbalanced: {sizes:?}"
        );
    }
    let events: Vec<Vec<Value>> = members.iter().map(|m| m.events()).collect();
    check_generations(&events, &topics);
    for m in members {
        assert_eq!(m.terminate(), 0);
    }
}

#[test]
fn when_one_of_five_leaves_only_its_units_move() {
    let (a, b, g) = names("sticky");
    create(&[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let mut members: Vec<MemberProc> = (0..5)
        .map(|_| MemberProc::start(&g, &topics, &[]))
        .collect();
    let refs: Vec<&MemberProc> = members.iter().collect();
    let before = wait_stable(&refs, &topics, Duration::from_secs(60));
    let leaver = members.remove(2);
    let leaver_units = units_of(&before[2]);
    assert_eq!(leaver.terminate(), 0);
    let refs: Vec<&MemberProc> = members.iter().collect();
    let after = wait_stable(&refs, &topics, Duration::from_secs(60));
    let mut moved_to = BTreeSet::new();
    for (i, (old, new)) in [0, 1, 3, 4].iter().zip(&after).enumerate() {
        let (old_units, new_units) = (units_of(&before[*old]), units_of(new));
        assert!(
            old_units.is_subset(&new_units),
            "member {i} lost units: {old_units:?} -> {new_units:?}"
        );
        moved_to.extend(new_units.difference(&old_units).cloned());
    }
    assert_eq!(moved_to, leaver_units, "only the leaver's units move");
    let events: Vec<Vec<Value>> = members.iter().map(|m| m.events()).collect();
    check_generations(&events, &topics);
    for m in members {
        assert_eq!(m.terminate(), 0);
    }
}

/// Produces `k{n}` to partition n % 6 of both topics until stopped; returns
/// what was produced as (topic, key hex).
fn producer(
    topics: Vec<String>,
    stop: Arc<Mutex<bool>>,
) -> std::thread::JoinHandle<BTreeSet<(String, String)>> {
    let b = broker();
    std::thread::spawn(move || {
        rt().block_on(async {
            let mut c = Cluster::new(vec![b], "partwise-test-producer", Duration::from_secs(10));
            let mut sent = BTreeSet::new();
            let mut n = 0u64;
            while !*stop.lock().unwrap() {
                let key = format!("k{n}");
                for t in &topics {
                    let p = (n % PARTITIONS as u64) as i32;
                    c.produce(
                        t,
                        p,
                        &[(
                            Some(Bytes::from(key.clone())),
                            Some(Bytes::from_static(b"v")),
                        )],
                    )
                    .await
                    .unwrap();
                    sent.insert((t.clone(), hex(key.as_bytes())));
                }
                n += 1;
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            sent
        })
    })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn churn_loses_nothing_and_commits_never_go_back() {
    let (a, b, g) = names("churn");
    create(&[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let stop = Arc::new(Mutex::new(false));
    let prod = producer(vec![a.clone(), b.clone()], stop.clone());

    // Committed offsets, sampled throughout: none may ever decrease.
    let sampling = Arc::new(Mutex::new(true));
    let sampler = {
        let (bk, g, topics, on) = (
            broker(),
            g.clone(),
            vec![a.clone(), b.clone()],
            sampling.clone(),
        );
        std::thread::spawn(move || {
            rt().block_on(async {
                let mut c =
                    Cluster::new(vec![bk], "partwise-test-offsets", Duration::from_secs(10));
                let mut high: HashMap<(String, i32), i64> = HashMap::new();
                let mut samples = 0;
                while *on.lock().unwrap() {
                    for t in &topics {
                        let parts: Vec<i32> = (0..PARTITIONS).collect();
                        if let Ok(offs) = c.committed_offsets(&g, t, &parts).await {
                            samples += 1;
                            for (p, o) in offs {
                                let h = high.entry((t.clone(), p)).or_insert(o);
                                assert!(
                                    o >= *h,
                                    "{t}-{p}: committed offset went back from {h} to {o}"
                                );
                                *h = o;
                            }
                        }
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                samples
            })
        })
    };

    let mut finished: Vec<Vec<Value>> = Vec::new();
    let m1 = MemberProc::start(&g, &topics, &[]);
    let m2 = MemberProc::start(&g, &topics, &[]);
    let m3 = MemberProc::start(&g, &topics, &[]);
    wait_stable(&[&m1, &m2, &m3], &topics, Duration::from_secs(60));
    std::thread::sleep(Duration::from_secs(1));
    let m4 = MemberProc::start(&g, &topics, &[]);
    wait_stable(&[&m1, &m2, &m3, &m4], &topics, Duration::from_secs(60));
    std::thread::sleep(Duration::from_secs(1));
    let e1 = m1.events.clone();
    assert_eq!(m1.terminate(), 0, "clean leave");
    finished.push(e1.lock().unwrap().clone());
    wait_stable(&[&m2, &m3, &m4], &topics, Duration::from_secs(60));
    std::thread::sleep(Duration::from_secs(1));
    finished.push(m2.kill());
    let m5 = MemberProc::start(&g, &topics, &[]);
    // The killed member's units come back once its session expires.
    wait_stable(&[&m3, &m4, &m5], &topics, Duration::from_secs(90));
    std::thread::sleep(Duration::from_secs(1));
    *stop.lock().unwrap() = true;
    let sent = prod.join().unwrap();
    assert!(sent.len() > 100, "only {} records produced", sent.len());

    let live = [m3, m4, m5];
    let start = Instant::now();
    loop {
        let mut seen = BTreeSet::new();
        for events in finished
            .iter()
            .cloned()
            .chain(live.iter().map(|m| m.events()))
        {
            for e in events.iter().filter(|e| e["event"] == "record") {
                seen.insert((
                    e["topic"].as_str().unwrap().to_string(),
                    e["key_hex"].as_str().unwrap().to_string(),
                ));
            }
        }
        let missing: Vec<_> = sent.difference(&seen).take(5).collect();
        if missing.is_empty() {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "records never handled, e.g. {missing:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut all = finished;
    all.extend(live.iter().map(|m| m.events()));
    check_generations(&all, &topics);
    *sampling.lock().unwrap() = false;
    assert!(
        sampler.join().unwrap() > 10,
        "committed offsets were barely sampled"
    );
    for m in live {
        assert_eq!(m.terminate(), 0);
    }
}

#[test]
fn bad_input_exits_2_with_a_clear_message() {
    let out = Command::new(env!("CARGO_BIN_EXE_partwise"))
        .args([
            "kafka",
            "consume",
            "-b",
            "127.0.0.1:1",
            "-g",
            "g",
            "-t",
            "t",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no broker reachable") && err.contains("127.0.0.1:1"),
        "{err}"
    );

    let out = Command::new(env!("CARGO_BIN_EXE_partwise"))
        .args([
            "kafka",
            "consume",
            "-b",
            &broker(),
            "-g",
            "g",
            "-t",
            "t",
            "--assignor",
            "sticky",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown group protocol 'sticky'"));

    let out = Command::new(env!("CARGO_BIN_EXE_partwise"))
        .args([
            "kafka",
            "consume",
            "-b",
            &broker(),
            "-g",
            "g",
            "-t",
            "pw-no-such-topic",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("topic 'pw-no-such-topic' does not exist")
    );
}

#[test]
fn a_copartitioned_member_joins_a_range_group_through_range() {
    let (a, b, g) = names("proto");
    create(&[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    // A range-only member founds the group; a member asking for copartitioned
    // still shares range, so it joins; one with no shared protocol must fail.
    let first = MemberProc::start(&g, &topics, &["--assignor", "range"]);
    wait_stable(&[&first], &topics, Duration::from_secs(60));
    let second = MemberProc::start(&g, &topics, &[]);
    let held = wait_stable(&[&first, &second], &topics, Duration::from_secs(60));
    assert_eq!(held.len(), 2);
    assert_eq!(first.terminate(), 0);
    assert_eq!(second.terminate(), 0);
}
