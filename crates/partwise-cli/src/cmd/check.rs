//! `partwise check`: whether the co-partition groups and Redis key families of
//! a topology file hold, with every reason they break; and the JSON of a
//! finding, which `kafka audit` and `redis check` print alike.

use crate::exit::{CliError, ExitCode, Result};
use crate::load::{bounded, load_samples, load_topology};
use crate::output::{Format, JsonStream};
use crate::render::findings::{write_fix, FamilyJson, GroupJson, ReportJson};
use partwise::check::{check, Report};
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

/// Records sampled from the start of each partition of a Streams source
/// topic: the default of `kafka audit`.
const SAMPLE: u64 = 1000;

pub fn run(args: Args) -> Result<ExitCode> {
    let mut topology = match &args.file {
        Some(f) => load_topology(f)?,
        None => partwise::topology::Topology {
            topics: Vec::new(),
            copartition_groups: Vec::new(),
            consumer_groups: Vec::new(),
            redis_families: Vec::new(),
        },
    };
    let counts: Vec<(String, partwise::PartitionCount)> = args
        .topics
        .iter()
        .map(|t| (t.name.clone(), t.partitions))
        .collect();
    let mut apps = Vec::new();
    for path in &args.streams {
        apps.push((path, crate::load::load_streams(path)?));
    }
    let conn = args
        .kafka
        .given()
        .then(|| args.kafka.connection())
        .transpose()?;
    let live = args.counts.as_ref().and_then(super::CountsFrom::live);
    if let (Some(w), None) = (live, &conn) {
        return Err(CliError::msg(format!(
            "--counts {}: live weights are read from the cluster: give --streams with -b (or a KEY,COUNT file)",
            crate::render::audit::window_flag(w)
        )));
    }
    if conn.is_some() && args.streams.is_empty() {
        return Err(CliError::msg(
            "-b/-X/-F read a Kafka Streams application's source topics: give --streams (report -b checks a topology file's topics)",
        ));
    }
    // The audit of each external source topic, by name.
    let mut audited: Vec<partwise_kafka::audit::TopicAudit> = Vec::new();
    if let Some(conn) = &conn {
        let mut topics: Vec<String> = Vec::new();
        for (_, app) in &apps {
            for g in app.copartition_groups() {
                if g.external.len() + g.internal.len() >= 2 {
                    topics.extend(g.external);
                }
            }
        }
        topics.sort();
        topics.dedup();
        if !topics.is_empty() {
            let all: Vec<partwise::Partitioner> = partwise::Partitioner::all().collect();
            let opts = partwise_kafka::audit::AuditOptions {
                topics,
                sample: live.map_or(SAMPLE, super::live_sample),
                candidates: partwise::inference::candidates(&all, &[]),
                window: live.unwrap_or_default(),
            };
            audited = partwise_kafka::audit::audit(conn, &opts, &mut |_| {})
                .map_err(super::conn::kerr)?
                .topics;
        }
        for t in &audited {
            let Some(n) = t
                .partition_count()
                .and_then(|n| partwise::PartitionCount::new(n).ok())
            else {
                continue;
            };
            let seen = partwise::streams::Observed::new(&t.name, n, t.routing.as_ref());
            if let Some(before) = partwise::streams::observe(&mut topology, &seen) {
                say!(
                    "partwise: note: {} has {} partitions on the cluster, not the {} the topology file declares: the cluster's count is checked",
                    t.name,
                    n.get(),
                    before.get()
                );
            }
        }
    }
    for (path, app) in &apps {
        let path = *path;
        let name = path.file_stem().map_or_else(
            || path.display().to_string(),
            |s| s.to_string_lossy().into_owned(),
        );
        for p in app.patterns() {
            say!(
                "partwise: warning: {} reads topics by the pattern {p}: which topics those are is not in the description, so their joins are not checked",
                path.display()
            );
        }
        if let Some(t) = app
            .copartition_groups()
            .iter()
            .flat_map(|g| &g.external)
            .find(|t| topology.topic(t).is_none() && !counts.iter().any(|(c, _)| c == *t))
            .and_then(|t| audited.iter().find(|a| &a.name == t))
        {
            return Err(CliError::msg(format!(
                "--streams {}: the cluster has no readable topic '{}' ({}), which the application reads: Kafka Streams will not start without it (give -t {}:N to check the join as planned)",
                path.display(),
                t.name,
                t.error.as_deref().unwrap_or("no partitions"),
                t.name
            )));
        }
        let added = partwise::streams::declare(&mut topology, &name, app, &counts)
            .map_err(|e| CliError::context(format!("--streams {}", path.display()), e))?;
        if added.is_empty() {
            say!(
                "partwise: note: {} joins no topics Streams must co-partition",
                path.display()
            );
        }
    }
    let file = args.file.clone().unwrap_or_else(|| args.streams[0].clone());
    if args.file.is_some() || !topology.topics.is_empty() {
        bounded(&file, &topology)?;
    }
    let mut live_weights = None;
    let weights = match &args.counts {
        None => None,
        Some(super::CountsFrom::File(f)) => Some(super::Weights::read(f)?),
        Some(super::CountsFrom::Live(w)) => {
            let refs: Vec<&partwise_kafka::audit::TopicAudit> = audited.iter().collect();
            let (weights, info) = super::Weights::live(*w, &refs)?;
            live_weights = Some(info);
            Some(weights)
        }
    };
    let (samples, counts) = match weights {
        Some(w) => {
            let (samples, counts) = w.into_samples();
            (samples, Some(counts))
        }
        None => (load_samples(args.input.input)?, None),
    };
    let refs: Vec<&[u8]> = samples.iter().map(Vec::as_slice).collect();
    let mut report = check(&topology, &refs);
    if !audited.is_empty() {
        with_audits(&mut report, &audited);
    }
    let records: Vec<Option<(u64, u64)>> = match &counts {
        Some(counts) => partwise::topology::group_records(&topology, &refs, counts),
        None => vec![None; report.groups.len()],
    };
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

/// What the audit of each source topic found that its observed producer
/// cannot say (unreadable, no keyed records, records no known partitioner
/// explains, several partitioners, mixed key encodings) joins its group's
/// reasons, in place of `no-producers`: who writes the topic was looked at.
fn with_audits(report: &mut Report, audited: &[partwise_kafka::audit::TopicAudit]) {
    use partwise::findings::Reason;
    for g in &mut report.groups {
        let mine: Vec<&partwise_kafka::audit::TopicAudit> = audited
            .iter()
            .filter(|a| g.topics.contains(&a.name))
            .collect();
        g.reasons
            .retain(|r| !matches!(r, Reason::NoProducers { topic } if mine.iter().any(|a| &a.name == topic)));
        for a in mine {
            let v = partwise_kafka::audit::verdict(std::slice::from_ref(a));
            g.reasons.extend(v.findings);
        }
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
