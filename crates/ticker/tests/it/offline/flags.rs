//! The ticker's flags are typed at the clap boundary like the `partwise`
//! command's: a bad value is a usage error naming the flag (exit 2) before
//! anything is read or reached, and durations take the CLI's grammar. No
//! broker is given, so a value that passes ends in "no brokers".

use std::process::{Command, Output};

fn ticker(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ticker"))
        .args(args)
        .env_remove("PARTWISE_KAFKA_BOOTSTRAP")
        .env_remove("PARTWISE_REDIS")
        .output()
        .unwrap()
}

/// `h` is a unit and a bare number is seconds, as in the CLI: both pass the
/// flag and stop at the missing broker.
#[test]
fn durations_take_the_clis_grammar() {
    for d in ["1h", "0.5h", "10", "1500ms", "2m"] {
        let o = ticker(&["feed", "--duration", d]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{d}: {err}");
        assert!(err.contains("no brokers"), "{d}: {err}");
    }
}

/// Each typed flag refuses a bad value naming itself and the value.
#[test]
fn a_bad_value_is_a_usage_error_naming_the_flag() {
    for (args, flag, value) in [
        (&["feed", "--duration", "10x"][..], "--duration", "10x"),
        (&["feed", "--duration", "25h"][..], "--duration", "25h"),
        (&["feed", "--rate", "0"][..], "--rate", "0"),
        (&["feed", "--rate", "100001"][..], "--rate", "100001"),
        (&["verify", "--wait=-1s"][..], "--wait", "-1s"),
        (&["verify", "--format", "yaml"][..], "--format", "yaml"),
        (&["join", "--workers", "65"][..], "--workers", "65"),
        (
            &["worker", "--runtime", "kafkajs"][..],
            "--runtime",
            "kafkajs",
        ),
        (
            &["worker", "--session-timeout", "0"][..],
            "--session-timeout",
            "0",
        ),
        (
            &["worker", "--redis-retry", "soon"][..],
            "--redis-retry",
            "soon",
        ),
        (&["up", "--redis", "nohost"][..], "--redis", "nohost"),
    ] {
        let o = ticker(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(flag) && err.contains(&format!("'{value}'")),
            "{args:?}: {err}"
        );
        assert!(!err.contains("no brokers"), "{args:?}: {err}");
    }
}

/// The Java-named timeouts keep their old spelling and unit: a bare number
/// is milliseconds under `--session-timeout-ms` as under `--session-timeout`.
#[test]
fn the_ms_spellings_of_the_timeouts_still_take_milliseconds() {
    for args in [
        &["join", "--session-timeout-ms", "6000"][..],
        &["join", "--session-timeout", "6s"][..],
        &[
            "demo",
            "--session-timeout-ms",
            "6000",
            "--namespace",
            &"n".repeat(95),
        ][..],
    ] {
        let o = ticker(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(!err.contains("invalid value"), "{args:?}: {err}");
    }
}
