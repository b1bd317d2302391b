//! `partwise salt`: the smallest salt range that cools hot keys, for one key
//! and its share (the rest assumed uniform), or for the user's own measured
//! distribution (`-i FILE --counts`), with what the consumers carry after.

use crate::exit::{CliError, ExitCode, Result};
use crate::output::{key_cell, key_json, visible, Format, Table};
use partwise::assign::Assignor;
use partwise::strategy::salt::{
    custom_partitioner_setting, partitions_spanned, recommend, recommend_counts, recommend_group,
    salted_key, CountsPlan, GroupProducer, GroupSaltPlan,
};
use partwise::traffic::consumer_partitions;
use partwise::{PartitionCount, Partitioner};
use serde_json::{json, Value};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(
    mut_arg("input", |a| a.long_help(
        "The measured distribution: keys one per line, or KEY,COUNT with --counts ('-' reads stdin)"
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
    /// Consumers in the group, to show what each carries before and after (with -i)
    #[arg(long, value_name = "M", requires = "input", value_parser = super::parse::positive_u32)]
    consumers: Option<u32>,
    /// Assignor of the consumer group (any spec of `partwise assign`)
    #[arg(long, value_name = "SPEC", default_value = "java:range", value_parser = super::parse::assignor)]
    assignor: Assignor,
    #[command(flatten)]
    format: super::flags::FormatFlag,
}

/// Said whenever a salt is planned without a topology: salting one topic of
/// a joined pair alone breaks the key's join.
const JOIN_NOTE: &str = "if this topic is joined with others (co-partitioned), every one of them must write the same sub-keys or the key's join breaks; give the topology file with --topology and the topic with --topic to plan the whole group";

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
    if let (Some(file), Some(topic)) = (&a.topology, &a.topic) {
        return joined(&a, file, topic);
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
    let plan = recommend(p, key.as_bytes(), share, n, a.target_ratio, a.max_range)
        .map_err(|e| CliError::msg(e.to_string()))?;
    let used = plan.range.unwrap_or(a.max_range.max(1));
    let salted: Vec<String> = (1..=used.min(64))
        .map(|i| String::from_utf8_lossy(&salted_key(key.as_bytes(), b'_', i)).into_owned())
        .collect();
    let mut out = std::io::stdout().lock();
    match a.format.format {
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
                "note": JOIN_NOTE,
            });
            crate::output::write_doc(&mut out, a.format.format, &v)?;
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
            writeln!(out, "note: {JOIN_NOTE}")?;
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

/// The measured keys, their total, the threshold and which keys to salt.
type Selection = (Vec<(Vec<u8>, u64)>, u64, f64, Vec<bool>);

fn select(a: &Args, path: &std::path::Path, n: PartitionCount) -> Result<Selection> {
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
    let salted = salt.iter().filter(|s| **s).count() as u64;
    let r = u64::from(a.max_range);
    let placements = salted.saturating_mul(r * (r + 1) / 2);
    if placements > MAX_PLACEMENTS {
        return Err(CliError::msg(format!(
            "{salted} keys to salt with --max-range {}: the search places up to {placements} salted keys; at most {MAX_PLACEMENTS} (lower --max-range, raise --threshold or name the keys with --key)",
            a.max_range
        )));
    }
    Ok((keys, total, threshold, salt))
}

/// `join_note`: whether it is unknown if the topic is joined (no topology).
fn counts(
    a: &Args,
    path: &std::path::Path,
    n: PartitionCount,
    p: Partitioner,
    join_note: bool,
) -> Result<ExitCode> {
    let (keys, total, threshold, salt) = select(a, path, n)?;
    let refs: Vec<(&[u8], u64)> = keys.iter().map(|(k, c)| (k.as_slice(), *c)).collect();
    let salted: Vec<(&[u8], u64)> = refs
        .iter()
        .zip(&salt)
        .filter(|(_, s)| **s)
        .map(|(k, _)| *k)
        .collect();
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
        join_note,
    };
    let mut out = std::io::stdout().lock();
    match a.format.format {
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
    join_note: bool,
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
                "spans": partitions_spanned(p, k, plan.separator, plan.used, n),
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
        "separator": separator_json(plan),
        "trade_off": TRADE_OFF,
    });
    if !salted.is_empty() && m.join_note {
        v["note"] = json!(JOIN_NOTE);
    }
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
    crate::output::write_doc(out, a.format.format, &v)
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
                "salt {} over S = {s} ({}): {what} {:.2} x mean -> {:.2} x mean (target {})",
                names.join(", "),
                sub_key_range(if names.len() == 1 { names[0].as_str() } else { "KEY" }, plan.separator, s),
                plan.before_max_over_mean, plan.after_max_over_mean, a.target_ratio
            )?,
            None => writeln!(
                out,
                "no salt range up to {} brings the {what} under {} x mean; the best is S = {} at {:.2} x mean (before {:.2} x): the other keys, or more consumers than partitions, may keep it uneven",
                a.max_range, a.target_ratio, plan.used, plan.after_max_over_mean, plan.before_max_over_mean
            )?,
        }
        for (k, c) in salted.iter() {
            let spans: Vec<String> = partitions_spanned(p, k, plan.separator, plan.used, n)
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
    if let Some(why) = separator_note(plan) {
        writeln!(out, "{why}")?;
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
        if m.join_note {
            writeln!(out, "note: {JOIN_NOTE}")?;
        }
    }
    Ok(())
}

