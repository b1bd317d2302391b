//! `partwise plan`: how many partitions a topic needs for its throughput targets.

use crate::exit::{CliError, ExitCode, Result};
use crate::output::{Format, Table};
use partwise::sizing::{plan, weigh, Plan, PlanInput, Weighed};
use partwise::{KeyFormat, Partitioner};
use serde_json::{json, Value};
use std::io::Write;
use std::path::PathBuf;

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
    /// The keys with their traffic, KEY,COUNT lines: the hottest partition,
    /// not an even 1/P share, must fit what one partition takes
    #[arg(long, value_name = "FILE")]
    counts: Option<PathBuf>,
    /// The producer's partitioner, placing the keys of --counts
    #[arg(short = 'P', long = "partitioner", value_name = "SPEC", default_value = "java", requires = "counts", value_parser = super::parse::partitioner)]
    partitioner: Partitioner,
    /// How the keys of --counts become bytes (see `partwise route --help`)
    #[arg(long = "key-format", value_name = "F", default_value = "utf8", requires = "counts", value_parser = super::parse::key_format)]
    key_format: KeyFormat,
    /// Output format
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let input = PlanInput {
        produce_mbps: a.produce_mbps,
        partition_produce_mbps: a.partition_produce_mbps,
        consume_mbps: a.consume_mbps,
        partition_consume_mbps: a.partition_consume_mbps,
        headroom: a.headroom,
        replication_factor: a.replication_factor,
        batch_size: a.batch_size,
    };
    let p: Plan = plan(&input).map_err(|e| {
        // The core names the quantity; the command names its flags.
        let flags = match &e {
            partwise::Error::Invalid { what, .. } => match what.as_str() {
                "rates" => "--produce-mbps/--partition-produce-mbps, --consume-mbps/--partition-consume-mbps, --headroom",
                "headroom" => "--headroom",
                "replication factor" => "--replication-factor",
                "batch size" => "--batch-size",
                "produce rate" => "--produce-mbps",
                "per-partition produce rate" => "--partition-produce-mbps",
                "consume rate" => "--consume-mbps",
                "per-partition consume rate" => "--partition-consume-mbps",
                _ => "",
            },
            _ => "",
        };
        if flags.is_empty() {
            CliError::lib(e)
        } else {
            CliError::context(flags, e)
        }
    })?;
    let weighed = match &a.counts {
        None => None,
        Some(path) => {
            let partitioner = super::parse::keyed(a.partitioner).map_err(|e| {
                CliError::msg(format!("-P/--partitioner '{}': {e}", a.partitioner.spec()))
            })?;
            let w = super::Weights::read(path)?;
            let keys = w.encoded(a.key_format)?;
            let refs = super::weight_refs(&keys);
            let mut weighed = weigh(&input, &p, partitioner, &refs).map_err(CliError::lib)?;
            // The heaviest key as the file writes it, not as its bytes.
            if let Some(i) = keys.iter().position(|(k, _)| *k == weighed.heaviest.0) {
                weighed.heaviest.0 = w.keys[i].0.clone();
            }
            Some((partitioner, w.keys.len(), w.total, weighed))
        }
    };
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
                "weights": weighed.as_ref().map(|(pt, keys, total, w)| weights_json(&a, *pt, *keys, *total, w)),
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
            if let Some((pt, keys, total, w)) = &weighed {
                weights_table(&mut out, &a, &p, *pt, (*keys, *total), w)?;
            }
        }
    }
    // With counts, a plan no count can meet is a finding.
    Ok(match &weighed {
        Some((.., w)) if w.required.is_none() => ExitCode::Findings,
        _ => ExitCode::Ok,
    })
}

/// What one partition takes of the heaviest key, MB/s: produced, consumed.
fn key_rates(a: &Args, share: f64) -> (f64, f64) {
    (share * a.produce_mbps, share * a.consume_mbps)
}

fn weights_json(a: &Args, p: Partitioner, keys: usize, total: u64, w: &Weighed) -> Value {
    let (tp, tc) = key_rates(a, w.heaviest.1);
    json!({
        "partitioner": p.spec(),
        "keys": keys,
        "records": total,
        "heaviest_key": crate::output::key_json(&w.heaviest.0),
        "heaviest_key_share": w.heaviest.1,
        "heaviest_key_produce_mbps": tp,
        "heaviest_key_consume_mbps": tc,
        "key_too_hot": w.key_too_hot,
        "required": w.required,
        "searched_to": w.searched,
        "nearby": w.nearby.iter().map(|(n, s, fits)| json!({
            "partitions": n,
            "hottest_partition_share": s,
            "fits": fits,
        })).collect::<Vec<_>>(),
    })
}

fn weights_table(
    out: &mut impl Write,
    a: &Args,
    p: &Plan,
    pt: Partitioner,
    (keys, total): (usize, u64),
    w: &Weighed,
) -> Result<()> {
    let key = crate::output::key_cell(&w.heaviest.0);
    let (tp, tc) = key_rates(a, w.heaviest.1);
    // The file as given, quoted for a shell when it needs it.
    let counts = a.counts.as_deref().map_or_else(String::new, |c| {
        let c = crate::output::visible(&c.to_string_lossy()).into_owned();
        if c.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+,=:@".contains(&b))
        {
            c
        } else {
            format!("'{}'", c.replace('\'', "'\\''"))
        }
    });
    writeln!(
        out,
        "
weighed by the counts of {keys} keys ({total} records, placed by {}): the heaviest, {key}, carries {:.1}% ({tp:.2} MB/s produced, {tc:.2} MB/s consumed, into one partition)",
        pt.spec(),
        w.heaviest.1 * 100.0
    )?;
    let mut t = Table::new(["PARTITIONS", "HOTTEST PARTITION", "FITS ONE PARTITION"]);
    for (n, s, fits) in &w.nearby {
        t.row([
            n.to_string(),
            format!("{:.1}%", s * 100.0),
            if *fits { "yes" } else { "no" }.to_string(),
        ]);
    }
    t.write(&mut *out)?;
    match w.required {
        Some(n) if n == p.with_headroom => writeln!(
            out,
            "{n} partitions hold: its hottest partition fits one producer's {} MB/s and one consumer's {} MB/s",
            a.partition_produce_mbps, a.partition_consume_mbps
        )?,
        Some(n) => writeln!(
            out,
            "weighed, {n} partitions are needed, not {}: at fewer, the hottest partition takes more than one producer's {} MB/s or one consumer's {} MB/s (with {:.0}% headroom)",
            p.with_headroom, a.partition_produce_mbps, a.partition_consume_mbps, a.headroom * 100.0
        )?,
        None if w.key_too_hot => writeln!(
            out,
            "no partition count fits: {key} alone puts {tp:.2} MB/s produced and {tc:.2} MB/s consumed on its partition, above what one partition takes ({} MB/s produced, {} MB/s consumed, less {:.0}% headroom); salt it over several partitions (partwise salt -i {} --counts) or make its one consumer faster",
            a.partition_produce_mbps, a.partition_consume_mbps, a.headroom * 100.0, counts
        )?,
        None => writeln!(
            out,
            "no partition count from {} to {} fits: the keys' hottest partition stays above what one partition takes; salt the heaviest keys (partwise salt -i {} --counts)",
            p.with_headroom, w.searched, counts
        )?,
    }
    Ok(())
}
