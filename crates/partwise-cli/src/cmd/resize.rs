//! `partwise resize`: which keys move when a topic's partition count changes,
//! which topics must change with it, and (`--suggest`) counts to move to.

use super::check::load_topology;
use super::key_source;
use super::parse;
use crate::exit::{CliError, ExitCode, Result};
use crate::output::{hex, key_cell, key_json, Format, Table};
use partwise::resize::{self, expected_moved_fraction, key_move, Fraction, KeyMove};
use partwise::topology::Topology;
use partwise::{KeyFormat, PartitionCount, Partitioner};
use serde_json::{json, Value};
use std::ffi::OsString;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

/// Why the answer is about new records only.
const NOTE: &str = "existing records stay where they are: Kafka never moves them, so after \
the resize the old records of a moved key stay on its old partition while new ones go to \
the new partition; per-key order across the change, and co-partitioning with every topic \
not resized the same way, break for the moved keys";

#[derive(clap::Args)]
pub struct Args {
    /// Keys to analyse (see --key-format)
    #[arg(value_name = "KEY", allow_negative_numbers = true)]
    keys: Vec<OsString>,
    /// Current partition count (default: the topic's, with --topology)
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = parse::partitions)]
    from: Option<PartitionCount>,
    /// New partition count
    #[arg(
        long,
        value_name = "M",
        allow_negative_numbers = true,
        required_unless_present = "suggest",
        value_parser = parse::partitions
    )]
    to: Option<PartitionCount>,
    /// Partitioner spec (default: the topic's first keyed producer, else java)
    #[arg(short = 'P', long = "partitioner", value_name = "SPEC", value_parser = parse::partitioner)]
    partitioner: Option<Partitioner>,
    /// Read keys from FILE, one per line ('-' reads stdin)
    #[arg(short = 'i', long = "input", value_name = "FILE")]
    input: Option<PathBuf>,
    /// The keys with their traffic: KEY,COUNT lines (the count after the last
    /// comma); figures are then records moved and loads, not only keys
    #[arg(long, value_name = "FILE", conflicts_with_all = ["keys", "input"])]
    counts: Option<PathBuf>,
    /// Assignor of the consumers whose busiest member --suggest --counts weighs
    /// (default: the topology's group reading --topic, else java:range)
    #[arg(long, value_name = "SPEC", requires = "counts", value_parser = parse::assignor)]
    assignor: Option<partwise::assign::Assignor>,
    /// How text becomes key bytes (default: the topic's producer's format, else utf8)
    #[arg(long = "key-format", value_name = "F", value_parser = parse::key_format)]
    key_format: Option<KeyFormat>,
    /// Topology file, to find the topics that must be resized together
    #[arg(long, value_name = "FILE", requires = "topic")]
    topology: Option<PathBuf>,
    /// The topic being resized (with --topology)
    #[arg(long, value_name = "NAME", requires = "topology")]
    topic: Option<String>,
    /// Suggest partition counts near --target that keep consumer counts dividing evenly
    #[arg(long, requires = "target", conflicts_with_all = ["to", "keys", "input"])]
    suggest: bool,
    /// The partition count you have in mind (with --suggest)
    #[arg(
        long,
        value_name = "N",
        allow_negative_numbers = true,
        requires = "suggest",
        value_parser = parse::partitions
    )]
    target: Option<PartitionCount>,
    /// Consumer counts that must divide the partition count (with --suggest; repeatable or comma-separated)
    #[arg(
        long,
        value_name = "K",
        value_delimiter = ',',
        requires = "suggest",
        allow_negative_numbers = true,
        value_parser = parse::consumer_count
    )]
    consumers: Vec<PartitionCount>,
    /// Number of suggestions
    #[arg(long, value_name = "N", default_value_t = 5, requires = "suggest")]
    limit: usize,
    /// Output format
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
}

