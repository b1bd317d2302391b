//! `partwise kafka measure --allow-write`: one partition's produce rate and
//! one consumer's read rate on a temporary topic (created, then deleted),
//! fed to the `plan` sizing when targets are given.

use super::{kerr, ConnArgs};
use crate::cmd::parse;
use crate::exit::{CliError, ExitCode, Result};
use crate::output::Format;
use partwise::strategy::sizing::{plan, PlanInput};
use partwise_kafka::measure::{measure, MeasureOptions};
use std::io::Write;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    conn: ConnArgs,
    /// Allow creating, writing and deleting a temporary topic (required)
    #[arg(long)]
    allow_write: bool,
    /// Records to produce and read back
    #[arg(long, value_name = "N", default_value = "20000", value_parser = parse::positive_u64)]
    records: u64,
    /// Bytes of each record's value
    #[arg(long, value_name = "BYTES", default_value = "1024", value_parser = parse::positive_usize)]
    record_bytes: usize,
    #[arg(
        help = crate::cmd::flags::REPLICATION_FACTOR,
        long_help = "Replication factor of the temporary topic (default: the broker's)",
       long, value_name = "N", value_parser = parse::positive::<i32>)]
    replication_factor: Option<i32>,
    /// Total produce rate the topic must take, MB/s: prints a partition plan
    #[arg(long, value_name = "MBPS", value_parser = parse::positive_rate)]
    target_produce_mbps: Option<f64>,
    /// Total consume rate the group must reach, MB/s (default: the produce target)
    #[arg(long, value_name = "MBPS", value_parser = parse::positive_rate)]
    target_consume_mbps: Option<f64>,
    #[command(flatten)]
    format: crate::cmd::flags::FormatFlag,
}

/// One record's value at most (Kafka's default `message.max.bytes` is about 1 MiB).
const MAX_RECORD_BYTES: usize = 1 << 20;
/// Bytes written to the temporary topic at most.
const MAX_TOTAL_BYTES: u64 = 1 << 30;

pub fn run(a: Args) -> Result<ExitCode> {
    if !a.allow_write {
        return Err(CliError::msg(
            "measure writes: it creates, fills and deletes a temporary topic; pass --allow-write to let it",
        ));
    }
    if a.record_bytes > MAX_RECORD_BYTES {
        return Err(CliError::msg(format!(
            "--record-bytes {}: a record larger than Kafka's 1 MiB default max.message.bytes; at most {MAX_RECORD_BYTES}",
            a.record_bytes
        )));
    }
    let total = a.records.saturating_mul(a.record_bytes as u64);
    if total > MAX_TOTAL_BYTES {
        return Err(CliError::msg(format!(
            "--records {} x --record-bytes {}: {total} bytes to write; at most {MAX_TOTAL_BYTES} (1 GiB)",
            a.records, a.record_bytes
        )));
    }
    let conn = a.conn.connection()?;
    let m = measure(
        &conn,
        &MeasureOptions {
            records: a.records,
            record_bytes: a.record_bytes,
            replication: a.replication_factor,
            stop: Some(interrupt::flag()),
        },
    )
    .map_err(kerr)?;
    let p = match a.target_produce_mbps {
        Some(tp) => Some(
            plan(&PlanInput {
                produce_mbps: tp,
                partition_produce_mbps: m.produce_mbps(),
                consume_mbps: a.target_consume_mbps.unwrap_or(tp),
                partition_consume_mbps: m.consume_mbps(),
                ..Default::default()
            })
            .map_err(|e| CliError::context("--target-produce-mbps", e))?,
        ),
        None => None,
    };
    let mut out = std::io::stdout().lock();
    match a.format.format {
        Format::Table => {
            writeln!(
                out,
                "temporary topic {} ({}deleted)",
                m.topic,
                if m.deleted { "" } else { "NOT " }
            )?;
            writeln!(
                out,
                "produce: {} records x {} B in {:.3}s: {:.1} MB/s, {:.0} records/s into one partition",
                m.records,
                a.record_bytes,
                m.produce_secs,
                m.produce_mbps(),
                m.records as f64 / m.produce_secs.max(1e-9)
            )?;
            writeln!(
                out,
                "consume: {} records in {:.3}s: {:.1} MB/s, {:.0} records/s by one consumer",
                m.consumed,
                m.consume_secs,
                m.consume_mbps(),
                m.consumed as f64 / m.consume_secs.max(1e-9)
            )?;
            if let Some(p) = &p {
                writeln!(
                    out,
                    "plan: {} partitions needed ({} binds), {} with headroom",
                    p.required,
                    p.binding.as_str(),
                    p.with_headroom
                )?;
            }
        }
        Format::Json | Format::Ndjson => {
            /// The plan the measured rates give for `--target-produce-mbps`.
            #[derive(serde::Serialize)]
            struct PlanJson {
                required: u32,
                with_headroom: u32,
                binding: &'static str,
            }
            /// The measurement as one JSON line.
            #[derive(serde::Serialize)]
            struct Doc<'a> {
                topic: &'a str,
                deleted: bool,
                records: u64,
                consumed: u64,
                record_bytes: usize,
                produce_secs: f64,
                consume_secs: f64,
                partition_produce_mbps: f64,
                partition_consume_mbps: f64,
                plan: Option<PlanJson>,
            }
            let doc = Doc {
                topic: &m.topic,
                deleted: m.deleted,
                records: m.records,
                consumed: m.consumed,
                record_bytes: a.record_bytes,
                produce_secs: m.produce_secs,
                consume_secs: m.consume_secs,
                partition_produce_mbps: m.produce_mbps(),
                partition_consume_mbps: m.consume_mbps(),
                plan: p.as_ref().map(|p| PlanJson {
                    required: p.required,
                    with_headroom: p.with_headroom,
                    binding: p.binding.as_str(),
                }),
            };
            serde_json::to_writer(&mut out, &doc)?;
            writeln!(out)?;
        }
    }
    out.flush()?;
    Ok(if m.deleted && m.consumed == m.records {
        ExitCode::Ok
    } else {
        ExitCode::Findings
    })
}

/// Ctrl-C and SIGTERM during a measurement stop it, so the temporary topic
/// is still deleted (the default action would kill the process with the
/// topic left on the cluster).
mod interrupt {
    use std::sync::atomic::{AtomicBool, Ordering};

    static STOP: AtomicBool = AtomicBool::new(false);

    extern "C" fn on_signal(_: libc::c_int) {
        STOP.store(true, Ordering::Relaxed);
    }

    pub fn flag() -> &'static AtomicBool {
        // SAFETY: the handler only stores to an atomic.
        unsafe {
            libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
            libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
        }
        &STOP
    }
}
