//! `ticker demo` on Apache Kafka (PARTWISE_TEST_BROKER) and a Redis Cluster
//! of its own: its keys, topics and groups are its own, it removes them and
//! nothing else, and its counter-example's prediction is `partwise check`'s.

use super::ticker::{broker, redis, redis_pid, text, topology, uniq};
use partwise::group::placement::placements;
use partwise::topology::Topology;
use partwise::{PartitionCount, Partitioner};
use std::collections::BTreeSet;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A Redis Cluster of one test's own on free ports (scripts/redis-cluster-up
/// in a directory of its own), stopped on drop; a Valkey 8.1 one
/// (`redis-cluster-up --valkey`) when `PARTWISE_TEST_VALKEY` is set, as
/// `scripts/test` does in its Valkey pass, so that the demo runs on either.
struct OwnCluster {
    base: u16,
    dir: tempfile::TempDir,
}

impl OwnCluster {
    fn start() -> OwnCluster {
        let free = |p: u16| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok();
        let base = (0..300u16)
            .map(|i| 36000 + ((std::process::id() as u16 % 500) + i * 41) % 2000 * 3)
            .find(|&b| (0..3).all(|k| free(b + k) && free(b + k + 10000)))
            .expect("three free ports");
        let c = OwnCluster {
            base,
            dir: tempfile::tempdir().unwrap(),
        };
        let o = c.script("redis-cluster-up");
        assert!(o.status.success(), "{}", text(&o.stderr));
        c
    }

    fn valkey() -> bool {
        std::env::var_os("PARTWISE_TEST_VALKEY").is_some_and(|v| !v.is_empty())
    }

    /// redis-cli, or Valkey's own valkey-cli beside its server.
    fn cli_bin() -> std::path::PathBuf {
        if !Self::valkey() {
            return "redis-cli".into();
        }
        let pin = std::fs::read_to_string(partwise_faults::live::repo().join("scripts/valkey/pin"))
            .unwrap();
        let version = pin
            .lines()
            .find_map(|l| l.strip_prefix("VALKEY_SERVER_VERSION="))
            .expect("scripts/valkey/pin names the server version");
        partwise_faults::live::repo().join(format!(".cache/valkey/{version}/bin/valkey-cli"))
    }

    fn script(&self, name: &str) -> Output {
        let mut c = Command::new("bash");
        c.arg(partwise_faults::live::repo().join("scripts").join(name));
        if Self::valkey() {
            c.arg("--valkey");
        }
        c.arg(self.base.to_string())
            .env("PARTWISE_REDIS_DIR", self.dir.path())
            .output()
            .unwrap()
    }

    fn node(&self) -> String {
        format!("127.0.0.1:{}", self.base)
    }

    /// redis-cli in cluster mode (it follows MOVED to the key's node).
    fn cli(&self, args: &[&str]) -> String {
        let o = Command::new(Self::cli_bin())
            .args(["-c", "-p", &self.base.to_string()])
            .args(args)
            .output()
            .unwrap();
        text(&o.stdout).trim().to_string()
    }

