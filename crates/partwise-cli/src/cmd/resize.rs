//! `partwise resize`: which keys move when a topic's partition count changes,
//! which topics must change with it, and (`--suggest`) counts to move to.

use super::key_source;
use super::parse;
use crate::exit::{CliError, ExitCode, Result};
use crate::load::load_topology;
use crate::output::{key_cell, Format, Table, MAX_KEY_ROWS};
use partwise::assign::Assignor;
use partwise::group::placement;
use partwise::strategy::resize;
use partwise::strategy::resize::moved::{resize_report, ResizeReport};
use partwise::strategy::resize::ranked::{
    suggest_report, RankedBy, SuggestInput, SuggestReport, SuggestWeights,
};
use partwise::topology::Topology;
use partwise::{KeyFormat, PartitionCount, Partitioner};
use std::ffi::OsString;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(
    mut_arg("partitioner", |a| a.long_help(
        "Partitioner spec (default: the topic's first keyed producer, else java)"
    )),
    mut_arg("key_format", |a| a.long_help(
        "How text becomes key bytes (default: the topic's producer's format, else utf8)"
    ))
)]
pub struct Args {
    /// Keys to analyse (see --key-format)
    #[arg(value_name = "KEY", allow_negative_numbers = true)]
    keys: Vec<OsString>,
    /// Current partition count (default: the topic's, with --topology)
    #[arg(long = "from-count", alias = "from", value_name = "N", allow_negative_numbers = true, value_parser = parse::partitions)]
    from: Option<PartitionCount>,
    /// New partition count
    #[arg(
        long = "to-count",
        alias = "to",
        value_name = "M",
        allow_negative_numbers = true,
        required_unless_present = "suggest",
        value_parser = parse::partitions
    )]
    to: Option<PartitionCount>,
    #[command(flatten)]
    partitioner: super::flags::MaybePartitioner,
    #[command(flatten)]
    input: super::flags::InputFlag,
    /// The keys with their traffic: KEY,COUNT lines (the count after the last comma)
    ///
    /// Figures are then records moved and loads, not only keys
    #[arg(long, value_name = "FILE", conflicts_with_all = ["keys", "input"])]
    counts: Option<PathBuf>,
    #[arg(short = 'a', long = "assignor", value_name = "SPEC", requires = "counts", value_parser = parse::assignor,
          help = super::flags::ASSIGNOR,
          long_help = "The assignor of the consumers whose busiest member --suggest --counts weighs (default: the topology's group reading --topic, else java:range)")]
    assignor: Option<partwise::assign::Assignor>,
    #[command(flatten)]
    key_format: super::flags::MaybeKeyFormat,
    #[arg(
        help = super::flags::TOPOLOGY,
        long_help = "Topology file, to find the topics that must be resized together",
       long, value_name = "FILE", requires = "topic")]
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
    #[arg(
        long,
        value_name = "M",
        value_delimiter = ',',
        requires = "suggest",
        allow_negative_numbers = true,
        value_parser = parse::consumer_count,
        help = super::flags::CONSUMERS,
        long_help = "How many consumers the group has, with --suggest: the partition counts suggested divide evenly among them (repeatable or comma-separated, for a group that grows)"
    )]
    consumers: Vec<PartitionCount>,
    /// Number of suggestions
    #[arg(long, value_name = "N", default_value_t = 5, requires = "suggest")]
    limit: usize,
    #[command(flatten)]
    format: super::flags::FormatFlag,
}

/// The topic of `--topology/--topic`, with its file's groups.
struct Context {
    topology: Topology,
    topic: String,
}

