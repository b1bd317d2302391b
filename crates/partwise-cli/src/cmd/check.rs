//! `partwise check`: whether the co-partition groups and Redis key families of
//! a topology file hold, with every reason they break; and the JSON of a
//! finding, which `kafka audit` and `redis check` print alike.

use crate::exit::{ExitCode, Result};
use crate::ops::check::Checked;
use crate::output::{Format, JsonStream};
use crate::render::findings::{write_fix, FamilyJson, GroupJson, ReportJson};
use partwise::check::Report;
use partwise::group::placement::PlacementVerdict;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(
    mut_arg("input", |a| a.long_help(
        "Sample keys, one per line ('-' reads stdin): logical keys such as symbols, which each producer encodes with its own key_format"
    )),
    mut_arg("format", |a| a.long_help(
        "Output format: table, json (one document) or ndjson (one line per group or family)"
    ))
)]
pub struct Args {
    /// Topology file (TOML): topics, producers, co-partition groups, Redis families
    #[arg(value_name = "FILE", required_unless_present = "streams")]
    file: Option<PathBuf>,
    #[arg(
        help = super::flags::STREAMS,
        long_help = "A Kafka Streams application's topology, the text Topology#describe() prints (repeatable, one application a file): every join's source topics are checked as a co-partition group",
       long = "streams", value_name = "DESCRIBE")]
    streams: Vec<PathBuf>,
    /// A topic the --streams topologies read and the topology file does not
    /// declare, with its partition count (repeatable)
    #[arg(short = 't', long = "topic", value_name = "NAME:N", requires = "streams", value_parser = super::parse::topic_count)]
    topics: Vec<super::parse::TopicCount>,
    #[command(flatten)]
    input: super::flags::InputFlag,
    /// The keys with their traffic: KEY,COUNT lines (the count after the last comma)
    ///
    /// In place of -i: each co-partition group also says what share of the records lands on
    /// one partition number everywhere. With --streams and -b, live:DURATION
    /// (live:1h) or live:last=N takes them from the source topics' newest
    /// records, sampled as kafka audit --since/--from-end does
    #[arg(long, value_name = "FILE|live:DURATION|live:last=N", conflicts_with = "input", value_parser = super::parse::counts_from)]
    counts: Option<super::CountsFrom>,
    #[command(flatten)]
    format: super::flags::FormatFlag,
    /// With --streams, the live cluster (-b BROKERS, -X KEY=VALUE, -F FILE):
    /// each join's source topics get their counts from the cluster and their
    /// producers from a sample of their records (as kafka audit reads them)
    #[command(flatten)]
    kafka: super::conn::ConnArgs,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let req = crate::ops::Sources {
        file: args.file,
        topics: args
            .topics
            .iter()
            .map(|t| (t.name.clone(), t.partitions))
            .collect(),
        streams: args.streams,
        input: args.input.input,
        counts: args.counts,
        // Connection flags are checked before anything is read.
        conn: args
            .kafka
            .given()
            .then(|| args.kafka.connection())
            .transpose()?,
    };
    let Checked {
        file,
        report,
        records,
        live_weights,
    } = crate::ops::check::check(&req)?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    match args.format.format {
        Format::Json => {
            let doc = CheckJson {
                report: ReportJson::of(&file, &report, &records),
                weights: live_weights.as_ref(),
            };
            serde_json::to_writer_pretty(&mut out, &doc)?;
            writeln!(out)?;
        }
        Format::Ndjson => {
            let mut s = JsonStream::new(&mut out, Format::Ndjson)?;
            for (g, r) in report.groups.iter().zip(&records) {
                s.write(&Typed::new(GroupJson::of(g, *r), "copartition_group"))?;
            }
            for f in &report.families {
                s.write(&Typed::new(FamilyJson::of(f), "redis_family"))?;
            }
            for p in &report.placements {
                s.write(&Typed::new(p, "placement"))?;
            }
            s.finish()?;
        }
        Format::Table => {
            if let Some(w) = &live_weights {
                writeln!(out, "{w}")?;
            }
            table(&report, &records, &mut out)?
        }
    }
    out.flush()?;
    Ok(if report.ok() {
        ExitCode::Ok
    } else {
        ExitCode::Findings
    })
}

/// `check --format json`: the check, and the live window its weights are
/// of, with `--counts live:...`.
#[derive(serde::Serialize)]
struct CheckJson<'a> {
    #[serde(flatten)]
    report: ReportJson<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    weights: Option<&'a super::LiveWeights>,
}

/// One line of `check --format ndjson`: a part of the check and its `type`.
#[derive(serde::Serialize)]
struct Typed<T> {
    #[serde(flatten)]
    part: T,
    #[serde(rename = "type")]
    kind: &'static str,
}

