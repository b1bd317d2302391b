//! The flags several commands take, each defined once: its name, short
//! letter, value name, value parser and its one meaning, the short help
//! (`-h`), which reads the same in every command. A command flattens the
//! definition in (`#[command(flatten)]`) and may say in its long help
//! (`--help`, set with `mut_arg` on the command's `Args`) what the flag does
//! there, and set a default or a relation to its other flags; it never
//! redefines the flag. A flag of one shape taken as one value, an optional
//! one or a repeated one is one definition per shape here, with the same
//! words. The flags whose commands keep their own field (their values'
//! types differ: `-a`, `--consumers`, `-p`, `--threads`, `--streams`, `--topology`, `--top`,
//! `--sample`, `--batch-size`, `--replication-factor`) take their short help
//! from a constant here. The test below walks every command's clap
//! definition and fails when one long name has two meanings.
//!
//! The Kafka connection flags are [`super::conn::ConnArgs`], the Redis ones
//! [`RedisConn`].

use super::parse;
use crate::output::Format;
use partwise::{KeyFormat, Partitioner};
use std::path::PathBuf;
use std::time::Duration;

/// The short help of `-P/--partitioner`.
const PARTITIONER: &str = "Partitioner spec CLIENT[:NAME] (`partwise partitioners` lists them)";

/// The short help of `-a/--assignor`.
pub const ASSIGNOR: &str =
    "Consumer-group assignor spec CLIENT[:NAME] (`partwise partitioners` lists them)";

/// The short help of `--consumers`.
pub const CONSUMERS: &str = "How many consumers the group has";

/// The short help of `-p/--partitions`.
pub const PARTITIONS: &str = "Number of partitions of the topic";

/// The short help of `--threads`.
pub const THREADS: &str = "Threads reading a large regular -i file (default: all cores; the output is the same for any number)";

/// The short help of `--streams`.
pub const STREAMS: &str =
    "A Kafka Streams application's topology, the text Topology#describe() prints";

/// The short help of `--topology`.
pub const TOPOLOGY: &str = "A topology file (TOML), as `check` reads it";

/// The short help of `--top`.
pub const TOP: &str = "How many to list";

/// The short help of `--sample`.
pub const SAMPLE: &str = "How many records or keys to read from each partition or node";

/// The short help of `--batch-size`.
pub const BATCH_SIZE: &str = "Producer batch.size in bytes";

/// The short help of `--replication-factor`.
pub const REPLICATION_FACTOR: &str = "Replication factor";

/// The short help of `-i/--input`.
pub const INPUT: &str = "Read keys from FILE, one per line ('-' reads stdin)";

/// The short help of `--key-format`.
const KEY_FORMAT: &str = "How text becomes key bytes: utf8, hex, base64 (raw bytes) or string, int32, int64, avro-sr:ID (as a producer's serializer writes them)";

// No doc comments on these structs: clap would take one as the about text
// of the command it is flattened into.

#[derive(clap::Args, Clone, Copy, Debug)]
pub struct FormatFlag {
    #[arg(
        long = "format",
        value_enum,
        default_value = "table",
        help = "Output format"
    )]
    pub format: Format,
}

#[derive(clap::Args, Clone, Debug)]
pub struct InputFlag {
    #[arg(
        short = 'i',
        long = "input",
        value_name = "FILE",
        help = INPUT
    )]
    pub input: Option<PathBuf>,
}

#[derive(clap::Args, Clone, Copy, Debug)]
pub struct KeyFormatFlag {
    #[arg(long = "key-format", value_name = "F", default_value = "utf8", help = KEY_FORMAT, value_parser = parse::key_format)]
    pub key_format: KeyFormat,
}

#[derive(clap::Args, Clone, Copy, Debug)]
pub struct MaybeKeyFormat {
    #[arg(long = "key-format", value_name = "F", help = KEY_FORMAT, value_parser = parse::key_format)]
    pub key_format: Option<KeyFormat>,
}

#[derive(clap::Args, Clone, Debug)]
pub struct KeyFormats {
    #[arg(long = "key-format", value_name = "F", help = KEY_FORMAT, value_parser = parse::key_format)]
    pub key_formats: Vec<KeyFormat>,
}

#[derive(clap::Args, Clone, Copy, Debug)]
pub struct PartitionerFlag {
    #[arg(short = 'P', long = "partitioner", value_name = "SPEC", default_value = "java", help = PARTITIONER, value_parser = parse::partitioner)]
    pub partitioner: Partitioner,
}

#[derive(clap::Args, Clone, Copy, Debug)]
pub struct MaybePartitioner {
    #[arg(short = 'P', long = "partitioner", value_name = "SPEC", help = PARTITIONER, value_parser = parse::partitioner)]
    pub partitioner: Option<Partitioner>,
}

