//! The ticker over the test broker's SASL_SSL listener (SCRAM-SHA-512, the
//! env file's PARTWISE_KAFKA_SASL_SSL and PARTWISE_KAFKA_CA): its settings
//! from `-F` and the password from `-X`, handed by `join` to the workers it
//! starts; `up`, `feed`, `join`'s partwise workers, a librdkafka round-robin
//! worker and `verify` all reach the cluster through it, and no output holds
//! the password. A wrong password is exit 2 saying the login was refused.

use partwise_faults::live::redis_node;
use serde_json::Value;
use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const USER: &str = "scram-alice";
const SECRET: &str = "scram-secret";

fn env(name: &str) -> String {
    std::env::var(name)
        .unwrap_or_else(|_| panic!("{name} is not set: source the services' env file"))
}

/// The listener's settings but the password, as a properties file.
fn properties() -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    writeln!(
        f,
        "bootstrap.servers={}\nsecurity.protocol=SASL_SSL\nssl.ca.location={}\nsasl.mechanism=SCRAM-SHA-512\nsasl.username={USER}",
        env("PARTWISE_KAFKA_SASL_SSL"),
        env("PARTWISE_KAFKA_CA")
    )
    .unwrap();
    f
}

/// `ticker ARGS -F FILE -X sasl.password=PASSWORD --namespace NS`, with no
/// broker in the environment: the file and `-X` are the whole connection.
fn ticker(file: &tempfile::NamedTempFile, password: &str, ns: &str, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ticker"));
    c.env_remove("PARTWISE_KAFKA_BOOTSTRAP")
        .env("PARTWISE_REDIS", redis_node())
        .args(args)
        .arg("-F")
        .arg(file.path())
        .args([
            "-X",
            &format!("sasl.password={password}"),
            "--namespace",
            ns,
        ]);
    c
}

fn run(mut c: Command) -> (Output, String, String) {
    let out = c.output().unwrap();
    let (o, e) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    eprintln!("{c:?}: {o}\n{e}");
    assert!(
        !o.contains(SECRET) && !e.contains(SECRET),
        "the password was printed"
    );
    (out, o, e)
}

#[test]
fn the_ticker_runs_over_sasl_ssl_with_its_connection_flags() {
    let f = properties();
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let tag = format!("tk-sec-{}-{}", std::process::id(), ms % 1_000_000);
    let (out, o, _) = run(ticker(&f, SECRET, &tag, &["up"]));
    assert_eq!(out.status.code(), Some(0));
    assert!(
        o.contains(&format!("topic {tag}-market-updates: created")),
        "{o}"
    );
    let feed = ["feed", "--rate", "300", "--duration", "2s", "--seed", "7"];
    let (out, o, _) = run(ticker(&f, SECRET, &tag, &feed));
    assert_eq!(out.status.code(), Some(0));
    assert!(o.contains("\"event\":\"fed\""), "{o}");

    // join hands -F and -X on to its workers: verify passes only if they
    // joined over SASL_SSL and did the work.
    let mut join = ticker(
        &f,
        SECRET,
        &tag,
        &["join", "--workers", "2", "--session-timeout", "6s"],
    );
    join.arg("--group").arg(format!("{tag}-joiner"));
    let join_log = tempfile::NamedTempFile::new().unwrap();
    let mut join = join
        .stdout(Stdio::from(join_log.reopen().unwrap()))
        .stderr(Stdio::from(join_log.reopen().unwrap()))
        .spawn()
        .unwrap();
    let (out, o, _) = run(ticker(&f, SECRET, &tag, &["verify", "--wait", "60s"]));
    let _ = Command::new("kill")
        .args(["-TERM", &join.id().to_string()])
        .status();
    let _ = join.wait();
    let joined = std::fs::read_to_string(join_log.path()).unwrap();
    assert!(!joined.contains(SECRET), "a worker printed the password");
    assert_eq!(out.status.code(), Some(0), "{joined}");
    assert!(o.contains("verify: OK"), "{o}");
    assert!(joined.contains("\"event\":\"assigned\""), "{joined}");

    // librdkafka's own group member takes the same flags.
    let rr_log = tempfile::NamedTempFile::new().unwrap();
    let mut rr = ticker(
        &f,
        SECRET,
        &tag,
        &["worker", "--runtime", "librdkafka-roundrobin"],
    );
    let mut rr = rr
        .args([
            "--group",
            &format!("{tag}-rr"),
            "--id",
            "rr0",
            "--session-timeout",
            "6s",
        ])
        .args(["--heartbeat-interval", "1s"])
        .stdout(Stdio::from(rr_log.reopen().unwrap()))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let assigned = loop {
        let events: Vec<Value> = std::fs::read_to_string(rr_log.path())
            .unwrap()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        if let Some(a) = events.iter().find(|e| e["event"] == "assigned") {
            break a.clone();
        }
        assert!(
            Instant::now() < deadline,
            "the round-robin worker was never assigned"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let _ = Command::new("kill")
        .args(["-TERM", &rr.id().to_string()])
        .status();
    let _ = rr.wait();
    // Alone in its group, it is given every partition of both topics.
    assert_eq!(
        assigned["units"].as_array().map(Vec::len),
        Some(12),
        "{assigned}"
    );

    // A wrong password is refused, said so, and not printed either.
    let (out, _, e) = run(ticker(&f, "not-the-secret", &tag, &["verify"]));
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(!e.contains("not-the-secret"), "{e}");
    assert!(e.contains("refused") || e.contains("uthentication"), "{e}");

    // Removed over the same listener, read from the same flags.
    let conn = partwise_kafka::connect::Flags {
        files: vec![f.path().to_path_buf()],
        props: vec![format!("sasl.password={SECRET}")],
        bootstrap: Vec::new(),
        timeout: Duration::from_secs(30),
    }
    .connection()
    .unwrap();
    let topics = [
        format!("{tag}-market-updates"),
        format!("{tag}-notifications"),
    ];
    partwise_kafka::admin::delete_topics(&conn, &[&topics[0], &topics[1]]).unwrap();
}