impl<T> Typed<T> {
    fn new(part: T, kind: &'static str) -> Self {
        Typed { part, kind }
    }
}

/// `3`, `1..6`: the member counts a verdict covers (the declared ones).
fn counts_label(p: &PlacementVerdict) -> String {
    if let Some(c) = &p.cut {
        return if c.declared.0 == c.declared.1 {
            c.declared.0.to_string()
        } else {
            format!("{}..{}", c.declared.0, c.declared.1)
        };
    }
    match (p.counts.first(), p.counts.last()) {
        (Some(a), Some(b)) if a.members != b.members => format!("{}..{}", a.members, b.members),
        (Some(a), _) => a.members.to_string(),
        _ => "no".into(),
    }
}

fn placement_table(p: &PlacementVerdict, out: &mut impl Write) -> Result<()> {
    let head = format!(
        "consumer group {} ({}, {} members) on {} ({})",
        p.consumer_group,
        p.assignor,
        counts_label(p),
        p.copartition,
        p.topics.join(", ")
    );
    let note = |out: &mut dyn Write| -> Result<()> {
        if let Some(c) = &p.cut {
            writeln!(out, "  - note: {}", c.note())?;
        }
        Ok(())
    };
    if p.ok() {
        writeln!(out, "{head}: units whole")?;
        return note(out);
    }
    if p.kind() == Some("placement-unchecked") {
        writeln!(out, "{head}: NOT ALL COUNTS CHECKED")?;
    } else if p.kind() == Some("counts-differ") {
        writeln!(out, "{head}: PARTITION COUNTS DIFFER")?;
    } else {
        writeln!(out, "{head}: UNITS SPLIT")?;
    }
    note(out)?;
    if !p.assignor.deterministic() {
        writeln!(
            out,
            "  - {} is not deterministic (the real balancer follows {}): \
             each count is judged by the outcome that splits most of {} simulated runs",
            p.assignor,
            p.assignor.varies_by().unwrap_or_default(),
            partwise::assign::SIMULATED_RUNS
        )?;
    }
    if !p.unsubscribed.is_empty() {
        writeln!(
            out,
            "  - does not subscribe to {}: those partitions are never in its members' hands",
            p.unsubscribed.join(", ")
        )?;
    }
    for c in p.counts.iter().filter(|c| !c.ok()) {
        match &c.error {
            Some(e) => writeln!(out, "  - at {} members: {e}", c.members)?,
            None => writeln!(
                out,
                "  - at {} members: {} of {} partition indices split across members",
                c.members, c.split_count, c.indices
            )?,
        }
    }
    if let Some(f) = &p.fix {
        write_fix(f, "  ", out)?;
    }
    Ok(())
}

fn table(r: &Report, records: &[Option<(u64, u64)>], out: &mut impl Write) -> Result<()> {
    for (g, rec) in r.groups.iter().zip(records) {
        let verdict = if g.ok() {
            "co-partitioned"
        } else {
            "NOT CO-PARTITIONED"
        };
        write!(
            out,
            "co-partition group {} ({}): {verdict}",
            g.name,
            g.topics.join(", ")
        )?;
        if let Some(a) = g.sample {
            write!(
                out,
                "; {} of {} sample keys on one partition number everywhere",
                a.aligned, a.keys
            )?;
        }
        if let Some((aligned, total)) = rec {
            write!(
                out,
                ", {aligned} of their {total} records ({:.1}%)",
                *aligned as f64 * 100.0 / (*total).max(1) as f64
            )?;
        }
        writeln!(out)?;
        for reason in &g.reasons {
            writeln!(out, "  - {reason}")?;
            writeln!(out, "    fix: {}", reason.fix())?;
        }
    }
    for f in &r.families {
        let verdict = if f.ok() {
            "co-located"
        } else {
            "NOT CO-LOCATED"
        };
        write!(
            out,
            "redis family {} ({}): {verdict}",
            f.name,
            f.patterns.join(", ")
        )?;
        if f.shared_hash_tag {
            if let Some(Some(tag)) = f.hash_tags.first() {
                write!(out, "; shared hash tag {{{tag}}}")?;
            }
        }
        if let Some(a) = f.colocated {
            write!(out, "; {} of {} sample keys in one slot", a.aligned, a.keys)?;
        }
        writeln!(out)?;
        for reason in &f.reasons {
            writeln!(out, "  - {reason}")?;
            writeln!(out, "    fix: {}", reason.fix())?;
        }
    }
    for p in &r.placements {
        placement_table(p, out)?;
    }
    if r.groups.is_empty() && r.families.is_empty() {
        writeln!(
            out,
            "nothing to check: the file declares no [[copartition]] groups and no [[redis_family]]"
        )?;
    }
    Ok(())
}