pub fn run(a: Args) -> Result<ExitCode> {
    super::flags::note_deprecated("resize", "--from", "--from-count");
    super::flags::note_deprecated("resize", "--to", "--to-count");
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
    let partitioner: Partitioner = match (&a.partitioner.partitioner, producer) {
        (Some(p), _) => *p,
        (None, Some((k, _))) => k,
        (None, None) => "java".parse()?,
    };
    let from = match (&a.from, topic) {
        (Some(s), Some(t)) => {
            let n = *s;
            if n != t.partitions {
                return Err(CliError::msg(format!(
                    "--from-count {n}: the topology says topic '{}' has {} partitions",
                    t.name, t.partitions
                )));
            }
            Some(n)
        }
        (Some(s), None) => Some(*s),
        (None, Some(t)) => Some(t.partitions),
        (None, None) => None,
    };

    let key_format = match (&a.key_format.key_format, producer) {
        (Some(f), _) => *f,
        (None, Some((_, f))) => f,
        (None, None) => KeyFormat::Utf8,
    };
    if a.suggest {
        if a.target.is_none() {
            return Err(CliError::msg("--target: required with --suggest"));
        }
        let measured = match &a.counts {
            Some(path) => Some(weigh_suggestions(
                &a,
                path,
                partitioner,
                key_format,
                ctx.as_ref(),
            )?),
            None => None,
        };
        return suggest(&a, partitioner, from, measured);
    }
    if let Some(x) = a.assignor {
        return Err(CliError::msg(format!(
            "--assignor {}: it weighs the busiest consumer of --suggest's counts; a resize to one count moves records, not consumers",
            x.spec()
        )));
    }
    let from = from
        .ok_or_else(|| CliError::msg("--from-count: required (or give --topology and --topic)"))?;
    let to =
        a.to.ok_or_else(|| CliError::msg("--to-count: required (or give --suggest)"))?;

    let weights = a.counts.as_deref().map(super::Weights::read).transpose()?;
    let weighted = weights.is_some();
    let source = key_source(a.keys, a.input.input, key_format);
    if !source.is_empty() || weighted {
        // Without a key's partition there is no move to count: every key
        // would be reported moved.
        super::parse::keyed(partitioner).map_err(|e| {
            CliError::msg(format!("-P/--partitioner '{}': {e}", partitioner.spec()))
        })?;
    }
    // Every key with its weight (1 without --counts): the first moved ones
    // are listed, and all of them judge the plan's fixes.
    let mut keys: Vec<super::EncodedKey> = Vec::new();
    match weights {
        Some(w) => keys = w.into_encoded(key_format)?,
        None => {
            let held = crate::input::Held::new("every key given", "");
            source.for_each_held(held, |b| {
                for (input, key) in b.inputs.iter().zip(b.keys) {
                    keys.push((input.to_vec(), key.to_vec(), 1));
                }
                Ok(())
            })?;
        }
    }
    let together = ctx
        .as_ref()
        .map_or_else(Vec::new, |c| resize::change_together(&c.topology, &c.topic));
    let r = resize_report(
        partitioner,
        source.format,
        from,
        to,
        ctx.map(|c| c.topic),
        together,
        &keys,
        weighted,
        MAX_KEY_ROWS,
    );
    let mut out = BufWriter::new(std::io::stdout().lock());
    match a.format.format {
        Format::Json | Format::Ndjson => crate::output::write_doc(&mut out, a.format.format, &r)?,
        Format::Table => write_table(&mut out, &r)?,
    }
    out.flush()?;
    Ok(ExitCode::Ok)
}

fn write_table(out: &mut impl Write, r: &ResizeReport) -> Result<()> {
    let (partitioner, from, to, total) = (r.partitioner, r.from, r.to, r.keys);
    let moved_count = r.moved_count;
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
            moved_count,
            total,
            moved_count as f64 / total as f64
        )?;
        if let Some(m) = plan.measured.filter(|_| r.weighted) {
            writeln!(
                out,
                "records moved: {} of {} ({:.4}), by the counts of {}",
                m.records_moved,
                m.records,
                m.records_share().unwrap_or(0.0),
                if m.keys == 1 { "the key" } else { "the keys" }
            )?;
        }
        if moved_count > 0 {
            let mut t = Table::new(if r.weighted {
                vec!["KEY", "FROM", "TO", "COUNT"]
            } else {
                vec!["KEY", "FROM", "TO"]
            });
            let cell = |p: partwise::Placement| {
                p.partition()
                    .map_or_else(|| p.behaviour().to_string(), |n| n.to_string())
            };
            for k in &r.moved {
                let mut row = vec![key_cell(&k.key), cell(k.moved.from), cell(k.moved.to)];
                if let Some(c) = k.count {
                    row.push(c.to_string());
                }
                t.row(row);
            }
            t.write(&mut *out)?;
            if r.moved_omitted > 0 {
                writeln!(
                    out,
                    "{} more moved keys not listed (partwise route -P {} -p {from} -p {to} prints every key's partition under both counts)",
                    r.moved_omitted,
                    partitioner.spec()
                )?;
            }
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
    writeln!(out, "note: {}", r.note)?;
    for f in &plan.fixes {
        writeln!(out, "fix: {f}")?;
    }
    Ok(())
}

/// Group sizes weighed at most (a declared range `1..N` gives N).
const MAX_WEIGHED_GROUPS: usize = 64;

/// The measured keys of `--counts` for `--suggest`: the file's keys as
/// bytes with their records, and the group that reads the topic.
struct Measured {
    file: String,
    records: u64,
    keys: Vec<(Vec<u8>, u64)>,
    assignor: Assignor,
    groups: Vec<u32>,
}

fn weigh_suggestions(
    a: &Args,
    path: &std::path::Path,
    partitioner: Partitioner,
    key_format: KeyFormat,
    ctx: Option<&Context>,
) -> Result<Measured> {
    super::parse::keyed(partitioner)
        .map_err(|e| CliError::msg(format!("-P/--partitioner '{}': {e}", partitioner.spec())))?;
    let w = super::Weights::read(path)?;
    let keys = w.encoded(key_format)?;
    // The group that reads the topic, as the file declares it.
    let reader = ctx.and_then(|c| {
        c.topology
            .consumer_groups
            .iter()
            .find(|g| g.subscriptions.contains(&c.topic))
    });
    let assignor = match (a.assignor, reader) {
        (Some(x), _) => x,
        (None, Some(g)) => g
            .assignor
            .parse()
            .map_err(|e| CliError::context(format!("consumer group '{}': assignor", g.name), e))?,
        (None, None) => Assignor::JavaRange,
    };
    let mut groups: Vec<u32> = if a.consumers.is_empty() {
        reader.map_or_else(Vec::new, |g| placement::declared_counts(&g.members))
    } else {
        a.consumers.iter().map(|c| c.get()).collect()
    };
    groups.sort_unstable();
    groups.dedup();
    groups.truncate(MAX_WEIGHED_GROUPS);
    for &m in &groups {
        crate::limits::members("--consumers", u64::from(m))?;
    }
    Ok(Measured {
        file: w.name.clone(),
        records: w.total,
        keys,
        assignor,
        groups,
    })
}

