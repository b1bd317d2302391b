//! `partwise batching`: round-robin vs sticky partitioning of key-less records,
//! simulated: batches, requests, batch fill and compression.

use super::{duration, parse};
use crate::exit::{CliError, ExitCode, Result};
use crate::output::{Format, JsonStream, Table};
use partwise::strategy::batching::{simulate, BatchingInput, Strategy};
use std::time::Duration;

#[derive(clap::Args)]
pub struct Args {
    /// Number of records
    #[arg(long, value_name = "K", allow_negative_numbers = true, value_parser = parse::positive_u64)]
    messages: u64,
    /// Bytes per record
    #[arg(long, value_name = "BYTES", allow_negative_numbers = true, value_parser = parse::positive_u64)]
    size: u64,
    #[arg(
        help = super::flags::PARTITIONS,
        long_help = "Partitions of the topic",
       short = 'p', long, value_name = "N", allow_negative_numbers = true, value_parser = parse::positive_u32)]
    partitions: u32,
    #[arg(
        help = super::flags::BATCH_SIZE,
        long_help = "Producer batch.size in bytes",
        long,
        value_name = "BYTES",
        default_value = "16384",
        allow_negative_numbers = true,
        value_parser = parse::positive_u64
    )]
    batch_size: u64,
    /// Producer linger.ms: 5ms, 0.5ms, 1s (a bare number is milliseconds)
    #[arg(
        long = "linger",
        alias = "linger-ms",
        value_name = "DURATION",
        default_value = "5ms",
        allow_negative_numbers = true,
        value_parser = duration::millis
    )]
    linger: Duration,
    /// Records per second produced
    #[arg(long, value_name = "R", allow_negative_numbers = true)]
    rate: f64,
    /// librdkafka's sticky.partitioning.linger.ms (a bare number is milliseconds)
    #[arg(
        long = "sticky-linger",
        alias = "sticky-linger-ms",
        value_name = "DURATION",
        default_value = "10ms",
        allow_negative_numbers = true,
        value_parser = duration::millis
    )]
    sticky_linger: Duration,
    /// Brokers leading the partitions
    #[arg(long, value_name = "N", default_value = "3", allow_negative_numbers = true, value_parser = parse::positive_u32)]
    brokers: u32,
    #[command(flatten)]
    format: super::flags::FormatFlag,
}

/// Records simulated at most (per strategy).
const MAX_MESSAGES: u64 = 100_000_000;
/// The simulation looks over every partition each time a batch's linger
/// expires, so its work grows as records x partitions.
const MAX_WORK: u64 = 100_000_000;
/// Record size at most: Kafka's default `max.request.size` is 1 MiB.
const MAX_SIZE: u64 = 1 << 20;
/// `batch.size` at most; the compression estimate holds one batch in memory.
const MAX_BATCH: u64 = 64 << 20;

fn at_most(flag: &str, v: u64, max: u64, why: &str) -> Result<()> {
    if v > max {
        return Err(CliError::msg(format!("--{flag} {v}: {why}; at most {max}")));
    }
    Ok(())
}

pub fn run(a: Args) -> Result<ExitCode> {
    let (messages, partitions, brokers) = (a.messages, a.partitions, a.brokers);
    at_most(
        "messages",
        messages,
        MAX_MESSAGES,
        "every record is simulated",
    )?;
    crate::limits::counted_partitions("--partitions", partitions)?;
    at_most(
        "brokers",
        u64::from(brokers),
        u64::from(crate::limits::MAX_COUNTED_PARTITIONS),
        "every broker is drained in turn",
    )?;
    let work = messages.saturating_mul(u64::from(partitions));
    if work > MAX_WORK {
        return Err(CliError::msg(format!(
            "--messages {messages} x --partitions {partitions}: the simulation may scan {work} batch slots; at most {MAX_WORK}"
        )));
    }
    at_most(
        "size",
        a.size,
        MAX_SIZE,
        "a record larger than Kafka's 1 MiB default max.request.size",
    )?;
    at_most(
        "batch-size",
        a.batch_size,
        MAX_BATCH,
        "one batch is built in memory to measure compression",
    )?;
    let input = BatchingInput {
        messages,
        size: a.size,
        partitions,
        brokers,
        batch_size: a.batch_size,
        linger_ms: a.linger.as_secs_f64() * 1000.0,
        rate: a.rate,
        sticky_linger_ms: a.sticky_linger.as_secs_f64() * 1000.0,
        seed: 0x5eed,
    };
    let reports = [
        Strategy::RoundRobin,
        Strategy::Sticky,
        Strategy::StickyBytes,
        Strategy::StickyLinger,
    ]
    .into_iter()
    .map(|s| simulate(&input, s))
    .collect::<Result<Vec<_>, _>>()
    .map_err(CliError::lib)?;
    let out = std::io::stdout().lock();
    match a.format.format {
        Format::Json | Format::Ndjson => {
            let mut s = JsonStream::new(out, a.format.format)?;
            for r in &reports {
                s.write(r)?;
            }
            drop(s.finish()?);
        }
        Format::Table => {
            let mut out = out;
            let mut t = Table::new([
                "STRATEGY",
                "BATCHES",
                "REQUESTS",
                "RECORDS/BATCH",
                "FILL",
                "COMPRESSED/RAW",
            ]);
            for r in &reports {
                t.row([
                    r.strategy.name().to_string(),
                    r.batches.to_string(),
                    r.requests.to_string(),
                    format!("{:.1}", r.mean_records_per_batch),
                    format!("{:.1}%", r.mean_fill * 100.0),
                    format!("{:.3}", r.compression_ratio),
                ]);
            }
            t.write(&mut out)?;
            let (rr, st) = (&reports[0], &reports[1]);
            use std::io::Write;
            writeln!(
                out,
                "\nsticky vs round-robin: {:.1}x fewer batches, {:.1}x fewer requests, {:.1}% smaller after compression (DEFLATE on synthetic ticks; real data differs)",
                rr.batches as f64 / st.batches as f64,
                rr.requests as f64 / st.requests.max(1) as f64,
                (1.0 - st.compression_ratio / rr.compression_ratio) * 100.0
            )?;
        }
    }
    Ok(ExitCode::Ok)
}