/// `KEY_1 .. KEY_S` with the plan's separator (`KEY_1` for one salt).
fn sub_key_range(k: &str, sep: u8, s: u32) -> String {
    let sep = char::from(sep);
    if s == 1 {
        format!("{k}{sep}1")
    } else {
        format!("{k}{sep}1 .. {k}{sep}{s}")
    }
}

/// The separator in JSON, with the measured keys that ruled out `_`.
fn separator_json(plan: &CountsPlan) -> Value {
    json!({
        "separator": char::from(plan.separator).to_string(),
        "existing_sub_keys": plan.lookalikes.iter().map(|k| key_json(k)).collect::<Vec<_>>(),
    })
}

/// Why the sub-keys do not take `_`, when they do not.
fn separator_note(plan: &CountsPlan) -> Option<String> {
    if plan.lookalikes.is_empty() {
        return None;
    }
    let named: Vec<String> = plan
        .lookalikes
        .iter()
        .take(5)
        .map(|k| key_cell(k))
        .collect();
    Some(format!(
        "note: the measured keys already hold {}{}, shaped like sub-keys with '_': the sub-keys take '{}' so that none is a real key and a reader that strips the suffix folds no real key into the hot one",
        named.join(", "),
        if plan.lookalikes.len() > 5 { format!(" and {} more", plan.lookalikes.len() - 5) } else { String::new() },
        char::from(plan.separator)
    ))
}

// ---- a key of a co-partition group (--topology)

/// Sub-keys listed per salted key in the table (JSON lists every one).
const SUB_KEY_ROWS: usize = 12;

