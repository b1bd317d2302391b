//! The ticker over the test broker's SASL_SSL listener (SCRAM-SHA-512, the
//! env file's PARTWISE_KAFKA_SASL_SSL and PARTWISE_KAFKA_CA): its settings
//! from `-F` and the password from `-X`, handed by `join` to the workers it
//! starts; `up`, `feed`, `join`'s partwise workers, a librdkafka round-robin
//! worker and `verify` all reach the cluster through it, and no output holds
//! the password. A wrong password is exit 2 saying the login was refused.
//! No process `join` or `demo` starts has the password on its command line
//! (`/proc/PID/cmdline`, which `ps` shows every user): they get it in a
//! private file, removed when the parent ends.

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

/// The processes whose parent is `pid`, each with its arguments.
fn children(pid: u32) -> Vec<(u32, Vec<String>)> {
    let mut out = Vec::new();
    // A child between fork and exec still shows its parent's command line
    // (the user's own, which may carry the password): it is not yet the
    // child, so it is read again on the next pass.
    let parent = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // After the command in parentheses: the state, then the parent's pid.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid != Some(pid) {
            continue;
        }
        let Ok(cmdline) = std::fs::read(format!("/proc/{child}/cmdline")) else {
            continue;
        };
        if cmdline == parent {
            continue;
        }
        let args: Vec<String> = cmdline
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        // A process that has exited (a zombie) has no command line left.
        if !args.is_empty() {
            out.push((child, args));
        }
    }
    out
}

/// What [`watch_children`] saw of the children of a process: each one's
/// arguments, and the private files they were given.
#[derive(Default)]
struct Seen {
    args: Vec<Vec<String>>,
    private: Vec<std::path::PathBuf>,
}

/// Reads the command lines of `pid`'s children every 50 ms until `done`:
/// none may hold the password; each `-F` file that is not `user_file` is
/// the parent's private one, which must be readable by its owner only.
fn watch_children(
    pid: u32,
    user_file: &std::path::Path,
    done: &std::sync::atomic::AtomicBool,
) -> Seen {
    use std::os::unix::fs::PermissionsExt as _;
    let mut seen = Seen::default();
    while !done.load(std::sync::atomic::Ordering::SeqCst) {
        for (child, args) in children(pid) {
            assert!(
                !args.iter().any(|a| a.contains(SECRET)),
                "child {child} has the password on its command line: {args:?}"
            );
            for w in args.windows(2) {
                let path = std::path::Path::new(&w[1]);
                if w[0] != "-F" || path == user_file || seen.private.iter().any(|p| p == path) {
                    continue;
                }
                let mode = std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
                assert_eq!(mode, 0o600, "{}", path.display());
                let dir = std::fs::metadata(path.parent().unwrap()).unwrap();
                assert_eq!(dir.permissions().mode() & 0o777, 0o700);
                seen.private.push(path.to_path_buf());
            }
            if !seen.args.contains(&args) {
                seen.args.push(args);
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    seen
}

/// Runs `c` while [`watch_children`] reads its children's command lines;
/// its output and what was seen.
fn run_watched(mut c: Command, user_file: &std::path::Path) -> (Output, Seen) {
    let child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (d, f) = (done.clone(), user_file.to_path_buf());
    let watcher = std::thread::spawn(move || watch_children(pid, &f, &d));
    let out = child.wait_with_output().unwrap();
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    (out, watcher.join().unwrap())
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
    // Its workers' command lines, read while they run.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (d, user_file, pid) = (done.clone(), f.path().to_path_buf(), join.id());
    let watcher = std::thread::spawn(move || watch_children(pid, &user_file, &d));
    let (out, o, _) = run(ticker(&f, SECRET, &tag, &["verify", "--wait", "60s"]));
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let _ = Command::new("kill")
        .args(["-TERM", &join.id().to_string()])
        .status();
    let _ = join.wait();
    let seen = watcher.join().unwrap();
    let workers = seen
        .args
        .iter()
        .filter(|a| a.contains(&"worker".to_string()));
    assert_eq!(workers.count(), 2, "{:?}", seen.args);
    assert_eq!(seen.private.len(), 1, "{:?}", seen.args);
    assert!(
        !seen.private[0].exists() && !seen.private[0].parent().unwrap().exists(),
        "join left its private file behind: {}",
        seen.private[0].display()
    );
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

/// `ticker demo` over the same listener: its workers and feeds get the
/// password from a private file, never on their command lines, and the file
/// is gone when the demo ends.
#[test]
fn the_demos_children_have_no_secret_on_their_command_lines() {
    let f = properties();
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let tag = format!("tk-secdemo-{}-{}", std::process::id(), ms % 1_000_000);
    let mut demo = ticker(&f, SECRET, &tag, &["demo"]);
    demo.args([
        "--rate",
        "100",
        "--duration",
        "3s",
        "--session-timeout",
        "6s",
        "--skip-counter-example",
    ]);
    let (out, seen) = run_watched(demo, f.path());
    let (o, e) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        !o.contains(SECRET) && !e.contains(SECRET),
        "the password was printed"
    );
    assert_eq!(out.status.code(), Some(0), "{o}\n{e}");
    let by = |what: &str| {
        seen.args
            .iter()
            .filter(|a| a.get(1).map(String::as_str) == Some(what))
            .count()
    };
    assert!(by("worker") >= 1 && by("feed") >= 1, "{:?}", seen.args);
    assert_eq!(seen.private.len(), 1, "{:?}", seen.args);
    assert!(
        !seen.private[0].exists() && !seen.private[0].parent().unwrap().exists(),
        "the demo left its private file behind: {}",
        seen.private[0].display()
    );
}
