//! What every test module of the `partwise` command shares: the binary, the
//! seed symbols, fixtures (temporary files, the repository's examples) and
//! the runs that expect an exit code. Member processes of the live tests
//! are in `process`.
#![allow(dead_code)]

#[cfg(feature = "live")]
pub mod process;

use assert_cmd::Command;
use serde_json::Value;
use std::io::Write;
use std::path::PathBuf;
use std::process::Output;

/// The seed's ten symbols, the example keys of README and `examples/symbols.txt`.
pub const SYMBOLS: [&str; 10] = [
    "BBCA", "ANTM", "ASII", "UNVR", "TLKM", "BBRI", "BMRI", "GOTO", "ADRO", "ICBP",
];

/// The `partwise` binary of this build.
pub fn partwise() -> Command {
    Command::cargo_bin("partwise").unwrap()
}

/// The repository's root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The path of `examples/{name}`.
pub fn example(name: &str) -> String {
    repo()
        .join("examples")
        .join(name)
        .to_str()
        .unwrap()
        .to_string()
}

/// A temporary file holding `content`, removed on drop.
pub fn temp_file(content: impl AsRef<[u8]>) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(content.as_ref()).unwrap();
    f
}

/// Runs partwise with `args`, asserting exit `code` (stderr in the message).
pub fn output(args: &[&str], code: i32) -> Output {
    let out = partwise().args(args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs partwise expecting exit code 2 and no panic; returns stderr.
pub fn fails(args: &[&str]) -> String {
    let out = partwise().args(args).output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?} should exit 2: {err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// [`fails`], with a message that mentions `needle`.
pub fn fails_with(args: &[&str], needle: &str) {
    let err = fails(args);
    assert!(
        err.contains(needle),
        "{args:?}: '{err}' does not mention '{needle}'"
    );
}

/// Bytes a process printed, as text (lossy: a message must be readable
/// whatever it holds).
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A table with its folded lines joined again (every run of whitespace one
/// space), so a test can look for a sentence wherever the printer folded it.
pub fn unfolded(table: &str) -> String {
    table.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `s` quoted for `sh -c`.
pub fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Fresh topic and group names (`{prefix}-{test}-...-a`, `-b`, `-g`), so
/// tests share one broker without meeting.
#[cfg(feature = "live")]
pub fn names(prefix: &str, test: &str) -> (String, String, String) {
    let base = partwise_faults::live::unique(&format!("{prefix}-{test}"));
    (
        format!("{base}-a"),
        format!("{base}-b"),
        format!("{base}-g"),
    )
}

/// Runs partwise with `--format json`, expecting exit code `code`.
pub fn json_doc(args: &[&str], code: i32) -> Value {
    let out = output(&[args, &["--format", "json"]].concat(), code);
    serde_json::from_slice(&out.stdout).unwrap()
}

pub fn ndjson(args: &[&str]) -> Vec<Value> {
    ndjson_exit(args, 0)
}

/// The NDJSON rows of a run that must exit with `code`.
pub fn ndjson_exit(args: &[&str], code: i32) -> Vec<Value> {
    let out = output(&[args, &["--format", "ndjson"]].concat(), code);
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Rows about keys, without the summary rows (`type`) that follow them.
pub fn key_rows(rows: Vec<Value>) -> Vec<Value> {
    rows.into_iter()
        .filter(|r| r.get("type").is_none())
        .collect()
}
