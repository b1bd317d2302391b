//! The ticker end to end on Apache Kafka (PARTWISE_TEST_BROKER) and the
//! Redis Cluster (PARTWISE_REDIS): a Redis primary paused during the join,
//! `up` refusing the seeds' round-robin group, and bad input (the demo's
//! counter-example and drill, on clusters of their own, are `demo.rs`'s;
//! the connection flags over SASL_SSL, `secure.rs`'s). The scenarios
//! that write Redis run one after another in one test, each with symbols of
//! its own, so that no two of them write the same keys.

use partwise::group::placement::placements;
use partwise::topology::Topology;
use partwise_faults::live::{redis_node, test_broker};
use serde_json::Value;
use std::io::Write;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub(super) fn broker() -> String {
    test_broker()
}

pub(super) fn redis() -> String {
    redis_node()
}

fn ticker() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ticker"));
    c.env("PARTWISE_KAFKA_BOOTSTRAP", broker())
        .env("PARTWISE_REDIS", redis());
    c
}

pub(super) fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn run(args: &[&str]) -> Output {
    let out = ticker().args(args).output().unwrap();
    eprintln!(
        "ticker {args:?}: {}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

/// A short unique tag for names of this run.
pub(super) fn uniq() -> String {
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{}{}", std::process::id() % 1000, n % 1_000_000)
}

fn example() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/ticker.toml"
    ))
    .unwrap()
}

/// The example topology with its own topic names (and optionally another
/// consumer-group assignor and member count, for `check`).
pub(super) fn topology(
    tag: &str,
    group: Option<(&str, &str)>,
) -> (tempfile::NamedTempFile, String, String) {
    let (m, n) = (format!("tk-{tag}-market"), format!("tk-{tag}-notif"));
    let mut t = example()
        .replace("\"market-updates\"", &format!("\"{m}\""))
        .replace("\"notifications\"", &format!("\"{n}\""));
    if let Some((assignor, members)) = group {
        t = t
            .replace(
                "assignor = \"kafkajs:roundrobin\"",
                &format!("assignor = \"{assignor}\""),
            )
            .replace("members = 3", &format!("members = {members}"));
    }
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(t.as_bytes()).unwrap();
    (f, m, n)
}

/// Ten symbols of this scenario alone, so its Redis keys are its own.
fn symbols(tag: &str) -> (tempfile::NamedTempFile, Vec<String>) {
    let names: Vec<String> = (0..10).map(|i| format!("S{tag}X{i}")).collect();
    let mut f = tempfile::NamedTempFile::new().unwrap();
    for (i, s) in names.iter().enumerate() {
        writeln!(f, "{s},{}", 1000 + 500 * i).unwrap();
    }
    (f, names)
}

struct Worker(Child, std::path::PathBuf);

impl Worker {
    fn start(topo: &str, group: &str, id: &str, runtime: &str) -> Worker {
        let log = std::env::temp_dir().join(format!("ticker-{group}-{id}.log"));
        let child = ticker()
            .args(["worker", "--topology", topo, "--group", group, "--id", id])
            .args(["--runtime", runtime, "--session-timeout-ms", "6000"])
            .args(["--heartbeat-interval-ms", "1000"])
            .stdout(Stdio::from(std::fs::File::create(&log).unwrap()))
            .stderr(Stdio::from(
                std::fs::File::create(log.with_extension("err")).unwrap(),
            ))
            .spawn()
            .unwrap();
        Worker(child, log)
    }