fn joined(a: &Args, file: &std::path::Path, topic: &str) -> Result<ExitCode> {
    let topology = crate::load::load_topology(file)?;
    let Some(t) = topology.topic(topic) else {
        let known: Vec<&str> = topology.topics.iter().map(|t| t.name.as_str()).collect();
        return Err(CliError::msg(format!(
            "--topic '{topic}' is not a [[topic]] of {} (its topics: {})",
            file.display(),
            known.join(", ")
        )));
    };
    let n = t.partitions;
    crate::limits::counted_partitions("the topic's partitions", n.get())?;
    if let Some(m) = a.consumers {
        crate::limits::members("--consumers", u64::from(m))?;
    }
    let loads = u64::from(n.get()) * u64::from(a.max_range);
    if loads > MAX_LOADS || a.max_range == 0 || a.max_range > MAX_RANGE {
        return Err(CliError::msg(format!(
            "--max-range {}: between 1 and {MAX_RANGE}, and at most {MAX_LOADS} partition loads with {n} partitions",
            a.max_range
        )));
    }
    let path = a
        .input
        .input
        .as_deref()
        .expect("clap requires -i with --topology");
    let (keys, total, threshold, salt) = select(a, path, n)?;
    let refs: Vec<(&[u8], u64)> = keys.iter().map(|(k, c)| (k.as_slice(), *c)).collect();
    let consumers = match a.consumers {
        None => None,
        Some(m) => {
            let owned = consumer_partitions(a.assignor, n, m)
                .map_err(|e| CliError::context(format!("--assignor {}", a.assignor.spec()), e))?;
            Some((a.assignor, owned))
        }
    };
    let groups: Vec<Vec<u32>> = consumers.as_ref().map_or_else(Vec::new, |(_, o)| {
        o.iter().map(|(_, ps)| ps.clone()).collect()
    });
    let plan = recommend_group(
        &topology,
        topic,
        &refs,
        &salt,
        &groups,
        a.target_ratio,
        a.max_range,
    )
    .map_err(|e| CliError::context(file.display().to_string(), e))?;
    let Some(plan) = plan else {
        // Joined to nothing: salting it alone moves no join.
        let p = t
            .producers
            .iter()
            .find_map(|p| p.keyed_partitioner())
            .ok_or_else(|| {
                CliError::msg(format!(
                    "{}: topic '{topic}' has no producer that places records by key, so no key of it has a partition to salt",
                    file.display()
                ))
            })?;
        say!(
            "partwise: {topic} is in no co-partition group of {}: salting it moves no join (its keys placed by {})",
            file.display(),
            p.spec()
        );
        return counts(a, path, n, p, false);
    };
    let salted: Vec<(&[u8], u64)> = refs
        .iter()
        .zip(&salt)
        .filter(|(_, s)| **s)
        .map(|(k, _)| *k)
        .collect();
    let j = Joined {
        a,
        file,
        topic,
        total,
        threshold,
        keys: keys.len(),
        salted: &salted,
        consumers: &consumers,
        plan: &plan,
    };
    let mut out = std::io::stdout().lock();
    match a.format.format {
        Format::Json | Format::Ndjson => joined_json(&mut out, &j)?,
        Format::Table => joined_table(&mut out, &j)?,
    }
    Ok(if plan.feasible() && plan.plan.range.is_some() {
        ExitCode::Ok
    } else {
        ExitCode::Findings
    })
}

/// A group's salting plan, for the renderers.
struct Joined<'a> {
    a: &'a Args,
    file: &'a std::path::Path,
    topic: &'a str,
    total: u64,
    threshold: f64,
    keys: usize,
    salted: &'a [(&'a [u8], u64)],
    consumers: &'a Option<Consumers>,
    plan: &'a GroupSaltPlan,
}

