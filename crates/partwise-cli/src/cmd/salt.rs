//! `partwise salt`: the smallest salt range that cools hot keys, for one key
//! and its share (the rest assumed uniform), or for the user's own measured
//! distribution (`-i FILE --weighted`), with what the consumers carry after.

use crate::exit::{CliError, ExitCode, Result};
use crate::output::{key_cell, Format, Table};
use partwise::assign::Assignor;
use partwise::strategy::salt::report::{
    counts as counts_report, one_key as one_key_report, Consumers, CountsReport, Measured,
    OneKeyReport, TRADE_OFF,
};
use partwise::traffic::consumer_partitions;
use partwise::{PartitionCount, Partitioner};
use std::io::Write;
use std::path::PathBuf;

mod joined;

#[derive(clap::Args)]
#[command(
    mut_arg("input", |a| a.long_help(
        "The measured distribution: keys one per line, or KEY,COUNT with --weighted ('-' reads stdin)"
    )),
    mut_arg("partitioner", |a| a.conflicts_with("topology").long_help(
        "Partitioner spec (`partwise partitioners` lists them; with --topology: the topic's producers, from the file)"
    ))
)]
pub struct Args {
    /// The hot key (repeatable with -i: the keys to salt)
    #[arg(long = "key", value_name = "KEY")]
    keys: Vec<String>,
    /// Its share of the topic's traffic (0.95 = 95%), without -i
    #[arg(
        long,
        value_name = "F",
        allow_negative_numbers = true,
        conflicts_with = "input"
    )]
    share: Option<f64>,
    #[command(flatten)]
    input: super::flags::InputFlag,
    /// Lines of -i are KEY,COUNT (the count after the last comma): each key weighs its count
    #[arg(long = "weighted", alias = "counts", requires = "input")]
    counts: bool,
    /// With -i and no --key: salt every key above this share of the traffic (default 1/partitions)
    #[arg(
        long,
        value_name = "F",
        requires = "input",
        allow_negative_numbers = true
    )]
    threshold: Option<f64>,
    #[arg(
        help = super::flags::PARTITIONS,
        long_help = "Number of partitions (with --topology: the topic's, from the file)",
        short = 'p',
        long = "partitions",
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = super::parse::partitions,
        required_unless_present = "topology",
        conflicts_with = "topology"
    )]
    partitions: Option<PartitionCount>,
    #[command(flatten)]
    partitioner: super::flags::MaybePartitioner,
    #[arg(
        help = super::flags::TOPOLOGY,
        long_help = "A topology file (as `check` reads): salt --topic's keys with every topic joined to it, or learn why that cannot be done (needs -i)",
       long, value_name = "FILE", requires_all = ["topic", "input"])]
    topology: Option<PathBuf>,
    /// The topic of --topology whose keys are measured by -i
    #[arg(long, value_name = "TOPIC", requires = "topology")]
    topic: Option<String>,
    /// Target: the hottest partition at most R x the mean load
    #[arg(
        long,
        value_name = "R",
        default_value_t = 1.5,
        allow_negative_numbers = true
    )]
    target_ratio: f64,
    /// Largest salt range to consider
    #[arg(long, value_name = "N", default_value_t = 1000)]
    max_range: u32,
    #[arg(long, value_name = "M", requires = "input", value_parser = super::parse::positive_u32,
          help = super::flags::CONSUMERS,
          long_help = "How many consumers the group has: what each carries before and after salting, under --assignor (with -i)")]
    consumers: Option<u32>,
    #[arg(short = 'a', long = "assignor", value_name = "SPEC", default_value = "java:range", value_parser = super::parse::assignor,
          help = super::flags::ASSIGNOR,
          long_help = "The consumer group's assignor (any spec of `partwise assign`), for --consumers")]
    assignor: Assignor,
    #[command(flatten)]
    format: super::flags::FormatFlag,
}