    fn events(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.1)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.1.with_extension("err")).unwrap_or_default()
    }

    fn stop(mut self) -> Vec<Value> {
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.0.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "worker ignored SIGTERM");
            std::thread::sleep(Duration::from_millis(100));
        }
        self.events()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_assigned(workers: &[&Worker]) {
    let deadline = Instant::now() + Duration::from_secs(40);
    while !workers
        .iter()
        .all(|w| w.events().iter().any(|e| e["event"] == "assigned"))
    {
        assert!(
            Instant::now() < deadline,
            "workers not assigned within 40 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn verify_json(topo: &str, wait: &str) -> (i32, Value) {
    let out = run(&[
        "verify",
        "--topology",
        topo,
        "--wait",
        wait,
        "--format",
        "json",
    ]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), v)
}

pub(super) fn redis_pid(port: &str) -> String {
    let out = Command::new("redis-cli")
        .args(["-p", port, "info", "server"])
        .output()
        .unwrap();
    text(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("process_id:"))
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn the_ticker_end_to_end_faults_and_counter_example() {
    // (The demo's drill runs in the_demo_touches_only_what_it_created, on a
    // Redis Cluster of its own.)
    // 2. A Redis primary paused during the join: the workers retry, verify
    //    passes once it is back.
    let tag = uniq();
    let (topo, _, _) = topology(&tag, None);
    let topo = topo.path().to_str().unwrap().to_string();
    let (syms, _) = symbols(&tag);
    let syms = syms.path().to_str().unwrap().to_string();
    assert_eq!(run(&["up", "--topology", &topo]).status.code(), Some(0));
    let group = format!("tk-pause-{tag}");
    let (w0, w1) = (
        Worker::start(&topo, &group, "p0", "partwise"),
        Worker::start(&topo, &group, "p1", "partwise"),
    );
    wait_assigned(&[&w0, &w1]);
    let mut feed = ticker()
        .args([
            "feed",
            "--topology",
            &topo,
            "--symbols",
            &syms,
            "--rate",
            "150",
            "--duration",
            "8s",
        ])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let port = redis().rsplit(':').next().unwrap().parse::<u16>().unwrap() + 1;
    let pid = redis_pid(&port.to_string());
    Command::new("kill").args(["-STOP", &pid]).status().unwrap();
    std::thread::sleep(Duration::from_secs(4));
    Command::new("kill").args(["-CONT", &pid]).status().unwrap();
    assert!(feed.wait().unwrap().success());
    let (code, v) = verify_json(&topo, "90s");
    assert_eq!(code, 0, "verify after the pause: {v}");
    assert!(v["expected_fired"].as_u64().unwrap() > 0, "{v}");
    let retried = w0.stderr() + &w1.stderr();
    w0.stop();
    w1.stop();
    assert!(
        retried.contains("retrying"),
        "no worker had to retry a write: {retried}"
    );

    // 3. The seed's counter-example: `ticker up` refuses the file with the
    //    seeds' round-robin group declared at 4 members (check fails on it).
    //    The 4 workers themselves run in the demo (in
    //    the_demo_touches_only_what_it_created), where verify must find alerts
    //    missing on exactly the symbols check predicts: run once, not twice.
    let tag = uniq();
    let (declared, _, _) = topology(&tag, Some(("librdkafka:roundrobin", "4")));
    let t = Topology::parse(&std::fs::read_to_string(declared.path()).unwrap()).unwrap();
    assert_eq!(
        placements(&t)[0].splitting_counts(),
        vec![4],
        "partwise check predicts the split"
    );
    let refused = run(&["up", "--topology", declared.path().to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        text(&refused.stdout).contains("splits units"),
        "{}",
        text(&refused.stdout)
    );
}

#[test]
fn bad_input_is_a_clear_error_and_an_existing_topic_is_never_changed() {
    let tag = uniq();
    let out = run(&[
        "feed",
        "--symbols",
        "/nonexistent/symbols.txt",
        "--duration",
        "1s",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("/nonexistent/symbols.txt"),
        "{}",
        text(&out.stderr)
    );
    let mut f = tempfile::NamedTempFile::new().unwrap();
    writeln!(f, "BBCA\nNOSUCH").unwrap();
    let out = run(&[
        "feed",
        "--symbols",
        f.path().to_str().unwrap(),
        "--duration",
        "1s",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("line 2") && err.contains("NOSUCH"), "{err}");

    // A topic that exists with 8 partitions: up refuses, and leaves it at 8.
    // (A co-partitioned group, so that 8 partitions pass check too.)
    let (topo6, m, _) = topology(&tag, Some(("copartitioned", "3")));
    let eight = std::fs::read_to_string(topo6.path())
        .unwrap()
        .replace("partitions = 6", "partitions = 8");
    let mut topo8 = tempfile::NamedTempFile::new().unwrap();
    topo8.write_all(eight.as_bytes()).unwrap();
    assert_eq!(
        run(&["up", "--topology", topo8.path().to_str().unwrap()])
            .status
            .code(),
        Some(0)
    );
    let out = run(&["up", "--topology", topo6.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let t = text(&out.stdout);
    assert!(
        t.contains(&m) && t.contains("exists with 8 partitions") && t.contains("never changes"),
        "{t}"
    );
    let again = run(&["up", "--topology", topo8.path().to_str().unwrap()]);
    assert!(
        text(&again.stdout).contains("exists with 8 partitions"),
        "the topic was changed"
    );

    // A file that fails partwise check is refused before anything is created.
    let bad = std::fs::read_to_string(topo6.path()).unwrap().replacen(
        "partitioner = \"kafkajs\"",
        "partitioner = \"librdkafka\"",
        1,
    );
    let mut fb = tempfile::NamedTempFile::new().unwrap();
    fb.write_all(bad.as_bytes()).unwrap();
    let out = run(&["up", "--topology", fb.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("partitioners disagree"),
        "{}",
        text(&out.stdout)
    );
    assert!(text(&out.stdout).contains("fix:"));
}
