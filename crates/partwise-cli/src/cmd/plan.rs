//! `partwise plan`: how many partitions a topic needs for its throughput targets.

use crate::exit::{CliError, ExitCode, Result};
use crate::output::{Format, Table};
use partwise::strategy::sizing::{plan_report, Plan, PlanInput, Weighed};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(
    mut_arg("partitioner", |a| a.requires("counts").long_help(
        "The producer's partitioner, placing the keys of --counts"
    )),
    mut_arg("key_format", |a| a.requires("counts").long_help(
        "How the keys of --counts become bytes (see `partwise route --help`)"
    ))
)]
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
    #[arg(
        help = super::flags::REPLICATION_FACTOR,
        long_help = "Replication factor (for the open-files estimate)",
       long, value_name = "N", default_value = "3", value_parser = super::parse::positive_u32)]
    replication_factor: u32,
    #[arg(
        help = super::flags::BATCH_SIZE,
        long_help = "Producer batch.size in bytes (for the producer-memory estimate)",
       long, value_name = "BYTES", default_value = "16384", value_parser = super::parse::positive_u64)]
    batch_size: u64,
    /// The keys with their traffic: KEY,COUNT lines (the count after the last comma)
    ///
    /// The hottest partition, not an even 1/P share, must fit what one
    /// partition takes
    #[arg(long, value_name = "FILE")]
    counts: Option<PathBuf>,
    #[command(flatten)]
    partitioner: super::flags::PartitionerFlag,
    #[command(flatten)]
    key_format: super::flags::KeyFormatFlag,
    #[command(flatten)]
    format: super::flags::FormatFlag,
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
    // The counts are read here (the core reads no files); the plan and its
    // weighing are one library call.
    let read = match &a.counts {
        None => None,
        Some(path) => {
            let partitioner = super::parse::keyed(a.partitioner.partitioner).map_err(|e| {
                CliError::msg(format!(
                    "-P/--partitioner '{}': {e}",
                    a.partitioner.partitioner.spec()
                ))
            })?;
            let w = super::Weights::read(path)?;
            let keys = w.encoded(a.key_format.key_format)?;
            Some((partitioner, w, keys))
        }
    };
    let refs = read.as_ref().map(|(_, _, keys)| super::weight_refs(keys));
    let weights = read
        .as_ref()
        .zip(refs.as_deref())
        .map(|((p, ..), refs)| (*p, refs));
    let mut report = plan_report(&input, weights).map_err(|e| {
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
    // The heaviest key as the file writes it, not as its bytes.
    if let (Some(w), Some((_, file, keys))) = (report.weights.as_mut(), &read) {
        if let Some(i) = keys.iter().position(|(k, _)| *k == w.heaviest_key) {
            w.heaviest_key = file.keys[i].0.clone();
        }
    }
    let p = &report.plan;
    let mut out = std::io::stdout().lock();
    match a.format.format {
        Format::Json | Format::Ndjson => {
            let v = serde_json::to_value(&report)?;
            crate::output::write_doc(&mut out, a.format.format, &v)?;
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
            if let Some(w) = &report.weights {
                weights_table(&mut out, &a, p, w)?;
            }
        }
    }
    // With counts, a plan no count can meet is a finding.
    Ok(match &report.weights {
        Some(w) if w.required.is_none() => ExitCode::Findings,
        _ => ExitCode::Ok,
    })
}

fn weights_table(out: &mut impl Write, a: &Args, p: &Plan, w: &Weighed) -> Result<()> {
    let key = crate::output::key_cell(&w.heaviest_key);
    let (tp, tc) = (w.heaviest_key_produce_mbps, w.heaviest_key_consume_mbps);
    let (keys, total) = (w.keys, w.records);
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
        w.partitioner.spec(),
        w.heaviest_key_share * 100.0
    )?;
    let mut t = Table::new(["PARTITIONS", "HOTTEST PARTITION", "FITS ONE PARTITION"]);
    for n in &w.nearby {
        t.row([
            n.partitions.to_string(),
            format!("{:.1}%", n.hottest_partition_share * 100.0),
            if n.fits { "yes" } else { "no" }.to_string(),
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
            "no partition count fits: {key} alone puts {tp:.2} MB/s produced and {tc:.2} MB/s consumed on its partition, above what one partition takes ({} MB/s produced, {} MB/s consumed, less {:.0}% headroom); salt it over several partitions (partwise salt -i {} --weighted) or make its one consumer faster",
            a.partition_produce_mbps, a.partition_consume_mbps, a.headroom * 100.0, counts
        )?,
        None => writeln!(
            out,
            "no partition count from {} to {} fits: the keys' hottest partition stays above what one partition takes; salt the heaviest keys (partwise salt -i {} --weighted)",
            p.with_headroom, w.searched, counts
        )?,
    }
    Ok(())
}
