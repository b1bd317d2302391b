//! `partwise kafka ...` from the shell, every subcommand against the broker
//! at PARTWISE_KAFKA_BOOTSTRAP (`scripts/services` starts one; unset is a
//! failure). Flags and secrets, which need no broker, are `offline::kafka`.

use crate::common::{partwise as pw, sh_quote, text, unfolded};
use partwise_faults::live::{
    create_topics, kafka_bootstrap as bootstrap, keys, produce_with, unique,
};
use serde_json::Value;
use std::time::{Duration, Instant};

#[test]
fn topics_groups_by_partition_count() {
    let b = bootstrap();
    let (a, c) = (unique("pwc-t4a"), unique("pwc-t4b"));
    create_topics(&b, &[(&a, 4), (&c, 4)]);
    let out = pw()
        .args(["kafka", "topics", "-b", &b, "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let four = v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["partitions"] == 4)
        .unwrap();
    let names: Vec<&str> = four["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(names.contains(&a.as_str()) && names.contains(&c.as_str()));
}

fn audit_json(b: &str, args: &[&str]) -> (i32, Value) {
    let out = pw()
        .args(["kafka", "audit", "-b", b, "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", text(&out.stdout), text(&out.stderr)));
    (out.status.code().unwrap(), v)
}

#[test]
fn audit_exit_codes_and_verdicts() {
    let b = bootstrap();
    let (m, f, c) = (
        unique("pwc-murmur"),
        unique("pwc-fnv"),
        unique("pwc-murmur2"),
    );
    create_topics(&b, &[(&m, 6), (&f, 6), (&c, 6)]);
    produce_with(&b, &m, "murmur2_random", &keys(150, "x"));
    produce_with(&b, &f, "fnv1a_random", &keys(150, "x"));
    produce_with(&b, &c, "murmur2_random", &keys(50, "x"));

    let (code, v) = audit_json(&b, &["-t", &m, "-t", &c]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["copartitioning"]["copartitioned"], true);
    let inferred = v["topics"][0]["routing"]["inferred"].to_string();
    assert!(inferred.contains("\"java\""), "{inferred}");
    assert_eq!(v["topics"][0]["skew"]["total"], 150);

    let (code, v) = audit_json(&b, &["-t", &m, "-t", &f]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["copartitioning"]["copartitioned"], false);
    let inferred = v["topics"][1]["routing"]["inferred"].to_string();
    assert!(inferred.contains("librdkafka:fnv1a"), "{inferred}");
    assert!(v["copartitioning"]["reasons"]
        .to_string()
        .contains("partitioners disagree"));
    assert_eq!(
        v["copartitioning"]["findings"][0]["kind"],
        "partitioners-disagree"
    );
    // The fix names the librdkafka setting that hashes as the other topic's
    // murmur2 producers do.
    assert_eq!(v["copartitioning"]["fixes"].as_array().unwrap().len(), 1);
    assert!(
        v["copartitioning"]["fixes"][0]
            .as_str()
            .unwrap()
            .contains("partitioner=murmur2_random"),
        "{}",
        v["copartitioning"]
    );

    // Only the wrong candidate: every key it misplaces is counted, some named.
    let (code, v) = audit_json(&b, &["-t", &f, "-P", "java"]);
    assert_eq!(code, 1);
    let r = &v["topics"][0]["routing"];
    assert!(r["misrouted_total"].as_u64().unwrap() > 100, "{r}");
    assert_eq!(r["misrouted"].as_array().unwrap().len(), 20);

    let missing = unique("pwc-missing");
    let (code, v) = audit_json(&b, &["-t", &missing, "-t", &m]);
    assert_eq!(code, 1);
    assert!(v["topics"][0]["error"]
        .as_str()
        .unwrap()
        .contains("does not exist"));
    assert_eq!(v["topics"][1]["routing"]["sampled"], 150);

    // The table names the finding too.
    let out = pw()
        .args(["kafka", "audit", "-b", &b, "-t", &m, "-t", &f])
        .output()
        .unwrap();
    let t = text(&out.stdout);
    assert!(
        t.contains("co-partitioned: NO") && unfolded(&t).contains("partitioners disagree"),
        "{t}"
    );
    assert!(t.contains("    fix: set "), "{t}");
    // Equivalent candidates share one row: every murmur2 client on the row
    // of 100%, none left out, and no "... on string" repeat of a stored one.
    let full = t
        .lines()
        .find(|l| l.trim_start().starts_with("100.0%"))
        .unwrap_or_else(|| panic!("no 100% row: {t}"));
    for spec in [
        "java",
        "kafkajs",
        "kafka-python",
        "franz-go",
        "sarama:murmur2",
    ] {
        assert!(full.contains(spec), "{spec} not on {full:?}");
    }
    let out = pw()
        .args([
            "kafka",
            "audit",
            "-b",
            &b,
            "-t",
            &m,
            "--key-format",
            "string",
        ])
        .output()
        .unwrap();
    let t = text(&out.stdout);
    assert!(
        !t.contains("on string"),
        "a repeat of the stored bytes: {t}"
    );
    assert!(
        !text(&out.stderr).contains("records"),
        "no progress bar without a terminal"
    );
}

#[test]
fn a_partition_without_a_leader_is_named_and_the_rest_is_audited() {
    // tansu always has a leader; the proxy rewrites Metadata so that
    // librdkafka sees partition 1 with leader -1 (LEADER_NOT_AVAILABLE).
    let b = bootstrap();
    let (t, u) = (unique("pwc-noleader"), unique("pwc-leader"));
    create_topics(&b, &[(&t, 4), (&u, 4)]);
    produce_with(&b, &t, "murmur2_random", &keys(200, "x"));
    produce_with(&b, &u, "murmur2_random", &keys(100, "x"));
    let proxy = partwise_faults::FaultProxy::start(&b).unwrap();
    proxy
        .set_rule(partwise_faults::Rule::LeaderNotAvailable {
            topic: t.clone(),
            partition: 1,
        })
        .unwrap();
    let (code, v) = audit_json(proxy.addr(), &["-t", &t, "-t", &u, "--timeout", "10"]);
    assert_eq!(code, 1, "a partial audit is a finding: {v}");
    let topic = &v["topics"][0];
    assert_eq!(topic["partitions"], 4, "{topic}");
    let parts = topic["per_partition"].as_array().unwrap();
    assert_eq!(parts.len(), 4, "{topic}");
    assert_eq!(parts[1]["error"], "no leader", "{topic}");
    assert_eq!(parts[1]["sampled"], 0);
    let why = topic["partial"].as_str().unwrap();
    assert!(why.contains("1: no leader"), "{why}");
    // The other three partitions were read and routed.
    let others: u64 = [0, 2, 3]
        .iter()
        .map(|&p| {
            assert!(parts[p]["error"].is_null(), "{}", parts[p]);
            parts[p]["sampled"].as_u64().unwrap()
        })
        .sum();
    assert!(others > 0 && others < 200, "{topic}");
    assert_eq!(topic["routing"]["sampled"], others);
    assert!(topic["routing"]["inferred"]
        .to_string()
        .contains("\"java\""));
    assert_eq!(
        topic["skew"]["total"], others,
        "skew leaves the unread one out"
    );
    // The other topic is whole.
    let whole = &v["topics"][1];
    assert!(whole["partial"].is_null(), "{whole}");
    assert_eq!(whole["routing"]["sampled"], 100);
    assert!(proxy.seen(partwise_faults::ApiKey::Metadata) > 0);
}

#[test]
fn the_progress_bar_is_drawn_on_a_terminal_and_only_on_stderr() {
    let b = bootstrap();
    let t = unique("pwc-bar");
    create_topics(&b, &[(&t, 3)]);
    produce_with(&b, &t, "murmur2_random", &keys(3000, "bar"));
    let bin = std::path::PathBuf::from(env!("CARGO_BIN_EXE_partwise"));
    let out_file = std::env::temp_dir().join(unique("pwc-bar-out.json"));
    // script(1) (util-linux) gives the command a pseudo-terminal; stdout goes
    // to a file, so what the terminal shows is the command's stderr alone.
    let cmd = format!(
        "{} kafka audit -b {} -t {} --sample 5000 --format json > {}",
        sh_quote(&bin.to_string_lossy()),
        sh_quote(&b),
        sh_quote(&t),
        sh_quote(&out_file.to_string_lossy())
    );
    let out = std::process::Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("script(1) from util-linux runs the command on a pseudo-terminal");
    let terminal = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{terminal} {}",
        text(&out.stderr)
    );
    assert!(
        terminal.contains(&format!("sampling {t}")) && terminal.contains("records"),
        "no progress bar on the terminal: {terminal:?}"
    );
    let json = std::fs::read_to_string(&out_file).unwrap();
    std::fs::remove_file(&out_file).unwrap();
    assert!(
        !json.contains("sampling") && !json.contains('\u{1b}'),
        "{json}"
    );
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["topics"][0]["routing"]["sampled"], 3000);
}

#[test]
fn produce_routes_with_the_partwise_partitioner_and_the_audit_sees_it() {
    let b = bootstrap();
    let t = unique("pwc-produce");
    create_topics(&b, &[(&t, 8)]);
    let input: String = (0..80)
        .map(|i| format!("acct-{i}\tvalue {i}\n"))
        .collect::<String>()
        + "solo\n";
    let out = pw()
        .args([
            "kafka", "produce", "-b", &b, "-t", &t, "-P", "sarama", "--format", "ndjson",
        ])
        .write_stdin(input)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let rows: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 81);
    for r in &rows {
        assert_eq!(r["partition"], r["expected_partition"], "{r}");
        assert_eq!(r["topic"], t.as_str());
    }
    let (code, v) = audit_json(
        &b,
        &["-t", &t, "-P", "sarama", "-P", "java", "-P", "librdkafka"],
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        v["topics"][0]["routing"]["inferred"],
        serde_json::json!(["sarama"])
    );
    // A topic that does not exist is not created.
    let missing = unique("pwc-nope");
    let out = pw()
        .args(["kafka", "produce", "-b", &b, "-t", &missing])
        .write_stdin("k\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("does not exist"));
    let out = pw().args(["kafka", "topics", "-b", &b]).output().unwrap();
    assert!(!text(&out.stdout).contains(&missing));
}

/// `kafka produce` sends each line as it arrives: from a pipe that stays
/// open, each record is on the broker (its delivery row, with the offset the
/// broker gave it, is printed) before the next line is written. Before, the
/// whole input was read first, so nothing was sent until the pipe closed. A
/// byte-order mark before the first line is dropped, with a note.
#[test]
fn produce_sends_a_slow_pipe_line_by_line() {
    use std::io::{BufRead, Write};
    use std::process::Stdio;
    let b = bootstrap();
    let t = unique("pwc-slowpipe");
    create_topics(&b, &[(&t, 4)]);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_partwise"))
        .args(["kafka", "produce", "-b", &b, "-t", &t, "--format", "ndjson"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let _ = tx.send(line.unwrap());
        }
    });
    for (i, line) in ["\u{FEFF}slow-1\tv1", "slow-2", "slow-3\tv3"]
        .iter()
        .enumerate()
    {
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
        let row = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("no delivery of line {} while the pipe is open", i + 1));
        let v: Value = serde_json::from_str(&row).unwrap();
        assert_eq!(v["key"], format!("slow-{}", i + 1), "{row}");
        assert!(v["offset"].as_i64().is_some_and(|o| o >= 0), "{row}");
        assert_eq!(v["partition"], v["expected_partition"], "{row}");
        assert!(
            child.try_wait().unwrap().is_none(),
            "ended before its input"
        );
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("stdin: dropped the UTF-8 byte-order mark before line 1"),
        "{err}"
    );
}

