//! `partwise route`: the partition of each key under each chosen partitioner,
//! or (`--summary`) the number of keys per partition.

use super::key_source;
use super::parse::{self, Partitioners};
use crate::exit::{CliError, ExitCode, Result};
use crate::input::{Batch, Held, KeySource};
use crate::output::{hex, key_cell, Format, JsonStream, Table};
use partwise::partitioner::compare::{agree, Agreement, Migration};
use partwise::{KeyFormat, PartitionCount, Partitioner, Placement};
use serde::Serialize;
use std::ffi::OsString;
use std::io::{BufWriter, Write};

mod summary;

#[derive(clap::Args)]
#[command(mut_arg("partitioners", |a| a.default_value("java").long_help(
    "Partitioner spec CLIENT[:NAME], repeatable, or 'all' (list: `partwise partitioners`)"
)))]
pub struct Args {
    /// Keys to route (bytes as given; see --key-format)
    #[arg(value_name = "KEY", allow_negative_numbers = true)]
    keys: Vec<OsString>,
    #[arg(
        help = super::flags::PARTITIONS,
        long_help = "Number of partitions of the topic; repeat to compare counts",
        short = 'p',
        long = "partitions",
        value_name = "N",
        required = true,
        allow_negative_numbers = true,
        value_parser = parse::partitions
    )]
    partitions: Vec<PartitionCount>,
    #[command(flatten)]
    partitioner: super::flags::Partitioners,
    #[command(flatten)]
    input: super::flags::InputFlag,
    #[command(flatten)]
    key_format: super::flags::KeyFormatFlag,
    #[command(flatten)]
    format: super::flags::FormatFlag,
    /// Print the number of keys per partition for each partitioner instead of one row per key
    #[arg(long, conflicts_with = "null_key")]
    summary: bool,
    /// Show what each partitioner does with a null key (no key at all)
    #[arg(long)]
    null_key: bool,
    /// With several partitioners: print only the keys they place differently
    #[arg(long, conflicts_with = "summary")]
    only_differ: bool,
    /// Migration view: the partitioner producers use now (with --to)
    #[arg(long, value_name = "SPEC", requires = "to", conflicts_with_all = ["summary", "null_key"], value_parser = parse::partitioner)]
    from: Option<Partitioner>,
    /// Migration view: the partitioner producers move to (with --from)
    #[arg(long, value_name = "SPEC", requires = "from", value_parser = parse::partitioner)]
    to: Option<Partitioner>,
    #[arg(
        help = super::flags::THREADS,
        long_help = "With --summary: threads reading a large regular -i file (default: all cores; the output is the same for any number)",
       long, value_name = "N", requires = "summary", value_parser = parse::positive_usize)]
    threads: Option<usize>,
}

/// The validated form of [`Args`].
struct Config {
    partitioners: Vec<Partitioner>,
    counts: Vec<PartitionCount>,
    source: KeySource,
    format: Format,
    summary: bool,
    null_key: bool,
    only_differ: bool,
    /// `--from`, `--to`.
    migration: Option<(Partitioner, Partitioner)>,
    /// Threads `--summary` reads a large file on.
    threads: usize,
}

