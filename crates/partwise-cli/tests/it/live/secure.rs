//! Every live `partwise kafka` command on secured listeners of Apache Kafka:
//! SSL (server certificate from a test CA), SASL_PLAINTEXT with PLAIN and
//! with SCRAM-SHA-512, and SASL_SSL with SCRAM-SHA-512, from the env file of
//! `scripts/kafka-up` (PARTWISE_KAFKA_SSL, _SASL, _SASL_SSL, _CA and the
//! plaintext PARTWISE_KAFKA_BOOTSTRAP of the same cluster, used only to create
//! topics). Unset variables are a failure, not a skip.
//!
//! `consume` runs partwise-group's own TLS and SASL; `topics`, `audit`,
//! `group` and `produce` run librdkafka's. Both take the same flags, and no
//! output of either, with `-v` or in errors, contains a password.

use crate::common::process::Captured;
use partwise_faults::live::{create_topics, env, kafka_bootstrap as bootstrap, unique};
use partwise_faults::KafkaCluster;
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const PLAIN_USER: &str = "alice";
const PLAIN_SECRET: &str = "alice-secret";
const SCRAM_USER: &str = "scram-alice";
const SCRAM_SECRET: &str = "scram-secret";

/// A secured listener: its address, the `-X` properties that reach it, and
/// the secret among them (None for SSL without client authentication).
struct Listener {
    name: &'static str,
    addr: String,
    props: Vec<String>,
    secret: Option<&'static str>,
}

fn ssl() -> Listener {
    Listener {
        name: "ssl",
        addr: env("PARTWISE_KAFKA_SSL"),
        props: vec![
            "security.protocol=SSL".into(),
            format!("ssl.ca.location={}", env("PARTWISE_KAFKA_CA")),
        ],
        secret: None,
    }
}

fn sasl_plain() -> Listener {
    Listener {
        name: "sasl-plain",
        addr: env("PARTWISE_KAFKA_SASL"),
        props: vec![
            "security.protocol=sasl_plaintext".into(),
            "sasl.mechanism=PLAIN".into(),
            format!("sasl.username={PLAIN_USER}"),
            format!("sasl.password={PLAIN_SECRET}"),
        ],
        secret: Some(PLAIN_SECRET),
    }
}

fn sasl_scram() -> Listener {
    Listener {
        name: "sasl-scram",
        addr: env("PARTWISE_KAFKA_SASL"),
        props: vec![
            "security.protocol=SASL_PLAINTEXT".into(),
            "sasl.mechanisms=SCRAM-SHA-512".into(),
            format!("sasl.username={SCRAM_USER}"),
            format!("sasl.password={SCRAM_SECRET}"),
        ],
        secret: Some(SCRAM_SECRET),
    }
}

fn sasl_ssl_scram() -> Listener {
    Listener {
        name: "sasl-ssl-scram",
        addr: env("PARTWISE_KAFKA_SASL_SSL"),
        props: vec![
            "security.protocol=SASL_SSL".into(),
            format!("ssl.ca.location={}", env("PARTWISE_KAFKA_CA")),
            "sasl.mechanism=SCRAM-SHA-512".into(),
            format!("sasl.username={SCRAM_USER}"),
            format!("sasl.password={SCRAM_SECRET}"),
        ],
        secret: Some(SCRAM_SECRET),
    }
}

impl Listener {
    /// The first broker of the listener's address list.
    fn first(&self) -> &str {
        self.addr.split(',').next().unwrap()
    }

    /// `-b ADDR -X ...` for a partwise command.
    fn args(&self) -> Vec<String> {
        let mut a = vec!["-b".to_string(), self.addr.clone()];
        for p in &self.props {
            a.push("-X".into());
            a.push(p.clone());
        }
        a
    }

    /// The same listener with one property replaced (or added).
    fn with(&self, key: &str, value: &str) -> Listener {
        let mut props: Vec<String> = self
            .props
            .iter()
            .filter(|p| !p.starts_with(&format!("{key}=")))
            .cloned()
            .collect();
        props.push(format!("{key}={value}"));
        Listener {
            name: self.name,
            addr: self.addr.clone(),
            props,
            secret: self.secret,
        }
    }