impl Joined<'_> {
    /// The busiest partition's (or consumer's) share of the records.
    fn busiest(&self, loads: &[f64]) -> f64 {
        match self.consumers {
            Some((_, owned)) => carried(owned, loads).into_iter().fold(0.0, f64::max),
            None => loads.iter().cloned().fold(0.0, f64::max),
        }
    }

    /// `KEY_1 .. KEY_S`, for one key or for each.
    fn sub_keys(&self) -> String {
        let (s, sep) = (self.plan.plan.used, self.plan.plan.separator);
        let range = |k: &str| sub_key_range(k, sep, s);
        match self.salted {
            [(k, _)] => range(&key_cell(k)),
            _ => format!("{} for each of them", range("KEY")),
        }
    }

    fn names(&self) -> String {
        let v: Vec<String> = self.salted.iter().map(|(k, _)| key_cell(k)).collect();
        v.join(", ")
    }

    /// What one producer must change to salt the key, keeping its partitioner.
    fn change(&self, p: &GroupProducer) -> String {
        match p.partitioner {
            Some(pt) => format!(
                "write {} as {}, one sub-key per record, and keep {} (key format {})",
                self.names(),
                self.sub_keys(),
                pt.setting(),
                p.key_format
            ),
            None => "places no record by its key: it cannot carry the sub-keys".to_string(),
        }
    }

    /// The join's cost for one key: the units its state is spread over.
    fn cost(&self, key: &[u8], parts: &[u32]) -> String {
        let list: Vec<String> = parts.iter().map(u32::to_string).collect();
        let k = key_cell(key);
        let sep = char::from(self.plan.plan.separator);
        let owners = match self.consumers {
            Some((assignor, owned)) => {
                let mut members: Vec<&str> = owned
                    .iter()
                    .filter(|(_, ps)| ps.iter().any(|q| parts.contains(q)))
                    .map(|(m, _)| m.as_str())
                    .collect();
                members.dedup();
                format!(
                    ", which {} gives to {} of the {} members ({})",
                    assignor.spec(),
                    members.len(),
                    owned.len(),
                    members.join(", ")
                )
            }
            None => ", which the assignor may give to different members".to_string(),
        };
        format!(
            "{k}'s join state is spread over {} unit{} (partition{} {} in every topic of the group): a record of {k}{sep}2 meets only records of {k}{sep}2, so a record that must meet all of {k}'s (an alert on {k}) is written once per sub-key, or the joiner merges {k}'s state across those units{owners}",
            parts.len(),
            if parts.len() == 1 { "" } else { "s" },
            if parts.len() == 1 { "" } else { "s" },
            list.join(", ")
        )
    }
}

