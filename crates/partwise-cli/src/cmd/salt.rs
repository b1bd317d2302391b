//! `partwise salt`: the smallest salt range that cools hot keys, for one key
//! and its share (the rest assumed uniform), or for the user's own measured
//! distribution (`-i FILE --counts`), with what the consumers carry after.

use crate::exit::{CliError, ExitCode, Result};
use crate::output::{key_cell, key_json, Format, Table};
use partwise::assign::Assignor;
use partwise::salt::{partitions_spanned, recommend, recommend_counts, salted_key, CountsPlan};
use partwise::traffic::consumer_partitions;
use partwise::{PartitionCount, Partitioner};
use serde_json::{json, Value};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
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
    /// The measured distribution: keys one per line, or KEY,COUNT with --counts ('-' reads stdin)
    #[arg(short = 'i', long = "input", value_name = "FILE")]
    input: Option<PathBuf>,
    /// Lines of -i are KEY,COUNT (the count after the last comma)
    #[arg(long, requires = "input")]
    counts: bool,
    /// With -i and no --key: salt every key above this share of the traffic (default 1/partitions)
    #[arg(
        long,
        value_name = "F",
        requires = "input",
        allow_negative_numbers = true
    )]
    threshold: Option<f64>,
    #[command(flatten)]
    routing: super::Routing,
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
    /// Consumers in the group, to show what each carries before and after (with -i)
    #[arg(long, value_name = "M", requires = "input", value_parser = super::parse::positive_u32)]
    consumers: Option<u32>,
    /// Assignor of the consumer group (any spec of `partwise assign`)
    #[arg(long, value_name = "SPEC", default_value = "java:range", value_parser = super::parse::assignor)]
    assignor: Assignor,
    /// Output format
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
}

const TRADE_OFF: &str = "records of the key stay ordered only within each salt (KEY_1, KEY_2, ...), not across them; readers must merge the partitions listed";

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

