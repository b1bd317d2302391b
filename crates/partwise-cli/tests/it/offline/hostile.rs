//! Hostile input (issue 15): every command ends in time with exit 2 and a
//! message naming the input, never a panic, an abort or a hang. Each case
//! runs the binary under a deadline, so a hang fails the test instead of
//! blocking it, and under an address-space limit, so an allocation of many
//! GiB fails as an abort (exit 134) instead of swapping. The network cases
//! run against loopback listeners of this test (no broker needed): one that
//! accepts and never answers, one that answers garbage, one that closes at
//! once, one that announces an absurd frame length and one that answers as a
//! TLS server does to plaintext (an alert, then close).

use partwise_faults::hostile::{listener, Peer};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Address space of each run: far above what a bounded command needs, far
/// below the 16 GiB a dense counter of 2^31 partitions takes.
const MEMORY_LIMIT: u64 = 3 << 30;

/// Address space for a run against [`Peer::AbsurdCount`]: kafka-protocol
/// reserves an array's announced count before decoding it, and
/// `partwise_alloc` answers such a request with reserved, unbacked
/// address space (its unit test shows the pages stay unbacked), which an
/// address-space limit counts; so this limit bounds the reservation only.
const RESERVE_LIMIT: u64 = 1 << 40;

struct Outcome {
    code: Option<i32>,
    stderr: String,
    elapsed: Duration,
}

/// Runs partwise with `args` (`{dir}` replaced by the fixture directory),
/// killed after `limit`.
fn run(dir: &Path, args: &[&str], stdin: Option<&[u8]>, limit: Duration) -> Outcome {
    run_in(dir, args, stdin, limit, MEMORY_LIMIT)
}

/// [`run`] with its own address-space limit.
fn run_in(
    dir: &Path,
    args: &[&str],
    stdin: Option<&[u8]>,
    limit: Duration,
    address_space: u64,
) -> Outcome {
    run_full(dir, args, stdin, limit, address_space, Stdio::null())
}

/// [`run`] with stdout written to `out`.
fn run_to(dir: &Path, args: &[&str], limit: Duration, out: &Path) -> Outcome {
    let file = std::fs::File::create(out).unwrap();
    run_full(dir, args, None, limit, MEMORY_LIMIT, Stdio::from(file))
}

fn run_full(
    dir: &Path,
    args: &[&str],
    stdin: Option<&[u8]>,
    limit: Duration,
    address_space: u64,
    stdout: Stdio,
) -> Outcome {
    let args: Vec<String> = args
        .iter()
        .map(|a| a.replace("{dir}", &dir.display().to_string()))
        .collect();
    let mut cmd = Command::new("prlimit");
    cmd.arg(format!("--as={address_space}"))
        .arg(env!("CARGO_BIN_EXE_partwise"))
        .args(&args)
        .env("RUST_BACKTRACE", "0")
        .stdout(stdout)
        .stderr(Stdio::piped())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
    let start = Instant::now();
    let mut child = cmd.spawn().expect("prlimit (util-linux) runs partwise");
    if let Some(bytes) = stdin {
        let mut w = child.stdin.take().unwrap();
        let bytes = bytes.to_vec();
        std::thread::spawn(move || {
            let _ = w.write_all(&bytes);
        });
    }
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let code = exit_within(&mut child, start, limit, &format!("{args:?}"));
    Outcome {
        code,
        stderr: reader.join().unwrap(),
        elapsed: start.elapsed(),
    }
}

/// The exit code of `child`, which must end within `limit` of `start`:
/// otherwise it is killed and the test fails naming `what`, so that a hang
/// fails instead of blocking the run.
fn exit_within(
    child: &mut std::process::Child,
    start: Instant,
    limit: Duration,
    what: &str,
) -> Option<i32> {
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Asserts exit 2, a message containing `needle`, and no panic.
fn expect_error(dir: &Path, args: &[&str], needle: &str, limit: Duration) -> Outcome {
    let o = run(dir, args, None, limit);
    let needle = needle.replace("{dir}", &dir.display().to_string());
    assert_eq!(o.code, Some(2), "{args:?}: exit {:?}\n{}", o.code, o.stderr);
    assert!(
        !o.stderr.contains("panicked") && !o.stderr.contains("memory allocation"),
        "{args:?}: {}",
        o.stderr
    );
    assert!(
        o.stderr.contains(&needle),
        "{args:?}: the message should name '{needle}':\n{}",
        o.stderr
    );
    o
}

fn fixtures() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let w = |name: &str, content: &[u8]| std::fs::write(dir.path().join(name), content).unwrap();
    w("keys.txt", b"BBCA\nANTM\nASII\n");
    w("no-keys.txt", b"");
    w("counts.csv", b"BBCA,5\nANTM,3\n");
    w("overflow.csv", b"BBCA,18446744073709551615\nANTM,1\n");
    w("long.txt", format!("{}\n", "k".repeat(70_000)).as_bytes());
    let group = |partitions: u32, members: &str| {
        format!(
            "[[topic]]\nname = \"a\"\npartitions = {partitions}\n[[topic.producer]]\npartitioner = \"java\"\n\
             [[topic]]\nname = \"b\"\npartitions = {partitions}\n[[topic.producer]]\npartitioner = \"java\"\n\
             [[copartition]]\nname = \"x\"\ntopics = [\"a\", \"b\"]\n\
             [[consumer_group]]\nname = \"g\"\nassignor = \"java:range\"\nmembers = {members}\nsubscriptions = [\"a\", \"b\"]\n"
        )
    };
    w("huge-topics.toml", group(2_147_483_647, "3").as_bytes());
    w(
        "nosuch-assignor.toml",
        group(6, "3")
            .replace("assignor = \"java:range\"", "assignor = \"nosuch\"")
            .as_bytes(),
    );
    w("range-work.toml", group(15_000, "\"1..1000\"").as_bytes());
    // One member named with a megabyte of text, on 2 x 5,000 partitions.
    w(
        "long-member.toml",
        group(5_000, &format!("[\"{}\"]", "m".repeat(1 << 20))).as_bytes(),
    );
    w("many-members.toml", group(6, "4000000000").as_bytes());
    w(
        "deep.toml",
        format!("x = {}{}\n", "[".repeat(100_000), "]".repeat(100_000)).as_bytes(),
    );
    w("empty.toml", b"");
    let topics = |n: usize| -> String {
        (0..n)
            .map(|i| format!("[[topic]]\nname = \"t{i}\"\npartitions = 6\n"))
            .collect()
    };
    w("many-topics.toml", topics(10_001).as_bytes());
    let names: Vec<String> = (0..2_001).map(|i| format!("\"t{i}\"")).collect();
    w(
        "wide-group.toml",
        format!(
            "{}[[copartition]]\nname = \"wide\"\ntopics = [{}]\n",
            topics(2_001),
            names.join(",")
        )
        .as_bytes(),
    );
    dir
}

const FAST: Duration = Duration::from_secs(10);