    fn without(&self, key: &str) -> Listener {
        Listener {
            name: self.name,
            addr: self.addr.clone(),
            props: self
                .props
                .iter()
                .filter(|p| !p.starts_with(&format!("{key}=")))
                .cloned()
                .collect(),
            secret: self.secret,
        }
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn partwise() -> Command {
    Command::new(env!("CARGO_BIN_EXE_partwise"))
}

/// Runs `partwise ARGS` with `stdin`; fails if any output contains `secret`.
fn run(args: &[String], stdin: &str, secret: Option<&str>) -> Output {
    use std::io::Write;
    let mut child = partwise()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    if let Some(s) = secret {
        let all = text(&out.stdout) + &text(&out.stderr);
        assert!(!all.contains(s), "{args:?} printed the secret: {all}");
    }
    out
}

/// A `partwise kafka consume` process and what it printed.
struct Member {
    child: Child,
    out: Captured,
}

impl Member {
    fn start(args: &[String]) -> Member {
        Member::start_env(args, &[])
    }

    fn start_env(args: &[String], envs: &[(&str, &str)]) -> Member {
        let mut child = partwise()
            .args(args)
            .envs(envs.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = Captured::start(&mut child, true);
        Member { child, out }
    }

    /// Waits until `done` holds for the events so far.
    fn wait(&mut self, what: &str, limit: Duration, done: impl Fn(&[Value]) -> bool) {
        let t0 = Instant::now();
        loop {
            if done(&self.out.events.lock().unwrap()) {
                return;
            }
            if let Some(status) = self.child.try_wait().unwrap() {
                std::thread::sleep(Duration::from_millis(200));
                panic!(
                    "consume exited ({status}) before {what}: {}",
                    self.out.stderr.lock().unwrap()
                );
            }
            assert!(
                t0.elapsed() < limit,
                "no {what} within {limit:?}: {}",
                self.out.stderr.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// SIGTERM; the exit code and everything printed.
    fn stop(mut self) -> (Option<i32>, String) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let t0 = Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if t0.elapsed() > Duration::from_secs(30) {
                let _ = self.child.kill();
                panic!("consume did not exit within 30 s of SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        self.out.join();
        let events = self.out.events.lock().unwrap();
        let all = events
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join("\n")
            + &self.out.stderr.lock().unwrap();
        (status.code(), all)
    }
}

/// A member left running by a failing test does not outlive it.
impl Drop for Member {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn consume_args(l: &Listener, group: &str, topic: &str, timeout: &str) -> Vec<String> {
    let mut a: Vec<String> = ["kafka", "consume", "-v", "-g", group, "-t", topic]
        .iter()
        .map(|s| s.to_string())
        .collect();
    a.extend(l.args());
    a.extend(
        [
            "--offset-reset",
            "earliest",
            // The one duration syntax: units, and bare milliseconds as before.
            "--session-timeout-ms",
            "10s",
            "--heartbeat-interval-ms",
            "500",
            "--rebalance-timeout-ms",
            "15s",
            "--commit-interval-ms",
            "1s",
            "--timeout",
            timeout,
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    a
}

fn keys_received(events: &[Value]) -> BTreeMap<String, i64> {
    events
        .iter()
        .filter(|e| e["event"] == "record")
        .map(|e| {
            let hex = e["key_hex"].as_str().unwrap();
            let bytes: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            (
                String::from_utf8(bytes).unwrap(),
                e["partition"].as_i64().unwrap(),
            )
        })
        .collect()
}

/// The whole tour on one listener: consume joins, `produce` writes records
/// after it joined, consume receives each on the partition produce reported,
/// `topics`, `audit` and `group` see the topic and the member; all with `-v`,
/// and the secret appears nowhere.
fn every_command_on(l: Listener) {
    let topic = unique(&format!("pws-{}", l.name));
    let group = unique(&format!("pws-{}-g", l.name));
    create_topics(&bootstrap(), &[(&topic, 3)]);
    let mut member = Member::start(&consume_args(&l, &group, &topic, "10s"));
    member.wait("assignment", Duration::from_secs(60), |ev| {
        ev.iter().any(|e| e["event"] == "assigned")
    });

    let mut args: Vec<String> = ["kafka", "produce", "-v", "-t", &topic, "--format", "ndjson"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(l.args());
    let lines: String = (0..30)
        .map(|i| format!("{}-key-{i}\tv{i}\n", l.name))
        .collect();
    let out = run(&args, &lines, l.secret);
    assert_eq!(out.status.code(), Some(0), "produce: {}", text(&out.stderr));
    let produced: BTreeMap<String, i64> = text(&out.stdout)
        .lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).unwrap();
            (
                v["key"].as_str().unwrap().to_string(),
                v["partition"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(produced.len(), 30, "{}", text(&out.stdout));
    if l.secret.is_some() {
        assert!(text(&out.stderr).contains("sasl.password=[redacted]"));
    }

    let want = produced.clone();
    member.wait(
        "every produced record",
        Duration::from_secs(60),
        move |ev| keys_received(ev).len() >= want.len(),
    );
    assert_eq!(keys_received(&member.out.events.lock().unwrap()), produced);

    let mut args: Vec<String> = ["kafka", "topics", "-v", "--format", "json"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(l.args());
    let out = run(&args, "", l.secret);
    assert_eq!(out.status.code(), Some(0), "topics: {}", text(&out.stderr));
    assert!(text(&out.stdout).contains(&topic), "{}", text(&out.stdout));

    let mut args: Vec<String> = ["kafka", "audit", "-v", "-t", &topic, "--format", "json"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(l.args());
    let out = run(&args, "", l.secret);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "audit: {}",
        text(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["topics"][0]["topic"], topic.as_str());
    assert_eq!(v["topics"][0]["skew"]["total"], 30, "{v}");

    let mut args: Vec<String> = ["kafka", "group", "-v", "-g", &group, "--format", "json"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(l.args());
    let out = run(&args, "", l.secret);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "group: {}",
        text(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("group: {}", text(&out.stderr)));
    assert_eq!(v["members"].as_array().unwrap().len(), 1, "{v}");
    // --readiness reads the brokers' group settings (DescribeConfigs) over the same listener.
    args.push("--readiness".into());
    let out = run(&args, "", l.secret);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "group --readiness: {said}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!v["brokers"].as_array().unwrap().is_empty(), "{v}");
    assert!(v["readiness"]["upgrade"]["verdict"].is_string(), "{v}");
    if let Some(s) = l.secret {
        assert!(
            !said.contains(s),
            "group --readiness printed the secret: {said}"
        );
    }

    let (code, all) = member.stop();
    assert_eq!(code, Some(0), "{all}");
    if let Some(s) = l.secret {
        assert!(!all.contains(s), "consume printed the secret: {all}");
        assert!(all.contains("sasl.password=[redacted]"), "{all}");
    }
}

/// A consumer-protocol (KIP-848) group is described over SASL_SSL: its
/// members, by ConsumerGroupDescribe (which librdkafka does not send), for
/// `kafka group` and `--readiness` alike, and the brokers' API versions for
/// `--assignor kip848:uniform`'s model, all over the listener's TLS and SCRAM.
#[test]
fn a_consumer_protocol_group_is_described_over_sasl_ssl() {
    let l = sasl_ssl_scram();
    let topic = unique("pws-kip848-sasl-ssl");
    let group = unique("pws-kip848-sasl-ssl-g");
    create_topics(&bootstrap(), &[(&topic, 3)]);
    // The broker sets a consumer-protocol member's session and heartbeat.
    let mut consume: Vec<String> = ["kafka", "consume", "-g", &group, "-t", &topic]
        .iter()
        .map(|s| s.to_string())
        .collect();
    consume.extend(l.args());
    consume.extend(
        ["--group-protocol", "consumer", "--timeout", "10s"]
            .iter()
            .map(|s| s.to_string()),
    );
    let mut member = Member::start(&consume);
    member.wait("assignment", Duration::from_secs(60), |ev| {
        ev.iter().any(|e| e["event"] == "assigned")
    });
    let group_args = |extra: &[&str]| {
        let mut a: Vec<String> = ["kafka", "group", "-g", &group, "--format", "json"]
            .iter()
            .chain(extra)
            .map(|s| s.to_string())
            .collect();
        a.extend(l.args());
        a
    };

    let out = run(&group_args(&["--readiness"]), "", l.secret);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "--readiness: {said}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["group_protocol"], "consumer", "{v}");
    assert_eq!(v["members"].as_array().unwrap().len(), 1, "{v}");
    assert!(v["members"][0]["target_assignment"].is_array(), "{v}");
    assert!(v["readiness"]["target"].is_object(), "{v}");

    let out = run(&group_args(&["--assignor", "kip848:uniform"]), "", l.secret);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(matches!(out.status.code(), Some(0 | 1)), "group: {said}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["group_protocol"], "consumer", "{v}");
    assert_eq!(v["members"].as_array().unwrap().len(), 1, "{v}");
    let evidence = v["prediction"]["server_assignor_evidence"]
        .as_str()
        .unwrap();
    assert!(!evidence.contains("could not be read"), "{evidence}");
    assert!(v["prediction"]["broker_release_line"].is_string(), "{v}");

    let (code, all) = member.stop();
    assert_eq!(code, Some(0), "{all}");
}

#[test]
fn every_command_over_ssl() {
    every_command_on(ssl());
}

#[test]
fn every_command_over_sasl_plaintext_plain() {
    every_command_on(sasl_plain());
}

#[test]
fn every_command_over_sasl_plaintext_scram_sha_512() {
    every_command_on(sasl_scram());
}

#[test]
fn every_command_over_sasl_ssl_scram_sha_512() {
    every_command_on(sasl_ssl_scram());
}

/// `consume -b ... -X ...` once, expecting exit 2 within `limit`; returns stderr.
fn consume_fails(l: &Listener, limit: Duration, secret: Option<&str>) -> String {
    let topic = unique("pws-never");
    let args = consume_args(l, &unique("pws-fail-g"), &topic, "5s");
    let t0 = Instant::now();
    let out = run(&args, "", secret);
    assert!(t0.elapsed() < limit, "{args:?} took {:?}", t0.elapsed());
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: {}",
        text(&out.stderr)
    );
    text(&out.stderr)
}

#[test]
fn a_wrong_password_is_exit_2_naming_the_broker_and_never_the_password() {
    let wrong = "wrong-password-77";
    for l in [sasl_plain(), sasl_scram(), sasl_ssl_scram()] {
        let l = l.with("sasl.password", wrong);
        let err = consume_fails(&l, Duration::from_secs(15), Some(wrong));
        // The first bootstrap broker is the one asked (and refusing).
        let want = format!("broker {}: authentication failed", l.first());
        assert!(err.contains(&want), "{}: {err}", l.name);
        // The real password is not printed either (it is not even given).
        assert!(!err.contains(SCRAM_SECRET) && !err.contains(PLAIN_SECRET));
        // librdkafka's commands fail too, also without printing it.
        let mut args: Vec<String> = vec!["kafka".into(), "topics".into(), "-v".into()];
        args.extend(l.args());
        args.extend(["--timeout".to_string(), "5".to_string()]);
        let out = run(&args, "", Some(wrong));
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        // A refusal, not a timeout: librdkafka's reason is named (issue 19, item 9).
        let err = text(&out.stderr);
        assert!(
            err.contains("refused the connection's security settings")
                && err.contains("Authentication failed"),
            "{}: {err}",
            l.name
        );
    }
}

/// A SASL mechanism the listener does not enable is named as such, not
/// reported as a cluster that does not answer (issue 19, item 9).
#[test]
fn a_mechanism_the_broker_lacks_is_named_not_a_timeout() {
    let l = sasl_plain().with("sasl.mechanism", "SCRAM-SHA-256");
    let mut args: Vec<String> = vec!["kafka".into(), "topics".into()];
    args.extend(l.args());
    args.extend(["--timeout".to_string(), "5".to_string()]);
    let out = run(&args, "", l.secret);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("refused the connection's security settings")
            && err.contains("Unsupported SASL mechanism"),
        "{err}"
    );
}

#[test]
fn tls_without_the_ca_is_exit_2_naming_the_broker_and_the_tls_error() {
    for l in [ssl(), sasl_ssl_scram()] {
        let l = l.without("ssl.ca.location");
        let err = consume_fails(&l, Duration::from_secs(15), l.secret);
        let want = format!("TLS handshake with broker {} failed", l.first());
        assert!(err.contains(&want), "{}: {err}", l.name);
        assert!(
            err.contains("certificate") && err.contains("UnknownIssuer"),
            "{}: {err}",
            l.name
        );
    }
}

#[test]
fn values_consume_cannot_honour_are_exit_2_naming_the_property() {
    let l = sasl_ssl_scram();
    for (key, value, named) in [
        ("sasl.mechanism", "GSSAPI", "sasl.mechanism"),
        ("sasl.mechanism", "OAUTHBEARER", "sasl.mechanism"),
        ("security.protocol", "tls", "security.protocol"),
        (
            "ssl.keystore.location",
            "/tmp/client.p12",
            "ssl.keystore.location",
        ),
        (
            "ssl.endpoint.identification.algorithm",
            "ldap",
            "ssl.endpoint.identification.algorithm",
        ),
        ("ssl.ca.location", "/nonexistent/ca.pem", "ssl.ca.location"),
        // Refused by librdkafka's own check, as the other commands refuse it.
        ("no.such.property", "1", "no.such.property"),
    ] {
        let l = l.with(key, value);
        let err = consume_fails(&l, Duration::from_secs(10), l.secret);
        assert!(err.contains(named), "{key}={value}: {err}");
    }
    // A property librdkafka knows and consume does not use is accepted; -v says so.
    let l = sasl_scram().with("socket.keepalive.enable", "true");
    let topic = unique("pws-keepalive");
    create_topics(&bootstrap(), &[(&topic, 1)]);
    let args = consume_args(&l, &unique("pws-keepalive-g"), &topic, "10s");
    let mut m = Member::start(&args);
    m.wait("assignment", Duration::from_secs(60), |ev| {
        ev.iter().any(|e| e["event"] == "assigned")
    });
    let (code, all) = m.stop();
    assert_eq!(code, Some(0), "{all}");
    assert!(
        all.contains("consume does not use socket.keepalive.enable"),
        "{all}"
    );
    assert!(!all.contains(SCRAM_SECRET), "{all}");
}

#[test]
fn consume_takes_the_shared_connection_flags() {
    // --brokers (the old name) still works, -F files feed it, and durations
    // take the one syntax; a bad duration names its flag.
    let l = sasl_scram();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("client.properties");
    let mut props = format!("bootstrap.servers={}\n", l.addr);
    for p in &l.props {
        props.push_str(p);
        props.push('\n');
    }
    std::fs::write(&file, props).unwrap();
    let topic = unique("pws-file");
    create_topics(&bootstrap(), &[(&topic, 2)]);
    let group = unique("pws-file-g");
    let args: Vec<String> = [
        "kafka",
        "consume",
        "-F",
        file.to_str().unwrap(),
        "-g",
        &group,
        "-t",
        &topic,
        "--session-timeout-ms",
        "10000",
        "--heartbeat-interval-ms",
        "1s",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut m = Member::start(&args);
    m.wait("assignment", Duration::from_secs(60), |ev| {
        ev.iter().any(|e| e["event"] == "assigned")
    });
    let (code, all) = m.stop();
    assert_eq!(code, Some(0), "{all}");
    assert!(!all.contains(SCRAM_SECRET), "{all}");

    let mut args: Vec<String> = ["kafka", "consume", "--brokers", &l.addr, "-g", &group]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(["-t".into(), unique("pws-nosuch")]);
    for p in &l.props {
        args.extend(["-X".to_string(), p.clone()]);
    }
    let out = run(&args, "", Some(SCRAM_SECRET));
    // It connected and authenticated: the topic is what is missing.
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("does not exist"),
        "{}",
        text(&out.stderr)
    );

    for (flag, value) in [
        ("--session-timeout-ms", "10x"),
        ("--timeout", "0"),
        ("--retry-timeout-ms", "=-5s"),
    ] {
        let args: Vec<String> = [
            "kafka", "consume", "-b", "h:1", "-g", "g", "-t", "t", flag, value,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let out = run(&args, "", None);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}");
        assert!(text(&out.stderr).contains(flag), "{}", text(&out.stderr));
    }
}

/// A three-node cluster of the test's own (`partwise_faults::KafkaCluster`,
/// stopped on drop) and the variables of its env file, which name the
/// secured listeners.
struct ThreeNodes {
    kafka: KafkaCluster,
    env: BTreeMap<String, String>,
}

impl ThreeNodes {
    fn start() -> ThreeNodes {
        let kafka = KafkaCluster::start(3).expect("a private three-node Apache Kafka");
        let env = std::fs::read_to_string(kafka.dir().join("env"))
            .unwrap()
            .lines()
            .filter_map(|l| l.strip_prefix("export ")?.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ThreeNodes { kafka, env }
    }

    fn get(&self, k: &str) -> &str {
        &self.env[k]
    }
}

/// Waits until every partition of `topic` has a leader again.
fn wait_for_leaders(plain: &str, topic: &str, n: usize) {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let c: BaseConsumer = rdkafka::config::ClientConfig::new()
        .set("bootstrap.servers", plain)
        .create()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let ok = c
            .fetch_metadata(Some(topic), Duration::from_secs(5))
            .is_ok_and(|md| {
                md.topics().iter().any(|t| {
                    t.partitions().len() == n
                        && t.partitions()
                            .iter()
                            .all(|p| p.leader() >= 0 && p.error().is_none())
                })
            });
        if ok {
            return;
        }
        assert!(Instant::now() < deadline, "{topic}: leaders did not return");
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn on_three_brokers_every_connection_authenticates_also_after_a_broker_restart() {
    let cluster = ThreeNodes::start();
    let plain = cluster.get("PARTWISE_KAFKA_BOOTSTRAP").to_string();
    let l = Listener {
        addr: cluster.get("PARTWISE_KAFKA_SASL_SSL").to_string(),
        props: vec![
            "security.protocol=SASL_SSL".into(),
            format!("ssl.ca.location={}", cluster.get("PARTWISE_KAFKA_CA")),
            "sasl.mechanism=SCRAM-SHA-512".into(),
            format!("sasl.username={SCRAM_USER}"),
            format!("sasl.password={SCRAM_SECRET}"),
        ],
        ..sasl_ssl_scram()
    };
    let nodes: Vec<String> = l.addr.split(',').map(str::to_string).collect();
    assert_eq!(nodes.len(), 3);
    let topic = unique("pws-3n");
    create_topics(&plain, &[(&topic, 6)]);
    let mut args = consume_args(&l, &unique("pws-3n-g"), &topic, "5s");
    args.extend(["--retry-timeout-ms".into(), "90s".into()]);
    let mut member = Member::start_env(&args, &[("PARTWISE_GROUP_TRACE", "1")]);
    member.wait("assignment", Duration::from_secs(60), |ev| {
        ev.iter().any(|e| e["event"] == "assigned")
    });
    let produce = |from: usize| {
        let mut args: Vec<String> = ["kafka", "produce", "-t", &topic, "--format", "ndjson"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(l.args());
        let lines: String = (from..from + 30).map(|i| format!("k-{i}\tv\n")).collect();
        let out = run(&args, &lines, Some(SCRAM_SECRET));
        assert_eq!(out.status.code(), Some(0), "produce: {}", text(&out.stderr));
    };
    produce(0);
    member.wait("the first 30 records", Duration::from_secs(60), |ev| {
        keys_received(ev).len() >= 30
    });
    // Six partitions over three nodes: the member fetched from every node,
    // and authenticated every connection it opened.
    let handshakes = |m: &Member, node: &str| {
        m.out
            .stderr
            .lock()
            .unwrap()
            .matches(&format!("SaslAuthenticate v2 to {node}:"))
            .count()
    };
    let before: Vec<usize> = nodes.iter().map(|n| handshakes(&member, n)).collect();
    assert!(before.iter().all(|&c| c >= 2), "{before:?}");

    // Node 3 goes away and comes back: its connections are opened again,
    // and authenticated again, and what is produced after it is received.
    cluster.kafka.kill(3).unwrap();
    std::thread::sleep(Duration::from_secs(3));
    cluster.kafka.restart(3).unwrap();
    wait_for_leaders(&plain, &topic, 6);
    produce(30);
    member.wait("all 60 records", Duration::from_secs(90), |ev| {
        keys_received(ev).len() >= 60
    });
    let after = handshakes(&member, &nodes[2]);
    assert!(after > before[2], "node 3: {} then {after}", before[2]);
    let (code, all) = member.stop();
    assert_eq!(code, Some(0), "{all}");
    assert!(!all.contains(SCRAM_SECRET), "{all}");
}