fn suggest(
    a: &Args,
    partitioner: Partitioner,
    from: Option<PartitionCount>,
    measured: Option<Measured>,
) -> Result<ExitCode> {
    let target = a
        .target
        .ok_or_else(|| CliError::msg("--target: required with --suggest"))?;
    let refs = measured.as_ref().map(|m| super::weight_refs(&m.keys));
    let weights = measured
        .as_ref()
        .zip(refs.as_deref())
        .map(|(m, keys)| SuggestWeights {
            keys,
            records: m.records,
            assignor: m.assignor,
            groups: m.groups.clone(),
        });
    let input = SuggestInput {
        partitioner,
        target,
        consumers: &a.consumers,
        from,
        limit: a.limit,
        weights,
    };
    // The core names the quantity; the command names the flag or file.
    let r = suggest_report(&input).map_err(|e| match (&e, &measured) {
        (_, None) | (partwise::Error::PartitionCount { .. }, _) => CliError::context("--target", e),
        (partwise::Error::Invalid { what, .. }, Some(m)) if what == "counts" => {
            CliError::context(&m.file, e)
        }
        (_, Some(m)) => CliError::context(format!("--assignor {}", m.assignor.spec()), e),
    })?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    match a.format.format {
        Format::Json | Format::Ndjson => crate::output::write_doc(&mut out, a.format.format, &r)?,
        Format::Table => suggest_table(&mut out, &r)?,
    }
    out.flush()?;
    Ok(ExitCode::Ok)
}

fn suggest_table(out: &mut impl Write, r: &SuggestReport) -> Result<()> {
    let weighed = r.ranked_by != RankedBy::Divisors;
    let mut header = vec!["PARTITIONS", "HIGHLY COMPOSITE"];
    if r.from.is_some() {
        header.push("MOVED FROM CURRENT");
    }
    let busiest: Vec<String> = r.groups.iter().map(|m| format!("BUSIEST OF {m}")).collect();
    if weighed {
        if r.from.is_some() {
            header.extend(["KEYS MOVED", "RECORDS MOVED"]);
        }
        header.push("HOTTEST PARTITION");
        header.extend(busiest.iter().map(String::as_str));
    }
    header.push("CONSUMER COUNTS THAT DIVIDE EVENLY");
    let mut t = Table::new(header);
    let pct = |x: f64| format!("{:.1}%", x * 100.0);
    for s in &r.suggestions {
        let mut row = vec![
            if s.current {
                format!("{} (current)", s.partitions)
            } else {
                s.partitions.to_string()
            },
            if s.highly_composite { "yes" } else { "" }.to_string(),
        ];
        if r.from.is_some() {
            row.push(
                s.expected_moved_fraction
                    .map_or_else(|| "-".into(), |f| format!("{f:.4}")),
            );
        }
        if let (Some(moved), Some(keys)) = (s.keys_moved, s.keys) {
            row.push(format!("{moved} of {keys}"));
            row.push(pct(s.records_moved_share.unwrap_or(0.0)));
        }
        if let Some(h) = s.hottest_partition_share {
            row.push(pct(h));
        }
        for b in s.busiest_consumer.iter().flatten() {
            row.push(pct(b.share));
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
    t.write(&mut *out)?;
    if weighed {
        let by = if r.groups.is_empty() {
            "the hottest partition's share of the records".to_string()
        } else {
            let sizes: Vec<String> = r.groups.iter().map(u32::to_string).collect();
            format!(
                "what the busiest consumer carries against an even share ({} members, {}{})",
                sizes.join(" or "),
                r.assignor.map_or("", |a| a.spec()),
                if r.groups.len() > 1 {
                    "; the worst of the group sizes"
                } else {
                    ""
                }
            )
        };
        writeln!(
            out,
            "ranked by {by}, from the counts of {} keys ({} records), then by the records moved",
            r.weighted_keys.unwrap_or(0),
            r.records.unwrap_or(0)
        )?;
        if !r.uneven.is_empty() {
            let uneven: Vec<String> = r.uneven.iter().map(u32::to_string).collect();
            writeln!(
                out,
                "shown though the consumer counts do not divide them: {} (equal partition shares are not equal loads when the keys weigh differently)",
                uneven.join(", ")
            )?;
        }
    }
    if let Some(l) = &r.target_left_out {
        let by: Vec<String> = l.not_divided_by.iter().map(u32::to_string).collect();
        writeln!(
            out,
            "not suggested: {}, the target, because {} consumers would not get equal shares of it ({} does not divide it)",
            l.partitions,
            by.join(" or "),
            by.join(", ")
        )?;
    }
    Ok(())
}