/// Each case: arguments, and a part of the message that names the input.
const CASES: &[(&[&str], &str)] = &[
    // Counters per partition, dense: a typo must not take 16 GiB.
    (
        &[
            "route",
            "-i",
            "{dir}/keys.txt",
            "--summary",
            "-p",
            "2147483647",
        ],
        "-p 2147483647: this command keeps a counter per partition; at most 1000000",
    ),
    (
        &[
            "route",
            "-i",
            "{dir}/keys.txt",
            "--summary",
            "-p",
            "1000000",
            "-P",
            "all",
        ],
        "--summary",
    ),
    (
        &["skew", "-i", "{dir}/keys.txt", "-p", "2147483647"],
        "-p 2147483647",
    ),
    (
        &[
            "skew",
            "-i",
            "{dir}/keys.txt",
            "-p",
            "6",
            "--consumers",
            "2147483647",
        ],
        "--consumers 2147483647",
    ),
    (
        &[
            "skew",
            "-i",
            "{dir}/keys.txt",
            "-p",
            "6",
            "--capacity",
            "18446744073709551615",
        ],
        "--capacity",
    ),
    (
        &[
            "skew",
            "-i",
            "{dir}/keys.txt",
            "-p",
            "6",
            "--top",
            "100000000000",
        ],
        "--top",
    ),
    (
        &["skew", "-i", "{dir}/overflow.csv", "--counts", "-p", "6"],
        "overflow.csv line 2",
    ),
    (
        &["salt", "--key", "ID", "--share", "0.95", "-p", "2147483647"],
        "-p 2147483647",
    ),
    (
        &[
            "salt",
            "-i",
            "{dir}/counts.csv",
            "--counts",
            "-p",
            "2147483647",
        ],
        "-p 2147483647",
    ),
    (
        &[
            "salt",
            "-i",
            "{dir}/counts.csv",
            "--counts",
            "-p",
            "6",
            "--consumers",
            "2147483647",
        ],
        "--consumers 2147483647",
    ),
    (
        &["salt", "-i", "{dir}/overflow.csv", "--counts", "-p", "6"],
        "overflow.csv",
    ),
    (
        &[
            "salt",
            "--key",
            "ID",
            "--share",
            "0.95",
            "-p",
            "12",
            "--max-range",
            "100000",
        ],
        "--max-range 100000",
    ),
    (
        &["salt", "--key", "ID", "--share", "0.95", "-p", "1000000"],
        "-p 1000000 with --max-range 1000",
    ),
    (
        &[
            "assign",
            "-a",
            "java:range",
            "-m",
            "3",
            "-t",
            "t:2147483647",
        ],
        "--topic",
    ),
    (
        &[
            "assign",
            "-a",
            "java:sticky",
            "--sweep",
            "1..1000",
            "-t",
            "t:30000",
        ],
        "1000 member counts",
    ),
    (
        &[
            "assign",
            "-a",
            "kip848:uniform",
            "-m",
            "100000",
            "-t",
            "t:100000",
            "-t",
            "u:100000",
        ],
        "100000 members",
    ),
    (
        &[
            "assign",
            "-a",
            "java:range",
            "-m",
            "2147483647",
            "-t",
            "t:6",
        ],
        "--members",
    ),
    (
        &[
            "batching",
            "--messages",
            "200000",
            "--size",
            "200",
            "--partitions",
            "2147483647",
            "--rate",
            "50000",
        ],
        "--partitions 2147483647",
    ),
    (
        &[
            "batching",
            "--messages",
            "9000000000000",
            "--size",
            "200",
            "--partitions",
            "12",
            "--rate",
            "50000",
        ],
        "--messages 9000000000000",
    ),
    (
        &[
            "batching",
            "--messages",
            "100000",
            "--size",
            "200",
            "--partitions",
            "10000",
            "--rate",
            "50000",
            "--linger-ms",
            "0",
        ],
        "--messages 100000 x --partitions 10000",
    ),
    (
        &[
            "batching",
            "--messages",
            "2000",
            "--size",
            "2000000000",
            "--partitions",
            "12",
            "--rate",
            "50000",
            "--batch-size",
            "2000000000",
        ],
        "--size 2000000000",
    ),
    (
        &[
            "batching",
            "--messages",
            "2000",
            "--size",
            "200",
            "--partitions",
            "12",
            "--rate",
            "50000",
            "--batch-size",
            "2000000000",
        ],
        "--batch-size 2000000000",
    ),
    (
        &[
            "batching",
            "--messages",
            "2000",
            "--size",
            "200",
            "--partitions",
            "12",
            "--rate",
            "50000",
            "--brokers",
            "4000000000",
        ],
        "--brokers 4000000000",
    ),
    (
        &["check", "{dir}/huge-topics.toml"],
        "consumer_group[0] 'g'",
    ),
    (&["check", "{dir}/range-work.toml"], "1000 member counts"),
    // A name is printed wherever it is reported: a megabyte of it in every
    // cell of a matrix took many GiB.
    (
        &["check", "{dir}/long-member.toml"],
        "consumer_group[0].members[0]': a name of 1048576 bytes; at most 249",
    ),
    (
        &["check", "{dir}/long-member.toml", "--format", "json"],
        "consumer_group[0].members[0]",
    ),
    (
        &["report", "{dir}/long-member.toml"],
        "consumer_group[0].members[0]",
    ),
    (
        &["report", "{dir}/long-member.toml", "--format", "json"],
        "consumer_group[0].members[0]",
    ),
    (
        &["check", "{dir}/many-members.toml"],
        "consumer_group[0].members",
    ),
    (&["check", "{dir}/deep.toml"], "deep.toml: line 1"),
    (&["check", "{dir}/empty.toml"], "empty.toml"),
    // A blank static-member id would join as a dynamic member unnoticed
    // (issue 19, item 7); duplicate and mixed priority rules are refused.
    (
        &[
            "kafka",
            "consume",
            "-b",
            "127.0.0.1:1",
            "-g",
            "g",
            "-t",
            "t",
            "--group-instance-id",
            "",
        ],
        "'--group-instance-id <ID>'",
    ),
    (
        &[
            "route",
            "BBCA",
            "-p",
            "6",
            "-P",
            "priority:prefix=VIP_,reserved=1,reserved=2",
        ],
        "gives reserved= twice",
    ),
    (
        &[
            "route",
            "BBCA",
            "-p",
            "6",
            "-P",
            "priority:prefix=VIP_,regex=^X,reserved=1",
        ],
        "has two of prefix=, regex=, header=",
    ),
    // Accepted and ignored before (issue 19, item 7).
    (
        &["check", "{dir}/nosuch-assignor.toml"],
        "consumer_group[0].assignor': unknown assignor 'nosuch'",
    ),
    (
        &[
            "plan",
            "--produce-mbps",
            "50",
            "--partition-produce-mbps",
            "10",
            "--consume-mbps",
            "50",
            "--partition-consume-mbps",
            "2",
            "--replication-factor",
            "0",
        ],
        "'0' for '--replication-factor",
    ),
    (
        &[
            "plan",
            "--produce-mbps",
            "50",
            "--partition-produce-mbps",
            "10",
            "--consume-mbps",
            "50",
            "--partition-consume-mbps",
            "2",
            "--batch-size",
            "0",
        ],
        "'0' for '--batch-size",
    ),
    (
        &[
            "kafka",
            "consume",
            "-b",
            "127.0.0.1:1",
            "-g",
            "g",
            "-t",
            "t",
            "--session-timeout-ms",
            "3000000000",
        ],
        "at most 2147483647 ms",
    ),
    (
        &[
            "kafka",
            "group",
            "-b",
            "127.0.0.1:1",
            "-g",
            "g",
            "--assignor",
            "nosuch",
        ],
        "'nosuch' for '-a/--assignor <SPEC>'",
    ),
    // Messages that name the input at fault (issue 19, item 9).
    (
        &[
            "kafka",
            "topics",
            "-b",
            "127.0.0.1:99999",
            "--timeout",
            "30s",
        ],
        "'127.0.0.1:99999' is not [PROTO://]HOST[:PORT]",
    ),
    (
        &[
            "kafka",
            "produce",
            "-b",
            "127.0.0.1:1",
            "-t",
            "t",
            "-i",
            "{dir}",
        ],
        "reading {dir}: Is a directory",
    ),
    (
        &[
            "resize",
            "--suggest",
            "--target",
            "20",
            "--consumers",
            "0",
            "--from",
            "6",
        ],
        "(a number of consumers)",
    ),
    // A partitioner that ignores keys gives salt and resize nothing to answer
    // (issue 19, item 6).
    (
        &[
            "salt", "--key", "ID", "--share", "0.95", "-p", "20", "-P", "kafka-go",
        ],
        "kafka-go ignores keys (round-robin)",
    ),
    (
        &[
            "resize", "--from", "6", "--to", "8", "-P", "kafka-go", "BBCA",
        ],
        "-P/--partitioner 'kafka-go': kafka-go ignores keys",
    ),
    // A named key file with no keys would print an empty table as an answer.
    (
        &["route", "-i", "{dir}/no-keys.txt", "-p", "6"],
        "no-keys.txt: no keys",
    ),
    (
        &["route", "-i", "{dir}/no-keys.txt", "-p", "6", "--summary"],
        "no-keys.txt: no keys",
    ),
    (&["slot", "-i", "{dir}/no-keys.txt"], "no-keys.txt: no keys"),
    (
        &[
            "resize",
            "-i",
            "{dir}/no-keys.txt",
            "--from",
            "6",
            "--to",
            "8",
        ],
        "no-keys.txt: no keys",
    ),
    (
        &["check", "{dir}/many-topics.toml"],
        "10001 topics; at most 10000",
    ),
    (
        &["check", "{dir}/wide-group.toml"],
        "copartition[0] 'wide': 2001 producers",
    ),
    // Partitioner specs that would be accepted and silently never apply.
    (&["route", "a", "-p", "6", "-P", "priority:"], "priority:"),
    (
        &[
            "route",
            "a",
            "-p",
            "6",
            "-P",
            "priority:prefix=VIP_,reserved=0;prefix=VIP_,reserved=1",
        ],
        "never applies",
    ),
    (
        &[
            "route",
            "a",
            "-p",
            "6",
            "-P",
            "priority:prefix=V,reserved=0;prefix=VIP_,reserved=1",
        ],
        "never applies",
    ),
    (
        &["route", "a", "-p", "6", "-P", "priority:prefix=,reserved=0"],
        "prefix= is empty",
    ),
    (
        &["route", "a", "-p", "6", "-P", "priority:regex=,reserved=0"],
        "regex= is empty",
    ),
    (
        &[
            "route",
            "a",
            "-p",
            "6",
            "-P",
            "priority:prefix=a,prefix=b,reserved=0",
        ],
        "two of prefix=",
    ),
    (
        &[
            "route",
            "a",
            "-p",
            "6",
            "-P",
            "priority:prefix=a,reserved=0,reserved=1",
        ],
        "reserved= twice",
    ),
    (
        &[
            "route",
            "a",
            "-p",
            "6",
            "-P",
            "priority:header=:v,reserved=0",
        ],
        "empty name",
    ),
    (
        &[
            "route",
            "a",
            "-p",
            "6",
            "-P",
            "priority:prefix=a,reserved=0,hash=mask;hash=java-abs",
        ],
        "hash= given twice",
    ),
    (
        &[
            "route",
            "a",
            "-p",
            "6",
            "-P",
            "priority:prefix=a,reserved=9-4000000000",
        ],
        "reserved range",
    ),
    // Key formats.
    (
        &["route", "zz", "-p", "6", "--key-format", "hex"],
        "key argument 1 ('zz')",
    ),
    (
        &["route", "abc", "-p", "6", "--key-format", "hex"],
        "key argument 1 ('abc')",
    ),
    (
        &["route", "!!!", "-p", "6", "--key-format", "base64"],
        "key argument 1",
    ),
    (
        &["route", "99999999999", "-p", "6", "--key-format", "int32"],
        "'99999999999'",
    ),
    (
        &[
            "route",
            "a",
            "-p",
            "6",
            "--key-format",
            "avro-sr:99999999999",
        ],
        "--key-format",
    ),
    (
        &["route", "a", "-p", "6", "--key-format", "avro-sr:"],
        "--key-format",
    ),
    (&["route", "a", "-p", "0"], "-p/--partitions"),
    (&["route", "a", "-p", "-1"], "-p/--partitions"),
    (&["route", "a", "-p", "4294967296"], "-p/--partitions"),
    (
        &["slot", "zz", "--key-format", "hex"],
        "key argument 1 ('zz')",
    ),
    // Live commands refuse bad limits before connecting anywhere.
    (
        &[
            "kafka",
            "measure",
            "-b",
            "127.0.0.1:1",
            "--allow-write",
            "--record-bytes",
            "18446744073709551615",
        ],
        "--record-bytes",
    ),
    (
        &[
            "kafka",
            "measure",
            "-b",
            "127.0.0.1:1",
            "--allow-write",
            "--records",
            "18446744073709551615",
        ],
        "--records 18446744073709551615",
    ),
    // A target it could only use after measuring is checked before the
    // temporary topic is made (issue 19, item 3).
    (
        &[
            "kafka",
            "measure",
            "-b",
            "127.0.0.1:1",
            "--allow-write",
            "--target-produce-mbps",
            "NaN",
        ],
        "'NaN' for '--target-produce-mbps",
    ),
    (
        &[
            "kafka",
            "measure",
            "-b",
            "127.0.0.1:1",
            "--allow-write",
            "--target-produce-mbps",
            "0",
        ],
        "'0' for '--target-produce-mbps",
    ),
    // Inputs that never end, or are not files at all.
    (
        &["route", "-i", "/dev/zero", "-p", "6"],
        "/dev/zero line 1: longer than 64 MiB",
    ),
    (&["skew", "-i", "/dev/zero", "-p", "6"], "/dev/zero line 1"),
    (
        &["salt", "-i", "/dev/zero", "-p", "6"],
        "/dev/zero line 1: longer than 64 MiB",
    ),
    (&["check", "/dev/zero"], "/dev/zero: larger than 4 MiB"),
    // Checked before connecting: the first line decides whether there is
    // anything to send.
    (
        &[
            "kafka",
            "produce",
            "-b",
            "127.0.0.1:1",
            "-t",
            "t",
            "-i",
            "/dev/zero",
        ],
        "/dev/zero line 1: longer than 64 MiB",
    ),
    (
        &[
            "assign",
            "-a",
            "java:sticky",
            "-m",
            "2",
            "-t",
            "t:6",
            "--owned",
            "/dev/zero",
        ],
        "--owned /dev/zero: larger than 256 MiB",
    ),
    (
        &["kafka", "topics", "-F", "/dev/zero"],
        "-F /dev/zero: larger than 16 MiB",
    ),
    (&["kafka", "topics", "-F", "{dir}"], "-F {dir}"),
    (&["route", "-i", "{dir}", "-p", "6"], "{dir}"),
    // Durations.
    (
        &["kafka", "topics", "-b", "127.0.0.1:1", "--timeout", "1e300"],
        "--timeout",
    ),
    (
        &["kafka", "topics", "-b", "127.0.0.1:1", "--timeout", "nan"],
        "--timeout",
    ),
    (
        &["kafka", "topics", "-b", "127.0.0.1:1", "--timeout", "0"],
        "--timeout",
    ),
    (
        &[
            "kafka",
            "consume",
            "-b",
            "127.0.0.1:1",
            "-g",
            "g",
            "-t",
            "t",
            "--session-timeout-ms",
            "99999999999999999999",
        ],
        "--session-timeout-ms",
    ),
    (
        &["redis", "slots", "-c", "127.0.0.1:1", "--timeout", "1e300"],
        "--timeout",
    ),
    (
        &[
            "kafka",
            "consume",
            "-b",
            "127.0.0.1:1",
            "-g",
            "g",
            "-t",
            "t",
            "--heartbeat-interval-ms",
            "0",
        ],
        "'0' for '--heartbeat-interval-ms <DURATION>': must be more than 0",
    ),
    (
        &[
            "kafka",
            "consume",
            "-b",
            "127.0.0.1:1",
            "-g",
            "g",
            "-t",
            "t",
            "--max-poll-interval-ms",
            "0",
        ],
        "--max-poll-interval-ms",
    ),
    // Output options.
    (&["route", "a", "-p", "6", "--format", "csv"], "--format"),
    (
        &[
            "plan",
            "--produce-mbps",
            "1e300",
            "--partition-produce-mbps",
            "1e-300",
            "--consume-mbps",
            "50",
            "--partition-consume-mbps",
            "2.5",
        ],
        "partitions",
    ),
    (
        &[
            "plan",
            "--produce-mbps",
            "nan",
            "--partition-produce-mbps",
            "10",
            "--consume-mbps",
            "50",
            "--partition-consume-mbps",
            "2.5",
        ],
        "produce rate",
    ),
];