pub fn run(a: Args) -> Result<ExitCode> {
    let (n, p) = a.routing.parse()?;
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
    match &a.input {
        Some(path) => counts(&a, path, n, p),
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
    let plan = recommend(p, key.as_bytes(), share, n, a.target_ratio, a.max_range)
        .map_err(|e| CliError::msg(e.to_string()))?;
    let used = plan.range.unwrap_or(a.max_range.max(1));
    let salted: Vec<String> = (1..=used.min(64))
        .map(|i| String::from_utf8_lossy(&salted_key(key.as_bytes(), i)).into_owned())
        .collect();
    let mut out = std::io::stdout().lock();
    match a.format {
        Format::Json | Format::Ndjson => {
            let v = json!({
                "key": key,
                "share": share,
                "partitioner": p.spec(),
                "partitions": n.get(),
                "target_ratio": a.target_ratio,
                "range": plan.range,
                "target_reached": plan.range.is_some(),
                "before_max_over_mean": plan.before_max_over_mean,
                "after_max_over_mean": plan.after_max_over_mean,
                "before": plan.before,
                "after": plan.after,
                "spans": plan.spans,
                "salted_keys": salted,
                "trade_off": TRADE_OFF,
            });
            crate::output::write_doc(&mut out, a.format, &v)?;
        }
        Format::Table => {
            match plan.range {
                Some(s) => writeln!(
                    out,
                    "salt '{key}' over S = {s} ({key}_1 .. {key}_{s}): hottest partition {:.2} x mean -> {:.2} x mean (target {})",
                    plan.before_max_over_mean, plan.after_max_over_mean, a.target_ratio
                )?,
                None => writeln!(
                    out,
                    "no salt range up to {} brings the hottest partition under {} x mean (best {:.2} x): with {:.0}% of traffic on one key and {} partitions the target may be unreachable",
                    a.max_range, a.target_ratio, plan.after_max_over_mean, share * 100.0, n
                )?,
            }
            let spans: Vec<String> = plan.spans.iter().map(u32::to_string).collect();
            writeln!(out, "the salted key spans partitions {}", spans.join(", "))?;
            let mut t = Table::new(["", "LOAD PER PARTITION"]);
            t.row(["before".to_string(), pct(&plan.before).join(" ")]);
            t.row(["after".to_string(), pct(&plan.after).join(" ")]);
            t.write(&mut out)?;
            writeln!(out, "trade-off: {TRADE_OFF}")?;
        }
    }
    Ok(if plan.range.is_some() {
        ExitCode::Ok
    } else {
        ExitCode::Findings
    })
}

/// What each consumer carries: the sum of its partitions' loads.
fn carried(owned: &[(String, Vec<u32>)], loads: &[f64]) -> Vec<f64> {
    owned
        .iter()
        .map(|(_, ps)| ps.iter().map(|&q| loads[q as usize]).sum())
        .collect()
}

fn counts(a: &Args, path: &std::path::Path, n: PartitionCount, p: Partitioner) -> Result<ExitCode> {
    if !a.counts && path.as_os_str() != "-" && crate::input::looks_like_counts(path) {
        say!(
            "partwise: warning: every line of {} looks like KEY,COUNT but --counts was not given: each whole line is a key seen once",
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
    let refs: Vec<(&[u8], u64)> = keys.iter().map(|(k, c)| (k.as_slice(), *c)).collect();
    let salted: Vec<(&[u8], u64)> = refs
        .iter()
        .zip(&salt)
        .filter(|(_, s)| **s)
        .map(|(k, _)| *k)
        .collect();
    let r = u64::from(a.max_range);
    let placements = (salted.len() as u64).saturating_mul(r * (r + 1) / 2);
    if placements > MAX_PLACEMENTS {
        return Err(CliError::msg(format!(
            "{} keys to salt with --max-range {}: the search places up to {placements} salted keys; at most {MAX_PLACEMENTS} (lower --max-range, raise --threshold or name the keys with --key)",
            salted.len(),
            a.max_range
        )));
    }
    let consumers = match a.consumers {
        None => None,
        Some(m) => {
            let assignor = a.assignor;
            let owned = consumer_partitions(assignor, n, m)
                .map_err(|e| CliError::context(format!("--assignor {}", assignor.spec()), e))?;
            Some((assignor, owned))
        }
    };
    // With a group, the target is on what a consumer carries: that is what lags.
    let groups: Vec<Vec<u32>> = consumers.as_ref().map_or_else(Vec::new, |(_, o)| {
        o.iter().map(|(_, ps)| ps.clone()).collect()
    });
    let plan = recommend_counts(p, n, &refs, &salt, &groups, a.target_ratio, a.max_range)
        .map_err(|e| CliError::msg(e.to_string()))?;
    let m = Measured {
        a,
        p,
        n,
        keys: &keys,
        total,
        threshold,
        salted: &salted,
        consumers: &consumers,
        plan: &plan,
    };
    let mut out = std::io::stdout().lock();
    match a.format {
        Format::Json | Format::Ndjson => counts_json(&mut out, &m)?,
        Format::Table => counts_table(&mut out, &m)?,
    }
    Ok(if plan.range.is_some() {
        ExitCode::Ok
    } else {
        ExitCode::Findings
    })
}

/// The group's assignor and each member's name and partitions.
type Consumers = (Assignor, Vec<(String, Vec<u32>)>);

/// A measured distribution and its salting plan, for the renderers.
struct Measured<'a> {
    a: &'a Args,
    p: Partitioner,
    n: PartitionCount,
    keys: &'a [(Vec<u8>, u64)],
    total: u64,
    threshold: f64,
    salted: &'a [(&'a [u8], u64)],
    consumers: &'a Option<Consumers>,
    plan: &'a CountsPlan,
}