/// The largest salt range: each range places every salted key once per salt.
const MAX_RANGE: u32 = 100_000;

/// Partition loads the search may compute (partitions x ranges tried).
const MAX_LOADS: u64 = 200_000_000;

/// Salted placements the search may compute: range S places each salted
/// key S times, so up to `keys x R x (R + 1) / 2` for ranges 1..=R.
const MAX_PLACEMENTS: u64 = 50_000_000;

fn pct(v: &[f64]) -> Vec<String> {
    v.iter().map(|x| format!("{:.1}%", x * 100.0)).collect()
}

/// Exit 0 when the target is reached, 1 when it is not.
fn reached(yes: bool) -> ExitCode {
    if yes {
        ExitCode::Ok
    } else {
        ExitCode::Findings
    }
}

pub fn run(a: Args) -> Result<ExitCode> {
    // `--counts FILE` is a KEY,COUNT file everywhere else.
    super::flags::note_deprecated("salt", "--counts", "--weighted");
    if let (Some(file), Some(topic)) = (&a.topology, &a.topic) {
        return joined::run(&a, file, topic);
    }
    let n = a.partitions.expect("clap requires -p without --topology");
    let p = a
        .partitioner
        .partitioner
        .unwrap_or_else(|| "java".parse().expect("java"));
    let p = super::parse::keyed(p)
        .map_err(|e| CliError::msg(format!("-P/--partitioner '{}': {e}", p.spec())))?;
    crate::limits::counted_partitions("-p", n.get())?;
    // Every range tried recomputes every partition's load.
    let loads = u64::from(n.get()) * u64::from(a.max_range);
    if loads > MAX_LOADS {
        return Err(CliError::msg(format!(
            "-p {n} with --max-range {}: the search computes up to {loads} partition loads; at most {MAX_LOADS} (lower --max-range)",
            a.max_range
        )));
    }
    if let Some(m) = a.consumers {
        crate::limits::members("--consumers", u64::from(m))?;
    }
    if a.max_range == 0 || a.max_range > MAX_RANGE {
        return Err(CliError::msg(format!(
            "--max-range: {} must be between 1 and {MAX_RANGE}",
            a.max_range
        )));
    }
    match &a.input.input {
        Some(path) => counts(&a, path, n, p, true),
        None => one_key(&a, n, p),
    }
}

fn one_key(a: &Args, n: PartitionCount, p: Partitioner) -> Result<ExitCode> {
    let [key] = &a.keys[..] else {
        return Err(CliError::msg(
            "give one hot key with --key and its --share, or the measured keys with -i FILE",
        ));
    };
    let r = u64::from(a.max_range);
    let placements = r * (r + 1) / 2;
    if placements > MAX_PLACEMENTS {
        return Err(CliError::msg(format!(
            "--max-range {}: the search places up to {placements} salted keys; at most {MAX_PLACEMENTS}",
            a.max_range
        )));
    }
    let share = a.share.ok_or_else(|| {
        CliError::msg("--share: the key's share of the traffic is needed without -i")
    })?;
    let report = one_key_report(p, key, share, n, a.target_ratio, a.max_range)
        .map_err(|e| CliError::msg(e.to_string()))?;
    let mut out = std::io::stdout().lock();
    match a.format.format {
        Format::Json | Format::Ndjson => {
            crate::output::write_doc(&mut out, a.format.format, &report)?
        }
        Format::Table => one_key_table(&mut out, &report)?,
    }
    Ok(reached(report.target_reached))
}