#[test]
fn hostile_inputs_exit_2_naming_the_input() {
    let dir = fixtures();
    // Run concurrently: each case is small, and a deadline per case still
    // catches a hang.
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = CASES
            .chunks(CASES.len().div_ceil(4))
            .map(|chunk| {
                let dir = dir.path();
                s.spawn(move || {
                    for (args, needle) in chunk {
                        expect_error(dir, args, needle, FAST);
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join()).collect()
    });
    for r in results {
        if let Err(e) = r {
            std::panic::resume_unwind(e);
        }
    }
}

/// A key wider than 65535 characters (the most `format!` pads) is a row of
/// the table: the key whole, then the next column where the header has it,
/// holding what `--format ndjson` says of the key; not a panic, not a
/// truncated or misaligned line.
#[test]
fn a_key_longer_than_65535_characters_prints_in_a_table() {
    let dir = fixtures();
    let key = "k".repeat(70_000);
    let width = key.len() + 2;
    let out = dir.path().join("table.txt");
    // skew lists a key among its heavy hitters from its second record on.
    std::fs::write(dir.path().join("long2.txt"), format!("{key}\n{key}\n")).unwrap();
    for (args, field) in [
        (
            &["route", "-i", "{dir}/long.txt", "-p", "6"][..],
            Some("partition"),
        ),
        (
            &[
                "route",
                "-i",
                "{dir}/long.txt",
                "-p",
                "6",
                "-P",
                "java",
                "-P",
                "sarama",
            ],
            None,
        ),
        (&["slot", "-i", "{dir}/long.txt"], Some("slot")),
        (
            &["skew", "-i", "{dir}/long2.txt", "-p", "6"],
            Some("partition"),
        ),
    ] {
        let o = run_to(dir.path(), args, FAST, &out);
        assert!(
            matches!(o.code, Some(0 | 1)),
            "{args:?}: exit {:?}\n{}",
            o.code,
            o.stderr
        );
        let text = std::fs::read_to_string(&out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.starts_with(&key))
            .unwrap_or_else(|| panic!("{args:?}: no row holds the key"));
        let row = lines[at];
        let header = lines[..at]
            .iter()
            .rev()
            .find(|l| l.starts_with("KEY "))
            .unwrap_or_else(|| panic!("{args:?}: no header above the key's row"));
        // The header's second column and the row's start at the same place.
        for line in [row, *header] {
            assert!(
                line.len() > width,
                "{args:?}: {}",
                &line[..40.min(line.len())]
            );
            let pad = &line[..width];
            assert!(
                pad.trim_end().len() <= key.len() && line.as_bytes()[width] != b' ',
                "{args:?}: the second column is not at {width}"
            );
        }
        assert_eq!(&row[key.len()..width], "  ", "{args:?}");
        let cell = row[width..].split_whitespace().next().unwrap();
        // The row holds the answer the JSON gives for the key.
        if let Some(field) = field {
            let json_out = dir.path().join("rows.ndjson");
            let mut json_args = args.to_vec();
            json_args.extend(["--format", "ndjson"]);
            run_to(dir.path(), &json_args, FAST, &json_out);
            let rows = std::fs::read_to_string(&json_out).unwrap();
            let answer = rows
                .lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
                .find_map(|v| {
                    let of_key =
                        v["key"] == key.as_str() || v["heavy_hitters"][0]["key"] == key.as_str();
                    let v = if v["heavy_hitters"].is_array() {
                        v["heavy_hitters"][0].clone()
                    } else {
                        v
                    };
                    of_key.then(|| v[field].to_string())
                })
                .unwrap_or_else(|| panic!("{args:?}: no JSON row of the key:\n{rows}"));
            // route's partition follows the key; slot's slot and the heavy
            // hitter's partition are the last column.
            let shown = if args[0] == "route" {
                cell
            } else {
                row[width..].split_whitespace().last().unwrap()
            };
            assert_eq!(shown, answer, "{args:?}");
        }
    }
}

#[test]
fn heavy_hitter_summary_of_any_capacity_never_panics() {
    let dir = fixtures();
    for cap in ["1", "65536"] {
        let o = run(
            dir.path(),
            &[
                "skew",
                "-i",
                "{dir}/keys.txt",
                "-p",
                "6",
                "--capacity",
                cap,
                "--top",
                cap,
            ],
            None,
            FAST,
        );
        assert!(
            matches!(o.code, Some(0 | 1)),
            "capacity {cap}: {}",
            o.stderr
        );
    }
}

/// A pipe or device given as `-i` is read as a stream, not as an empty
/// file (its length is 0): before, `route -i <(cmd)` printed nothing, exit 0.
#[test]
fn a_pipe_given_as_a_file_is_read() {
    let dir = fixtures();
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "{} route -i <(printf 'BBCA\\nANTM\\n') -p 6 --format ndjson",
            env!("CARGO_BIN_EXE_partwise")
        ))
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 2);
}