/// `-P` of the commands that weigh several partitioners (`route`, `kafka
/// audit`), which also take `all`.
#[derive(clap::Args, Clone, Debug)]
pub struct Partitioners {
    #[arg(short = 'P', long = "partitioner", value_name = "SPEC", help = PARTITIONER, value_parser = parse::partitioner_or_all)]
    pub partitioners: Vec<parse::Partitioners>,
}

#[derive(clap::Args, Clone, Debug)]
pub struct RedisConn {
    #[arg(
        short = 'c',
        long = "cluster",
        value_name = "HOST:PORT",
        help = "A Redis Cluster node, HOST:PORT (repeatable)",
        value_parser = parse::node_addr
    )]
    pub cluster: Vec<partwise_redis::NodeAddr>,
}

#[derive(clap::Args, Clone, Copy, Debug)]
pub struct TimeoutFlag {
    #[arg(
        long = "timeout",
        value_name = "DURATION",
        default_value = "10s",
        allow_negative_numbers = true,
        help = "How long any one cluster operation may take: 500ms, 10s, 2m (a bare number is seconds)",
        value_parser = super::duration::seconds
    )]
    pub timeout: Duration,
}

/// Prints a note on stderr when the command line gives `old`, a flag's
/// former spelling kept as a hidden alias for one release.
pub fn note_deprecated(command: &str, old: &str, new: &str) {
    let given = std::env::args_os()
        .skip(1)
        .filter_map(|w| w.into_string().ok())
        .take_while(|w| w != "--")
        .any(|w| {
            w.strip_prefix(old)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('='))
        });
    if given {
        say!("partwise: note: {command} {old} is now {new}; {old} still works in this release and goes in the next");
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;
    use std::collections::BTreeMap;

    /// What a long flag is, apart from its command's words: the short
    /// letter, the value's name and kind, the possible values and the one
    /// meaning (the short help).
    #[derive(Debug, PartialEq)]
    struct Meaning {
        short: Option<char>,
        value: Vec<String>,
        takes_value: bool,
        possible: Vec<String>,
        help: String,
    }

    fn meaning(a: &clap::Arg) -> Meaning {
        Meaning {
            short: a.get_short(),
            value: a
                .get_value_names()
                .map(|v| v.iter().map(|s| s.to_string()).collect())
                .unwrap_or_default(),
            takes_value: a.get_action().takes_values(),
            possible: a
                .get_possible_values()
                .iter()
                .map(|p| p.get_name().to_string())
                .collect(),
            help: a.get_help().map(|h| h.to_string()).unwrap_or_default(),
        }
    }

    fn walk(cmd: &clap::Command, path: &str, seen: &mut BTreeMap<String, Vec<(String, Meaning)>>) {
        for a in cmd.get_arguments() {
            if let Some(long) = a.get_long() {
                if long == "help" || long == "version" {
                    continue;
                }
                seen.entry(long.to_string())
                    .or_default()
                    .push((path.to_string(), meaning(a)));
            }
        }
        for sub in cmd.get_subcommands() {
            walk(sub, &format!("{path} {}", sub.get_name()), seen);
        }
    }

    /// Long names whose definitions still differ between commands, each
    /// with why; the test fails when one of these stops differing too, so
    /// the list holds only what is true and can only shrink. The first two
    /// differ on purpose, and so do `--counts`' accepted values (one
    /// meaning, a KEY,COUNT file; `check` and `report` can also take the
    /// counts from the cluster).
    const SHAPES: [(&str, &str); 3] = [
        (
            "format",
            "report writes a page: html in place of the others' table",
        ),
        (
            "topic",
            "a command that asks no cluster takes a topic with its count, NAME:N; a live one its name",
        ),
        (
            "counts",
            "one meaning, a KEY,COUNT file; check and report also take live:DURATION or live:last=N, the counts read from the cluster",
        ),
    ];

    /// Every long flag means one thing in every command that takes it.
    #[test]
    fn one_long_flag_one_meaning() {
        let mut seen = BTreeMap::new();
        walk(&crate::Cli::command(), "partwise", &mut seen);
        let mut failures = Vec::new();
        let mut differing = Vec::new();
        for (long, defs) in &seen {
            let (first_cmd, first) = &defs[0];
            for (cmd, m) in &defs[1..] {
                if m != first {
                    if SHAPES.iter().any(|(n, _)| n == long) {
                        differing.push(long.clone());
                        continue;
                    }
                    failures.push(format!(
                        "--{long}: {first_cmd}: {first:?}\n    vs {cmd}: {m:?}"
                    ));
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        for (n, why) in SHAPES {
            assert!(
                differing.iter().any(|d| d == n),
                "--{n} is listed as differing ({why}) but reads the same everywhere"
            );
        }
    }
}