/// An endless input (`yes | partwise kafka produce`) is sent as it is read,
/// in bounded memory (under an address-space limit a process that held its
/// input would abort): deliveries keep coming while the input never ends.
/// Before, it was read whole first and aborted with nothing sent.
#[test]
fn produce_sends_an_endless_input_in_bounded_memory() {
    use std::io::{BufRead, Write};
    use std::process::Stdio;
    let b = bootstrap();
    let t = unique("pwc-endless");
    create_topics(&b, &[(&t, 3)]);
    let mut child = std::process::Command::new("prlimit")
        .arg(format!("--as={}", 3u64 << 30))
        .arg(env!("CARGO_BIN_EXE_partwise"))
        .args(["kafka", "produce", "-b", &b, "-t", &t, "--format", "ndjson"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::thread::spawn(move || {
        let block: String = (0..10_000).map(|i| format!("y{}\n", i % 97)).collect();
        while stdin.write_all(block.as_bytes()).is_ok() {}
    });
    let stdout = child.stdout.take().unwrap();
    let start = Instant::now();
    let mut rows = 0u64;
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line.unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        assert!(v["offset"].as_i64().is_some_and(|o| o >= 0), "{line}");
        rows += 1;
        if rows == 50_000 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(240),
            "{rows} deliveries in 240 s"
        );
    }
    let still_running = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    assert_eq!(rows, 50_000, "{}", text(&out.stderr));
    assert!(
        still_running,
        "stopped on an endless input: {}",
        text(&out.stderr)
    );
}