/// Every command that reads keys reads a process substitution, a FIFO and
/// `/dev/stdin` from a pipe for what they hold (their length is 0), not as
/// empty (issue 19, item 1).
#[test]
fn streams_given_as_files_are_read_by_every_key_reader() {
    let bin = env!("CARGO_BIN_EXE_partwise");
    let ticker = crate::common::example("ticker.toml");
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("keys.fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let cmds = [
        "route -p 6 --format ndjson".to_string(),
        "slot --format ndjson".to_string(),
        "resize --from 6 --to 8 --format json".to_string(),
        format!("check {ticker} --format json"),
        // skew peeks at a file for KEY,COUNT lines: never at a stream.
        "skew -p 6 --format json".to_string(),
    ];
    for cmd in &cmds {
        for (how, script) in [
            (
                "<(...)",
                format!("timeout 20 {bin} {cmd} -i <(printf 'BBCA\\nANTM\\n')"),
            ),
            (
                "/dev/stdin",
                format!("printf 'BBCA\\nANTM\\n' | timeout 20 {bin} {cmd} -i /dev/stdin"),
            ),
            (
                "fifo",
                // The writer writes once and goes: a reader that opens the
                // FIFO a second time waits for ever, so each side has a
                // timeout (exit 124 fails the test instead of hanging it),
                // and the writer keeps off the pipes this test reads to
                // their end.
                format!(
                    "(timeout 20 bash -c \"printf 'BBCA\\nANTM\\n' > {f}\") >/dev/null 2>&1 & timeout 20 {bin} {cmd} -i {f}",
                    f = fifo.display()
                ),
            ),
        ] {
            let out = Command::new("bash").args(["-c", &script]).output().unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                matches!(out.status.code(), Some(0 | 1)),
                "{cmd} {how}: {err}"
            );
            let saw = if cmd.starts_with("check") {
                stdout.contains("\"sample_keys\": 2")
            } else if cmd.starts_with("resize") || cmd.starts_with("skew") {
                stdout.contains("\"keys\": 2")
            } else {
                stdout.lines().count() == 2
            };
            assert!(saw, "{cmd} {how}: read as if empty:\n{stdout}\n{err}");
        }
    }
}

/// A full disk on stdout is exit 2 with the I/O error, for every command
/// that prints (`completions` panicked inside clap_complete).
#[test]
fn a_full_stdout_is_exit_2() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    for args in [
        &["completions", "bash"][..],
        &["man"],
        &["route", "BBCA", "-p", "6"],
        &["partitioners"],
        &[
            "plan",
            "--produce-mbps",
            "50",
            "--partition-produce-mbps",
            "10",
            "--consume-mbps",
            "50",
            "--partition-consume-mbps",
            "2.5",
        ],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_partwise"))
            .args(args)
            .stdout(full.try_clone().unwrap())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("No space left on device") && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn stdin_input_ends_when_stdin_closes() {
    let dir = fixtures();
    let o = run(
        dir.path(),
        &["route", "-i", "-", "-p", "6"],
        Some(b"BBCA\nANTM\n"),
        FAST,
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
}

/// Nowhere to write is exit 2, never 0 with nothing written nor a panic:
/// a closed stdout, help into a full device, an error or a warning into a
/// full stderr (issue 19, item 8).
#[test]
fn nowhere_to_write_is_exit_2_not_0_or_a_panic() {
    let bin = env!("CARGO_BIN_EXE_partwise");
    for (script, want) in [
        ("\"$0\" route BBCA -p 6 >&-", 2),
        ("\"$0\" --help >/dev/full", 2),
        ("\"$0\" --version >/dev/full", 2),
        ("\"$0\" route BBCA -p 0 2>/dev/full", 2),
        (
            "\"$0\" salt --key ID --share 0.95 -p 20 -P kafka-go 2>/dev/full",
            2,
        ),
        // A warning lost to a full stderr does not change the answer.
        (
            "\"$0\" route VIP -p 6 -P priority:prefix=V,reserved=0-5 2>/dev/full >/dev/null",
            0,
        ),
        // A reader that stops early is not an error.
        (
            "\"$0\" --help | head -c 10 >/dev/null; exit \"${PIPESTATUS[0]}\"",
            0,
        ),
    ] {
        let out = Command::new("bash")
            .args(["-c", script, bin])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(want), "{script}: {err}");
        assert!(!err.contains("panicked"), "{script}: {err}");
    }
}

/// A regular file that reports no length (procfs) is read for what it holds,
/// not taken as empty.
#[test]
fn a_file_that_reports_no_length_is_read() {
    let path = "/proc/self/mountinfo";
    assert_eq!(
        std::fs::metadata(path).unwrap().len(),
        0,
        "procfs reports 0"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_partwise"))
        .args([
            "route",
            "-p",
            "6",
            "--summary",
            "--format",
            "json",
            "-i",
            path,
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v[0]["keys"].as_u64().is_some_and(|k| k > 0), "{v}");
}

/// A key file truncated by another process while it is read (memory-mapped)
/// is exit 2 naming the file, not SIGBUS and not an answer from part of it.
#[test]
fn a_key_file_truncated_while_read_is_exit_2_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shrinking.txt");
    let keys: String = (0..2_000_000).map(|i| format!("k{i:08}\n")).collect();
    let mut seen_mid_read = false;
    for attempt in 0..4 {
        std::fs::write(&path, &keys).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_partwise"))
            .args(["route", "-p", "6", "--summary", "-P", "all", "-i"])
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(200 + 100 * attempt));
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(0)
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            // Finished before the truncation: a whole answer, fine.
            Some(0) => continue,
            Some(2) => {
                assert!(
                    err.contains("shrinking.txt") && err.contains("changed size while it was read"),
                    "{err}"
                );
                seen_mid_read = true;
                break;
            }
            other => panic!("exit {other:?} (a signal?): {err}"),
        }
    }
    assert!(seen_mid_read, "no attempt truncated the file mid-read");
}

/// A stdin that stays open is answered as it arrives: each key's line
/// comes out before the next is written (`tail -f keys | partwise route -i -
/// --format ndjson`), and closing stdin ends the run.
#[test]
fn ndjson_from_an_open_stdin_answers_each_key_as_it_arrives() {
    use std::io::BufRead;
    for cmd in [
        &["route", "-i", "-", "-p", "6", "--format", "ndjson"][..],
        &["slot", "-i", "-", "--format", "ndjson"][..],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_partwise"))
            .args(cmd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let _ = tx.send(line.unwrap());
            }
        });
        for key in ["BBCA", "ANTM"] {
            stdin.write_all(format!("{key}\n").as_bytes()).unwrap();
            stdin.flush().unwrap();
            let line = rx
                .recv_timeout(Duration::from_secs(10))
                .unwrap_or_else(|_| panic!("{cmd:?}: no answer for {key} while stdin is open"));
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            assert_eq!(v["key"], key, "{cmd:?}: {line}");
        }
        drop(stdin);
        assert_eq!(child.wait().unwrap().code(), Some(0), "{cmd:?}");
    }
}

/// Runs partwise with `args` (`{dir}` replaced) under [`MEMORY_LIMIT`],
/// its stdin fed forever by a thread (random-looking letters, a newline every
/// few kilobytes, as `-i /dev/urandom` gives, but never waiting on the
/// machine's entropy), killed after `limit`.
fn run_endless(dir: &Path, args: &[&str], limit: Duration) -> Outcome {
    let args: Vec<String> = args
        .iter()
        .map(|a| a.replace("{dir}", &dir.display().to_string()))
        .collect();
    let mut child = Command::new("prlimit")
        .arg(format!("--as={MEMORY_LIMIT}"))
        .arg(env!("CARGO_BIN_EXE_partwise"))
        .args(&args)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("prlimit (util-linux) runs partwise");
    let mut w = child.stdin.take().unwrap();
    std::thread::spawn(move || {
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        let block: Vec<u8> = (0..1 << 20)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if i % 4099 == 4098 {
                    b'\n'
                } else {
                    b'a' + (x % 26) as u8
                }
            })
            .collect();
        // Ends when partwise closes its stdin (it stopped reading).
        while w.write_all(&block).is_ok() {}
    });
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let code = exit_within(
        &mut child,
        start,
        limit,
        &format!("{args:?} on an endless input"),
    );
    Outcome {
        code,
        stderr: reader.join().unwrap(),
        elapsed: start.elapsed(),
    }
}