fn one_key_table(out: &mut impl Write, r: &OneKeyReport) -> Result<()> {
    let key = &r.key;
    match r.range {
        Some(s) => writeln!(
            out,
            "salt '{key}' over S = {s} ({key}_1 .. {key}_{s}): hottest partition {:.2} x mean -> {:.2} x mean (target {})",
            r.before_max_over_mean, r.after_max_over_mean, r.target_ratio
        )?,
        None => writeln!(
            out,
            "no salt range up to {} brings the hottest partition under {} x mean (best {:.2} x): with {:.0}% of traffic on one key and {} partitions the target may be unreachable",
            r.max_range, r.target_ratio, r.after_max_over_mean, r.share * 100.0, r.partitions
        )?,
    }
    let spans: Vec<String> = r.spans.iter().map(u32::to_string).collect();
    writeln!(out, "the salted key spans partitions {}", spans.join(", "))?;
    let mut t = Table::new(["", "LOAD PER PARTITION"]);
    t.row(["before".to_string(), pct(&r.before).join(" ")]);
    t.row(["after".to_string(), pct(&r.after).join(" ")]);
    t.write(&mut *out)?;
    writeln!(out, "trade-off: {}", r.trade_off)?;
    writeln!(out, "note: {}", r.note)?;
    Ok(())
}

/// The measured keys, their total, the threshold and which keys to salt.
struct Selection {
    keys: Vec<(Vec<u8>, u64)>,
    total: u64,
    threshold: f64,
    salt: Vec<bool>,
}

impl Selection {
    fn measured<'a>(&'a self, a: &Args) -> Measured<'a> {
        Measured {
            keys: &self.keys,
            total: self.total,
            salt: &self.salt,
            threshold: a.keys.is_empty().then_some(self.threshold),
            threshold_used: self.threshold,
            target_ratio: a.target_ratio,
            max_range: a.max_range,
        }
    }
}

fn select(a: &Args, path: &std::path::Path, n: PartitionCount) -> Result<Selection> {
    if !a.counts && path.as_os_str() != "-" && crate::input::looks_like_counts(path) {
        say!(
            "partwise: warning: every line of {} looks like KEY,COUNT but --weighted was not given: each whole line is a key seen once",
            path.display()
        );
    }
    let keys = crate::input::read_counts(path, a.counts)?;
    let total = keys
        .iter()
        .try_fold(0u64, |t, (_, c)| t.checked_add(*c))
        .ok_or_else(|| {
            CliError::msg(format!(
                "{}: the counts add up to more than 2^64 - 1",
                path.display()
            ))
        })?;
    if total == 0 {
        return Err(CliError::msg(format!(
            "{}: every count is 0",
            path.display()
        )));
    }
    let threshold = a.threshold.unwrap_or(1.0 / f64::from(n.get()));
    if !(0.0..1.0).contains(&threshold) {
        return Err(CliError::msg(format!(
            "--threshold: {threshold} is not a share between 0 and 1"
        )));
    }
    let salt: Vec<bool> = if a.keys.is_empty() {
        keys.iter()
            .map(|(_, c)| *c as f64 / total as f64 > threshold)
            .collect()
    } else {
        for k in &a.keys {
            if !keys.iter().any(|(x, _)| x == k.as_bytes()) {
                return Err(CliError::msg(format!(
                    "--key: '{k}' is not in {}",
                    path.display()
                )));
            }
        }
        keys.iter()
            .map(|(x, _)| a.keys.iter().any(|k| k.as_bytes() == x))
            .collect()
    };
    let salted = salt.iter().filter(|s| **s).count() as u64;
    let r = u64::from(a.max_range);
    let placements = salted.saturating_mul(r * (r + 1) / 2);
    if placements > MAX_PLACEMENTS {
        return Err(CliError::msg(format!(
            "{salted} keys to salt with --max-range {}: the search places up to {placements} salted keys; at most {MAX_PLACEMENTS} (lower --max-range, raise --threshold or name the keys with --key)",
            a.max_range
        )));
    }
    Ok(Selection {
        keys,
        total,
        threshold,
        salt,
    })
}

