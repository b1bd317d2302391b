//! `partwise route`: the partition of each key under each chosen partitioner,
//! or (`--summary`) the number of keys per partition.

use super::key_source;
use crate::exit::{CliError, ExitCode, Result};
use crate::input::{KeySource, BATCH};
use crate::output::{hex, key_cell, key_json, Format, JsonStream, Table};
use partwise::{KeyFormat, PartitionCount, Partitioner, Placement, NOT_FIXED};
use serde_json::{json, Map, Value};
use std::ffi::OsString;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Keys to route (bytes as given; see --key-format)
    #[arg(value_name = "KEY", allow_negative_numbers = true)]
    keys: Vec<OsString>,
    /// Number of partitions of the topic; repeat to compare counts
    #[arg(
        short = 'p',
        long = "partitions",
        value_name = "N",
        required = true,
        allow_negative_numbers = true
    )]
    partitions: Vec<String>,
    /// Partitioner spec CLIENT[:NAME], repeatable, or 'all' (list: `partwise partitioners`)
    #[arg(
        short = 'P',
        long = "partitioner",
        value_name = "SPEC",
        default_value = "java"
    )]
    partitioner: Vec<String>,
    /// Read keys from FILE, one per line ('-' reads stdin)
    #[arg(short = 'i', long = "input", value_name = "FILE")]
    input: Option<PathBuf>,
    /// How text becomes key bytes: utf8, hex, base64 (raw bytes) or string,
    /// int32, int64, avro-sr:ID (as a producer's serializer writes them)
    #[arg(long = "key-format", value_name = "F", default_value = "utf8")]
    key_format: String,
    /// Output format
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// Print the number of keys per partition for each partitioner instead of one row per key
    #[arg(long, conflicts_with = "null_key")]
    summary: bool,
    /// Show what each partitioner does with a null key (no key at all)
    #[arg(long)]
    null_key: bool,
}

/// The validated form of [`Args`].
struct Config {
    partitioners: Vec<Partitioner>,
    counts: Vec<PartitionCount>,
    source: KeySource,
    format: Format,
    summary: bool,
    null_key: bool,
}

