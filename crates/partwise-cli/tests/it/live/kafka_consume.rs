//! `partwise kafka consume` against Apache Kafka: members as separate
//! processes over two topics of 6 partitions. The shared broker comes from
//! PARTWISE_TEST_BROKER (`bash scripts/test` starts it); without it these
//! tests fail rather than pass unseen. Tests that kill brokers start private
//! clusters of their own (`partwise_faults::KafkaCluster`).

use crate::common::process::{wait_exit, Captured};
use bytes::Bytes;
use partwise_client::cluster::Cluster;
use partwise_faults::live::{hex, rt, test_broker as broker};
use partwise_faults::{
    ApiKey, FaultProxy, KafkaCluster, Rule, COORDINATOR_LOAD_IN_PROGRESS,
    COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR,
};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Members of KIP-848's consumer protocol, with the same checks.
mod kip848;
/// A member whose subscription cannot be decoded, and two members with one
/// group.instance.id.
mod members;

const PARTITIONS: i32 = 6;
/// `REBALANCE_IN_PROGRESS` (27).
const REBALANCE_IN_PROGRESS: i16 = 27;

fn names(test: &str) -> (String, String, String) {
    crate::common::names("pw", test)
}

/// A bootstrap list (`host:port,...`) as the addresses it names.
fn split(b: &str) -> Vec<String> {
    b.split(',').map(str::to_string).collect()
}

fn create(topics: &[&str]) {
    create_at(&broker(), topics)
}

fn create_at(b: &str, topics: &[&str]) {
    let b = b.to_string();
    rt().block_on(async {
        let mut c = Cluster::new(split(&b), "partwise-test", Duration::from_secs(10));
        let list: Vec<(&str, i32)> = topics.iter().map(|t| (*t, PARTITIONS)).collect();
        c.create_topics(&list).await.unwrap();
        wait_leaders(&mut c, topics).await;
    });
}

