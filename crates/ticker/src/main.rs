//! `ticker`: the seeds' stock ticker, end to end. `market-updates` (price
//! ticks) and `notifications` (user alerts), co-partitioned by symbol as
//! `examples/ticker.toml` declares; join workers on partwise's group runtime
//! (the `copartitioned` assignor keeps partition p of both topics in one
//! process); results in Redis Cluster, `market:{SYM}` and `notif:{SYM}`
//! (under `--namespace NS`, `NS:market:{SYM}` and `NS:notif:{SYM}`) written
//! together in one MULTI/EXEC.
//!
//! Commands: `up` (topics, after `check`), `feed` (reproducible ticks and
//! alerts, routed by the topology's partitioners), `join` (K workers),
//! `verify` (recomputes from the topics what Redis must hold), `demo` (the
//! seeds' round-robin failure, predicted by `partwise check` and observed by
//! verify, then all of it with a SIGKILLed worker, in namespaces of its own
//! that it removes). Exit codes: 0 ok, 1 findings, 2 error.

mod flags;
mod model;
mod run;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

// A hostile broker's absurd array count must be an error, not an abort
// (see partwise_alloc).
#[global_allocator]
static ALLOC: partwise_alloc::ReserveHuge = partwise_alloc::ReserveHuge;

#[derive(Parser)]
#[command(
    name = "ticker",
    version,
    about = "The seeds' stock ticker on Apache Kafka and Redis Cluster, joined per symbol",
    after_help = "Exit codes: 0 ok, 1 findings (a refusal, a failed verify), 2 error."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Create both topics with the topology's count, after `partwise check`; never change one
    Up(run::UpArgs),
    /// Produce ticks and alerts for the seed's symbols, reproducibly from a seed
    Feed(run::FeedArgs),
    /// Run K join workers (partwise group runtime, copartitioned assignor) until stopped
    Join(run::JoinArgs),
    /// One join worker (what `join` and `demo` start)
    #[command(hide = true)]
    Worker(run::WorkerArgs),
    /// Recompute from the two topics what Redis must hold, and compare
    Verify(run::VerifyArgs),
    /// Everything: services; the seeds' counter-example (4 round-robin workers miss alerts on the symbols check predicts); up, feed, 3 workers, a SIGKILLed worker, a new one, verify
    Demo(run::DemoArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // librdkafka tells a refused login or TLS handshake only to its log: kept,
    // so that such an error says so rather than "is it up?".
    partwise_kafka::diag::install();
    let result = match cli.cmd {
        Cmd::Up(a) => run::up(&a),
        Cmd::Feed(a) => run::feed(&a),
        Cmd::Join(a) => run::join(&a),
        Cmd::Worker(a) => run::worker(&a),
        Cmd::Verify(a) => run::verify(&a),
        Cmd::Demo(a) => run::demo(&a),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("ticker: error: {e}");
            ExitCode::from(2)
        }
    }
}