/// Every command that holds the keys it reads (a table of every key, sample
/// keys, the keys that move, a distribution) stops an endless input at one
/// cap, exit 2 naming the input and the cap, instead of taking all memory
/// (an abort) or running forever.
#[test]
fn endless_input_stops_every_holding_key_reader_at_the_cap() {
    let dir = fixtures();
    let ticker = crate::common::example("ticker.toml");
    let cmds: Vec<Vec<&str>> = vec![
        vec!["route", "-i", "-", "-p", "6"],
        vec![
            "route", "-i", "-", "-p", "6", "--from", "java", "--to", "sarama",
        ],
        vec!["slot", "-i", "-"],
        vec!["check", &ticker, "-i", "-"],
        vec!["report", &ticker, "-i", "-", "-o", "{dir}/report.html"],
        vec!["resize", "-i", "-", "--from", "6", "--to", "8"],
        vec!["salt", "-i", "-", "-p", "6"],
        // Read before the cluster is asked anything.
        vec![
            "redis",
            "check",
            "-c",
            "127.0.0.1:1",
            "--family",
            "a:{%s}",
            "--family",
            "b:{%s}",
            "-i",
            "-",
        ],
    ];
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = cmds
            .iter()
            .map(|args| {
                let dir = dir.path();
                s.spawn(move || {
                    // Generous: the cap is hundreds of MiB, read by a debug
                    // build on a busy machine.
                    let o = run_endless(dir, args, Duration::from_secs(300));
                    assert_eq!(o.code, Some(2), "{args:?}: exit {:?}\n{}", o.code, o.stderr);
                    assert!(
                        o.stderr
                            .contains("stdin: more than 10000000 keys or 256 MiB: partwise holds")
                            && !o.stderr.contains("panicked"),
                        "{args:?}: {}",
                        o.stderr
                    );
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join()).collect()
    });
    for r in results {
        if let Err(e) = r {
            std::panic::resume_unwind(e);
        }
    }
}

/// The lines of `path` with a UTF-8 byte-order mark in front.
fn with_bom(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(
        &path,
        [b"\xEF\xBB\xBF".as_slice(), text.as_bytes()].concat(),
    )
    .unwrap();
    path.display().to_string()
}

/// A UTF-8 byte-order mark before the first line (as Windows editors write)
/// is no part of the first key: every key reader drops it, says so on
/// stderr, and answers as for the file without it. Before, it was hashed
/// into the first key (`TLKM` went to partition 4, not 5) and the table hid it.
#[test]
fn a_byte_order_mark_is_dropped_from_the_first_key_by_every_reader() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let keys = "TLKM\nBBCA\nANTM\n";
    let plain = d.join("plain.txt");
    std::fs::write(&plain, keys).unwrap();
    let plain = plain.display().to_string();
    let bom = with_bom(d, "bom.txt", keys);
    let counts_plain = d.join("counts.csv");
    std::fs::write(&counts_plain, "TLKM,50\nBBCA,3\nANTM,2\n").unwrap();
    let counts_plain = counts_plain.display().to_string();
    let counts_bom = with_bom(d, "counts-bom.csv", "TLKM,50\nBBCA,3\nANTM,2\n");
    let ticker = crate::common::example("ticker.toml");
    let bin = env!("CARGO_BIN_EXE_partwise");
    // Each command with `{}` for its input, and the file it reads.
    let cmds: Vec<(String, &str, &str)> = vec![
        ("route -p 6 --format json -i {}".into(), &plain, &bom),
        (
            "route -p 6 --summary --format json -i {}".into(),
            &plain,
            &bom,
        ),
        ("slot --format json -i {}".into(), &plain, &bom),
        ("skew -p 6 --format json -i {}".into(), &plain, &bom),
        (
            "skew -p 6 --counts --format json -i {}".into(),
            &counts_plain,
            &counts_bom,
        ),
        (
            "salt -p 6 --counts --format json -i {}".into(),
            &counts_plain,
            &counts_bom,
        ),
        (
            "resize --from 6 --to 7 --format json -i {}".into(),
            &plain,
            &bom,
        ),
        (
            format!("check {ticker} --format json -i {{}}"),
            &plain,
            &bom,
        ),
    ];
    for (cmd, plain, bom) in &cmds {
        for how in ["file", "stdin"] {
            let script = |path: &str| match how {
                "file" => format!("{bin} {}", cmd.replace("{}", path)),
                _ => format!("{bin} {} < {path}", cmd.replace("{}", "-")),
            };
            let run = |path: &str| {
                Command::new("bash")
                    .args(["-c", &script(path)])
                    .output()
                    .unwrap()
            };
            let (want, got) = (run(plain), run(bom));
            let err = String::from_utf8_lossy(&got.stderr);
            assert_eq!(
                String::from_utf8_lossy(&got.stdout).replace(bom, plain),
                String::from_utf8_lossy(&want.stdout),
                "{cmd} ({how}): the mark changed the answer\n{err}"
            );
            assert_eq!(
                got.status.code(),
                want.status.code(),
                "{cmd} ({how}): {err}"
            );
            assert!(
                err.contains("dropped the UTF-8 byte-order mark before line 1"),
                "{cmd} ({how}): no note\n{err}"
            );
        }
    }
    // `kafka produce` reads its first line before it connects (the live
    // tests show the key it sends).
    let out = Command::new(bin)
        .args([
            "kafka",
            "produce",
            "-b",
            "127.0.0.1:1",
            "-t",
            "t",
            "--timeout",
            "1s",
            "-i",
        ])
        .arg(&bom)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bom.txt: dropped the UTF-8 byte-order mark before line 1"),
        "kafka produce: {err}"
    );
}

/// Keys holding characters nobody sees (zero-width, bidi controls such as
/// U+202E, which shows `\u{202E}gnp.exe` as `exe.png`, control characters)
/// look like other keys and hash apart from them: every key reader warns,
/// naming the input and line (or the argument), and still answers.
#[test]
fn invisible_characters_in_keys_are_warned_about_by_every_reader() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = d.join("keys.txt");
    std::fs::write(
        &file,
        "TLKM\nTL\u{200B}KM\n\u{202E}gnp.exe\nBB\u{1b}[2JCA\nAN\u{2066}TM\nA\u{FEFF}\n",
    )
    .unwrap();
    let counts = d.join("counts.csv");
    std::fs::write(&counts, "TLKM,5\nTL\u{200B}KM,3\n").unwrap();
    let (file, counts) = (file.display().to_string(), counts.display().to_string());
    let ticker = crate::common::example("ticker.toml");
    let bin = env!("CARGO_BIN_EXE_partwise");
    let cmds: Vec<(String, &str)> = vec![
        ("route -p 6 -i {}".into(), &file),
        ("route -p 6 --summary -i {}".into(), &file),
        ("slot -i {}".into(), &file),
        ("skew -p 6 -i {}".into(), &file),
        ("salt -p 6 --counts -i {}".into(), &counts),
        ("resize --from 6 --to 7 -i {}".into(), &file),
        (format!("check {ticker} -i {{}}"), &file),
    ];
    for (cmd, path) in &cmds {
        for (how, script, name) in [
            (
                "file",
                format!("{bin} {}", cmd.replace("{}", path)),
                path.to_string(),
            ),
            (
                "stdin",
                format!("{bin} {} < {path}", cmd.replace("{}", "-")),
                "stdin".to_string(),
            ),
        ] {
            let out = Command::new("bash").args(["-c", &script]).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                matches!(out.status.code(), Some(0 | 1)),
                "{cmd} ({how}): {err}"
            );
            assert!(
                err.contains(&format!(
                    "{name} line 2: the key holds a zero-width character, U+200B"
                )),
                "{cmd} ({how}): {err}"
            );
            if path == &file {
                for want in [
                    format!("{name} line 3: the key holds a bidi control"),
                    format!("{name} line 4: the key holds a control character, U+001B"),
                    // Past the first few, the rest are counted.
                    format!("{name}: 2 more keys hold invisible characters"),
                ] {
                    assert!(err.contains(&want), "{cmd} ({how}): no '{want}'\n{err}");
                }
                assert!(!err.contains("line 1:"), "{cmd} ({how}): {err}");
            }
        }
    }
    // `kafka produce` reads (and warns) before it connects; its lines are
    // KEY<TAB>VALUE, and neither the tab nor the value is the key.
    let records = d.join("records.tsv");
    std::fs::write(&records, "k1\tv\u{200B}1\nTL\u{200B}KM\tv2\n").unwrap();
    let out = Command::new("bash")
        .args([
            "-c",
            &format!(
                "{bin} kafka produce -b 127.0.0.1:1 -t t --timeout 1s < {}",
                records.display()
            ),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("stdin line 2: the key holds a zero-width character, U+200B, at byte 2")
            && !err.contains("line 1:"),
        "kafka produce: {err}"
    );
    let out = Command::new(bin)
        .args(["route", "-p", "6", "TLKM", "TL\u{200B}KM"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("key argument 2: the key holds a zero-width character, U+200B, at byte 2")
            && !err.contains("key argument 1"),
        "{err}"
    );
}

/// Every live command, pointed at `addr`, with a 1 s timeout.
fn live_commands(addr: &str, dir: &Path) -> Vec<Vec<String>> {
    let kv = dir.join("kv.tsv");
    std::fs::write(&kv, b"k\tv\n").unwrap();
    let kv = kv.display().to_string();
    let k = |v: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = v.iter().map(|s| s.to_string()).collect();
        args.extend(["--timeout".to_string(), "1s".to_string()]);
        args
    };
    vec![
        k(&["kafka", "topics", "-b", addr]),
        k(&["kafka", "audit", "-b", addr, "-t", "t"]),
        k(&["kafka", "group", "-b", addr, "-g", "g"]),
        k(&["kafka", "produce", "-b", addr, "-t", "t", "-i", &kv]),
        k(&["kafka", "measure", "-b", addr, "--allow-write"]),
        k(&["kafka", "consume", "-b", addr, "-g", "g", "-t", "t"]),
        k(&[
            "kafka",
            "consume",
            "-b",
            addr,
            "-g",
            "g",
            "-t",
            "t",
            "-X",
            "security.protocol=ssl",
        ]),
        k(&["redis", "slots", "-c", addr]),
        k(&[
            "redis", "check", "-c", addr, "--family", "m:{%s}", "--family", "n:{%s}", "BBCA",
        ]),
        k(&["redis", "hot", "-c", addr]),
    ]
}

#[test]
fn live_commands_exit_2_within_their_timeout_against_hostile_peers() {
    let dir = fixtures();
    let peers = [
        Peer::Silent,
        Peer::Garbage,
        Peer::Close,
        Peer::HugeFrame,
        Peer::TlsAlert,
        Peer::AbsurdCount,
    ];
    let runs: Vec<(Peer, String, Vec<String>)> = peers
        .iter()
        .flat_map(|&peer| {
            let addr = listener(peer);
            live_commands(&addr, dir.path())
                .into_iter()
                .map(move |args| (peer, addr.clone(), args))
        })
        .collect();
    // --timeout 1s bounds each operation; a command may chain a few (the
    // bootstrap, then the request), and the debug binary starts slowly.
    let limit = Duration::from_secs(8);
    std::thread::scope(|s| {
        for chunk in runs.chunks(runs.len().div_ceil(8)) {
            let dir = dir.path();
            s.spawn(move || {
                for (peer, addr, args) in chunk {
                    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
                    let space = match peer {
                        Peer::AbsurdCount => RESERVE_LIMIT,
                        _ => MEMORY_LIMIT,
                    };
                    let o = run_in(dir, &refs, None, limit + Duration::from_secs(5), space);
                    assert_eq!(
                        o.code,
                        Some(2),
                        "{peer:?} {args:?}: exit {:?}\n{}",
                        o.code,
                        o.stderr
                    );
                    assert!(
                        !o.stderr.contains("panicked"),
                        "{peer:?} {args:?}: {}",
                        o.stderr
                    );
                    assert!(
                        o.stderr.contains(addr.as_str()),
                        "{peer:?} {args:?}: the message should name {addr}:\n{}",
                        o.stderr
                    );
                    assert!(o.elapsed < limit, "{peer:?} {args:?}: took {:?}", o.elapsed);
                }
            });
        }
    });
}

