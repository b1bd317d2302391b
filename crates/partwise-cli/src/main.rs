//! `partwise`: where Kafka keys land, in every client's partitioner, and where
//! Redis Cluster keys live.
//!
//! Each subcommand has a module under `cmd/`. Flag values are typed at the
//! clap boundary (`cmd/parse.rs`), so a bad one is clap's usage error naming
//! the flag; the rest of the validation happens before any work starts, so
//! bad input fails fast with a message naming the argument, or file and line
//! at fault. This file owns the one place errors are printed and exit codes
//! are chosen.

/// `eprintln!` that never panics: a full or closed stderr loses the message
/// but must not turn an answer, or an error's exit 2, into a panic. Warnings
/// quote file names and what servers sent, so invisible characters in them
/// are shown escaped.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let line = format!($($arg)*);
        let _ = writeln!(std::io::stderr(), "{}", crate::output::visible_lines(&line));
    }};
}

mod cmd;
mod exit;
mod input;
mod limits;
mod load;
#[cfg(test)]
mod module_graph;
mod ops;
mod outfile;
mod output;
mod render;

use clap::{CommandFactory, Parser, Subcommand};
use exit::{CliError, ExitCode};

// A hostile broker's absurd array count must be an error, not an abort
// (see partwise_alloc).
#[global_allocator]
static ALLOC: partwise_alloc::ReserveHuge = partwise_alloc::ReserveHuge;

#[derive(Parser)]
#[command(
    name = "partwise",
    version,
    about = "Where Kafka keys land (every client's partitioner, bit-exact) and Redis Cluster slots",
    long_about = None,
    after_help = "Exit codes: 0 ok, 1 findings, 2 error (bad input, flags or I/O)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Route keys to partitions under one or more client partitioners
    Route(cmd::route::Args),
    /// Redis Cluster hash slots of keys (CRC16 with the hash-tag rule)
    Slot(cmd::slot::Args),
    /// Simulate a consumer-group assignor and its co-location of partition indices
    Assign(cmd::assign::Args),
    /// List the partitioner specs partwise knows
    Partitioners(cmd::partitioners::Args),
    /// How many partitions a topic needs: P = max(TP/tp, TC/tc) plus headroom
    Plan(cmd::plan::Args),
    /// Load per partition of a key stream: hot partitions, heavy hitters, consumer shares
    Skew(cmd::skew::Args),
    /// The smallest salt range that cools a hot key
    Salt(cmd::salt::Args),
    /// Round-robin vs sticky batching of key-less records, simulated
    Batching(cmd::batching::Args),
    /// Check a topology file: co-partition groups and Redis key families
    Check(cmd::check::Args),
    /// What changing a topic's partition count does to its keys
    Resize(cmd::resize::Args),
    /// One self-contained HTML page (or JSON) of layout, placement, skew, resize and Redis slots
    Report(cmd::report::Args),
    /// Live Kafka: topics, audits, groups, producing, throughput
    Kafka(cmd::kafka::Args),
    /// A live Redis Cluster: slot map, key-family co-location, hot hash tags
    Redis(cmd::redis::Args),
    /// Shell completions on stdout (e.g. partwise completions bash > /etc/bash_completion.d/partwise)
    Completions(cmd::completions::CompletionsArgs),
    /// The man page on stdout (partwise man > partwise.1; man ./partwise.1)
    Man(cmd::completions::ManArgs),
}

/// clap's text for a usage error, with a bad value's flag named by both its
/// spellings (`'-p/--partitions <N>'`) where it has a short one: clap shows
/// only the long one, and people type the short.
fn usage_error(e: &clap::Error) -> String {
    // A value parser's error keeps its causes (clap shows only its message).
    let causes = std::error::Error::source(e).map_or_else(Vec::new, exit::causes);
    exit::with_causes(&flag_named(e), &causes)
}