/// Parses `-P` values: specs, or `all`; duplicates are dropped, order kept.
pub fn parse_partitioners(specs: &[String]) -> Result<Vec<Partitioner>> {
    let mut out: Vec<Partitioner> = Vec::new();
    for s in specs {
        let add: Vec<Partitioner> = if s.trim().eq_ignore_ascii_case("all") {
            Partitioner::all().collect()
        } else {
            vec![s
                .parse()
                .map_err(|e| CliError::msg(format!("-P/--partitioner: {e}")))?]
        };
        for p in add {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    Ok(out)
}

/// Parses `-p` values.
pub fn parse_counts(counts: &[String]) -> Result<Vec<PartitionCount>> {
    let mut out: Vec<PartitionCount> = Vec::new();
    for s in counts {
        let n: PartitionCount = s
            .parse()
            .map_err(|e| CliError::msg(format!("-p/--partitions: {e}")))?;
        if !out.contains(&n) {
            out.push(n);
        }
    }
    Ok(out)
}

impl Config {
    fn new(a: Args) -> Result<Config> {
        let partitioners = parse_partitioners(&a.partitioner)?;
        let counts = parse_counts(&a.partitions)?;
        let source = key_source(a.keys, a.input, &a.key_format)?;
        if source.is_empty() && !a.null_key {
            return Err(CliError::msg(
                "no keys: give KEY arguments, -i FILE ('-' for stdin), or --null-key",
            ));
        }
        Ok(Config {
            partitioners,
            counts,
            source,
            format: a.format,
            summary: a.summary,
            null_key: a.null_key,
        })
    }
}

pub fn run(args: Args) -> Result<ExitCode> {
    let cfg = Config::new(args)?;
    let out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    if cfg.summary {
        summary(&cfg, out)
    } else {
        rows(&cfg, out)
    }
}

/// The placement's partition as JSON, `null` when it is not fixed.
fn partition_json(p: Placement) -> Value {
    p.partition().map_or(Value::Null, Value::from)
}

fn placement_cell(p: Placement) -> String {
    p.partition()
        .map_or_else(|| p.behaviour().to_string(), |n| n.to_string())
}

/// The `key` field: the logical key as given for serializer formats, else the
/// key bytes as text (null when they are not UTF-8).
fn display_key(format: KeyFormat, input: &[u8], key: &[u8]) -> Value {
    key_json(if format.is_serializer() { input } else { key })
}

/// Whether every placement is the same fixed partition.
fn agree(ps: &[Placement]) -> bool {
    ps.iter().all(|p| p.partition().is_some() && *p == ps[0])
}

/// A key as given and as bytes; `None` is the null key.
type OwnedKey = Option<(Vec<u8>, Vec<u8>)>;

/// One key (or the null key) placed by every partitioner at every count.
struct KeyRows<'a> {
    key: Option<(&'a [u8], &'a [u8])>,
    /// `placements[c][p]`: count `c`, partitioner `p`.
    placements: Vec<Vec<Placement>>,
}

fn rows(cfg: &Config, mut out: impl Write) -> Result<ExitCode> {
    let multi = cfg.partitioners.len() > 1;
    let place_all = |key: Option<&[u8]>| -> Vec<Vec<Placement>> {
        cfg.counts
            .iter()
            .map(|&n| cfg.partitioners.iter().map(|p| p.place(key, n)).collect())
            .collect()
    };
    match cfg.format {
        Format::Json | Format::Ndjson => {
            let mut s = JsonStream::new(&mut out, cfg.format)?;
            let mut emit = |r: KeyRows<'_>| -> Result<()> {
                for (c, ps) in cfg.counts.iter().zip(&r.placements) {
                    let agreed = agree(ps);
                    for (p, pl) in cfg.partitioners.iter().zip(ps) {
                        let mut m = Map::new();
                        match r.key {
                            Some((input, key)) => {
                                m.insert("key".into(), display_key(cfg.source.format, input, key));
                                m.insert("key_hex".into(), hex(key).into());
                            }
                            None => {
                                m.insert("key".into(), Value::Null);
                                m.insert("key_hex".into(), Value::Null);
                                m.insert("null_key".into(), true.into());
                            }
                        }
                        m.insert("partitioner".into(), p.spec().into());
                        m.insert("partitions".into(), c.get().into());
                        m.insert("partition".into(), partition_json(*pl));
                        if pl.partition().is_none() {
                            m.insert("random".into(), true.into());
                            m.insert("behaviour".into(), pl.behaviour().into());
                        }
                        if multi {
                            m.insert("clients_agree".into(), agreed.into());
                        }
                        s.write(&Value::Object(m))?;
                    }
                }
                Ok(())
            };
            if cfg.null_key {
                emit(KeyRows {
                    key: None,
                    placements: place_all(None),
                })?;
            }
            cfg.source.for_each_batch(|b| {
                for (input, key) in b.inputs.iter().zip(b.keys) {
                    emit(KeyRows {
                        key: Some((input, key)),
                        placements: place_all(Some(key)),
                    })?;
                }
                Ok(())
            })?;
            s.finish()?;
        }
        Format::Table => {
            let columns = cfg.partitioners.len() * cfg.counts.len();
            let mut collected: Vec<(OwnedKey, Vec<Vec<Placement>>)> = Vec::new();
            if cfg.null_key {
                collected.push((None, place_all(None)));
            }
            cfg.source.for_each_batch(|b| {
                for (input, key) in b.inputs.iter().zip(b.keys) {
                    collected.push((Some((input.to_vec(), key.to_vec())), place_all(Some(key))));
                }
                Ok(())
            })?;
            let label = |k: &OwnedKey| match k {
                None => "(null key)".to_string(),
                Some((input, key)) if cfg.source.format.is_serializer() => {
                    format!("{} (0x{})", key_cell(input), hex(key))
                }
                Some((_, key)) => key_cell(key),
            };
            if columns <= 4 {
                let mut header = vec!["KEY".to_string()];
                for c in &cfg.counts {
                    for p in &cfg.partitioners {
                        header.push(format!("{} n={}", p.spec(), c));
                    }
                }
                let mut t = Table::new(header);
                for (k, pss) in &collected {
                    let mut row = vec![label(k)];
                    row.extend(pss.iter().flatten().map(|&p| placement_cell(p)));
                    t.row(row);
                }
                t.write(&mut out)?;
            } else {
                grouped(cfg, &collected, label, &mut out)?;
            }
            out.flush()?;
        }
    }
    Ok(ExitCode::Ok)
}