/// The deadline of a run that must finish (and did take minutes): far
/// above the few seconds it takes in a debug build on a busy machine.
const BOUNDED: Duration = Duration::from_secs(90);

/// Runs each of `cases` (arguments, the most bytes it may print) to the
/// end: exit 0 or 1 under the deadline and the address-space limit, and
/// its output bounded. Returns the outputs.
fn finishes_bounded(dir: &Path, cases: &[(&[&str], usize)]) -> Vec<String> {
    cases
        .iter()
        .enumerate()
        .map(|(i, (args, most))| {
            let out = dir.join(format!("out-{i}"));
            let o = run_to(dir, args, BOUNDED, &out);
            assert!(
                matches!(o.code, Some(0 | 1)),
                "{args:?}: exit {:?}\n{}",
                o.code,
                o.stderr
            );
            let text = std::fs::read_to_string(&out).unwrap();
            assert!(
                text.len() <= *most,
                "{args:?}: {} bytes of output, at most {most} expected",
                text.len()
            );
            eprintln!("{args:?}: {:?}, {} bytes", o.elapsed, text.len());
            text
        })
        .collect()
}

#[test]
fn names_as_long_as_allowed_make_a_bounded_report_naming_each_member_once() {
    // 4,000 members with 249-byte names (the longest allowed) on 2 x 5,000
    // partitions under round-robin, which splits every index: the matrix
    // would repeat a name in each of its 10,000 cells.
    let dir = tempfile::tempdir().unwrap();
    let name = |i: usize| format!("{i:05}{}", "n".repeat(244));
    let ids: Vec<String> = (0..4_000).map(|i| format!("\"{}\"", name(i))).collect();
    let file = format!(
        "[[topic]]\nname = \"a\"\npartitions = 5000\n[[topic.producer]]\npartitioner = \"java\"\n\
         [[topic]]\nname = \"b\"\npartitions = 5000\n[[topic.producer]]\npartitioner = \"java\"\n\
         [[copartition]]\nname = \"x\"\ntopics = [\"a\", \"b\"]\n\
         [[consumer_group]]\nname = \"g\"\nassignor = \"java:roundrobin\"\nmembers = [{}]\nsubscriptions = [\"a\", \"b\"]\n",
        ids.join(",")
    );
    std::fs::write(dir.path().join("long-ids.toml"), file).unwrap();
    let f = "{dir}/long-ids.toml";
    let out = finishes_bounded(
        dir.path(),
        &[
            (&["check", f], 64 << 10),
            (&["check", f, "--format", "json"], 64 << 10),
            (&["report", f], 4 << 20),
            (&["report", f, "--format", "json"], 4 << 20),
        ],
    );
    // Member 1,000 owns partition 1,000 of a and partition 0 of b: in the
    // page it is "#1000" in its cells and named once under the matrix.
    let long = name(1_000);
    assert_eq!(out[2].matches(&long).count(), 1, "named once in the page");
    assert!(out[2].contains("<td class=\"split\">#1000</td>"));
    assert!(out[2].contains("3000 more partition indices not shown (3000 of them split)"));
    let v: serde_json::Value = serde_json::from_str(&out[3]).unwrap();
    let m = &v["placements"][0]["matrices"][0];
    assert_eq!(m["members"][1_000], long.as_str());
    assert_eq!(
        m["rows"][1_000]["owners"],
        serde_json::json!([1_000, 2_000])
    );
    assert_eq!(m["rows"].as_array().unwrap().len(), 2_000);
    assert_eq!(m["rows_omitted"], 3_000);
    assert_eq!(m["split_count"], 5_000);
    assert_eq!(m["split_indices"].as_array().unwrap().len(), 2_000);
    assert_eq!(out[3].matches(&long).count(), 1, "named once in the JSON");
}

/// 40 consumer groups of `members = "1..1000"` on 2 x 10,000 partitions
/// (4.8 KB; each group within every per-group bound).
fn forty_sweeps(dir: &Path, groups: usize) -> String {
    let mut s = String::from(
        "[[topic]]\nname = \"a\"\npartitions = 10000\n[[topic]]\nname = \"b\"\npartitions = 10000\n\
         [[copartition]]\nname = \"x\"\ntopics = [\"a\", \"b\"]\n",
    );
    for i in 0..groups {
        s.push_str(&format!(
            "[[consumer_group]]\nname = \"g{i}\"\nassignor = \"java:roundrobin\"\nmembers = \"1..1000\"\nsubscriptions = [\"a\", \"b\"]\n"
        ));
    }
    let path = dir.join(format!("sweeps-{groups}.toml"));
    std::fs::write(&path, s).unwrap();
    path.display().to_string()
}