    /// Every key on every primary.
    fn all_keys(&self) -> BTreeSet<String> {
        (0..3)
            .flat_map(|k| {
                let o = Command::new(Self::cli_bin())
                    .args(["-p", &(self.base + k).to_string(), "--scan"])
                    .output()
                    .unwrap();
                text(&o.stdout)
                    .lines()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect()
    }
}

impl Drop for OwnCluster {
    fn drop(&mut self) {
        let _ = self.script("redis-cluster-down");
    }
}

const DEMO_SYMBOLS: [&str; 10] = [
    "BBCA", "ANTM", "ASII", "UNVR", "TLKM", "BBRI", "BMRI", "GOTO", "ADRO", "ICBP",
];

fn demo(redis: Option<&str>, extra: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ticker"));
    c.env("PARTWISE_KAFKA_BOOTSTRAP", broker())
        .env_remove("PARTWISE_REDIS")
        .args(["demo", "--rate", "100", "--duration", "5s"])
        .args(extra);
    if let Some(r) = redis {
        c.args(["--redis", r]);
    }
    let out = c.output().unwrap();
    eprintln!("ticker demo: {}\n{}", text(&out.stdout), text(&out.stderr));
    out
}

fn conn() -> partwise_kafka::Connection {
    let mut c = partwise_kafka::Connection::new(Duration::from_secs(10));
    c.bootstrap(&broker()).unwrap();
    c
}

fn topic_exists(topic: &str) -> bool {
    partwise_kafka::cluster::list_topics(&conn())
        .unwrap()
        .iter()
        .any(|t| t.name == topic && t.error.is_none())
}

/// Listed groups: a deleted one is not among them.
fn group_exists(group: &str) -> bool {
    partwise_kafka::cluster::list_groups(&conn())
        .unwrap()
        .iter()
        .any(|g| g == group)
}

/// The demo's keys, topics and group are its own (a run id in every name,
/// the symbol's hash tag kept), it removes them and nothing else when it ends,
/// and it starts (and stops) servers of its own instead of touching others.
#[test]
fn the_demo_touches_only_what_it_created() {
    let c = OwnCluster::start();
    // Foreign data at the names a demo used to write (and delete).
    let mut foreign = BTreeSet::new();
    for s in DEMO_SYMBOLS {
        let (mk, nk) = (format!("market:{{{s}}}"), format!("notif:{{{s}}}"));
        assert_eq!(c.cli(&["hset", &mk, "price", "theirs"]), "1");
        assert_eq!(c.cli(&["hset", &nk, "alert", "theirs"]), "1");
        foreign.extend([mk, nk]);
    }
    // A namespace that already holds one of the demo's keys is refused
    // before anything is created.
    let taken = "tk-taken".to_string() + &uniq();
    let held = format!("{taken}:notif:{{GOTO}}");
    assert_eq!(c.cli(&["hset", &held, "alert", "theirs"]), "1");
    foreign.insert(held.clone());
    let o = demo(Some(&c.node()), &["--namespace", &taken]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains(&held), "{}", text(&o.stderr));
    assert!(!topic_exists(&format!("{taken}-market-updates")));
    // So does one whose counter-example namespace (NS-roundrobin) holds one.
    let taken_rr = "tk-taken-rr".to_string() + &uniq();
    let held_rr = format!("{taken_rr}-roundrobin:market:{{BBCA}}");
    assert_eq!(c.cli(&["hset", &held_rr, "price", "theirs"]), "1");
    foreign.insert(held_rr.clone());
    let o = demo(Some(&c.node()), &["--namespace", &taken_rr]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains(&held_rr), "{}", text(&o.stderr));
    assert!(!topic_exists(&format!("{taken_rr}-market-updates")));

    // The counter-example and the drill, on that cluster.
    let o = demo(Some(&c.node()), &[]);
    let t = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{t}");
    for needle in [
        "SIGKILL worker w1",
        "start worker w3",
        "w2 leaves cleanly",
        "verify: OK",
        "== counter-example: as predicted",
        "demo: counter-example as predicted",
        "fixed system (copartitioned): verify passed",
    ] {
        assert!(t.contains(needle), "{needle} not in the demo's output: {t}");
    }
    // The counter-example comes first, and its prediction is check's: the
    // symbols on the partition indices partwise's placement says 4
    // librdkafka round-robin members split, placed by KafkaJS's partitioner.
    let line = |prefix: &str| -> BTreeSet<String> {
        t.lines()
            .find_map(|l| l.trim().strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no '{prefix}' line in the demo's output: {t}"))
            .split_whitespace()
            .filter(|s| *s != "none")
            .map(str::to_string)
            .collect()
    };
    let predicted = line("predicted split symbols:");
    let observed = line("symbols with missing alerts:");
    assert!(!predicted.is_empty(), "{t}");
    assert_eq!(predicted, observed, "{t}");
    let (declared, _, _) = topology(&uniq(), Some(("librdkafka:roundrobin", "4")));
    let declared = Topology::parse(&std::fs::read_to_string(declared.path()).unwrap()).unwrap();
    let split: BTreeSet<u32> = placements(&declared)[0].counts[0]
        .split
        .iter()
        .copied()
        .collect();
    let kafkajs: Partitioner = "kafkajs".parse().unwrap();
    let six = PartitionCount::new(6).unwrap();
    let want: BTreeSet<String> = DEMO_SYMBOLS
        .iter()
        .filter(|s| split.contains(&kafkajs.place(Some(s.as_bytes()), six).partition().unwrap()))
        .map(|s| s.to_string())
        .collect();
    assert_eq!(predicted, want, "{t}");
    assert!(
        t.find("== counter-example: as predicted").unwrap() < t.find("== join: 3 workers").unwrap(),
        "the counter-example runs before the fixed drill: {t}"
    );
    let ns = t
        .lines()
        .find_map(|l| l.strip_prefix("== namespace "))
        .and_then(|l| l.split(':').next())
        .expect("the demo names its namespace")
        .to_string();
    assert!(ns.starts_with("ticker-demo-"), "{ns}");
    // Nothing of the demo's is left, everything foreign is as it was.
    assert_eq!(c.all_keys(), foreign);
    for s in DEMO_SYMBOLS {
        assert_eq!(
            c.cli(&["hget", &format!("market:{{{s}}}"), "price"]),
            "theirs"
        );
        assert_eq!(
            c.cli(&["hget", &format!("notif:{{{s}}}"), "alert"]),
            "theirs"
        );
    }
    for g in [format!("{ns}-joiner"), format!("{ns}-roundrobin-joiner")] {
        assert!(
            !group_exists(&g),
            "the demo left its group {g}: {}",
            text(&o.stderr)
        );
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    for topic in [
        format!("{ns}-market-updates"),
        format!("{ns}-notifications"),
        format!("{ns}-roundrobin-market-updates"),
        format!("{ns}-roundrobin-notifications"),
    ] {
        while topic_exists(&topic) {
            assert!(Instant::now() < deadline, "the demo left its topic {topic}");
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    // No Redis given: the demo starts a cluster of its own on free ports and
    // stops it; the shared cluster at the default address is not restarted.
    // (The counter-example ran above: skipped here, as the flag says.)
    let shared = redis().rsplit(':').next().unwrap().to_string();
    let shared_pid = redis_pid(&shared);
    let o = demo(None, &["--skip-counter-example"]);
    let t = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        !t.contains("counter-example") && t.contains("== demo: verify passed"),
        "{t}"
    );
    let own = t
        .lines()
        .find_map(|l| l.strip_prefix("== starting a Redis Cluster of the demo's own on 127.0.0.1:"))
        .and_then(|l| l.split('-').next())
        .expect("the demo started a cluster of its own")
        .to_string();
    assert_ne!(own, shared);
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", own.parse::<u16>().unwrap())).is_err(),
        "the demo's own cluster still runs on {own}"
    );
    assert_eq!(
        redis_pid(&shared),
        shared_pid,
        "the shared cluster was restarted"
    );
}