/// Creation is asynchronous: waits until Metadata gives every partition a
/// leader. (A leader may still refuse a write for a moment after that, which
/// is why [`produce_retrying`] exists.)
async fn wait_leaders(c: &mut Cluster, topics: &[&str]) {
    let names: Vec<String> = topics.iter().map(|t| t.to_string()).collect();
    for _ in 0..300 {
        if let Ok(m) = c.metadata(&names).await {
            if m.len() == topics.len() && m.values().all(|t| t.leaders.iter().all(|&l| l >= 0)) {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("topics {topics:?} did not get leaders");
}

/// Topics of 6 partitions on every node of a three-node cluster, with
/// min.insync.replicas 2: an acks=all write survives the loss of any one
/// broker. Created with librdkafka's admin client, not ours.
fn create_replicated(b: &str, topics: &[&str]) {
    use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
    use rdkafka::client::DefaultClientContext;
    use rdkafka::config::ClientConfig;
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", b)
        .create()
        .unwrap();
    let new: Vec<NewTopic<'_>> = topics
        .iter()
        .map(|t| {
            NewTopic::new(t, PARTITIONS, TopicReplication::Fixed(3)).set("min.insync.replicas", "2")
        })
        .collect();
    let opts = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
    rt().block_on(async {
        for r in admin.create_topics(&new, &opts).await.unwrap() {
            r.unwrap();
        }
        let mut c = Cluster::new(split(b), "partwise-test", Duration::from_secs(10));
        wait_leaders(&mut c, topics).await;
    });
}

/// Errors a write may meet while a partition becomes writable after
/// creation or its leader moves (NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE,
/// NOT_ENOUGH_REPLICAS, ...), and lost connections: retried, as a producer
/// with retries does.
fn retriable_write(e: &partwise_client::Error) -> bool {
    const CODES: [i16; 9] = [3, 5, 6, 7, 19, 20, 74, 75, 15];
    e.is_transport() || e.code().is_some_and(|c| CODES.contains(&c))
}

/// Writes one batch with acks=all, retrying [`retriable_write`] errors for
/// up to `limit` (a timed-out attempt may have been written: at least once).
async fn produce_retrying(
    c: &mut Cluster,
    topic: &str,
    partition: i32,
    records: &[(Option<Bytes>, Option<Bytes>)],
    limit: Duration,
) {
    let start = Instant::now();
    loop {
        match c.produce(topic, partition, records).await {
            Ok(_) => return,
            Err(e) if retriable_write(&e) && start.elapsed() < limit => {
                // A dead leader stays in the cached metadata until asked again.
                c.invalidate(topic);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("producing to {topic}-{partition}: {e}"),
        }
    }
}

/// One `partwise kafka consume` process and everything it printed.
struct MemberProc {
    child: Child,
    out: Captured,
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
        // Short timeouts keep the tests fast; a flag in `extra` replaces its default.
        let defaults = [
            ("--offset-reset", "earliest"),
            ("--heartbeat-interval-ms", "300"),
            ("--session-timeout-ms", "6000"),
            ("--rebalance-timeout-ms", "8000"),
            ("--commit-interval-ms", "300"),
            ("--format", "ndjson"),
        ];
        // The consumer protocol's session and heartbeat are the broker's.
        let consumer = extra
            .windows(2)
            .any(|w| w == ["--group-protocol", "consumer"]);
        for (flag, value) in defaults {
            let skip = extra.contains(&flag)
                || (consumer && matches!(flag, "--heartbeat-interval-ms" | "--session-timeout-ms"));
            if !skip {
                cmd.args([flag, value]);
            }
        }
        cmd.args(extra);
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // stderr is passed on, so a failing test still shows it.
        let out = Captured::start(&mut child, true);
        MemberProc { child, out }
    }

    fn stderr(&self) -> String {
        self.out.stderr()
    }

    /// Waits up to `limit` for the member to exit by itself; its exit code.
    fn wait(mut self, limit: Duration) -> (i32, Vec<Value>, String) {
        let start = Instant::now();
        let code = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s.code().unwrap_or(-1);
            }
            if start.elapsed() >= limit {
                // What it last said of its assignment, to tell a member stuck
                // in a rebalance from one fetching on.
                let said: Vec<String> = self
                    .events()
                    .iter()
                    .filter(|e| e["event"] == "assigned" || e["event"] == "revoked")
                    .map(|e| e.to_string())
                    .collect();
                let tail = &said[said.len().saturating_sub(4)..];
                panic!(
                    "member still running after {limit:?}; its last assignment events: {tail:?}; stderr: {}",
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        self.join_readers();
        (code, self.events(), self.stderr())
    }

    fn join_readers(&mut self) {
        self.out.join();
    }

    fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    fn events(&self) -> Vec<Value> {
        self.out.events()
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
/// every record a member printed was of a unit it held at that moment, and
/// no generation has two leaders.
fn check_generations(all_events: &[Vec<Value>], topics: &[&str]) {
    let mut by_gen: BTreeMap<i64, Vec<BTreeSet<(String, i64)>>> = BTreeMap::new();
    let mut leaders: BTreeMap<i64, usize> = BTreeMap::new();
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
                    let g = e["generation"].as_i64().unwrap();
                    by_gen.entry(g).or_default().push(parts.clone());
                    *leaders.entry(g).or_default() += usize::from(e["leader"] == true);
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
    for (g, n) in leaders {
        assert!(n <= 1, "generation {g} has {n} leaders");
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
    // Alone in the group, the first member led its first generation.
    let first = events[0].iter().find(|e| e["event"] == "assigned").unwrap();
    assert_eq!(first["leader"], true, "{first}");
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
    producer_at(&broker(), topics, stop)
}

/// [`producer`] to the cluster at `b`; a record counts as sent once the
/// cluster acknowledged it, however many retries that took.
fn producer_at(
    b: &str,
    topics: Vec<String>,
    stop: Arc<Mutex<bool>>,
) -> std::thread::JoinHandle<BTreeSet<(String, String)>> {
    let b = b.to_string();
    std::thread::spawn(move || {
        rt().block_on(async {
            let mut c = Cluster::new(split(&b), "partwise-test-producer", Duration::from_secs(10));
            let mut sent = BTreeSet::new();
            let mut n = 0u64;
            while !*stop.lock().unwrap() {
                let key = format!("k{n}");
                for t in &topics {
                    let p = (n % PARTITIONS as u64) as i32;
                    let rec = [(
                        Some(Bytes::from(key.clone())),
                        Some(Bytes::from_static(b"v")),
                    )];
                    produce_retrying(&mut c, t, p, &rec, Duration::from_secs(90)).await;
                    sent.insert((t.clone(), hex(key.as_bytes())));
                }
                n += 1;
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            sent
        })
    })
}

/// Reads the group's committed offsets from the broker every 100 ms until
/// finished, and fails if one ever decreases. Errors (a broker down, the
/// coordinator moving) skip a sample.
struct OffsetSampler {
    on: Arc<Mutex<bool>>,
    /// Samples taken, and the highest offset seen per partition.
    thread: std::thread::JoinHandle<(usize, Committed)>,
}

/// Committed offsets by (topic, partition).
type Committed = HashMap<(String, i32), i64>;

impl OffsetSampler {
    fn start(bootstrap: &str, group: &str, topics: &[&str]) -> OffsetSampler {
        OffsetSampler::start_with(bootstrap, group, topics, false)
    }

    /// As [`start`], across a move of the coordinator to another broker:
    /// each move is printed with the last offsets the old coordinator
    /// returned and the first the new one did, and those must not step back
    /// either. (They did, by 2-3 records about 1 run in 4, while the reads
    /// did not ask for stable offsets: the new coordinator answered from its
    /// `__consumer_offsets` partition's high watermark, which lags a fetch
    /// behind the old leader's just after the move; see
    /// `partwise_client::cluster`'s `stable_offsets`.)
    fn across_coordinator_moves(bootstrap: &str, group: &str, topics: &[&str]) -> OffsetSampler {
        OffsetSampler::start_with(bootstrap, group, topics, true)
    }

    fn start_with(bootstrap: &str, group: &str, topics: &[&str], moves: bool) -> OffsetSampler {
        let on = Arc::new(Mutex::new(true));
        let (bk, g, topics, run) = (
            bootstrap.to_string(),
            group.to_string(),
            topics.iter().map(|t| t.to_string()).collect::<Vec<_>>(),
            on.clone(),
        );
        let thread = std::thread::spawn(move || {
            rt().block_on(async {
                let mut c =
                    Cluster::new(split(&bk), "partwise-test-offsets", Duration::from_secs(5));
                let mut high = Committed::new();
                let mut coordinator: Option<String> = None;
                // A move seen, whose first successful reads are not printed yet.
                let mut unlogged_move = false;
                let mut samples = 0;
                while *run.lock().unwrap() {
                    // The coordinator before and after the reads: a read
                    // between two different answers may come from either.
                    let before = if moves {
                        c.find_coordinator(&g).await.ok()
                    } else {
                        None
                    };
                    let mut read: Vec<((String, i32), i64)> = Vec::new();
                    for t in &topics {
                        let parts: Vec<i32> = (0..PARTITIONS).collect();
                        if let Ok(offs) = c.committed_offsets(&g, t, &parts).await {
                            samples += 1;
                            read.extend(offs.into_iter().map(|(p, o)| ((t.clone(), p), o)));
                        }
                    }
                    if moves {
                        let after = c.find_coordinator(&g).await.ok();
                        let moved = before != after
                            || (coordinator.is_some() && before.is_some() && coordinator != before);
                        unlogged_move |= moved;
                        if unlogged_move && !read.is_empty() {
                            unlogged_move = false;
                            let mut last: Vec<_> = high.iter().collect();
                            last.sort();
                            let mut first = read.clone();
                            first.sort();
                            eprintln!(
                                "offset sampler: the coordinator moved ({coordinator:?} -> \
                                 {after:?}); the highest read before: {last:?}; read now: {first:?}"
                            );
                        }
                        if after.is_some() {
                            coordinator = after;
                        }
                    }
                    for ((t, p), o) in read {
                        let h = high.entry((t.clone(), p)).or_insert(o);
                        assert!(
                            o >= *h,
                            "{t}-{p}: committed offset went back from {h} to {o} \
                             (coordinator {coordinator:?})"
                        );
                        *h = o;
                    }

                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                (samples, high)
            })
        });
        OffsetSampler { on, thread }
    }

    /// Stops sampling; the highest committed offset seen per partition.
    fn finish(self) -> Committed {
        *self.on.lock().unwrap() = false;
        let (samples, high) = self
            .thread
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
        assert!(samples > 10, "committed offsets were barely sampled");
        high
    }
}

/// The group coordinator's address. On a fresh cluster __consumer_offsets
/// is created by the first lookup, and until it has leaders (or while a
/// coordinator moves) the answer is COORDINATOR_NOT_AVAILABLE or
/// NOT_COORDINATOR: asked again.
async fn coordinator_of(c: &mut Cluster, group: &str) -> String {
    let start = Instant::now();
    loop {
        match c.find_coordinator(group).await {
            Ok(a) => return a,
            Err(e)
                if (e.is_transport() || e.code().is_some_and(|c| [14, 15, 16].contains(&c)))
                    && start.elapsed() < Duration::from_secs(60) =>
            {
                tokio::time::sleep(Duration::from_millis(200)).await
            }
            Err(e) => panic!("FindCoordinator for {group}: {e}"),
        }
    }
}

#[test]
fn churn_loses_nothing_and_commits_never_go_back() {
    let (a, b, g) = names("churn");
    create(&[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let stop = Arc::new(Mutex::new(false));
    let prod = producer(vec![a.clone(), b.clone()], stop.clone());

    // Committed offsets, sampled throughout: none may ever decrease.
    let sampler = OffsetSampler::start(&broker(), &g, &topics);

    let mut finished: Vec<Vec<Value>> = Vec::new();
    let m1 = MemberProc::start(&g, &topics, &[]);
    let m2 = MemberProc::start(&g, &topics, &[]);
    let m3 = MemberProc::start(&g, &topics, &[]);
    wait_stable(&[&m1, &m2, &m3], &topics, Duration::from_secs(60));
    std::thread::sleep(Duration::from_secs(1));
    let m4 = MemberProc::start(&g, &topics, &[]);
    wait_stable(&[&m1, &m2, &m3, &m4], &topics, Duration::from_secs(60));
    std::thread::sleep(Duration::from_secs(1));
    let e1 = m1.out.events.clone();
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
    sampler.finish();
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
    assert!(err.contains("unknown assignor 'sticky'"), "{err}");
    // A spec the member does not lead with.
    let (code, err) = consume_once(&broker(), "t", &["--assignor", "java:sticky"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("--assignor java:sticky: this member leads a classic group with copartitioned (the default) or java:range only"),
        "{err}"
    );

    let (code, err) = consume_once(&broker(), "pw-no-such-topic", &[]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("topic 'pw-no-such-topic' does not exist"),
        "{err}"
    );
}

/// Deletes `topic` with librdkafka's admin client (not ours), waiting for
/// the controller to accept it.
fn delete_topic(b: &str, topic: &str) {
    use rdkafka::admin::{AdminClient, AdminOptions};
    use rdkafka::client::DefaultClientContext;
    use rdkafka::config::ClientConfig;
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", b)
        .create()
        .unwrap();
    let opts = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
    rt().block_on(async {
        for r in admin.delete_topics(&[topic], &opts).await.unwrap() {
            r.unwrap();
        }
    });
}

/// Waits until the Metadata of broker `b` no longer names `topic`, for at
/// most `limit`; returns when it first did not.
fn gone_from_metadata(b: &str, topic: &str, limit: Duration) -> Instant {
    let start = Instant::now();
    rt().block_on(async {
        let mut c = cluster_of(b);
        loop {
            if let Ok(m) = c.metadata(&[topic.to_string()]).await {
                if !m.contains_key(topic) {
                    return Instant::now();
                }
            }
            assert!(
                start.elapsed() < limit,
                "the broker still names topic '{topic}' {limit:?} after its deletion was accepted"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
}

/// Two members of `g` (started with `extra`) consume topics `a` and `b`,
/// `b` is deleted under them, and each must say so at once and exit 2
/// naming it (not ride it out as a missing leader for its retry timeout),
/// after handing its units back and committing what it handled of `a`.
/// `bootstrap`: the broker of the topics. Returns what each member printed.
pub(super) fn deleting_a_topic_mid_consume_is_exit_2_naming_it(
    bootstrap: &str,
    names: (String, String, String),
    extra: &[&str],
) -> Vec<Vec<Value>> {
    let (a, b, g) = names;
    create_at(bootstrap, &[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let sent = produce_keys(bootstrap, &topics, "d", 60);
    let m1 = MemberProc::start_at(bootstrap, &g, &topics, extra);
    let m2 = MemberProc::start_at(bootstrap, &g, &topics, extra);
    wait_stable(&[&m1, &m2], &topics, Duration::from_secs(90));
    wait_handled(
        || vec![m1.events(), m2.events()],
        &sent,
        Duration::from_secs(60),
    );
    // Everything is handled and committed every 300 ms: what a member
    // commits on its way out can only be these ends.
    let ends_a = end_offsets(bootstrap, &[&a]);
    delete_topic(bootstrap, &b);
    // The clock starts once the broker's Metadata no longer names the topic:
    // the time the controller's deletion takes to reach the broker that
    // answers the member is the broker's, and until then the member is
    // right to fetch on. From then on the member must say so at once.
    let deleted = gone_from_metadata(bootstrap, &b, Duration::from_secs(60));
    let mut all = Vec::new();
    for m in [m1, m2] {
        // The retry timeout is the default 2 minutes: a member that waits
        // for the topic's leaders to come back fails this.
        let (code, events, stderr) = m.wait(Duration::from_secs(30));
        eprintln!("exited {code} after {:?}", deleted.elapsed());
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains(&format!(
                "topic '{b}' was deleted while the group consumed it"
            )),
            "{stderr}"
        );
        assert!(!stderr.contains("LeaderNotAvailable"), "{stderr}");
        assert!(!stderr.contains("gave up"), "{stderr}");
        assert!(!stderr.contains("not whole"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert_eq!(
            events.last().map(|e| e["event"].clone()),
            Some(Value::from("revoked")),
            "the member hands its units back before it exits"
        );
        all.push(events);
    }
    assert!(
        deleted.elapsed() < Duration::from_secs(30),
        "the deletion took {:?} to be noticed",
        deleted.elapsed()
    );
    // What was handled of the surviving topic stays committed.
    let committed = rt().block_on(async {
        let parts: Vec<i32> = (0..PARTITIONS).collect();
        cluster_of(bootstrap)
            .committed_offsets(&g, &a, &parts)
            .await
            .unwrap()
    });
    for ((t, p), end) in &ends_a {
        assert_eq!(
            committed.get(p),
            Some(end),
            "{t}-{p}: committed {committed:?}"
        );
    }
    all
}

#[test]
fn a_topic_deleted_mid_consume_is_said_at_once_and_exit_2() {
    let (a, b, g) = names("deleted");
    let topics = [a.clone(), b.clone()];
    let all = deleting_a_topic_mid_consume_is_exit_2_naming_it(&broker(), (a, b, g), &[]);
    check_generations(&all, &[&topics[0], &topics[1]]);
}

#[test]
fn a_copartitioned_member_joins_a_range_group_through_range() {
    let (a, b, g) = names("proto");
    create(&[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    // A range-only member founds the group; a member asking for copartitioned
    // still shares range, so it joins; one with no shared protocol must fail.
    let first = MemberProc::start(&g, &topics, &["--assignor", "java:range"]);
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
        let mut c = Cluster::new(split(&b), "partwise-test-producer", Duration::from_secs(10));
        let mut sent = BTreeSet::new();
        for n in 0..count {
            let key = format!("{prefix}{n}");
            for t in topics {
                let p = (n % PARTITIONS as u64) as i32;
                let rec = [(Some(Bytes::from(key.clone())), None)];
                produce_retrying(&mut c, t, p, &rec, Duration::from_secs(90)).await;
                sent.insert((t.to_string(), hex(key.as_bytes())));
            }
        }
        sent
    })
}

fn count(events: &[Value], what: &str) -> usize {
    events.iter().filter(|e| e["event"] == what).count()
}

fn cluster_of(b: &str) -> Cluster {
    Cluster::new(split(b), "partwise-test", Duration::from_secs(5))
}

/// Each partition's end offset (high watermark), asked of its leader, and
/// asked again while the cluster settles after a fault.
fn end_offsets(b: &str, topics: &[&str]) -> BTreeMap<(String, i32), i64> {
    rt().block_on(async {
        let mut c = cluster_of(b);
        let mut out = BTreeMap::new();
        for t in topics {
            for p in 0..PARTITIONS {
                let start = Instant::now();
                loop {
                    match c.list_offset(t, p, -1).await {
                        Ok(o) => {
                            out.insert((t.to_string(), p), o);
                            break;
                        }
                        Err(e) if start.elapsed() < Duration::from_secs(60) => {
                            let _ = e;
                            c.invalidate(t);
                            tokio::time::sleep(Duration::from_millis(200)).await;
                        }
                        Err(e) => panic!("end offset of {t}-{p}: {e}"),
                    }
                }
            }
        }
        out
    })
}

/// Waits until the group's committed offset of every partition is its end
/// offset: the members handled everything and the coordinator (wherever it
/// is now) took their commits. Returns the committed offsets.
fn wait_committed_to_end(
    b: &str,
    group: &str,
    topics: &[&str],
    limit: Duration,
) -> BTreeMap<(String, i32), i64> {
    let ends = end_offsets(b, topics);
    let start = Instant::now();
    rt().block_on(async {
        let mut c = cluster_of(b);
        loop {
            let mut got = BTreeMap::new();
            for t in topics {
                let parts: Vec<i32> = (0..PARTITIONS).collect();
                if let Ok(offs) = c.committed_offsets(group, t, &parts).await {
                    got.extend(offs.into_iter().map(|(p, o)| ((t.to_string(), p), o)));
                }
            }
            if got == ends {
                return got;
            }
            assert!(
                start.elapsed() < limit,
                "committed offsets never reached the ends: committed {got:?}, ends {ends:?}"
            );
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    })
}

/// A member's generations only grow: a coordinator that took over a group
/// (or came back with its log) carries its generation on.
fn assert_generations_grow(events: &[Value]) {
    let gens: Vec<i64> = events
        .iter()
        .filter(|e| e["event"] == "assigned")
        .map(|e| e["generation"].as_i64().unwrap())
        .collect();
    assert!(gens.windows(2).all(|w| w[0] < w[1]), "generations {gens:?}");
}

fn signal(m: &MemberProc, sig: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{sig}"), &m.child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{sig}");
}

/// The node a group's coordinator is on, asked of the nodes in `b`.
fn coordinator_node(kafka: &KafkaCluster, b: &str, group: &str) -> i32 {
    let addr = rt().block_on(async { coordinator_of(&mut cluster_of(b), group).await });
    kafka
        .node_at(&addr)
        .unwrap_or_else(|| panic!("coordinator {addr} is none of the cluster's nodes"))
}

/// The bootstrap list without `node`.
fn bootstrap_without(kafka: &KafkaCluster, node: i32) -> String {
    let live: Vec<String> = kafka
        .nodes()
        .iter()
        .filter(|&&n| n != node)
        .map(|&n| kafka.addr(n))
        .collect();
    live.join(",")
}

#[test]
fn a_broker_killed_and_restarted_on_its_log_loses_nothing_and_commits_never_go_back() {
    let kafka = KafkaCluster::start(1).unwrap();
    let bk = kafka.bootstrap().to_string();
    let (a, b, g) = names("restart");
    create_at(&bk, &[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let stop = Arc::new(Mutex::new(false));
    let prod = producer_at(&bk, vec![a.clone(), b.clone()], stop.clone());
    let sampler = OffsetSampler::across_coordinator_moves(&bk, &g, &topics);
    let retry = ["--retry-timeout-ms", "90000"];
    let mut m1 = MemberProc::start_at(&bk, &g, &topics, &retry);
    let mut m2 = MemberProc::start_at(&bk, &g, &topics, &retry);
    wait_stable(&[&m1, &m2], &topics, Duration::from_secs(60));
    std::thread::sleep(Duration::from_secs(1));
    let assigned_before = [
        count(&m1.events(), "assigned"),
        count(&m2.events(), "assigned"),
    ];
    let ends_before = end_offsets(&bk, &topics);

    kafka.kill(1).unwrap();
    let killed = Instant::now();
    assert!(!kafka.running(1));
    // Down for longer than the 6 s session, so the members must notice and
    // rejoin; shorter than their retry timeout, so they wait.
    std::thread::sleep(Duration::from_millis(6500));
    assert!(
        m1.running() && m2.running(),
        "a member gave up during the outage: {} {}",
        m1.stderr(),
        m2.stderr()
    );
    kafka.restart(1).unwrap();
    assert!(kafka.running(1));
    eprintln!("broker back after {:?}", killed.elapsed());
    // The log survived: the topics are there without being created again,
    // with every record acknowledged before the kill.
    let ends_after = end_offsets(&bk, &topics);
    for (tp, before) in &ends_before {
        assert!(
            ends_after[tp] >= *before,
            "{tp:?}: end offset {before} before the kill, {} after",
            ends_after[tp]
        );
    }
    wait_stable(&[&m1, &m2], &topics, Duration::from_secs(90));
    for (i, m) in [&m1, &m2].iter().enumerate() {
        assert!(
            count(&m.events(), "assigned") > assigned_before[i],
            "member {i} did not rejoin after the restart"
        );
    }
    std::thread::sleep(Duration::from_secs(1));
    *stop.lock().unwrap() = true;
    let sent = prod.join().unwrap();
    wait_handled(
        || vec![m1.events(), m2.events()],
        &sent,
        Duration::from_secs(60),
    );
    let committed = wait_committed_to_end(&bk, &g, &topics, Duration::from_secs(60));
    let high = sampler.finish();
    for (tp, h) in high {
        assert!(
            committed[&tp] >= h,
            "{tp:?}: committed {} < {h}",
            committed[&tp]
        );
    }
    check_generations(&[m1.events(), m2.events()], &topics);
    assert_generations_grow(&m1.events());
    assert_generations_grow(&m2.events());
    assert_eq!(m1.terminate(), 0);
    assert_eq!(m2.terminate(), 0);
}

#[test]
fn a_member_whose_broker_never_returns_exits_2_after_its_retry_timeout() {
    let kafka = KafkaCluster::start(1).unwrap();
    let bk = kafka.bootstrap().to_string();
    let (a, b, g) = names("gone");
    create_at(&bk, &[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let m = MemberProc::start_at(&bk, &g, &topics, &["--retry-timeout-ms", "3000"]);
    wait_stable(&[&m], &topics, Duration::from_secs(60));
    let killed = Instant::now();
    kafka.kill(1).unwrap();
    let (code, events, stderr) = m.wait(Duration::from_secs(40));
    assert_eq!(code, 2, "{stderr}");
    // Session (6 s) to notice, then the 3 s budget: not sooner than the budget.
    assert!(killed.elapsed() >= Duration::from_secs(3));
    assert!(
        stderr.contains("gave up after") && stderr.contains(&bk),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    check_generations(&[events], &topics);
}

#[test]
fn when_the_coordinators_broker_is_killed_the_group_follows_it_and_loses_nothing() {
    let kafka = KafkaCluster::start_with(3, &["min.insync.replicas=2"]).unwrap();
    let bk = kafka.bootstrap().to_string();
    let (a, b, g) = names("coordkill");
    create_replicated(&bk, &[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let stop = Arc::new(Mutex::new(false));
    let prod = producer_at(&bk, vec![a.clone(), b.clone()], stop.clone());
    let sampler = OffsetSampler::across_coordinator_moves(&bk, &g, &topics);
    let retry = ["--retry-timeout-ms", "90000"];
    let m1 = MemberProc::start_at(&bk, &g, &topics, &retry);
    let m2 = MemberProc::start_at(&bk, &g, &topics, &retry);
    let m3 = MemberProc::start_at(&bk, &g, &topics, &retry);
    wait_stable(&[&m1, &m2, &m3], &topics, Duration::from_secs(60));
    std::thread::sleep(Duration::from_secs(1));

    let victim = coordinator_node(&kafka, &bk, &g);
    kafka.kill(victim).unwrap();
    let live = bootstrap_without(&kafka, victim);
    let start = Instant::now();
    let moved_to = loop {
        let n = coordinator_node(&kafka, &live, &g);
        if n != victim {
            break n;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the coordinator stayed on the dead node {victim}"
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    eprintln!(
        "coordinator moved from node {victim} to {moved_to} in {:?}",
        start.elapsed()
    );
    wait_stable(&[&m1, &m2, &m3], &topics, Duration::from_secs(90));
    // Records produced while the group runs on the new coordinator.
    std::thread::sleep(Duration::from_secs(2));
    *stop.lock().unwrap() = true;
    let sent = prod.join().unwrap();
    wait_handled(
        || vec![m1.events(), m2.events(), m3.events()],
        &sent,
        Duration::from_secs(60),
    );
    // The new coordinator took the members' commits up to the ends.
    let committed = wait_committed_to_end(&live, &g, &topics, Duration::from_secs(60));
    let high = sampler.finish();
    for (tp, h) in high {
        assert!(
            committed[&tp] >= h,
            "{tp:?}: committed {} < {h}",
            committed[&tp]
        );
    }
    let all = [m1.events(), m2.events(), m3.events()];
    check_generations(&all, &topics);
    for e in &all {
        assert_generations_grow(e);
    }
    for m in [m1, m2, m3] {
        assert_eq!(m.terminate(), 0);
    }
}

#[test]
fn when_a_partition_leader_is_killed_fetches_follow_the_new_leader() {
    let kafka = KafkaCluster::start_with(3, &["min.insync.replicas=2"]).unwrap();
    let bk = kafka.bootstrap().to_string();
    let (a, b, g) = names("leaderkill");
    create_replicated(&bk, &[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let stop = Arc::new(Mutex::new(false));
    let prod = producer_at(&bk, vec![a.clone(), b.clone()], stop.clone());
    // The coordinator's own writes stall until the dead broker is fenced and
    // leaves the ISR of __consumer_offsets (broker.session.timeout.ms, 9 s),
    // and meanwhile it answers no heartbeat: a session shorter than that
    // would rightly make the members give their units up and rejoin.
    let session = ["--session-timeout-ms", "20000"];
    let m1 = MemberProc::start_at(&bk, &g, &topics, &session);
    let m2 = MemberProc::start_at(&bk, &g, &topics, &session);
    wait_stable(&[&m1, &m2], &topics, Duration::from_secs(60));
    std::thread::sleep(Duration::from_secs(1));

    // A leader that is not the coordinator, so only fetching is disturbed.
    let coord = coordinator_node(&kafka, &bk, &g);
    let leaders = rt().block_on(async {
        let mut c = cluster_of(&bk);
        c.metadata(std::slice::from_ref(&a)).await.unwrap()[&a]
            .leaders
            .clone()
    });
    let p = leaders
        .iter()
        .position(|&l| l != coord)
        .unwrap_or_else(|| panic!("every leader is the coordinator {coord}: {leaders:?}"))
        as i32;
    let victim = leaders[p as usize];
    let assigned_before = [
        count(&m1.events(), "assigned"),
        count(&m2.events(), "assigned"),
    ];
    kafka.kill(victim).unwrap();
    let live = bootstrap_without(&kafka, victim);
    let start = Instant::now();
    let new_leader = rt().block_on(async {
        let mut c = cluster_of(&live);
        loop {
            if let Ok(m) = c.metadata(std::slice::from_ref(&a)).await {
                let l = m[&a].leaders[p as usize];
                if l > 0 && l != victim {
                    return l;
                }
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "{a}-{p} stayed on the dead node {victim}"
            );
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    });
    eprintln!(
        "{a}-{p}: leader {victim} -> {new_leader} in {:?}",
        start.elapsed()
    );
    // Records written after the move, to every partition (p included),
    // reach the members: they fetch from the new leaders.
    let after = produce_keys(&live, &topics, "after-", 24);
    wait_handled(
        || vec![m1.events(), m2.events()],
        &after,
        Duration::from_secs(60),
    );
    *stop.lock().unwrap() = true;
    let sent = prod.join().unwrap();
    wait_handled(
        || vec![m1.events(), m2.events()],
        &sent,
        Duration::from_secs(60),
    );
    wait_committed_to_end(&live, &g, &topics, Duration::from_secs(60));
    // The coordinator lived: following a leader needs no rebalance.
    assert_eq!(
        [
            count(&m1.events(), "assigned"),
            count(&m2.events(), "assigned")
        ],
        assigned_before,
        "the members rebalanced"
    );
    check_generations(&[m1.events(), m2.events()], &topics);
    assert_eq!(m1.terminate(), 0);
    assert_eq!(m2.terminate(), 0);
}

#[test]
fn a_member_that_stops_heartbeating_is_expelled_and_handles_nothing_it_lost() {
    let (a, b, g) = names("stopped");
    create(&[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let stop = Arc::new(Mutex::new(false));
    let prod = producer(vec![a.clone(), b.clone()], stop.clone());
    let m1 = MemberProc::start(&g, &topics, &[]);
    let m2 = MemberProc::start(&g, &topics, &[]);
    let m3 = MemberProc::start(&g, &topics, &[]);
    let before = wait_stable(&[&m1, &m2, &m3], &topics, Duration::from_secs(60));
    std::thread::sleep(Duration::from_secs(1));
    let lost = units_of(&m2.holding().unwrap());
    let old_member = before[1]["member"].clone();

    signal(&m2, "STOP");
    let stopped = Instant::now();
    // What it printed before the stop has reached the pipe by now.
    std::thread::sleep(Duration::from_millis(500));
    let frozen = m2.events().len();
    // Its session (6 s) expires and the others take its units.
    let after = wait_stable(&[&m1, &m3], &topics, Duration::from_secs(60));
    assert!(
        stopped.elapsed() >= Duration::from_secs(5),
        "expelled after {:?}, before its session timed out",
        stopped.elapsed()
    );
    let taken: BTreeSet<i64> = after.iter().flat_map(units_of).collect();
    assert!(lost.is_subset(&taken), "{lost:?} not taken over: {taken:?}");
    // Records keep flowing to its old units meanwhile, so a fetch answered
    // while it was stopped holds some.
    std::thread::sleep(Duration::from_secs(1));

    signal(&m2, "CONT");
    wait_stable(&[&m1, &m2, &m3], &topics, Duration::from_secs(60));
    let (resumed, assigned) = fenced_before_handling(&m2, frozen);
    // Expelled, it joined again as a new member.
    assert_ne!(resumed[assigned]["member"], old_member);

    std::thread::sleep(Duration::from_secs(1));
    *stop.lock().unwrap() = true;
    let sent = prod.join().unwrap();
    wait_handled(
        || vec![m1.events(), m2.events(), m3.events()],
        &sent,
        Duration::from_secs(60),
    );
    check_generations(&[m1.events(), m2.events(), m3.events()], &topics);
    for m in [m1, m2, m3] {
        assert_eq!(m.terminate(), 0);
    }
}

/// What `m` printed after its first `frozen` events, once it resumed from a
/// stop longer than its session, and where its new assignment is in that:
/// it finds out it was fenced before handling anything (its first event is
/// the revocation, and no record comes before the new assignment).
fn fenced_before_handling(m: &MemberProc, frozen: usize) -> (Vec<Value>, usize) {
    let resumed: Vec<Value> = m.events()[frozen..].to_vec();
    assert_eq!(resumed[0]["event"], "revoked", "{resumed:?}");
    let assigned = resumed
        .iter()
        .position(|e| e["event"] == "assigned")
        .unwrap();
    assert!(
        resumed[..assigned].iter().all(|e| e["event"] != "record"),
        "records handled after the stop, before rejoining: {:?}",
        &resumed[..assigned]
    );
    (resumed, assigned)
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
    // A heartbeat refused with NOT_COORDINATOR only sends the member to look
    // the coordinator up again; REBALANCE_IN_PROGRESS after it makes both
    // rejoin, through the JoinGroup and SyncGroup faults.
    let faults = [
        (ApiKey::OffsetCommit, NOT_COORDINATOR, 2),
        (ApiKey::Heartbeat, NOT_COORDINATOR, 3),
        (ApiKey::Heartbeat, REBALANCE_IN_PROGRESS, 1),
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
        err.contains(
            "invalid value 'nosuch' for '-a/--assignor <SPEC>': unknown assignor 'nosuch' (known: java:range,"
        ),
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
    use partwise_client::wire::Connection;
    let (a, b, g) = names("connect");
    create(&[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    // A Kafka Connect worker group: protocol type "connect", not "consumer".
    rt().block_on(async {
        let mut c = Cluster::new(vec![broker()], "partwise-test", Duration::from_secs(10));
        let coord = coordinator_of(&mut c, &g).await;
        let mut conn = Connection::connect(&coord, "connect-worker", Duration::from_secs(10))
            .await
            .unwrap();
        let mut member = String::new();
        for _ in 0..3 {
            let req = JoinGroupRequest::default()
                .with_group_id(GroupId(StrBytes::from_string(g.clone())))
                // The first join of an empty group is held for
                // group.initial.rebalance.delay.ms (3 s by default).
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

/// A poll dropped mid-round loses nothing. One fetch round reads each
/// leader in turn; records only on the first leader's partitions make the
/// round read them and then wait on the second leader's long poll, where a
/// short `timeout` drops it. Those records must still be handed out by a
/// later poll, and close() must not commit past them before (the bug: they
/// were lost with the round while their positions had moved, and a SIGTERM
/// there made `partwise kafka consume` commit past records it never printed).
#[test]
fn a_poll_dropped_mid_round_loses_no_records() {
    use partwise_group::{Config, Consumer, Event, OffsetReset};
    let kafka = KafkaCluster::start(2).unwrap();
    let bk = kafka.bootstrap().to_string();
    let (a, b, g) = names("dropped-poll");
    create_at(&bk, &[&a, &b]);
    rt().block_on(async {
        let mut c = Cluster::new(split(&bk), "partwise-test", Duration::from_secs(10));
        let mut leaders: BTreeMap<String, Vec<(String, i32)>> = BTreeMap::new();
        for t in [&a, &b] {
            for p in 0..PARTITIONS {
                let l = c.leader_or_refresh(t, p).await.unwrap();
                leaders.entry(l).or_default().push((t.to_string(), p));
            }
        }
        assert_eq!(leaders.len(), 2, "partitions on both nodes: {leaders:?}");
        // A round reads leaders in address order: records on the first only.
        let (first, parts) = leaders.iter().next().unwrap();
        let mut cfg = Config::new(split(&bk), g.clone(), vec![a.clone(), b.clone()]);
        cfg.auto_offset_reset = OffsetReset::Earliest;
        cfg.fetch_max_wait = Duration::from_millis(2000);
        let mut consumer = Consumer::new(cfg.clone()).await.unwrap();
        let start = Instant::now();
        loop {
            match tokio::time::timeout(Duration::from_secs(30), consumer.poll()).await {
                Ok(Ok(Event::Assigned(_))) => break,
                Ok(Ok(_)) => {}
                other => panic!("no assignment: {other:?}"),
            }
            assert!(start.elapsed() < Duration::from_secs(60));
        }
        let mut want = BTreeSet::new();
        for (t, p) in parts {
            let recs: Vec<(Option<Bytes>, Option<Bytes>)> = (0..5)
                .map(|i| {
                    let id = format!("{t}/{p}/{i}");
                    want.insert(id.clone());
                    (Some(Bytes::from(id.clone())), Some(Bytes::from(id)))
                })
                .collect();
            produce_retrying(&mut c, t, *p, &recs, Duration::from_secs(20)).await;
        }
        // Polls of 300 ms: each one that reads the first leader's records is
        // dropped on the second's 2 s long poll.
        let mut got = BTreeSet::new();
        let mut dropped = 0;
        let end = Instant::now() + Duration::from_secs(20);
        while got != want && Instant::now() < end {
            match tokio::time::timeout(Duration::from_millis(300), consumer.poll()).await {
                Err(_) => dropped += 1,
                Ok(Ok(Event::Records { records, .. })) => {
                    for r in records {
                        got.insert(String::from_utf8(r.key.unwrap().to_vec()).unwrap());
                    }
                }
                Ok(Ok(e)) => panic!("{first}: unexpected {e:?}"),
                Ok(Err(e)) => panic!("poll: {e}"),
            }
        }
        assert!(dropped > 0, "no poll was dropped");
        let missing: Vec<&String> = want.difference(&got).collect();
        assert!(
            missing.is_empty(),
            "records never handed out after {dropped} dropped polls: {missing:?}"
        );

        // Dropped again with records fetched but not handed out, close()
        // commits only what was: a new member gets the rest.
        let mut more = BTreeSet::new();
        for (t, p) in parts {
            let id = format!("{t}/{p}/late");
            more.insert(id.clone());
            produce_retrying(
                &mut c,
                t,
                *p,
                &[(Some(Bytes::from(id.clone())), Some(Bytes::from(id)))],
                Duration::from_secs(20),
            )
            .await;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        // Whatever this poll hands out counts as handled at close().
        if let Ok(Ok(Event::Records { records, .. })) =
            tokio::time::timeout(Duration::from_millis(300), consumer.poll()).await
        {
            for r in records {
                more.remove(&String::from_utf8(r.key.unwrap().to_vec()).unwrap());
            }
        }
        consumer.close().await.unwrap();
        let mut next = Consumer::new(cfg).await.unwrap();
        let end = Instant::now() + Duration::from_secs(60);
        while !more.is_empty() && Instant::now() < end {
            if let Ok(Ok(Event::Records { records, .. })) =
                tokio::time::timeout(Duration::from_secs(5), next.poll()).await
            {
                for r in records {
                    more.remove(&String::from_utf8(r.key.unwrap().to_vec()).unwrap());
                }
            }
        }
        assert!(
            more.is_empty(),
            "committed past records never handed out: {more:?}"
        );
        next.close().await.unwrap();
    });
}

#[test]
fn count_only_prints_one_running_count_per_poll_and_no_record_lines() {
    let (t1, t2, g) = names("count_only");
    let (t1, t2) = (t1.as_str(), t2.as_str());
    create(&[t1, t2]);
    let sent = produce_keys(&broker(), &[t1, t2], "c", 60);
    let m = MemberProc::start(&g, &[t1, t2], &["--count-only"]);
    let start = Instant::now();
    let total = |ev: &[Value]| ev.iter().filter_map(|e| e["total"].as_u64()).max();
    while total(&m.events()) < Some(sent.len() as u64) {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{:?}; stderr: {}",
            m.events(),
            m.stderr()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let ev = m.events();
    let polls: Vec<&Value> = ev.iter().filter(|e| e["event"] == "records").collect();
    // Each poll says how many it handled; the totals run on without a gap.
    let mut running = 0;
    for p in &polls {
        let keys: Vec<&str> = p.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        assert_eq!(keys, ["event", "records", "total"], "{p}");
        running += p["records"].as_u64().unwrap();
        assert_eq!(p["total"].as_u64(), Some(running), "{polls:?}");
    }
    assert_eq!(running, sent.len() as u64);
    assert_eq!(count(&ev, "record"), 0);
    assert_eq!(count(&ev, "assigned"), 1);
    assert_eq!(m.terminate(), 0);
}
