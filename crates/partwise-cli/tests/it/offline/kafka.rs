//! `partwise kafka ...` from the shell without a broker: secrets never
//! printed, bad flags named, a port nobody answers on ends within the
//! timeout. The commands against a live broker are `live::kafka`.

use crate::common::{partwise as pw, text};
use partwise_faults::live::{free_port as dead_port, unique};
use std::time::{Duration, Instant};

/// A misspelt or unknown key may hold a secret: its value is shown nowhere,
/// neither in the verbose dump nor in librdkafka's "no such property" error,
/// in any command that takes `-X` (issue 19, item 4).
#[test]
fn values_of_unknown_or_misspelt_keys_are_never_printed() {
    let bootstrap = format!("127.0.0.1:{}", dead_port());
    for x in ["sasl.passwrd=SECRET123", "my.api.key=SECRET123"] {
        for cmd in [
            &["kafka", "topics", "-v"][..],
            &["kafka", "audit", "-t", "t"],
            &["kafka", "group", "-g", "g"],
            &["kafka", "consume", "-g", "g", "-t", "t"],
        ] {
            let out = pw()
                .args(cmd)
                .args(["-b", &bootstrap, "--timeout", "1s", "-X", x])
                .output()
                .unwrap();
            let all = text(&out.stdout) + &text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{cmd:?} {x}: {all}");
            assert!(!all.contains("SECRET123"), "{cmd:?} {x} leaked: {all}");
            let key = x.split('=').next().unwrap();
            assert!(
                all.contains(key),
                "{cmd:?}: the error should name {key}: {all}"
            );
        }
    }
}

