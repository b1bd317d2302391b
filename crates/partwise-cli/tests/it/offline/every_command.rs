//! What every command does alike: NDJSON is one object per line, and a bad
//! flag value is clap's usage error naming the flag and its cause.

use crate::common::{example, fails, partwise, temp_file};
use serde_json::Value;

/// The subcommand paths (`["kafka", "audit"]`) whose help offers `--format`,
/// found by walking `--help`, so a new command cannot escape the check below.
fn commands_with_format(path: &[String]) -> Vec<Vec<String>> {
    let out = partwise()
        .args(path)
        .arg("--help")
        .env("COLUMNS", "200")
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let Some(list) = help.split("Commands:\n").nth(1) else {
        return if help.contains("--format") {
            vec![path.to_vec()]
        } else {
            Vec::new()
        };
    };
    list.lines()
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .flat_map(|name| {
            let mut sub = path.to_vec();
            sub.push(name.to_string());
            commands_with_format(&sub)
        })
        .collect()
}

/// `--format ndjson` is one JSON object per line in every command: run each
/// offline command (each of its output shapes) and parse every line alone.
#[test]
fn ndjson_is_one_object_per_line_everywhere() {
    let keys = temp_file(b"ID\nID\nID\nID\nID\nID\nID\nID\nID\nA\nB\nC\n");
    let keys = keys.path().to_str().unwrap();
    let ticker = example("ticker.toml");
    let ticker = ticker.as_str();
    let plan = [
        "plan",
        "--produce-mbps",
        "50",
        "--partition-produce-mbps",
        "10",
        "--consume-mbps",
        "50",
        "--partition-consume-mbps",
        "2.5",
    ];
    let runs: Vec<Vec<&str>> = vec![
        vec!["route", "a", "b", "-p", "6", "-P", "java", "-P", "sarama"],
        vec!["route", "a", "b", "-p", "6", "--summary"],
        vec!["route", "a", "-p", "6", "--null-key"],
        vec![
            "route", "a", "b", "-p", "6", "--from", "java", "--to", "sarama",
        ],
        vec!["slot", "a", "{a}b"],
        vec![
            "assign",
            "-a",
            "java:range",
            "-m",
            "2",
            "-t",
            "a:6",
            "-t",
            "b:6",
        ],
        vec!["assign", "-a", "java:range", "--sweep", "1..4", "-t", "a:6"],
        vec!["partitioners"],
        plan.to_vec(),
        vec!["skew", "-p", "6", "-i", keys, "--consumers", "2"],
        vec!["salt", "--key", "ID", "--share", "0.9", "-p", "12"],
        vec!["salt", "-i", keys, "-p", "12", "--consumers", "3"],
        vec![
            "batching",
            "--messages",
            "1000",
            "--size",
            "100",
            "--partitions",
            "6",
            "--rate",
            "1000",
        ],
        vec!["check", ticker],
        vec!["report", ticker],
        vec!["resize", "a", "b", "--from", "6", "--to", "12"],
        vec!["resize", "--suggest", "--target", "12", "--consumers", "4"],
    ];
    // Need a live cluster: kafka.rs `live_ndjson_is_one_object_per_line`,
    // redis.rs `ndjson_is_one_object_per_line` and every consume.rs test
    // (which reads the member's lines) check those.
    const LIVE: [&str; 2] = ["kafka", "redis"];
    for path in commands_with_format(&[]) {
        let covered = LIVE.contains(&path[0].as_str())
            || runs.iter().any(|r| r[0] == path[0] && path.len() == 1);
        assert!(covered, "{path:?} takes --format but is not run here");
    }
    for args in &runs {
        let out = partwise()
            .args(args)
            .args(["--format", "ndjson"])
            .output()
            .unwrap();
        let code = out.status.code();
        assert!(
            matches!(code, Some(0 | 1)),
            "{args:?} exit {code:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(!text.is_empty(), "{args:?} printed nothing");
        for line in text.lines() {
            let v: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{args:?}: line is not one JSON value ({e}): {line}"));
            assert!(v.is_object(), "{args:?}: line is not an object: {line}");
        }
    }
}

/// A bad flag value is clap's usage error (exit 2) naming the flag by both
/// spellings and the value, with the error's cause on a line of its own.
#[test]
fn a_bad_value_names_the_flag_and_prints_its_cause() {
    let err = fails(&["assign", "-a", "java:range", "-m", "2", "-t", "a:0"]);
    let mut lines = err.lines();
    assert_eq!(
        lines.next(),
        Some("error: invalid value 'a:0' for '-t/--topic <NAME:N>': the partition count after the last ':' is not valid")
    );
    assert_eq!(
        lines.next(),
        Some("  caused by: invalid partition count '0': a topic has at least 1 partition")
    );
    // The old `--*-ms` names still work, and a bad value is named as typed.
    let err = fails(&[
        "kafka",
        "consume",
        "-b",
        "127.0.0.1:1",
        "-g",
        "g",
        "-t",
        "t",
        "--session-timeout-ms",
        "soon",
    ]);
    assert!(
        err.contains("invalid value 'soon' for '--session-timeout-ms <DURATION>'"),
        "{err}"
    );
    // A key that is not UTF-8 beside the bad value: still the usage error.
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let out = partwise()
            .arg("route")
            .arg(std::ffi::OsStr::from_bytes(b"\xff"))
            .args(["-p", "0"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("invalid value '0' for '-p/--partitions <N>'")
                && !err.contains("panicked"),
            "{err}"
        );
    }
    // --help is not an error.
    let out = partwise().args(["route", "--help"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
}