#[test]
fn forty_sweeps_of_a_thousand_counts_finish_in_seconds_and_say_what_they_covered() {
    let dir = tempfile::tempdir().unwrap();
    let forty = forty_sweeps(dir.path(), 40);
    let one = forty_sweeps(dir.path(), 1);
    let out = finishes_bounded(
        dir.path(),
        &[
            (&["check", &forty], 8 << 20),
            (&["check", &forty, "--format", "json"], 32 << 20),
            (&["report", &one], 4 << 20),
            (&["report", &one, "--format", "json"], 8 << 20),
            (&["report", &forty], 32 << 20),
            (&["report", &forty, "--format", "json"], 96 << 20),
        ],
    );
    assert_eq!(out[4].matches("<strong>Cut short:</strong>").count(), 40);
    // Round-robin is computed from the counts: every declared count is
    // checked; the simulated assignors ran out of budget, and the note says so.
    assert!(out[0].contains(
        "consumer group g39 (java:roundrobin, 1..1000 members) on x (a, b): UNITS SPLIT\n  - note: the simulation budget"
    ), "{}", &out[0][..2000.min(out[0].len())]);
    assert!(out[0].contains("every declared member count (1..1000) was checked; not run at every member count: java:sticky"));
    let v: serde_json::Value = serde_json::from_str(&out[1]).unwrap();
    let p = v["placements"].as_array().unwrap();
    assert_eq!(p.len(), 40);
    for (i, p) in p.iter().enumerate() {
        assert_eq!(p["consumer_group"], format!("g{i}"));
        assert_eq!(p["counts"].as_array().unwrap().len(), 1000);
        let cut = &p["cut_short"];
        assert_eq!(
            (cut["asked"].as_u64(), cut["checked"].as_u64()),
            (Some(1000), Some(1000)),
            "{cut}"
        );
        assert!(cut["assignors_not_run_everywhere"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a == "copartitioned"));
    }
    // The report shows the check's sweep, with the counts not run marked.
    assert!(out[2].contains("<td>not run</td>"));
    assert!(out[2].contains("<strong>Cut short:</strong> the simulation budget"));
    let r: serde_json::Value = serde_json::from_str(&out[3]).unwrap();
    let sweep = &r["placements"][0]["sweep"];
    let sticky = sweep["assignors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["assignor"] == "java:sticky")
        .unwrap();
    assert!(sticky["split_counts"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c.is_null()));
    assert!(r["placements"][0]["verdict"]["cut_short"]["note"].is_string());
}

/// Every command that writes a file the user names, writing to `out`, with
/// what its bytes start with.
fn file_writers(dir: &Path, out: &Path) -> Vec<(&'static str, Vec<String>, &'static str)> {
    let keys = dir.join("keys.txt").display().to_string();
    let out = out.display().to_string();
    let ticker = crate::common::example("ticker.toml");
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    vec![
        (
            "-o/--output",
            s(&["report", &ticker, "-i", &keys, "-o", &out]),
            "<!DOCTYPE html>",
        ),
        (
            "-o/--output",
            s(&["report", &ticker, "--format", "json", "-o", &out]),
            "{",
        ),
        (
            "--plot",
            s(&["skew", "-i", &keys, "-p", "6", "--plot", &out]),
            "<svg",
        ),
    ]
}

/// Runs partwise with `args`, killed after [`FAST`]; stdout captured.
fn run_capturing(args: &[String]) -> (Option<i32>, Vec<u8>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_partwise"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (mut o, mut e) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let out = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = o.read_to_end(&mut b);
        b
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = e.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let code = exit_within(&mut child, start, FAST, &format!("{args:?}"));
    (code, out.join().unwrap(), err.join().unwrap())
}

/// A device node of our own (`mknod`: tests run as root in CI), never the
/// machine's: char 1 3 is a null device, char 1 7 a full one.
fn device(path: &Path, minor: u32) {
    let ok = Command::new("mknod")
        .arg(path)
        .args(["c", "1", &minor.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "mknod {} c 1 {minor} (needs root)", path.display());
}

fn is_char_device(path: &Path, rdev: u64) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    std::fs::symlink_metadata(path)
        .is_ok_and(|m| m.file_type().is_char_device() && m.rdev() == rdev)
}

/// The names in `dir`: nothing may be left beside the output (a temporary
/// file that was never renamed).
fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A device given as the output is written through, never replaced by a
/// regular file (as root, renaming over `/dev/null` replaces the machine's
/// null device), and a full one is exit 2 naming the flag and the path.
#[test]
fn no_writer_replaces_a_device_given_as_its_output() {
    let fx = fixtures();
    for i in 0..file_writers(fx.path(), Path::new("OUT")).len() {
        let dir = tempfile::tempdir().unwrap();
        let (null, full) = (dir.path().join("null"), dir.path().join("full"));
        device(&null, 3);
        device(&full, 7);
        let (_, a, _) = file_writers(fx.path(), &null).swap_remove(i);
        let (code, _, err) = run_capturing(&a);
        assert!(matches!(code, Some(0 | 1)), "{a:?}: exit {code:?}: {err}");
        assert!(
            is_char_device(&null, 0x103),
            "{a:?}: the null device was replaced"
        );
        let (flag, a, _) = file_writers(fx.path(), &full).swap_remove(i);
        let (code, _, err) = run_capturing(&a);
        assert_eq!(code, Some(2), "{a:?}: {err}");
        assert!(
            err.contains(&format!("{flag} {}", full.display()))
                && err.contains("No space left on device")
                && !err.contains("panicked"),
            "{a:?}: {err}"
        );
        assert!(
            is_char_device(&full, 0x107),
            "{a:?}: the full device was replaced"
        );
        assert_eq!(names_in(dir.path()), ["full", "null"], "{a:?}");
    }
}

/// A block device (a disk: written through, a report would overwrite its
/// first sectors) and a socket given as the output are exit 2 naming them,
/// and stay what they are.
#[test]
fn writers_refuse_a_block_device_or_a_socket() {
    use std::os::unix::fs::FileTypeExt;
    let fx = fixtures();
    let dir = tempfile::tempdir().unwrap();
    // Major 240 is reserved for local use: no driver answers it, so even a
    // writer that opened it would write nowhere.
    let disk = dir.path().join("disk");
    let ok = Command::new("mknod")
        .arg(&disk)
        .args(["b", "240", "0"])
        .status()
        .unwrap()
        .success();
    assert!(ok, "mknod {} b 240 0 (needs root)", disk.display());
    let sock = dir.path().join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    for (path, what) in [(&disk, "block device"), (&sock, "socket")] {
        for (flag, args, _) in file_writers(fx.path(), path) {
            let (code, _, err) = run_capturing(&args);
            assert_eq!(code, Some(2), "{args:?}: {err}");
            assert!(
                err.contains(&format!("{flag} {}: is a {what}", path.display())),
                "{args:?}: {err}"
            );
            let t = std::fs::symlink_metadata(path).unwrap().file_type();
            assert!(
                t.is_block_device() || t.is_socket(),
                "{args:?}: {path:?} was replaced"
            );
        }
    }
    assert_eq!(names_in(dir.path()), ["disk", "sock"]);
}

/// A FIFO given as the output is written through: its reader gets the
/// whole output and the FIFO stays a FIFO.
#[test]
fn no_writer_replaces_a_fifo_given_as_its_output() {
    use std::os::unix::fs::FileTypeExt;
    let fx = fixtures();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    for (_, args, head) in file_writers(fx.path(), &fifo) {
        if !fifo.exists() {
            assert!(Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success());
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let path = fifo.clone();
        std::thread::spawn(move || {
            let mut b = Vec::new();
            let read = std::fs::File::open(&path).and_then(|mut f| f.read_to_end(&mut b));
            let _ = tx.send(read.map(|_| b));
        });
        let (code, _, err) = run_capturing(&args);
        assert!(
            matches!(code, Some(0 | 1)),
            "{args:?}: exit {code:?}: {err}"
        );
        let got = rx.recv_timeout(FAST);
        let is_fifo = std::fs::symlink_metadata(&fifo).is_ok_and(|m| m.file_type().is_fifo());
        if !is_fifo {
            // Unblock the reader, still waiting on the replaced FIFO's inode.
            let _ = std::fs::remove_file(&fifo);
        }
        assert!(is_fifo, "{args:?}: the FIFO was replaced by a regular file");
        let got = got.expect("the FIFO's reader got nothing").unwrap();
        assert!(
            got.starts_with(head.as_bytes()) && got.len() > 100,
            "{args:?}: the reader got {:?}",
            String::from_utf8_lossy(&got[..got.len().min(200)])
        );
        assert_eq!(names_in(dir.path()), ["fifo"], "{args:?}");
    }
}

/// A symbolic link given as the output stays a link: its target gets the
/// bytes (and keeps its permissions), including a link not yet pointing at
/// anything; a link to `/proc/self/fd/1` (what `/dev/stdout` is) writes to
/// our stdout.
#[test]
fn no_writer_replaces_a_symlink_given_as_its_output() {
    use std::os::unix::fs::PermissionsExt;
    let fx = fixtures();
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("link");
    let target = dir.path().join("target");
    for (_, args, head) in file_writers(fx.path(), &link) {
        for dangling in [false, true] {
            let _ = std::fs::remove_file(&link);
            let _ = std::fs::remove_file(&target);
            if !dangling {
                std::fs::write(&target, "old\n").unwrap();
                std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
            }
            // Relative, as `ln -s target link` makes it.
            std::os::unix::fs::symlink("target", &link).unwrap();
            let (code, _, err) = run_capturing(&args);
            assert!(
                matches!(code, Some(0 | 1)),
                "{args:?}: exit {code:?}: {err}"
            );
            let meta = std::fs::symlink_metadata(&link).unwrap();
            assert!(
                meta.file_type().is_symlink(),
                "{args:?}: the link was replaced"
            );
            let got = std::fs::read(&target).unwrap();
            assert!(
                got.starts_with(head.as_bytes()),
                "{args:?} (dangling {dangling})"
            );
            if !dangling {
                let mode = std::fs::metadata(&target).unwrap().permissions().mode();
                assert_eq!(mode & 0o777, 0o640, "{args:?}: the target's mode changed");
            }
            assert_eq!(names_in(dir.path()), ["link", "target"], "{args:?}");
        }
        let _ = std::fs::remove_file(&link);
        let _ = std::fs::remove_file(&target);
        std::os::unix::fs::symlink("/proc/self/fd/1", &link).unwrap();
        let (code, stdout, err) = run_capturing(&args);
        assert!(
            matches!(code, Some(0 | 1)),
            "{args:?}: exit {code:?}: {err}"
        );
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink(),
            "{args:?}: the link to stdout was replaced"
        );
        assert!(
            stdout.starts_with(head.as_bytes()),
            "{args:?}: stdout got {}",
            stdout.len()
        );
        let _ = std::fs::remove_file(&link);
        // The descriptor's own names (never `/dev/stdout` itself here: a
        // writer that renamed over it would replace the machine's).
        for fd in ["/proc/self/fd/1", "/dev/fd/1"] {
            let link = link.display().to_string();
            let a: Vec<String> = args
                .iter()
                .map(|s| {
                    if *s == link {
                        fd.to_string()
                    } else {
                        s.clone()
                    }
                })
                .collect();
            let (code, stdout, err) = run_capturing(&a);
            assert!(matches!(code, Some(0 | 1)), "{a:?}: exit {code:?}: {err}");
            assert!(
                stdout.starts_with(head.as_bytes()),
                "{a:?}: stdout got {}",
                stdout.len()
            );
        }
    }
}

/// A regular file given as the output is replaced whole (nothing left
/// beside it) and keeps its owner and permissions; a directory is exit 2
/// naming it.
#[test]
fn writers_replace_a_regular_file_whole_and_refuse_a_directory() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let fx = fixtures();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.file");
    for (_, args, head) in file_writers(fx.path(), &file) {
        std::fs::write(&file, "old\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        // Someone else's file (tests run as root in CI; elsewhere the chown
        // fails and the file stays ours).
        let _ = std::os::unix::fs::chown(&file, Some(4321), Some(4321));
        let owner = std::fs::metadata(&file).unwrap().uid();
        let (code, _, err) = run_capturing(&args);
        assert!(
            matches!(code, Some(0 | 1)),
            "{args:?}: exit {code:?}: {err}"
        );
        assert!(std::fs::read(&file).unwrap().starts_with(head.as_bytes()));
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{args:?}: the file's mode changed");
        let now = std::fs::metadata(&file).unwrap().uid();
        assert_eq!(now, owner, "{args:?}: the file's owner changed");
        assert_eq!(names_in(dir.path()), ["out.file"], "{args:?}");
    }
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    for (flag, args, _) in file_writers(fx.path(), &sub) {
        let (code, _, err) = run_capturing(&args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!("{flag} {}", sub.display())),
            "{args:?}: {err}"
        );
        assert!(sub.is_dir() && names_in(&sub).is_empty(), "{args:?}");
    }
}

/// Characters that draw nothing or reorder what follows: a bidi override
/// (`\u{202E}gnp.exe` reads as `exe.png`), a zero-width space, a byte order
/// mark inside a key, a control character.
const INVISIBLE: [char; 5] = ['\u{202E}', '\u{200B}', '\u{FEFF}', '\u{2066}', '\u{1b}'];

/// Keys holding invisible characters print in tables as hex, as keys that
/// are not UTF-8 do, never as themselves.
#[test]
fn keys_with_invisible_characters_print_as_hex_in_tables() {
    let keys = [
        "\u{202E}gnp.exe",
        "a\u{200B}b",
        "BB\u{FEFF}CA",
        "x\u{2066}y",
    ];
    for cmd in [&["route", "-p", "6"][..], &["slot"]] {
        let out = crate::common::output(&[cmd, &keys[..]].concat(), 0);
        let table = String::from_utf8(out.stdout).unwrap();
        assert!(!table.contains(INVISIBLE), "{cmd:?}: {table:?}");
        for k in keys {
            let hex: String = k.bytes().map(|b| format!("{b:02x}")).collect();
            assert!(
                table.contains(&format!("0x{hex}")),
                "{cmd:?}: {k:?} not in hex:\n{table}"
            );
        }
    }
}

