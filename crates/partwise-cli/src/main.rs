//! `partwise`: where Kafka keys land, in every client's partitioner, and where
//! Redis Cluster keys live.
//!
//! Each subcommand has a module under `cmd/` that turns its raw clap flags into
//! a validated config before any work starts, so bad input fails fast with a
//! message naming the flag, argument, or file and line at fault.

mod cmd;
mod exit;
mod input;
mod output;

use clap::{Parser, Subcommand};
use exit::{CliError, ExitCode};

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
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Route(a) => cmd::route::run(a),
        Command::Slot(a) => cmd::slot::run(a),
        Command::Partitioners(a) => cmd::partitioners::run(a),
        Command::Assign(a) => cmd::assign::run(a),
    };
    match result {
        Ok(code) => code.into(),
        Err(CliError::BrokenPipe) => ExitCode::Ok.into(),
        Err(e) => {
            eprintln!("partwise: error: {e}");
            ExitCode::Error.into()
        }
    }
}