/// The readable form of many partitioners: per key and count, the partitioners
/// grouped by where they put the key, and whether the clients agree.
fn grouped<K>(
    cfg: &Config,
    collected: &[(K, Vec<Vec<Placement>>)],
    label: impl Fn(&K) -> String,
    out: &mut impl Write,
) -> Result<()> {
    let mut disagreeing = 0usize;
    for (k, pss) in collected {
        for (c, ps) in cfg.counts.iter().zip(pss) {
            let verdict = if agree(ps) {
                "clients agree"
            } else {
                disagreeing += 1;
                "CLIENTS DISAGREE"
            };
            writeln!(out, "{}  n={}  {}", label(k), c, verdict)?;
            let mut groups: Vec<(Placement, Vec<&str>)> = Vec::new();
            for (p, pl) in cfg.partitioners.iter().zip(ps) {
                match groups.iter_mut().find(|(g, _)| g == pl) {
                    Some((_, v)) => v.push(p.spec()),
                    None => groups.push((*pl, vec![p.spec()])),
                }
            }
            groups
                .sort_by_key(|(pl, _)| (pl.partition().is_none(), pl.partition(), pl.behaviour()));
            for (pl, specs) in groups {
                writeln!(out, "  {:<12} {}", placement_cell(pl), specs.join(", "))?;
            }
        }
    }
    writeln!(
        out,
        "\n{} of {} key/count pairs placed differently by these {} partitioners",
        disagreeing,
        collected.len() * cfg.counts.len(),
        cfg.partitioners.len()
    )?;
    Ok(())
}

fn summary(cfg: &Config, mut out: impl Write) -> Result<ExitCode> {
    // counts[c][p][partition], not_fixed[c][p]
    let mut counts: Vec<Vec<Vec<u64>>> = cfg
        .counts
        .iter()
        .map(|n| vec![vec![0u64; n.get() as usize]; cfg.partitioners.len()])
        .collect();
    let mut not_fixed = vec![vec![0u64; cfg.partitioners.len()]; cfg.counts.len()];
    let mut buf = vec![0u32; BATCH];
    let total = cfg.source.for_each_batch(|b| {
        for (ci, &n) in cfg.counts.iter().enumerate() {
            for (pi, p) in cfg.partitioners.iter().enumerate() {
                let dest = &mut buf[..b.keys.len()];
                p.place_batch(b.keys, n, dest);
                let hist = &mut counts[ci][pi];
                for &part in dest.iter() {
                    if part == NOT_FIXED {
                        not_fixed[ci][pi] += 1;
                    } else {
                        hist[part as usize] += 1;
                    }
                }
            }
        }
        Ok(())
    })?;
    match cfg.format {
        Format::Json | Format::Ndjson => {
            let mut s = JsonStream::new(&mut out, cfg.format)?;
            for (ci, n) in cfg.counts.iter().enumerate() {
                for (pi, p) in cfg.partitioners.iter().enumerate() {
                    s.write(&json!({
                        "partitioner": p.spec(),
                        "partitions": n.get(),
                        "keys": total,
                        "counts": counts[ci][pi],
                        "not_fixed": not_fixed[ci][pi],
                    }))?;
                }
            }
            s.finish()?;
        }
        Format::Table => {
            let mut t = Table::new([
                "PARTITIONER",
                "N",
                "KEYS",
                "MIN",
                "MAX",
                "MAX/MEAN",
                "NOT FIXED",
                "COUNTS",
            ]);
            for (ci, n) in cfg.counts.iter().enumerate() {
                for (pi, p) in cfg.partitioners.iter().enumerate() {
                    let hist = &counts[ci][pi];
                    let fixed: u64 = hist.iter().sum();
                    let min = hist.iter().min().copied().unwrap_or(0);
                    let max = hist.iter().max().copied().unwrap_or(0);
                    let mean = fixed as f64 / f64::from(n.get());
                    let ratio = if fixed == 0 {
                        "-".to_string()
                    } else {
                        format!("{:.3}", max as f64 / mean)
                    };
                    let list = if n.get() <= 16 {
                        hist.iter()
                            .map(u64::to_string)
                            .collect::<Vec<_>>()
                            .join(" ")
                    } else {
                        "(use --format json for all)".to_string()
                    };
                    t.row([
                        p.spec().to_string(),
                        n.to_string(),
                        total.to_string(),
                        min.to_string(),
                        max.to_string(),
                        ratio,
                        not_fixed[ci][pi].to_string(),
                        list,
                    ]);
                }
            }
            t.write(&mut out)?;
            out.flush()?;
        }
    }
    Ok(ExitCode::Ok)
}
