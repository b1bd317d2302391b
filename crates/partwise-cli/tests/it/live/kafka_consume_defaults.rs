//! `partwise kafka consume` run the way a user first runs it: no flags but
//! brokers, group and topics, so `latest`, a 45 s session and the broker's
//! own `group.initial.rebalance.delay.ms` (3 s on Apache Kafka). Every other
//! consume test shortens timeouts; this one proves the defaults. Topics are
//! made, written and read back with librdkafka, an independent client. The
//! broker comes from PARTWISE_TEST_BROKER (`scripts/services` starts one).

use crate::common::sh_quote;
use partwise_faults::live::{create_topics, hex, test_broker as broker};
use rdkafka::client::ClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};
use rdkafka::TopicPartitionList;
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

/// Apache Kafka's default group.initial.rebalance.delay.ms.
const INITIAL_DELAY: Duration = Duration::from_millis(3000);

fn names(test: &str) -> (String, String, String) {
    crate::common::names("pwd", test)
}

fn create(b: &str, topics: &[&str]) {
    let list: Vec<(&str, i32)> = topics.iter().map(|t| (*t, 6)).collect();
    create_topics(b, &list);
}

/// Produces `keys` to every topic with librdkafka's default partitioner;
/// returns (topic, partition, key hex) of each acknowledged record, from the
/// delivery reports.
fn produce(b: &str, topics: &[&str], keys: &[String]) -> BTreeSet<(String, i32, String)> {
    struct Reports(Mutex<Vec<(String, i32, String)>>);
    impl ClientContext for Reports {}
    impl ProducerContext for Reports {
        type DeliveryOpaque = ();
        fn delivery(&self, r: &DeliveryResult<'_>, _: ()) {
            let m = r.as_ref().expect("delivery failed");
            let key = hex(m.key().unwrap_or_default());
            self.0
                .lock()
                .unwrap()
                .push((m.topic().to_string(), m.partition(), key));
        }
    }
    let p: BaseProducer<Reports> = ClientConfig::new()
        .set("bootstrap.servers", b)
        .set("linger.ms", "0")
        .create_with_context(Reports(Mutex::new(Vec::new())))
        .unwrap();
    for t in topics {
        for k in keys {
            p.send(BaseRecord::to(t).key(k.as_str()).payload("v"))
                .map_err(|(e, _)| e)
                .unwrap();
            p.poll(Duration::ZERO);
        }
    }
    p.flush(Duration::from_secs(30)).unwrap();
    let got: BTreeSet<_> = std::mem::take(&mut *p.context().0.lock().unwrap())
        .into_iter()
        .collect();
    assert_eq!(
        got.len(),
        topics.len() * keys.len(),
        "not every record was acknowledged"
    );
    got
}

/// A `consume` process with the defaults, its NDJSON events arriving on a
/// channel with the time each was read.
struct Member {
    child: Child,
    events: mpsc::Receiver<(Instant, Value)>,
    stderr: std::thread::JoinHandle<String>,
}

impl Member {
    fn start(b: &str, group: &str, topics: &[&str]) -> (Member, Instant) {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_partwise"));
        cmd.args(["kafka", "consume", "-b", b, "-g", group]);
        for t in topics {
            cmd.args(["-t", t]);
        }
        let started = Instant::now();
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, events) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                let v: Value =
                    serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON: {line}: {e}"));
                if tx.send((Instant::now(), v)).is_err() {
                    break;
                }
            }
        });
        let mut err = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut err, &mut s).ok();
            s
        });
        (
            Member {
                child,
                events,
                stderr,
            },
            started,
        )
    }

    fn next(&self, until: Instant) -> Option<(Instant, Value)> {
        self.events
            .recv_timeout(until.saturating_duration_since(Instant::now()))
            .ok()
    }

    /// SIGINT, as a person's Ctrl-C; the exit code, the remaining events and stderr.
    fn interrupt(mut self) -> (Option<i32>, Vec<Value>, String) {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-INT", &pid]).status().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(Instant::now() < deadline, "consume ignored SIGINT for 30 s");
            std::thread::sleep(Duration::from_millis(50));
        };
        let rest = self.events.iter().map(|(_, v)| v).collect();
        (status.code(), rest, self.stderr.join().unwrap())
    }
}

fn record_of(v: &Value) -> (String, i32, String) {
    (
        v["topic"].as_str().unwrap().to_string(),
        v["partition"].as_i64().unwrap() as i32,
        v["key_hex"].as_str().unwrap().to_string(),
    )
}

/// Waits for `want` records; everything else seen on the way is returned too.
fn collect(
    m: &Member,
    want: &BTreeSet<(String, i32, String)>,
    limit: Duration,
) -> (BTreeSet<(String, i32, String)>, Vec<Value>) {
    let deadline = Instant::now() + limit;
    let mut got = BTreeSet::new();
    let mut other = Vec::new();
    while !want.is_subset(&got) {
        let Some((_, v)) = m.next(deadline) else {
            break;
        };
        if v["event"] == "record" {
            got.insert(record_of(&v));
        } else {
            other.push(v);
        }
    }
    (got, other)
}