/// clap's message, with the flag of a bad value named as described above.
fn flag_named(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let text = e.render().to_string();
    if !matches!(
        e.kind(),
        ErrorKind::ValueValidation | ErrorKind::InvalidValue
    ) {
        return text;
    }
    let Some(ContextValue::String(shown)) = e.get(ContextKind::InvalidArg) else {
        return text;
    };
    let Some(long) = shown
        .strip_prefix("--")
        .and_then(|s| s.split([' ', '=']).next())
    else {
        return text;
    };
    // The subcommand the error is about: partwise has no global flags, so
    // the leading words of the command line are its subcommand path.
    let mut cmd = Cli::command();
    // args_os: a key argument need not be UTF-8 (env::args would panic).
    for word in words() {
        match cmd.find_subcommand(&word) {
            Some(sub) => cmd = sub.clone(),
            None => break,
        }
    }
    let Some(arg) = cmd.get_arguments().find(|a| a.get_long() == Some(long)) else {
        return text;
    };
    // A flag given by an old name (`--session-timeout-ms`, kept as a hidden
    // alias) is named as typed, so the message matches the command line.
    let typed = arg
        .get_all_aliases()
        .into_iter()
        .flatten()
        .find(|alias| {
            words().any(|w| {
                w.strip_prefix("--")
                    .and_then(|w| w.strip_prefix(alias))
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('='))
            })
        })
        .unwrap_or(long);
    let rest = &shown[2 + long.len()..];
    let named = match arg.get_short() {
        Some(c) => format!("'-{c}/--{typed}{rest}'"),
        None => format!("'--{typed}{rest}'"),
    };
    text.replacen(&format!("'{shown}'"), &named, 1)
}

/// The command line after the program name, the words that are UTF-8.
fn words() -> impl Iterator<Item = String> {
    std::env::args_os()
        .skip(1)
        .filter_map(|w| w.into_string().ok())
}

fn main() -> std::process::ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help, --version: clap's text, exit 0 only when it was written.
            use std::io::{IsTerminal, Write};
            let mut out = std::io::stdout().lock();
            let written = if out.is_terminal() {
                e.print()
            } else {
                write!(out, "{}", e.render()).and_then(|()| out.flush())
            };
            return match written {
                Ok(()) => ExitCode::Ok.into(),
                // `partwise --help | head`: the reader has what it wanted.
                Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::Ok.into(),
                Err(err) => {
                    say!("partwise: error: writing the help to stdout: {err}");
                    ExitCode::Error.into()
                }
            };
        }
        Err(e) => {
            // A usage error: clap's message naming the flag, exit 2.
            use std::io::Write;
            let _ = write!(std::io::stderr(), "{}", usage_error(&e));
            return ExitCode::Error.into();
        }
    };
    // librdkafka's account of a refused login or handshake, for messages.
    partwise_kafka::diag::install();
    if stdout_is_closed() {
        // Rust's stdout quietly drops writes to a closed descriptor, which
        // would make `partwise ... >&-` an exit 0 with no answer.
        say!("partwise: error: stdout is closed, so no answer can be written (give it a file or a pipe)");
        return ExitCode::Error.into();
    }
    let result = match cli.command {
        Command::Route(a) => cmd::route::run(a),
        Command::Slot(a) => cmd::slot::run(a),
        Command::Partitioners(a) => cmd::partitioners::run(a),
        Command::Plan(a) => cmd::plan::run(a),
        Command::Skew(a) => cmd::skew::run(a),
        Command::Salt(a) => cmd::salt::run(a),
        Command::Batching(a) => cmd::batching::run(a),
        Command::Check(a) => cmd::check::run(a),
        Command::Resize(a) => cmd::resize::run(a),
        Command::Report(a) => cmd::report::run(a),
        Command::Assign(a) => cmd::assign::run(a),
        Command::Kafka(a) => cmd::kafka::run(a),
        Command::Redis(a) => cmd::redis::run(a),
        Command::Completions(a) => cmd::completions::completions(a, Cli::command()),
        Command::Man(a) => cmd::completions::man(a, Cli::command()),
    };
    match result {
        Ok(code) => code.into(),
        Err(CliError::BrokenPipe) => ExitCode::Ok.into(),
        Err(e) => {
            say!("{}", e.report());
            ExitCode::Error.into()
        }
    }
}

/// Whether fd 1 was closed when the process started. Rust's runtime opens
/// /dev/null on a closed standard descriptor before `main`, so it is looked
/// at earlier, from the ELF initializers (which run before the runtime).
#[cfg(target_os = "linux")]
mod closed_stdout {
    use std::sync::atomic::{AtomicBool, Ordering};

    static CLOSED: AtomicBool = AtomicBool::new(false);

    extern "C" fn record() {
        // SAFETY: F_GETFD only reads the descriptor's flags.
        let closed = unsafe { libc::fcntl(1, libc::F_GETFD) } == -1;
        CLOSED.store(closed, Ordering::Relaxed);
    }

    #[used]
    #[unsafe(link_section = ".init_array")]
    static RECORD: extern "C" fn() = record;

    pub fn get() -> bool {
        CLOSED.load(Ordering::Relaxed)
    }
}

fn stdout_is_closed() -> bool {
    #[cfg(target_os = "linux")]
    return closed_stdout::get();
    #[cfg(not(target_os = "linux"))]
    false
}