/// The group of `--consumers` members under `--assignor`, if given.
fn consumers(a: &Args, n: PartitionCount) -> Result<Option<Consumers>> {
    let Some(m) = a.consumers else {
        return Ok(None);
    };
    let assignor: Assignor = a.assignor;
    let owned = consumer_partitions(assignor, n, m)
        .map_err(|e| CliError::context(format!("--assignor {}", assignor.spec()), e))?;
    Ok(Some((assignor, owned)))
}

/// `join_note`: whether it is unknown if the topic is joined (no topology).
fn counts(
    a: &Args,
    path: &std::path::Path,
    n: PartitionCount,
    p: Partitioner,
    join_note: bool,
) -> Result<ExitCode> {
    let selection = select(a, path, n)?;
    let consumers = consumers(a, n)?;
    let report = counts_report(p, n, &selection.measured(a), consumers, join_note)
        .map_err(|e| CliError::msg(e.to_string()))?;
    let mut out = std::io::stdout().lock();
    match a.format.format {
        Format::Json | Format::Ndjson => {
            crate::output::write_doc(&mut out, a.format.format, &report)?
        }
        Format::Table => counts_table(&mut out, &report)?,
    }
    Ok(reached(report.target_reached))
}

fn counts_table(out: &mut impl Write, r: &CountsReport) -> Result<()> {
    let what = if r.consumers.is_some() {
        "busiest consumer"
    } else {
        "hottest partition"
    };
    let names: Vec<String> = r.salted.iter().map(|k| key_cell(&k.key)).collect();
    if r.salted.is_empty() {
        writeln!(
            out,
            "no key is above {:.1}% of the traffic: nothing to salt ({what} {:.2} x mean)",
            r.threshold_used * 100.0,
            r.before_max_over_mean
        )?;
    } else {
        match r.range {
            Some(s) => writeln!(
                out,
                "salt {} over S = {s} ({}): {what} {:.2} x mean -> {:.2} x mean (target {})",
                names.join(", "),
                r.separator.sub_key_range(if names.len() == 1 { names[0].as_str() } else { "KEY" }, s),
                r.before_max_over_mean, r.after_max_over_mean, r.target_ratio
            )?,
            None => writeln!(
                out,
                "no salt range up to {} brings the {what} under {} x mean; the best is S = {} at {:.2} x mean (before {:.2} x): the other keys, or more consumers than partitions, may keep it uneven",
                r.max_range, r.target_ratio, r.range_used, r.after_max_over_mean, r.before_max_over_mean
            )?,
        }
        for k in &r.salted {
            let spans: Vec<String> = k.spans.iter().map(u32::to_string).collect();
            writeln!(
                out,
                "  {} ({:.1}% of {}) spans partitions {}",
                key_cell(&k.key),
                100.0 * k.count as f64 / r.total as f64,
                r.total,
                spans.join(", ")
            )?;
        }
    }
    if let Some(why) = r.separator.note() {
        writeln!(out, "{why}")?;
    }
    let mut t = Table::new(["", "LOAD PER PARTITION"]);
    t.row(["before".to_string(), pct(&r.before).join(" ")]);
    t.row(["after".to_string(), pct(&r.after).join(" ")]);
    t.write(&mut *out)?;
    if let Some(c) = &r.consumers {
        writeln!(out, "\nconsumers ({}):", c.assignor.spec())?;
        let mut t = Table::new(["MEMBER", "PARTITIONS", "BEFORE", "AFTER"]);
        for m in &c.members {
            let list: Vec<String> = m.partitions.iter().map(u32::to_string).collect();
            t.row([
                m.member.clone(),
                list.join(" "),
                format!("{:.1}%", m.before * 100.0),
                format!("{:.1}%", m.after * 100.0),
            ]);
        }
        t.write(&mut *out)?;
    }
    if !r.salted.is_empty() {
        writeln!(out, "trade-off: {TRADE_OFF}")?;
        if let Some(note) = r.note {
            writeln!(out, "note: {note}")?;
        }
    }
    Ok(())
}
