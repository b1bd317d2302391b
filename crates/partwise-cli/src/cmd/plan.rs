//! `partwise plan`: how many partitions a topic needs for its throughput targets.

use crate::exit::{CliError, ExitCode, Result};
use crate::output::{Format, Table};
use partwise::sizing::{plan, Plan, PlanInput};
use serde_json::json;
use std::io::Write;

#[derive(clap::Args)]
pub struct Args {
    /// Total produce throughput the topic must take, MB/s (TP)
    #[arg(long, value_name = "MBPS", allow_negative_numbers = true)]
    produce_mbps: f64,
    /// What one producer writes to one partition, MB/s (tp; ~10 is typical)
    #[arg(long, value_name = "MBPS", allow_negative_numbers = true)]
    partition_produce_mbps: f64,
    /// Total throughput the consumer group must process, MB/s (TC)
    #[arg(long, value_name = "MBPS", allow_negative_numbers = true)]
    consume_mbps: f64,
    /// What one consumer processes from one partition, MB/s (tc; 2-5 when it calls a database)
    #[arg(long, value_name = "MBPS", allow_negative_numbers = true)]
    partition_consume_mbps: f64,
    /// Headroom on top of the requirement (0.2 = 20%; 20-30% is the usual advice)
    #[arg(
        long,
        value_name = "F",
        default_value_t = 0.2,
        allow_negative_numbers = true
    )]
    headroom: f64,
    /// Replication factor (for the open-files estimate)
    #[arg(long, value_name = "N", default_value = "3", value_parser = super::parse::positive_u32)]
    replication_factor: u32,
    /// Producer batch.size in bytes (for the producer-memory estimate)
    #[arg(long, value_name = "BYTES", default_value = "16384", value_parser = super::parse::positive_u64)]
    batch_size: u64,
    /// Output format
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let p: Plan = plan(&PlanInput {
        produce_mbps: a.produce_mbps,
        partition_produce_mbps: a.partition_produce_mbps,
        consume_mbps: a.consume_mbps,
        partition_consume_mbps: a.partition_consume_mbps,
        headroom: a.headroom,
        replication_factor: a.replication_factor,
        batch_size: a.batch_size,
    })
    .map_err(CliError::lib)?;
    let mut out = std::io::stdout().lock();
    match a.format {
        Format::Json | Format::Ndjson => {
            let v = json!({
                "required": p.required,
                "with_headroom": p.with_headroom,
                "binding": p.binding.as_str(),
                "produce_partitions": p.produce_partitions,
                "consume_partitions": p.consume_partitions,
                "headroom": a.headroom,
                "max_consumers": p.max_consumers,
                "nearby": p.nearby.iter().map(|n| json!({
                    "partitions": n.partitions,
                    "even_consumer_counts": n.even_consumer_counts,
                })).collect::<Vec<_>>(),
                "open_files": p.open_files,
                "producer_batch_bytes": p.producer_batch_bytes,
                "warnings": p.warnings,
            });
            crate::output::write_doc(&mut out, a.format, &v)?;
        }
        Format::Table => {
            writeln!(
                out,
                "P = max(TP/tp, TC/tc) = max({}/{} = {:.2}, {}/{} = {:.2}) -> {} partitions ({} binds)",
                a.produce_mbps,
                a.partition_produce_mbps,
                p.produce_partitions,
                a.consume_mbps,
                a.partition_consume_mbps,
                p.consume_partitions,
                p.required,
                p.binding.as_str()
            )?;
            writeln!(
                out,
                "with {:.0}% headroom: {} partitions; one group can use up to {} consumers",
                a.headroom * 100.0,
                p.with_headroom,
                p.max_consumers
            )?;
            writeln!(
                out,
                "\nnearby counts and the group sizes that divide them evenly:"
            )?;
            let mut t = Table::new(["PARTITIONS", "EVEN GROUP SIZES"]);
            for n in &p.nearby {
                let sizes: Vec<String> =
                    n.even_consumer_counts.iter().map(u32::to_string).collect();
                t.row([n.partitions.to_string(), sizes.join(" ")]);
            }
            t.write(&mut out)?;
            writeln!(
                out,
                "\ncost: {} open files for active segments (partitions x {} replicas x 3), {:.1} MiB producer memory for one {}-byte batch per partition",
                p.open_files,
                a.replication_factor,
                p.producer_batch_bytes as f64 / 1048576.0,
                a.batch_size
            )?;
            for w in &p.warnings {
                writeln!(out, "warning: {w}")?;
            }
        }
    }
    Ok(ExitCode::Ok)
}