/// The topic of `--topology/--topic`, with its file's groups.
struct Context {
    topology: Topology,
    topic: String,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let ctx = match (&a.topology, &a.topic) {
        (Some(file), Some(topic)) => {
            let topology = load_topology(file)?;
            if topology.topic(topic).is_none() {
                return Err(CliError::msg(format!(
                    "--topic: no topic '{topic}' in {}",
                    file.display()
                )));
            }
            Some(Context {
                topology,
                topic: topic.clone(),
            })
        }
        _ => None,
    };
    let topic = ctx.as_ref().and_then(|c| c.topology.topic(&c.topic));
    // The topic's first keyed producer supplies the defaults for -P and --key-format.
    let producer = topic.and_then(resize::producer_defaults);
    let partitioner: Partitioner = match (&a.partitioner, producer) {
        (Some(p), _) => *p,
        (None, Some((k, _))) => k,
        (None, None) => "java".parse()?,
    };
    let from = match (&a.from, topic) {
        (Some(s), Some(t)) => {
            let n = *s;
            if n != t.partitions {
                return Err(CliError::msg(format!(
                    "--from {n}: the topology says topic '{}' has {} partitions",
                    t.name, t.partitions
                )));
            }
            Some(n)
        }
        (Some(s), None) => Some(*s),
        (None, Some(t)) => Some(t.partitions),
        (None, None) => None,
    };

    if a.suggest {
        return suggest(&a, partitioner, from);
    }
    let from =
        from.ok_or_else(|| CliError::msg("--from: required (or give --topology and --topic)"))?;
    let to =
        a.to.ok_or_else(|| CliError::msg("--to: required (or give --suggest)"))?;

    let key_format = match (&a.key_format, producer) {
        (Some(f), _) => *f,
        (None, Some((_, f))) => f,
        (None, None) => KeyFormat::Utf8,
    };
    let weights = a.counts.as_deref().map(super::Weights::read).transpose()?;
    let source = key_source(a.keys, a.input, key_format);
    if !source.is_empty() || weights.is_some() {
        // Without a key's partition there is no move to count: every key
        // would be reported moved.
        super::parse::keyed(partitioner).map_err(|e| {
            CliError::msg(format!("-P/--partitioner '{}': {e}", partitioner.spec()))
        })?;
    }
    // Every key with its weight (1 without --counts): the moved ones are
    // listed, and all of them judge the plan's fixes.
    let mut keys: Vec<(Vec<u8>, Vec<u8>, u64)> = Vec::new();
    let total = match &weights {
        Some(w) => {
            for ((input, c), (bytes, _)) in w.keys.iter().zip(w.encoded(key_format)?) {
                keys.push((input.clone(), bytes, *c));
            }
            keys.len() as u64
        }
        None => {
            let held = crate::input::Held::new("every key given", "");
            source.for_each_held(held, |b| {
                for (input, key) in b.inputs.iter().zip(b.keys) {
                    keys.push((input.to_vec(), key.to_vec(), 1));
                }
                Ok(())
            })?
        }
    };
    let mut moved = Vec::new();
    for (input, key, c) in &keys {
        let m = key_move(partitioner, Some(key), from, to);
        if m.moved() {
            moved.push((input.clone(), key.clone(), m, *c));
        }
    }
    let together = ctx
        .as_ref()
        .map_or_else(Vec::new, |c| resize::change_together(&c.topology, &c.topic));
    let measured: Vec<(&[u8], u64)> = keys.iter().map(|(_, k, c)| (k.as_slice(), *c)).collect();
    let plan = resize::plan_measured(
        partitioner,
        from,
        to,
        together,
        (!measured.is_empty()).then_some(&measured[..]),
    );
    let r = Outcome {
        partitioner,
        format: source.format,
        from,
        to,
        topic: ctx.map(|c| c.topic),
        total,
        weighted: weights.is_some(),
        moved,
        plan,
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    match a.format {
        Format::Json | Format::Ndjson => write_json(&mut out, a.format, &r)?,
        Format::Table => write_table(&mut out, &r)?,
    }
    out.flush()?;
    Ok(ExitCode::Ok)
}

/// A resize analysed: the keys that move and the plan.
struct Outcome {
    partitioner: Partitioner,
    format: KeyFormat,
    from: PartitionCount,
    to: PartitionCount,
    topic: Option<String>,
    total: u64,
    /// Whether the keys came with their counts (`--counts`).
    weighted: bool,
    /// Each moved key as given and as bytes, with its move and its count
    /// (1 without `--counts`).
    moved: Vec<(Vec<u8>, Vec<u8>, KeyMove, u64)>,
    plan: resize::Plan,
}

impl Outcome {
    /// What moves of the keys' records, with `--counts`.
    fn records(&self) -> Option<resize::Moved> {
        self.plan.measured.filter(|_| self.weighted)
    }