#[test]
fn the_defaults_join_within_the_initial_delay_and_handle_what_comes_after() {
    let b = broker();
    let (ta, tb, group) = names("defaults");
    create(&b, &[&ta, &tb]);
    // Written before the member exists: `latest` must skip these.
    let before = produce(&b, &[&ta, &tb], &["old-1".into(), "old-2".into()]);

    let (m, started) = Member::start(&b, &group, &[&ta, &tb]);
    let (at, first) = m
        .next(started + Duration::from_secs(20))
        .expect("no event within 20 s of starting with the defaults");
    let join = at - started;
    eprintln!("default consume: first assignment {join:?} after the process started");
    assert_eq!(first["event"], "assigned", "{first}");
    assert_eq!(first["units"], serde_json::json!([0, 1, 2, 3, 4, 5]));
    // The broker holds a new group's first join for the initial delay; what
    // the member adds on top (start, metadata, two JoinGroups, SyncGroup,
    // offsets) must stay small.
    assert!(
        join <= INITIAL_DELAY + Duration::from_millis(1000),
        "first assignment after {join:?}, more than the initial delay + 1 s"
    );

    let keys: Vec<String> = (0..40).map(|i| format!("sym-{i}")).collect();
    let sent = produce(&b, &[&ta, &tb], &keys);
    let (got, other) = collect(&m, &sent, Duration::from_secs(20));
    assert_eq!(
        got, sent,
        "records produced after joining; other events {other:?}"
    );
    assert!(other.is_empty(), "a lone member rebalanced: {other:?}");

    let (code, rest, stderr) = m.interrupt();
    assert_eq!(code, Some(0), "stderr: {stderr}");
    assert!(
        rest.iter().all(|v| v["event"] != "record"),
        "records after those produced: {rest:?}"
    );
    assert_eq!(
        rest.last().map(|v| v["event"].clone()),
        Some("revoked".into())
    );
    assert!(
        got.intersection(&before).next().is_none(),
        "latest delivered records written before the group existed"
    );
    // Not a terminal: nothing but errors on stderr.
    assert!(!stderr.contains("joining group"), "{stderr}");

    // What it handled was committed on SIGINT: the next member of the group
    // resumes there, and `latest` no longer applies.
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &b)
        .set("group.id", &group)
        .create()
        .unwrap();
    let mut tpl = TopicPartitionList::new();
    for t in [&ta, &tb] {
        for p in 0..6 {
            tpl.add_partition(t, p);
        }
    }
    let committed = c.committed_offsets(tpl, Duration::from_secs(10)).unwrap();
    let total: i64 = committed
        .elements()
        .iter()
        .map(|e| e.offset().to_raw().unwrap_or(-1).max(0))
        .sum();
    assert_eq!(total, (before.len() + sent.len()) as i64, "{committed:?}");

    let later = produce(&b, &[&ta, &tb], &["new-1".into(), "new-2".into()]);
    let (m, _) = Member::start(&b, &group, &[&ta, &tb]);
    let (got, _) = collect(&m, &later, Duration::from_secs(30));
    assert_eq!(got, later, "records written while no member ran");
    let (code, rest, stderr) = m.interrupt();
    assert_eq!(code, Some(0), "stderr: {stderr}");
    assert!(rest.iter().all(|v| v["event"] != "record"), "{rest:?}");
}

/// Single quotes for sh, for the `script -c` command line.
#[test]
fn on_a_terminal_it_says_it_is_waiting_to_join() {
    let b = broker();
    let (ta, tb, group) = names("notice");
    create(&b, &[&ta, &tb]);
    let out_file = std::env::temp_dir().join(format!("{group}.ndjson"));
    // script(1) gives the command a pseudo-terminal; stdout goes to a file,
    // so what the terminal shows is stderr alone. SIGINT after the join.
    let cmd = format!(
        "timeout --preserve-status -s INT 7 {} kafka consume -b {} -g {} -t {} -t {} > {}",
        sh_quote(env!("CARGO_BIN_EXE_partwise")),
        sh_quote(&b),
        sh_quote(&group),
        sh_quote(&ta),
        sh_quote(&tb),
        sh_quote(&out_file.to_string_lossy())
    );
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("script(1) from util-linux runs the command on a pseudo-terminal");
    let terminal = String::from_utf8_lossy(&out.stdout).to_string();
    let stdout = std::fs::read_to_string(&out_file).unwrap();
    std::fs::remove_file(&out_file).unwrap();
    assert_eq!(out.status.code(), Some(0), "{terminal}");
    let joining = terminal
        .find(&format!("joining group '{group}'"))
        .unwrap_or_else(|| panic!("no waiting notice on the terminal: {terminal:?}"));
    let joined = terminal
        .find(&format!("joined group '{group}'"))
        .unwrap_or_else(|| panic!("no joined notice on the terminal: {terminal:?}"));
    assert!(joining < joined, "{terminal}");
    // The notices are for people: stdout stays NDJSON.
    let events: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    assert_eq!(
        events.first().map(|v| v["event"].clone()),
        Some("assigned".into())
    );
    assert_eq!(
        events.last().map(|v| v["event"].clone()),
        Some("revoked".into())
    );
}