fn counts_json(out: &mut impl Write, m: &Measured<'_>) -> Result<()> {
    let (a, p, n, total, threshold) = (m.a, m.p, m.n, m.total, m.threshold);
    let (salted, consumers, plan) = (m.salted, m.consumers, m.plan);
    let keys = m.keys;
    let reached = plan.range.is_some();
    let salted_json: Vec<Value> = salted
        .iter()
        .map(|(k, c)| {
            json!({
                "key": key_json(k),
                "count": c,
                "share": *c as f64 / total as f64,
                "partition": p.place(Some(k), n).partition(),
                "spans": partitions_spanned(p, k, plan.used, n),
            })
        })
        .collect();
    let mut v = json!({
        "partitioner": p.spec(),
        "partitions": n.get(),
        "keys": keys.len(),
        "total": total,
        "threshold": if a.keys.is_empty() { Some(threshold) } else { None },
        "salted": salted_json,
        "target_ratio": a.target_ratio,
        "target_on": if consumers.is_some() { "consumers" } else { "partitions" },
        "range": plan.range,
        "range_used": plan.used,
        "target_reached": reached,
        "before_max_over_mean": plan.before_max_over_mean,
        "after_max_over_mean": plan.after_max_over_mean,
        "before": plan.before,
        "after": plan.after,
        "trade_off": TRADE_OFF,
    });
    if let Some((assignor, owned)) = &consumers {
        let (b, z) = (carried(owned, &plan.before), carried(owned, &plan.after));
        let members: Vec<Value> = owned
            .iter()
            .enumerate()
            .map(|(i, (name, ps))| {
                json!({"member": name, "partitions": ps, "before": b[i], "after": z[i]})
            })
            .collect();
        v["consumers"] = json!({
            "assignor": assignor.spec(),
            "members": members,
            "busiest_before": b.iter().cloned().fold(0.0, f64::max),
            "busiest_after": z.iter().cloned().fold(0.0, f64::max),
        });
    }
    crate::output::write_doc(out, a.format, &v)
}

fn counts_table(out: &mut impl Write, m: &Measured<'_>) -> Result<()> {
    let (a, p, n, total, threshold) = (m.a, m.p, m.n, m.total, m.threshold);
    let (salted, consumers, plan) = (m.salted, m.consumers, m.plan);
    let what = if consumers.is_some() {
        "busiest consumer"
    } else {
        "hottest partition"
    };
    let names: Vec<String> = salted.iter().map(|(k, _)| key_cell(k)).collect();
    if salted.is_empty() {
        writeln!(
            out,
            "no key is above {:.1}% of the traffic: nothing to salt ({what} {:.2} x mean)",
            threshold * 100.0,
            plan.before_max_over_mean
        )?;
    } else {
        match plan.range {
            Some(s) => writeln!(
                out,
                "salt {} over S = {s} ({}_1 .. {}_{s}): {what} {:.2} x mean -> {:.2} x mean (target {})",
                names.join(", "),
                if names.len() == 1 { names[0].as_str() } else { "KEY" },
                if names.len() == 1 { names[0].as_str() } else { "KEY" },
                plan.before_max_over_mean, plan.after_max_over_mean, a.target_ratio
            )?,
            None => writeln!(
                out,
                "no salt range up to {} brings the {what} under {} x mean; the best is S = {} at {:.2} x mean (before {:.2} x): the other keys, or more consumers than partitions, may keep it uneven",
                a.max_range, a.target_ratio, plan.used, plan.after_max_over_mean, plan.before_max_over_mean
            )?,
        }
        for (k, c) in salted.iter() {
            let spans: Vec<String> = partitions_spanned(p, k, plan.used, n)
                .iter()
                .map(u32::to_string)
                .collect();
            writeln!(
                out,
                "  {} ({:.1}% of {total}) spans partitions {}",
                key_cell(k),
                100.0 * *c as f64 / total as f64,
                spans.join(", ")
            )?;
        }
    }
    let mut t = Table::new(["", "LOAD PER PARTITION"]);
    t.row(["before".to_string(), pct(&plan.before).join(" ")]);
    t.row(["after".to_string(), pct(&plan.after).join(" ")]);
    t.write(&mut *out)?;
    if let Some((assignor, owned)) = &consumers {
        let (b, z) = (carried(owned, &plan.before), carried(owned, &plan.after));
        writeln!(out, "\nconsumers ({}):", assignor.spec())?;
        let mut t = Table::new(["MEMBER", "PARTITIONS", "BEFORE", "AFTER"]);
        for (i, (name, ps)) in owned.iter().enumerate() {
            let list: Vec<String> = ps.iter().map(u32::to_string).collect();
            t.row([
                name.clone(),
                list.join(" "),
                format!("{:.1}%", b[i] * 100.0),
                format!("{:.1}%", z[i] * 100.0),
            ]);
        }
        t.write(&mut *out)?;
    }
    if !salted.is_empty() {
        writeln!(out, "trade-off: {TRADE_OFF}")?;
    }
    Ok(())
}
