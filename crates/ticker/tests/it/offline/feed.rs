//! `ticker feed`'s input, refused before anything is produced: no broker is
//! needed, and none is given, so an input that got past the check would end
//! in "no brokers" instead of the error the test looks for.

use std::io::Write;
use std::process::{Command, Output};

fn feed_with_symbols(lines: &str) -> Output {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(lines.as_bytes()).unwrap();
    Command::new(env!("CARGO_BIN_EXE_ticker"))
        .args(["feed", "--duration", "1s", "--symbols"])
        .arg(f.path())
        .env_remove("PARTWISE_KAFKA_BOOTSTRAP")
        .output()
        .unwrap()
}

/// A start price the random walk cannot carry (it multiplies prices before
/// dividing) is refused with its line, exit 2: not a panic on an overflow,
/// not a wrapped negative price in a release build.
#[test]
fn a_price_past_the_maximum_is_refused_naming_its_line() {
    for price in [
        "9223372036854775807",
        "1000000000001",
        "99999999999999999999",
        "0",
        "-3",
    ] {
        let o = feed_with_symbols(&format!("BBCA\nHUGE,{price}\n"));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{price}: {err}");
        assert!(
            err.contains("line 2") && err.contains(price) && err.contains("1000000000000"),
            "{price}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
    // The maximum itself is a price: refused only later, for want of a broker.
    let o = feed_with_symbols("TOP,1000000000000\n");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("no brokers"), "{err}");
}

/// A namespace goes into topic names and in front of Redis keys: one that
/// Kafka would refuse, or with a brace that would become the keys' hash tag,
/// is refused naming it, before anything is read or written.
#[test]
fn a_namespace_that_cannot_name_topics_and_keys_is_refused() {
    for ns in ["a{b}", "", "has space", "x/y"] {
        let o = Command::new(env!("CARGO_BIN_EXE_ticker"))
            .args(["verify", "--namespace", ns])
            .env_remove("PARTWISE_KAFKA_BOOTSTRAP")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{ns}: {err}");
        assert!(
            err.contains("--namespace") && err.contains(&format!("'{ns}'")),
            "{ns}: {err}"
        );
    }
}

/// `demo` runs its counter-example under NS-roundrobin: a namespace that is
/// valid but leaves no room for that suffix is refused naming both, before a
/// server is started or reached (the addresses given here answer nothing),
/// and the counter-example can be skipped instead.
#[test]
fn a_demo_namespace_too_long_for_the_counter_example_is_refused() {
    let ns = "n".repeat(95);
    let o = Command::new(env!("CARGO_BIN_EXE_ticker"))
        .args(["demo", "-b", "127.0.0.1:9", "--redis", "127.0.0.1:9"])
        .args(["--namespace", &ns])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("'{ns}'"))
            && err.contains(&format!("{ns}-roundrobin"))
            && err.contains("--skip-counter-example"),
        "{err}"
    );
}