#[test]
fn secrets_are_never_printed_even_verbose() {
    let secret_file = std::env::temp_dir().join(unique("pwk-secret.properties"));
    std::fs::write(&secret_file, "ssl.key.password=filesecret987\n# comment\n").unwrap();
    let bootstrap = format!("127.0.0.1:{}", dead_port());
    let t0 = Instant::now();
    let out = pw()
        .args(["kafka", "topics", "-v", "--timeout", "1", "-b", &bootstrap])
        .args([
            "-X",
            "security.protocol=SASL_PLAINTEXT",
            "-X",
            "sasl.mechanism=PLAIN",
        ])
        .args([
            "-X",
            "sasl.username=alice",
            "-X",
            "sasl.password=hunter2secret",
        ])
        .arg("-F")
        .arg(&secret_file)
        .output()
        .unwrap();
    assert!(t0.elapsed() < Duration::from_secs(6), "{:?}", t0.elapsed());
    assert_eq!(out.status.code(), Some(2));
    let all = text(&out.stdout) + &text(&out.stderr);
    for s in ["hunter2secret", "filesecret987"] {
        assert!(!all.contains(s), "{s} leaked: {all}");
    }
    assert!(all.contains("sasl.password=[redacted]"), "{all}");
    assert!(all.contains("ssl.key.password=[redacted]"), "{all}");
    assert!(all.contains("sasl.username=alice"), "{all}");
    assert!(all.contains("no answer from the Kafka cluster"), "{all}");
    // A secret property this build cannot use: the error names it, not its value.
    let out = pw()
        .args(["kafka", "topics", "-v", "-b", &bootstrap, "--timeout", "1"])
        .args(["-X", "sasl.oauthbearer.client.secret=oauthsecret55"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let all = text(&out.stdout) + &text(&out.stderr);
    assert!(
        !all.contains("oauthsecret55") && all.contains("sasl.oauthbearer.client.secret"),
        "{all}"
    );
    // A secret value librdkafka rejects is not echoed either.
    let out = pw()
        .args(["kafka", "topics", "-b", &bootstrap, "--timeout", "1"])
        .args([
            "-X",
            "ssl.key.pem=notapemsecret42",
            "-X",
            "security.protocol=SSL",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let all = text(&out.stdout) + &text(&out.stderr);
    assert!(!all.contains("notapemsecret42"), "{all}");
    std::fs::remove_file(&secret_file).unwrap();
}

#[test]
fn bad_flags_exit_2_with_the_flag_named() {
    let cases: &[(&[&str], &str)] = &[
        (&["kafka", "topics"], "no brokers"),
        (&["kafka", "topics", "-b", "h:1", "-X", "novalue"], "-X"),
        (
            &["kafka", "topics", "-b", "h:1", "--timeout", "-3"],
            "--timeout",
        ),
        (
            &["kafka", "topics", "-b", "h:1", "--timeout", "abc"],
            "--timeout",
        ),
        (
            &["kafka", "topics", "-b", "h:1", "-F", "/nonexistent/file"],
            "-F",
        ),
        (
            &["kafka", "topics", "-b", "h:1", "-X", "no.such.property=1"],
            "no.such.property",
        ),
        (
            &["kafka", "audit", "-b", "h:1", "-t", "x", "-P", "nosuch"],
            "-P/--partitioner",
        ),
        (
            &[
                "kafka",
                "audit",
                "-b",
                "h:1",
                "-t",
                "x",
                "--key-format",
                "int99",
            ],
            "--key-format",
        ),
        (
            &["kafka", "produce", "-b", "h:1", "-t", "x", "-P", "nosuch"],
            "-P/--partitioner",
        ),
        (&["kafka", "measure", "-b", "h:1"], "--allow-write"),
        (&["kafka", "group", "-b", "h:1", "-g", ""], "-g/--group"),
        (
            &[
                "kafka",
                "group",
                "-b",
                "h:1",
                "-g",
                "g",
                "--readiness",
                "--assignor",
                "java:range",
            ],
            "--readiness",
        ),
    ];
    for (args, needle) in cases {
        let out = pw().args(*args).write_stdin("").output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn a_wrong_port_fails_within_the_timeout_for_every_command() {
    let b = format!("127.0.0.1:{}", dead_port());
    for args in [
        vec!["kafka", "topics"],
        vec!["kafka", "audit", "-t", "x"],
        vec!["kafka", "group", "-g", "g"],
        vec!["kafka", "group", "-g", "g", "--readiness"],
    ] {
        let t0 = Instant::now();
        let out = pw()
            .args(&args)
            .args(["-b", &b, "--timeout", "2"])
            .output()
            .unwrap();
        assert!(
            t0.elapsed() < Duration::from_secs(6),
            "{args:?}: {:?}",
            t0.elapsed()
        );
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            text(&out.stderr).contains("no answer"),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

/// `kafka consume`'s group-protocol flags: what belongs to one protocol is
/// refused with the other, naming the flag, before any broker is contacted
/// (the bootstrap here answers nobody, so a check made later would fail
/// differently).
#[test]
fn consume_group_protocol_flags_that_do_not_go_together_are_exit_2_naming_them() {
    let bootstrap = format!("127.0.0.1:{}", dead_port());
    let cases: &[(&[&str], &str)] = &[
        (&["--remote-assignor", "range"], "--remote-assignor"),
        (
            &["--group-protocol", "classic", "--remote-assignor", "range"],
            "--remote-assignor",
        ),
        (
            &["--group-protocol", "consumer", "--assignor", "java:range"],
            "--assignor",
        ),
        (
            &["--group-protocol", "consumer", "--session-timeout", "10s"],
            "--session-timeout",
        ),
        (
            &["--group-protocol", "consumer", "--heartbeat-interval", "1s"],
            "--heartbeat-interval",
        ),
        (&["--group-protocol", "cooperative"], "--group-protocol"),
        (
            &["--group-protocol", "consumer", "--remote-assignor", " "],
            "--remote-assignor",
        ),
        (
            &["-X", "group.protocol=consumer", "--assignor", "java:range"],
            "--assignor",
        ),
        (&["-X", "group.remote.assignor=range"], "--remote-assignor"),
        // The member leads with the assignors it runs, named as everywhere
        // (an assignor spec): another spec is refused naming the flag.
        (&["--assignor", "java:roundrobin"], "--assignor"),
        (&["-a", "kip848:range"], "--assignor"),
        (
            &[
                "-X",
                "group.protocol=consumer",
                "--group-protocol",
                "classic",
            ],
            "-X group.protocol",
        ),
    ];
    for (flags, named) in cases {
        let t0 = Instant::now();
        let out = pw()
            .args(["kafka", "consume", "-g", "g", "-t", "t", "-b", &bootstrap])
            .args(*flags)
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.contains(named), "{flags:?} should name {named}: {err}");
        assert!(!err.contains("no broker reachable"), "{flags:?}: {err}");
        assert!(t0.elapsed() < Duration::from_secs(5), "{flags:?}");
    }
}

/// `kafka consume --assignor` takes an assignor spec, as every command's
/// `--assignor` does; `range`, the protocol name it took before, still
/// works (as `java:range`) with a note, and goes in the next release.
#[test]
fn consume_assignor_range_old_spelling_kept_with_a_note() {
    let bootstrap = format!("127.0.0.1:{}", dead_port());
    for flags in [
        &["--assignor", "range"][..],
        &["-a", "range"],
        &["--assignor=range"],
    ] {
        let out = pw()
            .args(["kafka", "consume", "-g", "g", "-t", "t", "-b", &bootstrap])
            .args(["--timeout", "1s"])
            .args(flags)
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert!(
            err.contains("note: kafka consume --assignor range is now --assignor java:range"),
            "{flags:?}: {err}"
        );
        // Accepted: what fails is the broker nobody answers on.
        assert!(!err.contains("invalid value"), "{flags:?}: {err}");
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {err}");
    }
    let out = pw()
        .args(["kafka", "consume", "-g", "g", "-t", "t", "-b", &bootstrap])
        .args(["--timeout", "1s", "--assignor", "java:range"])
        .output()
        .unwrap();
    assert!(
        !text(&out.stderr).contains("note:"),
        "{}",
        text(&out.stderr)
    );
}