/// `-P` values with `all` spelled out; duplicates are dropped, order kept.
fn expand_partitioners(specs: &[Partitioners]) -> Vec<Partitioner> {
    let mut out: Vec<Partitioner> = Vec::new();
    for s in specs {
        let add: Vec<Partitioner> = match s {
            Partitioners::All => Partitioner::all().collect(),
            Partitioners::One(p) => vec![*p],
        };
        for p in add {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// `-p` values, duplicates dropped, order kept.
fn distinct_counts(counts: &[PartitionCount]) -> Vec<PartitionCount> {
    let mut out: Vec<PartitionCount> = Vec::new();
    for n in counts {
        if !out.contains(n) {
            out.push(*n);
        }
    }
    out
}

/// Counters `--summary` keeps at most (128 MB).
const SUMMARY_COUNTERS: u64 = 16_000_000;

impl Config {
    fn new(a: Args) -> Result<Config> {
        let migration = a.from.zip(a.to);
        let partitioners = match migration {
            Some((f, t)) => vec![f, t],
            None => expand_partitioners(&a.partitioner.partitioners),
        };
        let counts = distinct_counts(&a.partitions);
        let mut threads = 1;
        if a.summary {
            for n in &counts {
                crate::limits::counted_partitions("-p", n.get())?;
            }
            // One counter per partition, count and partitioner.
            let total: u64 =
                counts.iter().map(|n| u64::from(n.get())).sum::<u64>() * partitioners.len() as u64;
            if total > SUMMARY_COUNTERS {
                return Err(CliError::msg(format!(
                    "--summary: {total} counters (partitions of every -p times {} partitioners); at most {SUMMARY_COUNTERS}",
                    partitioners.len()
                )));
            }
            // Every thread keeps its own counters: fewer threads when they
            // are many keeps the whole under about 256 MB.
            threads = a
                .threads
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
                .clamp(1, 64)
                .min(((256u64 << 20) / (total * 8).max(1)).max(1) as usize);
        }
        let source = key_source(a.keys, a.input.input, a.key_format.key_format);
        if source.is_empty() && !a.null_key {
            return Err(CliError::msg(
                "no keys: give KEY arguments, -i FILE ('-' for stdin), or --null-key",
            ));
        }
        Ok(Config {
            partitioners,
            counts,
            source,
            format: a.format.format,
            summary: a.summary,
            null_key: a.null_key,
            only_differ: a.only_differ,
            migration,
            threads,
        })
    }
}

pub fn run(args: Args) -> Result<ExitCode> {
    let cfg = Config::new(args)?;
    for p in cfg.partitioners.iter().filter_map(|p| p.priority()) {
        for &n in cfg.counts.iter().filter(|&&n| p.reserves_all(n)) {
            say!(
                "partwise: warning: {} reserves all {n} partitions, so every key no rule matches goes to partition 0; leave partitions for the rest (or route with more partitions)",
                p.spec()
            );
        }
    }
    let out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    if cfg.summary {
        summary::summary(&cfg, out)
    } else if let Some((from, to)) = cfg.migration {
        migrate(&cfg, from, to, out)
    } else {
        rows(&cfg, out)
    }
}

/// The placement's partition as JSON, `null` when it is not fixed.
fn placement_cell(p: Placement) -> String {
    p.partition()
        .map_or_else(|| p.behaviour().to_string(), |n| n.to_string())
}

/// The `key` field: the logical key as given for serializer formats, else the
/// key bytes (as text in JSON, null when they are not UTF-8).
fn display_key<'a>(format: KeyFormat, input: &'a [u8], key: &'a [u8]) -> &'a [u8] {
    if format.is_serializer() {
        input
    } else {
        key
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One row of `route`'s JSON: a key placed by one partitioner at one count.
#[derive(Serialize)]
struct KeyRow<'a> {
    #[serde(serialize_with = "partwise::ser::opt_key_text")]
    key: Option<&'a [u8]>,
    #[serde(serialize_with = "partwise::ser::opt_key_hex")]
    key_hex: Option<&'a [u8]>,
    #[serde(skip_serializing_if = "is_false")]
    null_key: bool,
    partitioner: Partitioner,
    partitions: u32,
    partition: Option<u32>,
    #[serde(skip_serializing_if = "is_false")]
    random: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    behaviour: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    clients_agree: Option<bool>,
}

/// One pair of partitioners in an [`AgreementRow`].
#[derive(Serialize)]
struct PairRow {
    a: Partitioner,
    b: Partitioner,
    differ: u64,
    differ_fraction: Option<f64>,
}

/// The closing row of `route -P A -P B`: how often the clients disagree.
#[derive(Serialize)]
struct AgreementRow {
    r#type: &'static str,
    partitions: u32,
    keys: u64,
    differ: u64,
    differ_fraction: Option<f64>,
    pairs: Vec<PairRow>,
    groups: Vec<Vec<Partitioner>>,
}

/// One key of `route --from A --to B` at one count.
#[derive(Serialize)]
struct MoveRow<'a> {
    #[serde(serialize_with = "partwise::ser::key_text")]
    key: &'a [u8],
    #[serde(serialize_with = "partwise::ser::key_hex")]
    key_hex: &'a [u8],
    partitions: u32,
    from: Option<u32>,
    to: Option<u32>,
    moved: bool,
}

/// The closing row of `route --from A --to B` at one count.
#[derive(Serialize)]
struct MigrationRow<'a> {
    r#type: &'static str,
    from: Partitioner,
    to: Partitioner,
    partitions: u32,
    keys: u64,
    moved: u64,
    moved_fraction: Option<f64>,
    move_nothing: &'a [Partitioner],
    fix: Option<String>,
}

/// Whether every placement is the same fixed partition.
/// A key as given and as bytes; `None` is the null key.
type OwnedKey = Option<(Vec<u8>, Vec<u8>)>;

/// One key (or the null key) placed by every partitioner at every count.
struct KeyRows<'a> {
    key: Option<(&'a [u8], &'a [u8])>,
    /// `placements[c][p]`: count `c`, partitioner `p`.
    placements: Vec<Vec<Placement>>,
}

/// Two placements that put a key on the same fixed partition.
/// `9,186 of 10,000 keys (91.9%)`.
fn of_keys(part: u64, whole: u64) -> String {
    let pct = if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    };
    format!(
        "{} of {} keys ({pct:.1}%)",
        thousands(part),
        thousands(whole)
    )
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The totals a person asks for after the rows ("do our Java and Sarama
/// producers agree?"), rendered.
trait Totals {
    fn json(&self, cfg: &Config) -> Vec<AgreementRow>;
    fn table(&self, cfg: &Config, out: &mut impl Write) -> Result<()>;
}

impl Totals for Agreement {
    fn json(&self, cfg: &Config) -> Vec<AgreementRow> {
        let p = |i: usize| cfg.partitioners[i];
        cfg.counts
            .iter()
            .enumerate()
            .map(|(c, n)| AgreementRow {
                r#type: "agreement",
                partitions: n.get(),
                keys: self.keys,
                differ: self.any[c],
                differ_fraction: fraction(self.any[c], self.keys),
                pairs: self
                    .pairs
                    .iter()
                    .zip(&self.differ[c])
                    .map(|(&(a, b), &d)| PairRow {
                        a: p(a),
                        b: p(b),
                        differ: d,
                        differ_fraction: fraction(d, self.keys),
                    })
                    .collect(),
                groups: self
                    .groups(c)
                    .into_iter()
                    .map(|g| g.into_iter().map(p).collect())
                    .collect(),
            })
            .collect()
    }

    fn table(&self, cfg: &Config, out: &mut impl Write) -> Result<()> {
        let spec = |i: usize| cfg.partitioners[i].spec();
        writeln!(out)?;
        for (c, n) in cfg.counts.iter().enumerate() {
            if self.pairs.len() <= 6 {
                for (&(a, b), &d) in self.pairs.iter().zip(&self.differ[c]) {
                    writeln!(
                        out,
                        "{} vs {} at n={n}: {} on different partitions",
                        spec(a),
                        spec(b),
                        of_keys(d, self.keys)
                    )?;
                }
            } else {
                let groups = self.groups(c);
                writeln!(
                    out,
                    "at n={n}: {} placed differently by at least two of these {} partitioners; {} sets agree on every key:",
                    of_keys(self.any[c], self.keys),
                    cfg.partitioners.len(),
                    groups.len()
                )?;
                for g in groups {
                    let specs: Vec<&str> = g.into_iter().map(spec).collect();
                    writeln!(out, "  {}", specs.join(", "))?;
                }
            }
        }
        Ok(())
    }
}

fn fraction(part: u64, whole: u64) -> Option<f64> {
    (whole != 0).then(|| part as f64 / whole as f64)
}

fn rows(cfg: &Config, mut out: impl Write) -> Result<ExitCode> {
    let multi = cfg.partitioners.len() > 1;
    let place_all = |key: Option<&[u8]>| -> Vec<Vec<Placement>> {
        cfg.counts
            .iter()
            .map(|&n| cfg.partitioners.iter().map(|p| p.place(key, n)).collect())
            .collect()
    };
    let mut agreement = Agreement::new(cfg.partitioners.len(), cfg.counts.len());
    // --only-differ keeps a key (at a count) only where the clients disagree.
    let shown = |ps: &[Placement]| !cfg.only_differ || !agree(ps);
    match cfg.format {
        Format::Json | Format::Ndjson => {
            let mut s = JsonStream::new(&mut out, cfg.format)?;
            let mut emit = |s: &mut JsonStream<_>, r: KeyRows<'_>| -> Result<()> {
                agreement.add(&r.placements);
                for (c, ps) in cfg.counts.iter().zip(&r.placements) {
                    if !shown(ps) {
                        continue;
                    }
                    let agreed = agree(ps);
                    for (p, pl) in cfg.partitioners.iter().zip(ps) {
                        let random = pl.partition().is_none();
                        s.write(&KeyRow {
                            key: r
                                .key
                                .map(|(input, key)| display_key(cfg.source.format, input, key)),
                            key_hex: r.key.map(|(_, key)| key),
                            null_key: r.key.is_none(),
                            partitioner: *p,
                            partitions: c.get(),
                            partition: pl.partition(),
                            random,
                            behaviour: random.then(|| pl.behaviour()),
                            clients_agree: multi.then_some(agreed),
                        })?;
                    }
                }
                Ok(())
            };
            if cfg.null_key {
                emit(
                    &mut s,
                    KeyRows {
                        key: None,
                        placements: place_all(None),
                    },
                )?;
            }
            cfg.source.for_each_batch(|b| {
                for (input, key) in b.inputs.iter().zip(b.keys) {
                    emit(
                        &mut s,
                        KeyRows {
                            key: Some((input, key)),
                            placements: place_all(Some(key)),
                        },
                    )?;
                }
                s.flush()
            })?;
            if multi {
                for v in agreement.json(cfg) {
                    s.write(&v)?;
                }
            }
            s.finish()?;
        }
        Format::Table => {
            let columns = cfg.partitioners.len() * cfg.counts.len();
            let mut collected: Vec<(OwnedKey, Vec<Vec<Placement>>)> = Vec::new();
            let mut keep = |k: OwnedKey, pss: Vec<Vec<Placement>>| {
                agreement.add(&pss);
                if pss.iter().any(|ps| shown(ps)) {
                    collected.push((k, pss));
                }
            };
            if cfg.null_key {
                keep(None, place_all(None));
            }
            let held = Held::new(
                "a table of every key",
                "; --format ndjson streams any number",
            );
            cfg.source.for_each_held(held, |b| {
                for (input, key) in b.inputs.iter().zip(b.keys) {
                    keep(Some((input.to_vec(), key.to_vec())), place_all(Some(key)));
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
                grouped(cfg, &collected, label, &shown, &mut out)?;
            }
            if multi {
                agreement.table(cfg, &mut out)?;
            }
            out.flush()?;
        }
    }
    Ok(if multi && agreement.disagree() {
        ExitCode::Findings
    } else {
        ExitCode::Ok
    })
}

/// The readable form of many partitioners: per key and count, the partitioners
/// grouped by where they put the key, and whether the clients agree.
fn grouped<K>(
    cfg: &Config,
    collected: &[(K, Vec<Vec<Placement>>)],
    label: impl Fn(&K) -> String,
    shown: &impl Fn(&[Placement]) -> bool,
    out: &mut impl Write,
) -> Result<()> {
    for (k, pss) in collected {
        for (c, ps) in cfg.counts.iter().zip(pss) {
            if !shown(ps) {
                continue;
            }
            let verdict = if agree(ps) {
                "clients agree"
            } else {
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
    Ok(())
}

/// `--from A --to B`: which keys a producer moving from partitioner A to B
/// sends elsewhere, and which partitioners would move none of them.
fn migrate(
    cfg: &Config,
    from: Partitioner,
    to: Partitioner,
    mut out: impl Write,
) -> Result<ExitCode> {
    let mut m = Migration::new(from, to, &cfg.counts);
    let mut s = match cfg.format {
        Format::Table => None,
        f => Some(JsonStream::new(&mut out, f)?),
    };
    let mut table = Table::new(["KEY", "N", "FROM", "TO", ""]);
    let each = |b: Batch<'_>| {
        for (input, key) in b.inputs.iter().zip(b.keys) {
            for step in m.add(key) {
                let (n, a, z, moves) = (step.partitions, step.from, step.to, step.moved);
                if cfg.only_differ && !moves {
                    continue;
                }
                match &mut s {
                    Some(s) => s.write(&MoveRow {
                        key: display_key(cfg.source.format, input, key),
                        key_hex: key,
                        partitions: n.get(),
                        from: a.partition(),
                        to: z.partition(),
                        moved: moves,
                    })?,
                    None => table.row([
                        key_cell(key),
                        n.to_string(),
                        placement_cell(a),
                        placement_cell(z),
                        if moves { "moved".into() } else { String::new() },
                    ]),
                }
            }
        }
        Ok(())
    };
    if cfg.format != Format::Table {
        cfg.source.for_each_batch(each)?;
    } else {
        let held = Held::new(
            "a table of every key",
            "; --format ndjson streams any number",
        );
        cfg.source.for_each_held(held, each)?;
    }
    let r = m.finish();
    let (keys, moved) = (r.keys, &r.moved);
    let keep: Vec<&str> = r.move_nothing.iter().map(|p| p.spec()).collect();
    let fix = r.fix.map(|f| f.to_string());
    let keepers = &r.move_nothing;
    match s {
        Some(mut s) => {
            for (c, n) in cfg.counts.iter().enumerate() {
                s.write(&MigrationRow {
                    r#type: "migration",
                    from,
                    to,
                    partitions: n.get(),
                    keys,
                    moved: moved[c],
                    moved_fraction: fraction(moved[c], keys),
                    move_nothing: keepers,
                    fix: fix.clone(),
                })?;
            }
            s.finish()?;
        }
        None => {
            table.write(&mut out)?;
            writeln!(out)?;
            for (c, n) in cfg.counts.iter().enumerate() {
                writeln!(
                    out,
                    "{} -> {} at n={n}: {} move",
                    from.spec(),
                    to.spec(),
                    of_keys(moved[c], keys)
                )?;
            }
            if !keep.is_empty() {
                writeln!(
                    out,
                    "partitioners that move none of these keys: {}",
                    keep.join(", ")
                )?;
            }
            if let Some(f) = &fix {
                writeln!(out, "fix: {f}")?;
            }
        }
    }
    out.flush()?;
    Ok(if moved.iter().any(|&m| m > 0) {
        ExitCode::Findings
    } else {
        ExitCode::Ok
    })
}