    /// A key as the user knows it: the logical key for a serializer
    /// format, else its bytes.
    fn shown(&self, input: &[u8], key: &[u8]) -> Vec<u8> {
        if self.format.is_serializer() {
            input.to_vec()
        } else {
            key.to_vec()
        }
    }
}

fn write_json(out: &mut impl Write, format: Format, r: &Outcome) -> Result<()> {
    let (partitioner, from, to, total, moved) = (r.partitioner, r.from, r.to, r.total, &r.moved);
    let (expected, plan) = (r.plan.expected, &r.plan);
    let moved_rows: Vec<Value> = moved
        .iter()
        .map(|(input, key, m, c)| {
            json!({
                "key": key_json(&r.shown(input, key)),
                "key_hex": hex(key),
                "from": m.from.partition(),
                "to": m.to.partition(),
                "count": r.weighted.then_some(*c),
            })
        })
        .collect();
    let v = json!({
        "partitioner": partitioner.spec(),
        "key_format": r.format.to_string(),
        "from": from.get(),
        "to": to.get(),
        "topic": r.topic,
        "keys": total,
        "moved_count": moved.len(),
        "moved_fraction": if total == 0 { Value::Null } else { (moved.len() as f64 / total as f64).into() },
        "records": r.records().map(|m| m.records),
        "records_moved": r.records().map(|m| m.records_moved),
        "records_moved_share": r.records().and_then(|m| m.records_share()),
        "multiple_no_better": plan.multiple_no_better.map(|(n, m)| json!({
            "partitions": n,
            "keys_moved": m.keys_moved,
            "records_moved": r.weighted.then_some(m.records_moved),
            "records_moved_share": if r.weighted { m.records_share() } else { None },
        })),
        "expected_moved_fraction": expected.map(Fraction::value),
        "expected_moved_exact": expected.map(|f| format!("{}/{}", f.moved, f.period)),
        "moved": moved_rows,
        "change_together": plan.together.iter().map(|g| json!({
            "group": g.group,
            "topics": g.topics.iter().map(|(t, n)| json!({"topic": t, "partitions": n})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "note": NOTE,
        "fix": plan.fixes.iter().map(ToString::to_string).collect::<Vec<_>>(),
    });
    crate::output::write_doc(out, format, &v)
}

fn write_table(out: &mut impl Write, r: &Outcome) -> Result<()> {
    let (partitioner, from, to, total, moved) = (r.partitioner, r.from, r.to, r.total, &r.moved);
    let (expected, plan) = (r.plan.expected, &r.plan);
    writeln!(out, "{partitioner}: {from} -> {to} partitions")?;
    match expected {
        Some(f) => writeln!(
            out,
            "expected moved fraction (uniformly hashed keys): {}/{} = {:.4}",
            f.moved,
            f.period,
            f.value()
        )?,
        None => writeln!(out, "expected moved fraction: none ({partitioner} ignores keys, so no key has a fixed partition)")?,
    }
    if total > 0 {
        writeln!(
            out,
            "keys moved: {} of {} ({:.4})",
            moved.len(),
            total,
            moved.len() as f64 / total as f64
        )?;
        if let Some(m) = r.records() {
            writeln!(
                out,
                "records moved: {} of {} ({:.4}), by the counts of {}",
                m.records_moved,
                m.records,
                m.records_share().unwrap_or(0.0),
                if m.keys == 1 { "the key" } else { "the keys" }
            )?;
        }
        if !moved.is_empty() {
            let mut t = Table::new(if r.weighted {
                vec!["KEY", "FROM", "TO", "COUNT"]
            } else {
                vec!["KEY", "FROM", "TO"]
            });
            let cell = |p: partwise::Placement| {
                p.partition()
                    .map_or_else(|| p.behaviour().to_string(), |n| n.to_string())
            };
            for (input, key, m, c) in moved {
                let mut row = vec![key_cell(&r.shown(input, key)), cell(m.from), cell(m.to)];
                if r.weighted {
                    row.push(c.to_string());
                }
                t.row(row);
            }
            t.write(&mut *out)?;
        }
    }
    for resize::Together { group: g, topics } in &plan.together {
        let list: Vec<String> = topics
            .iter()
            .map(|(t, n)| format!("{t} ({n} partitions)"))
            .collect();
        writeln!(
            out,
            "must change together (co-partition group {g}): {}",
            list.join(", ")
        )?;
    }
    if let (Some((n, m)), Some(asked)) = (plan.multiple_no_better, plan.measured) {
        let what = if r.weighted {
            format!(
                "{} of the {} keys ({:.1}% of their records), against {} ({:.1}%) at {}",
                m.keys_moved,
                m.keys,
                m.records_share().unwrap_or(0.0) * 100.0,
                asked.keys_moved,
                asked.records_share().unwrap_or(0.0) * 100.0,
                to
            )
        } else {
            format!(
                "{} of the {} keys, against {} at {}",
                m.keys_moved, m.keys, asked.keys_moved, to
            )
        };
        writeln!(
            out,
            "not offered: {n} partitions (a multiple of {from}) moves fewer uniformly hashed keys, but of these keys it would move {what}"
        )?;
    }
    writeln!(out, "note: {NOTE}")?;
    for f in &plan.fixes {
        writeln!(out, "fix: {f}")?;
    }
    Ok(())
}

fn suggest(a: &Args, partitioner: Partitioner, from: Option<PartitionCount>) -> Result<ExitCode> {
    let target = a
        .target
        .ok_or_else(|| CliError::msg("--target: required with --suggest"))?;
    let consumers = a.consumers.clone();
    let list = resize::suggest(target, &consumers, a.limit.max(1))
        .map_err(|e| CliError::context("--target", e))?;
    let expected = |n: u32| -> Option<Fraction> {
        let from = from?;
        expected_moved_fraction(partitioner, from, PartitionCount::new(n).ok()?)
    };
    // The target itself is only offered when every consumer count divides
    // it; say so rather than drop it silently.
    let not_dividing = resize::not_dividing(target, &consumers);
    let left_out = !list.iter().any(|x| x.partitions == target.get()) && !not_dividing.is_empty();
    let current = |n: u32| from.is_some_and(|f| f.get() == n);
    let mut out = BufWriter::new(std::io::stdout().lock());
    match a.format {
        Format::Json | Format::Ndjson => {
            let rows: Vec<Value> = list
                .iter()
                .map(|s| {
                    json!({
                        "partitions": s.partitions,
                        "current": current(s.partitions),
                        "divisors": s.divisors,
                        "highly_composite": s.highly_composite,
                        "expected_moved_fraction": expected(s.partitions).map(Fraction::value),
                    })
                })
                .collect();
            let v = json!({
                "target": target.get(),
                "consumers": consumers.iter().map(|c| c.get()).collect::<Vec<_>>(),
                "from": from.map(PartitionCount::get),
                "suggestions": rows,
                "target_left_out": left_out.then(|| json!({
                    "partitions": target.get(),
                    "not_divided_by": not_dividing,
                })),
            });
            crate::output::write_doc(&mut out, a.format, &v)?;
        }
        Format::Table => {
            let mut header = vec!["PARTITIONS", "HIGHLY COMPOSITE"];
            if from.is_some() {
                header.push("MOVED FROM CURRENT");
            }
            header.push("CONSUMER COUNTS THAT DIVIDE EVENLY");
            let mut t = Table::new(header);
            for s in &list {
                let mut row = vec![
                    if current(s.partitions) {
                        format!("{} (current)", s.partitions)
                    } else {
                        s.partitions.to_string()
                    },
                    if s.highly_composite { "yes" } else { "" }.to_string(),
                ];
                if from.is_some() {
                    row.push(
                        expected(s.partitions)
                            .map_or_else(|| "-".into(), |f| format!("{:.4}", f.value())),
                    );
                }
                row.push(
                    s.divisors
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(" "),
                );
                t.row(row);
            }
            t.write(&mut out)?;
            if left_out {
                let by: Vec<String> = not_dividing.iter().map(u32::to_string).collect();
                writeln!(
                    out,
                    "not suggested: {}, the target, because {} consumers would not get equal shares of it ({} does not divide it)",
                    target.get(),
                    by.join(" or "),
                    by.join(", ")
                )?;
            }
        }
    }
    out.flush()?;
    Ok(ExitCode::Ok)
}