/// The HTML report shows invisible characters escaped: in sample keys (as
/// hex, as the tables do) and in names from the topology file (as `\u{..}`).
#[test]
fn the_report_shows_invisible_characters_escaped() {
    let keys = crate::common::temp_file("BBCA\n\u{202E}gnp.exe\nm\u{200B}x\n");
    let topo = std::fs::read_to_string(crate::common::example("ticker.toml"))
        .unwrap()
        .replace(
            "members = 3",
            "members = [\"\u{202E}1m\", \"m\u{200B}2\", \"m\u{FEFF}3\"]",
        )
        .replace("\"market-updates\"", "\"market\u{2066}updates\"");
    let topo = crate::common::temp_file(topo);
    let out = crate::common::partwise()
        .args(["report", topo.path().to_str().unwrap(), "-i"])
        .arg(keys.path())
        .output()
        .unwrap();
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(
        page.contains("</html>"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !page.contains(INVISIBLE),
        "an invisible character reached the page"
    );
    assert!(
        page.contains("0xe280ae676e702e657865"),
        "the key is not in hex"
    );
    for m in ["\\u{202e}1m", "m\\u{200b}2", "m\\u{feff}3"] {
        assert!(page.contains(m), "member {m} is not shown escaped");
    }
    // The topic's name, in the tables and in its load chart's title.
    assert!(page.contains("<title id=\"skew-0-chart-title\">market\\u{2066}updates"));
}

/// An error quoting a hostile name (a file name that retitles the window
/// and reverses the text after it) shows it escaped on stderr.
#[test]
fn error_messages_show_invisible_characters_escaped() {
    let name = "/nonexistent/a\u{1b}]0;pwned\u{7}\u{202e}b";
    for args in [
        &["route", "-p", "6", "-i", name][..],
        &["report", name],
        &["skew", "-p", "6", "-i", name],
    ] {
        let err = crate::common::fails(args);
        assert!(
            !err.contains(INVISIBLE) && !err.contains('\u{7}'),
            "{args:?}: {err:?}"
        );
        assert!(
            err.contains("/nonexistent/a\\u{1b}]0;pwned\\u{7}\\u{202e}b"),
            "{args:?}: {err}"
        );
    }
}

/// A warning quoting a hostile file name shows it escaped on stderr.
#[test]
fn warnings_show_invisible_characters_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("k\u{1b}[2J\u{202e}.csv");
    std::fs::write(&file, "BBCA,5\nANTM,3\n").unwrap();
    let out = crate::common::partwise()
        .args(["skew", "-p", "6", "-i"])
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("--weighted was not given"), "{err}");
    assert!(!err.contains(INVISIBLE), "{err:?}");
    assert!(err.contains("k\\u{1b}[2J\\u{202e}.csv"), "{err}");
}

/// Address space for the million-key runs: a few hundred bytes a key, the
/// binary and its allocator's arenas included.
const MILLION_KEYS_LIMIT: u64 = 500 << 20;

/// A `--counts` file of 1,000,000 keys (13 MB) is analysed by `report` and
/// `resize` in memory proportional to it, under a 500 MB address-space
/// limit, and their per-key listings stop at the first 2,000 keys, the rest
/// counted. Before, `report` held a JSON value per key of each listing (3.9 GB,
/// 355 MB written) and `resize` several copies of every key (2.3 GB):
/// under the limit both aborted.
#[test]
fn a_million_key_counts_file_is_analysed_in_bounded_memory() {
    use std::fmt::Write as _;
    const KEYS: usize = 1_000_000;
    const ROWS: usize = 2_000;
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::with_capacity(14 << 20);
    for i in 0..KEYS {
        let _ = writeln!(text, "K{i:07},{}", i % 1000 + 1);
    }
    std::fs::write(dir.path().join("keys.csv"), text).unwrap();
    let ticker = crate::common::example("ticker.toml");
    let out = dir.path().join("out.json");
    let limit = Duration::from_secs(300);
    let doc = |args: &[&str]| -> serde_json::Value {
        let stdout = Stdio::from(std::fs::File::create(&out).unwrap());
        let o = run_full(dir.path(), args, None, limit, MILLION_KEYS_LIMIT, stdout);
        assert!(
            matches!(o.code, Some(0 | 1)),
            "{args:?}: exit {:?} after {:?}\n{}",
            o.code,
            o.elapsed,
            o.stderr
        );
        let bytes = std::fs::read(&out).unwrap();
        // A document of the findings and the first rows, not of every key.
        assert!(bytes.len() < 4 << 20, "{args:?}: {} bytes", bytes.len());
        serde_json::from_slice(&bytes).unwrap()
    };

    let v = doc(&[
        "report",
        &ticker,
        "--counts",
        "{dir}/keys.csv",
        "--format",
        "json",
    ]);
    assert_eq!(v["sample_keys"], KEYS);
    assert_eq!(v["check"]["copartition_groups"][0]["sample_keys"], KEYS);
    for list in ["partition_maps", "redis_families"] {
        let l = &v[list][0];
        assert_eq!(l["rows"].as_array().unwrap().len(), ROWS, "{list}");
        assert_eq!(l["rows_omitted"], KEYS - ROWS, "{list}");
        assert_eq!(l["rows"][ROWS - 1]["key"], format!("K{:07}", ROWS - 1));
    }

    let v = doc(&[
        "resize",
        "--from",
        "6",
        "--to",
        "1000000",
        "--counts",
        "{dir}/keys.csv",
        "--format",
        "json",
    ]);
    assert_eq!(v["keys"], KEYS);
    let moved = v["moved_count"].as_u64().unwrap() as usize;
    assert!(moved > KEYS - 100, "{moved}");
    assert_eq!(v["moved"].as_array().unwrap().len(), ROWS);
    assert_eq!(v["moved_omitted"], moved - ROWS);
}

/// A written file named as one of the command's inputs (a slip of tab
/// completion) is refused with exit 2 naming both, and the input is left as
/// it was: the same path, another spelling of it, a symbolic or hard link
/// to it, or the file stdin reads; for `report -o` (the topology file,
/// `-i`, `--counts`, `-F`, a file a `-X` property names) and `skew --plot`
/// (`-i`). Before, the input was replaced by the page or the chart, exit 0.
#[test]
fn an_output_that_is_an_input_is_refused_and_the_input_kept() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ticker = std::fs::read(crate::common::example("ticker.toml")).unwrap();
    let files: [(&str, &[u8]); 4] = [
        ("T.toml", &ticker),
        ("keys.txt", b"BBCA\nANTM\nASII\n"),
        ("counts.csv", b"BBCA,5\nANTM,3\n"),
        ("client.properties", b"bootstrap.servers=127.0.0.1:1\n"),
    ];
    for (name, bytes) in files {
        std::fs::write(d.join(name), bytes).unwrap();
    }
    std::os::unix::fs::symlink("keys.txt", d.join("link.svg")).unwrap();
    std::fs::hard_link(d.join("keys.txt"), d.join("hard.svg")).unwrap();
    let cases: &[(&[&str], Option<&str>, &str)] = &[
        (
            &["report", "T.toml", "-o", "T.toml"],
            None,
            "-o/--output T.toml: the same file as the topology file T.toml",
        ),
        (
            &["report", "./T.toml", "-o", "T.toml", "--format", "json"],
            None,
            "the topology file ./T.toml",
        ),
        (
            &["report", "T.toml", "-i", "keys.txt", "-o", "link.svg"],
            None,
            "-o/--output link.svg: the same file as -i/--input keys.txt",
        ),
        (
            &[
                "report",
                "T.toml",
                "--counts",
                "counts.csv",
                "-o",
                "counts.csv",
            ],
            None,
            "the same file as --counts counts.csv",
        ),
        (
            &[
                "report",
                "T.toml",
                "-F",
                "client.properties",
                "-o",
                "client.properties",
            ],
            None,
            "the same file as -F client.properties",
        ),
        (
            &[
                "report",
                "T.toml",
                "-b",
                "127.0.0.1:1",
                "-X",
                "ssl.ca.location=keys.txt",
                "-o",
                "keys.txt",
            ],
            None,
            "the same file as the property ssl.ca.location keys.txt",
        ),
        (
            &["skew", "-p", "6", "-i", "keys.txt", "--plot", "keys.txt"],
            None,
            "--plot keys.txt: the same file as -i/--input keys.txt",
        ),
        (
            &["skew", "-p", "6", "-i", "keys.txt", "--plot", "hard.svg"],
            None,
            "--plot hard.svg: the same file as -i/--input keys.txt",
        ),
        (
            &["skew", "-p", "6", "-i", "-", "--plot", "keys.txt"],
            Some("keys.txt"),
            "--plot keys.txt: the same file as -i/--input - (stdin)",
        ),
    ];
    for (args, stdin, needle) in cases {
        // The file itself as stdin (a shell's `< keys.txt`), not a pipe.
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_partwise"));
        cmd.current_dir(d).args(*args).stdin(match stdin {
            Some(f) => Stdio::from(std::fs::File::open(d.join(f)).unwrap()),
            None => Stdio::null(),
        });
        let out = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
        for (name, bytes) in files {
            assert_eq!(
                std::fs::read(d.join(name)).unwrap(),
                bytes,
                "{args:?}: {name}"
            );
        }
        assert!(std::fs::symlink_metadata(d.join("link.svg"))
            .unwrap()
            .file_type()
            .is_symlink());
    }
    // Another file beside them is written as before.
    let out = crate::common::partwise()
        .current_dir(d)
        .args(["report", "T.toml", "-i", "keys.txt", "-o", "page.html"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::read_to_string(d.join("page.html"))
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
}