fn joined_json(out: &mut impl Write, j: &Joined<'_>) -> Result<()> {
    let (a, plan) = (j.a, j.plan);
    let cp = &plan.plan;
    let topics: Vec<Value> = plan
        .topics
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "partitions": t.partitions.get(),
                "producers": t.producers.iter().map(|p| json!({
                    "name": p.name,
                    "partitioner": p.partitioner.map(|x| x.spec()),
                    "setting": p.partitioner.map(|x| x.setting()),
                    "key_format": p.key_format.to_string(),
                    "change": j.change(p),
                    "isolate_with": p.partitioner.map(|x| custom_partitioner_setting(x.client())),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let sub_keys: Vec<Value> = plan
        .placements
        .iter()
        .flat_map(|(key, subs)| {
            subs.iter().map(move |s| {
                let parts: serde_json::Map<String, Value> = plan
                    .topics
                    .iter()
                    .zip(&s.partitions)
                    .map(|(t, q)| (t.name.clone(), json!(q)))
                    .collect();
                json!({"key": key_json(key), "sub_key": key_json(&s.sub_key), "partitions": parts})
            })
        })
        .collect();
    let salted: Vec<Value> = j
        .salted
        .iter()
        .zip(&plan.spans)
        .map(|((k, c), (_, span))| {
            json!({
                "key": key_json(k),
                "count": c,
                "share": *c as f64 / j.total as f64,
                "spans": span,
                "join_units": span.len(),
                "join_cost": j.cost(k, span),
            })
        })
        .collect();
    let isolation = match &plan.isolation {
        Ok(iso) => json!({
            "spec": iso.spec,
            "reserved": iso.reserved.iter().map(|(k, q)| json!({"key": key_json(k), "partition": q})).collect::<Vec<_>>(),
            "loads": iso.loads,
            "busiest": j.busiest(&iso.loads),
            "max_over_mean": iso.max_over_mean,
            "moved": iso.moved,
        }),
        Err(why) => json!({"unavailable": why}),
    };
    let v = json!({
        "topology": j.file.display().to_string(),
        "topic": j.topic,
        "groups": plan.groups,
        "partitions": plan.topics[0].partitions.get(),
        "keys": j.keys,
        "total": j.total,
        "threshold": if a.keys.is_empty() { Some(j.threshold) } else { None },
        "salted": salted,
        "feasible": plan.feasible(),
        "refusals": plan.refusals.iter().map(|r| json!({"kind": r.kind, "message": r.message, "fix": r.fix})).collect::<Vec<_>>(),
        "separator": separator_json(cp),
        "already_split": plan.already_split.iter().map(|k| key_json(k)).collect::<Vec<_>>(),
        "topics": topics,
        "sub_keys": sub_keys,
        "target_ratio": a.target_ratio,
        "target_on": if j.consumers.is_some() { "consumers" } else { "partitions" },
        "range": cp.range,
        "range_used": cp.used,
        "target_reached": cp.range.is_some(),
        "before": cp.before,
        "after": cp.after,
        "busiest_before": j.busiest(&cp.before),
        "busiest_after": j.busiest(&cp.after),
        "before_max_over_mean": cp.before_max_over_mean,
        "after_max_over_mean": cp.after_max_over_mean,
        "isolation": isolation,
        "trade_off": TRADE_OFF,
    });
    crate::output::write_doc(out, a.format.format, &v)
}

fn joined_table(out: &mut impl Write, j: &Joined<'_>) -> Result<()> {
    let plan = j.plan;
    let cp = &plan.plan;
    let what = if j.consumers.is_some() {
        "busiest consumer"
    } else {
        "busiest partition"
    };
    if j.salted.is_empty() {
        writeln!(
            out,
            "no key is above {:.1}% of {}'s traffic: nothing to salt ({what} {:.2} x mean)",
            j.threshold * 100.0,
            visible(j.topic),
            cp.before_max_over_mean
        )?;
        return Ok(());
    }
    let partners: Vec<String> = plan.topics[1..]
        .iter()
        .map(|t| visible(&t.name).into_owned())
        .collect();
    writeln!(
        out,
        "{} of {} is joined with {} (co-partition group {}): salting it salts every topic of the group with the same sub-keys, {}",
        j.names(),
        visible(j.topic),
        partners.join(", "),
        visible(&plan.groups.join(", ")),
        j.sub_keys()
    )?;
    if let Some(why) = separator_note(cp) {
        writeln!(out, "{why}")?;
    }
    if plan.feasible() {
        match cp.range {
            Some(s) => writeln!(
                out,
                "salt over S = {s}: {what} {:.2} x mean -> {:.2} x mean (target {})",
                cp.before_max_over_mean, cp.after_max_over_mean, j.a.target_ratio
            )?,
            None => writeln!(
                out,
                "no salt range up to {} brings the {what} under {} x mean; the best is S = {} at {:.2} x mean (before {:.2} x)",
                j.a.max_range, j.a.target_ratio, cp.used, cp.after_max_over_mean, cp.before_max_over_mean
            )?,
        }
        writeln!(out, "\nchange, in every topic of the group:")?;
        for t in &plan.topics {
            writeln!(out, "  {} ({} partitions):", visible(&t.name), t.partitions)?;
            for p in &t.producers {
                writeln!(
                    out,
                    "    {}: {}",
                    visible(&p.label()),
                    visible(&j.change(p))
                )?;
            }
        }
        writeln!(
            out,
            "\nthe join holds: each sub-key lands on one partition number in every topic"
        )?;
        let mut head = vec!["SUB-KEY".to_string()];
        head.extend(plan.topics.iter().map(|t| t.name.clone()));
        let mut tab = Table::new(head);
        let rows: usize = plan.placements.iter().map(|(_, s)| s.len()).sum();
        for (_, subs) in &plan.placements {
            for s in subs.iter().take(SUB_KEY_ROWS) {
                let mut row = vec![key_cell(&s.sub_key)];
                row.extend(
                    s.partitions
                        .iter()
                        .map(|q| q.map_or_else(|| "-".to_string(), |q| q.to_string())),
                );
                tab.row(row);
            }
        }
        tab.write(&mut *out)?;
        let shown: usize = plan
            .placements
            .iter()
            .map(|(_, s)| s.len().min(SUB_KEY_ROWS))
            .sum();
        if shown < rows {
            writeln!(
                out,
                "({} more sub-keys, each on one number in every topic: --format json lists them all)",
                rows - shown
            )?;
        }
        writeln!(out)?;
        for ((k, _), (_, span)) in j.salted.iter().zip(&plan.spans) {
            writeln!(out, "cost to the consumers: {}", j.cost(k, span))?;
        }
    } else {
        writeln!(
            out,
            "refused: the sub-keys cannot land together in every topic of the group, so salting would break {}'s join:",
            j.names()
        )?;
        for r in &plan.refusals {
            writeln!(out, "  - {} ({})", visible(&r.message), r.kind)?;
            writeln!(out, "    fix: {}", visible(&r.fix))?;
        }
    }
    if cp.before.iter().all(|&x| x == 0.0) {
        writeln!(
            out,
            "\nthe counts give no partition loads: no producer of {} can place these keys (it writes no keys, or they do not fit its key format)",
            visible(j.topic)
        )?;
        return Ok(());
    }
    writeln!(
        out,
        "\nfrom the counts of {} ({} records), the {what}'s share:",
        visible(j.topic),
        j.total
    )?;
    let mut tab = Table::new(["OPTION", "BUSIEST", "MAX/MEAN", "KEEPS THE JOIN", "MOVES"]);
    tab.row([
        "as now".to_string(),
        format!("{:.1}%", j.busiest(&cp.before) * 100.0),
        format!("{:.2}", cp.before_max_over_mean),
        if !plan.already_split.is_empty() {
            "no (already split)".to_string()
        } else if plan.feasible() {
            "yes".to_string()
        } else {
            "unknown (refused)".to_string()
        },
        "nothing".to_string(),
    ]);
    tab.row([
        format!("salt over S = {} in every topic", cp.used),
        format!("{:.1}%", j.busiest(&cp.after) * 100.0),
        format!("{:.2}", cp.after_max_over_mean),
        if plan.feasible() {
            "per sub-key".to_string()
        } else {
            "no (refused)".to_string()
        },
        format!("{} only", j.names()),
    ]);
    if let Ok(iso) = &plan.isolation {
        let reserved: Vec<String> = iso
            .reserved
            .iter()
            .map(|(k, q)| format!("{} on partition {q}", key_cell(k)))
            .collect();
        tab.row([
            format!("isolate {} in every topic", reserved.join(", ")),
            format!("{:.1}%", j.busiest(&iso.loads) * 100.0),
            format!("{:.2}", iso.max_over_mean),
            "yes, whole".to_string(),
            format!("{:.1}% of records", iso.moved * 100.0),
        ]);
    }
    tab.write(&mut *out)?;
    match &plan.isolation {
        Ok(iso) => {
            let reserved: Vec<String> = iso
                .reserved
                .iter()
                .map(|(k, q)| format!("{} to partition {q}", key_cell(k)))
                .collect();
            let rest = plan.topics[0].partitions.get() as usize - {
                let mut r: Vec<u32> = iso.reserved.iter().map(|(_, q)| *q).collect();
                r.sort_unstable();
                r.dedup();
                r.len()
            };
            writeln!(
                out,
                "\nthe alternative that keeps the join whole: every producer of the group sends {} and hashes every other key with murmur2 (sign bit masked) over the other {rest} partitions (partwise's spec {}):",
                reserved.join(", "),
                visible(&iso.spec)
            )?;
            for t in &plan.topics {
                for p in &t.producers {
                    if let Some(pt) = p.partitioner {
                        writeln!(
                            out,
                            "  {} of {}: {}",
                            visible(&p.label()),
                            visible(&t.name),
                            custom_partitioner_setting(pt.client())
                        )?;
                    }
                }
            }
            writeln!(
                out,
                "  it moves {:.1}% of the records to another partition (switch every producer of the group at once, after draining, as for a resize), and the key's partition still carries its own share",
                iso.moved * 100.0
            )?;
        }
        Err(why) => writeln!(
            out,
            "\nisolating the key on its own partition is not offered: {}",
            visible(why)
        )?,
    }
    if plan.feasible() {
        writeln!(out, "trade-off: {TRADE_OFF}")?;
    }
    Ok(())
}