#[test]
fn measure_creates_and_deletes_its_topic() {
    let b = bootstrap();
    let out = pw()
        .args([
            "kafka",
            "measure",
            "--allow-write",
            "-b",
            &b,
            "--records",
            "2000",
            "--record-bytes",
            "200",
        ])
        .args([
            "--replication-factor",
            "1",
            "--target-produce-mbps",
            "50",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{} {}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["deleted"], true);
    assert_eq!(v["consumed"], 2000);
    assert!(v["partition_produce_mbps"].as_f64().unwrap() > 0.0);
    assert!(v["plan"]["required"].as_u64().unwrap() >= 1);
    let out = pw().args(["kafka", "topics", "-b", &b]).output().unwrap();
    assert!(!text(&out.stdout).contains(v["topic"].as_str().unwrap()));
}

/// Ctrl-C in the middle of a measurement stops it and still deletes the
/// temporary topic, and says so (issue 19, item 3).
#[test]
fn measure_interrupted_mid_run_deletes_its_topic() {
    let b = bootstrap();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_partwise"))
        .args(["kafka", "measure", "--allow-write", "-b", &b])
        .args(["--records", "2000000", "--record-bytes", "500"])
        .args(["--replication-factor", "1", "--timeout", "30s"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let prefix = format!("partwise-measure-{}-", child.id());
    let topics = || {
        text(
            &pw()
                .args(["kafka", "topics", "-b", &b])
                .output()
                .unwrap()
                .stdout,
        )
    };
    let made = Instant::now();
    while !topics().contains(&prefix) {
        assert!(
            made.elapsed() < Duration::from_secs(30),
            "{prefix} never appeared"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("interrupted") && err.contains("was deleted"),
        "{err}"
    );
    // Deletion is asynchronous on the broker: the topic goes within seconds.
    let asked = Instant::now();
    while topics().contains(&prefix) {
        assert!(
            asked.elapsed() < Duration::from_secs(30),
            "{prefix} is still listed"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Every line of `stdout` is one whole JSON object; returns them.
fn ndjson_objects(what: &str, out: &std::process::Output) -> Vec<Value> {
    let stdout = text(&out.stdout);
    assert!(
        !stdout.is_empty(),
        "{what} printed nothing: {}",
        text(&out.stderr)
    );
    stdout
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{what}: line is not one JSON value ({e}): {l}"));
            assert!(v.is_object(), "{what}: line is not an object: {l}");
            v
        })
        .collect()
}

/// `--format ndjson` is one JSON object per line in the live commands too
/// (`produce` is checked above, `consume` by every consume test).
#[test]
fn live_ndjson_is_one_object_per_line() {
    let b = bootstrap();
    let t = unique("pwc-ndjson");
    create_topics(&b, &[(&t, 3)]);
    produce_with(&b, &t, "murmur2_random", &keys(30, "nd"));
    let run = |args: &[&str]| {
        let out = pw()
            .args(["kafka"])
            .args(args)
            .args(["-b", &b, "--format", "ndjson"])
            .output()
            .unwrap();
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{args:?}: {}",
            text(&out.stderr)
        );
        ndjson_objects(&args.join(" "), &out)
    };
    run(&["topics"]);
    run(&["audit", "-t", &t, "--sample", "10"]);
    run(&[
        "measure",
        "--allow-write",
        "--records",
        "200",
        "--record-bytes",
        "100",
        "--replication-factor",
        "1",
    ]);
    // A live group to describe: one partwise member, until it is assigned.
    let g = unique("pwc-ndjson-group");
    let mut member = std::process::Command::new(env!("CARGO_BIN_EXE_partwise"))
        .args(["kafka", "consume", "-b", &b, "-g", &g, "-t", &t])
        .args(["--format", "ndjson"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lines = std::io::BufRead::lines(std::io::BufReader::new(member.stdout.take().unwrap()));
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for l in lines.map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    let assigned = std::iter::from_fn(|| rx.recv_timeout(Duration::from_secs(30)).ok())
        .any(|l| l.contains("\"assigned\""));
    assert!(assigned, "the member was never assigned");
    let rows = run(&["group", "-g", &g]);
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &member.id().to_string()])
        .status();
    let _ = member.wait();
    reader.join().unwrap();
    assert_eq!(rows.len(), 1, "one report object: {rows:?}");
}
