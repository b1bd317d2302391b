//! `partwise check`: whether the co-partition groups and Redis key families of
//! a topology file hold, with every reason they break; and the JSON of a
//! finding, which `kafka audit` and `redis check` print alike.

use super::key_source;
use crate::exit::{CliError, ExitCode, Result};
use crate::output::{Format, JsonStream};
use partwise::findings::{FamilyReason, ProducerRef, Reason, SampleDiff};
use partwise::placement::{PlacementFix, PlacementVerdict};
use partwise::resize::joined::{Moved, Procedure, Realign};
use partwise::topology::{check, Alignment, FamilyVerdict, GroupVerdict, Report, Topology};
use serde_json::{json, Map, Value};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Topology file (TOML): topics, producers, co-partition groups, Redis families
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Sample keys, one per line ('-' reads stdin): logical keys such as symbols,
    /// which each producer encodes with its own key_format
    #[arg(short = 'i', long = "input", value_name = "KEYS")]
    input: Option<PathBuf>,
    /// The sample keys with their traffic, KEY,COUNT lines (instead of -i):
    /// each co-partition group also says what share of the records lands on
    /// one partition number everywhere
    #[arg(long, value_name = "FILE", conflicts_with = "input")]
    counts: Option<PathBuf>,
    /// Output format: table, json (one document) or ndjson (one line per group or family)
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
}

/// Reads and validates a topology file; errors name the file, line and field.
pub fn load_topology(path: &Path) -> Result<Topology> {
    let name = path.display();
    let bytes = crate::input::read_capped(path, 4 << 20, "cannot read topology file")?;
    let text = String::from_utf8(bytes).map_err(|e| {
        CliError::msg(format!(
            "cannot read topology file {name}: not UTF-8 (byte {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    Topology::parse(&text).map_err(|e| CliError::context(name.to_string(), e))
}

/// Reads sample keys as given (logical keys, not yet encoded).
pub fn load_samples(input: Option<PathBuf>) -> Result<Vec<Vec<u8>>> {
    let mut keys = Vec::new();
    if let Some(path) = input.as_deref() {
        if path.as_os_str() != "-" && crate::input::looks_like_counts(path) {
            say!(
                "partwise: warning: every line of {} looks like KEY,COUNT, but -i reads each whole line as a sample key (give the file as --counts to weigh the keys by their counts)",
                path.display()
            );
        }
    }
    if input.is_some() {
        let held =
            crate::input::Held::new("the sample keys", "; a sample of the keys answers as well");
        key_source(Vec::new(), input, partwise::KeyFormat::Utf8).for_each_held(held, |b| {
            keys.extend(b.keys.iter().map(|k| k.to_vec()));
            Ok(())
        })?;
    }
    Ok(keys)
}

/// Topics of one topology file at most.
const MAX_TOPICS: usize = 10_000;
/// Producers (a topic without any counts as one) over a co-partition
/// group's topics at most: each pair is compared.
const MAX_GROUP_PRODUCERS: usize = 2_000;

pub fn run(args: Args) -> Result<ExitCode> {
    let topology = load_topology(&args.file)?;
    bounded(&args.file, &topology)?;
    let weights = args
        .counts
        .as_deref()
        .map(super::Weights::read)
        .transpose()?;
    let samples = match &weights {
        Some(w) => w.samples(),
        None => load_samples(args.input)?,
    };
    let refs: Vec<&[u8]> = samples.iter().map(Vec::as_slice).collect();
    let report = check(&topology, &refs);
    let records: Vec<Option<(u64, u64)>> = match &weights {
        Some(w) => {
            let counts: Vec<u64> = w.keys.iter().map(|(_, c)| *c).collect();
            group_records(&topology, &refs, &counts)
        }
        None => vec![None; report.groups.len()],
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    match args.format {
        Format::Json => {
            let mut doc = report_json(&args.file, &report);
            with_records(&mut doc, &records);
            serde_json::to_writer_pretty(&mut out, &doc)?;
            writeln!(out)?;
        }
        Format::Ndjson => {
            let mut s = JsonStream::new(&mut out, Format::Ndjson)?;
            for (g, r) in report.groups.iter().zip(&records) {
                let mut v = Value::Object(group_json(g));
                fill_records(&mut v, *r);
                v["type"] = "copartition_group".into();
                s.write(&v)?;
            }
            for f in &report.families {
                let mut v = family_json(f);
                v.insert("type".into(), "redis_family".into());
                s.write(&Value::Object(v))?;
            }
            for p in &report.placements {
                let mut v = placement_json(p);
                v.insert("type".into(), "placement".into());
                s.write(&Value::Object(v))?;
            }
            s.finish()?;
        }
        Format::Table => table(&report, &records, &mut out)?,
    }
    out.flush()?;
    Ok(if report.ok() {
        ExitCode::Ok
    } else {
        ExitCode::Findings
    })
}

/// Refuses a topology file with nothing to check or too large to check
/// (the checks are quadratic in a group's producers and run every member
/// count of a range); `report` holds files to the same bounds.
pub fn bounded(file: &Path, topology: &Topology) -> Result<()> {
    if topology.topics.is_empty() && topology.redis_families.is_empty() {
        // Exit 0 would say an empty (or misnamed) file holds.
        return Err(CliError::msg(format!(
            "{}: nothing to check: no [[topic]] and no [[redis_family]]",
            file.display()
        )));
    }
    // The checks compare every pair of a group's producers and look topics
    // up by name: quadratic, so the sizes are bounded.
    if topology.topics.len() > MAX_TOPICS {
        return Err(CliError::msg(format!(
            "{}: {} topics; at most {MAX_TOPICS}",
            file.display(),
            topology.topics.len()
        )));
    }
    for (i, g) in topology.copartition_groups.iter().enumerate() {
        let producers: usize = g
            .topics
            .iter()
            .filter_map(|t| topology.topic(t))
            .map(|t| t.producers.len().max(1))
            .sum();
        if producers > MAX_GROUP_PRODUCERS {
            return Err(CliError::msg(format!(
                "{}: copartition[{i}] '{}': {producers} producers over its topics; at most {MAX_GROUP_PRODUCERS}",
                file.display(),
                g.name
            )));
        }
    }
    for (i, g) in topology.consumer_groups.iter().enumerate() {
        let partitions: u64 = g
            .subscriptions
            .iter()
            .filter_map(|s| topology.topics.iter().find(|t| &t.name == s))
            .map(|t| u64::from(t.partitions.get()))
            .sum();
        let (runs, most) = match &g.members {
            partwise::topology::Members::Range(lo, hi) => {
                (u64::from(hi.saturating_sub(*lo)) + 1, u64::from(*hi))
            }
            partwise::topology::Members::Count(m) => {
                crate::limits::members(
                    &format!("{}: consumer_group[{i}].members", file.display()),
                    u64::from(*m),
                )?;
                (1, u64::from(*m))
            }
            partwise::topology::Members::Ids(ids) => (1, ids.len() as u64),
        };
        crate::limits::assigned(
            &format!("{}: consumer_group[{i}] '{}'", file.display(), g.name),
            partitions,
            most,
            runs,
        )?;
    }
    Ok(())
}

fn fraction(part: usize, whole: usize) -> Value {
    if whole == 0 {
        Value::Null
    } else {
        (part as f64 / whole as f64).into()
    }
}

/// A producer reference as JSON, as every finding carries it.
pub fn producer_json(p: &ProducerRef) -> Value {
    json!({
        "topic": p.topic,
        "index": p.index,
        "name": p.name,
        "partitioner": p.partitioner.map(|p| p.spec()),
        "key_format": p.key_format.to_string(),
    })
}

fn sample_json(m: &mut Map<String, Value>, s: Option<SampleDiff>) {
    if let Some(s) = s {
        m.insert("sample_keys".into(), s.keys.into());
        m.insert("differ".into(), s.differ.into());
        m.insert("differ_fraction".into(), fraction(s.differ, s.keys));
        m.insert("unencodable".into(), s.unencodable.into());
    }
}

/// A co-partition finding as JSON: `kind`, `message`, `fix` and its
/// details, the same whichever command found it.
pub fn reason_json(r: &Reason) -> Value {
    let mut m = Map::new();
    m.insert("kind".into(), r.kind().into());
    m.insert("message".into(), r.to_string().into());
    m.insert("fix".into(), r.fix().into());
    match r {
        Reason::PartitionCountsDiffer { counts, .. } => {
            let c: Map<String, Value> = counts
                .iter()
                .map(|(t, n)| (t.clone(), (*n).into()))
                .collect();
            m.insert("partitions".into(), c.into());
        }
        Reason::KeysDiffer { keys } => {
            let k: Map<String, Value> = keys
                .iter()
                .map(|(t, k)| (t.clone(), k.clone().into()))
                .collect();
            m.insert("keys".into(), k.into());
        }
        Reason::NoProducers { topic } => {
            m.insert("topic".into(), topic.clone().into());
        }
        Reason::SampleKeysUnplaced {
            producer,
            unplaced,
            example,
            why,
            ..
        } => {
            m.insert("producer".into(), producer_json(producer));
            m.insert("unplaced".into(), (*unplaced).into());
            m.insert("example".into(), example.clone().into());
            m.insert("why".into(), (*why).into());
        }
        Reason::KeylessProducer {
            producer,
            declared,
            behaviour,
        } => {
            m.insert("producer".into(), producer_json(producer));
            m.insert("declared".into(), (*declared).into());
            m.insert("behaviour".into(), (*behaviour).into());
        }
        Reason::PartitionersDisagree { a, b, .. } | Reason::KeyEncodingsDiffer { a, b, .. } => {
            m.insert(
                "producers".into(),
                json!([producer_json(a), producer_json(b)]),
            );
        }
        Reason::TopicUnreadable { topic, error } => {
            m.insert("topic".into(), topic.clone().into());
            m.insert("error".into(), error.clone().into());
        }
        Reason::NoKeyedRecords { topic } => {
            m.insert("topic".into(), topic.clone().into());
        }
        Reason::RecordsUnexplained {
            topic,
            misplaced,
            best,
        } => {
            m.insert("topic".into(), topic.clone().into());
            m.insert("misplaced".into(), (*misplaced).into());
            m.insert("best".into(), best.clone().into());
        }
        Reason::ObservedPartitionersDisagree { topics } => {
            let t: Vec<Value> = topics
                .iter()
                .map(|w| json!({"topic": w.topic, "partitioners": w.candidates}))
                .collect();
            m.insert("topics".into(), t.into());
        }
        Reason::MixedPartitioners {
            topic,
            writers,
            unexplained,
            split_keys,
            ..
        } => {
            m.insert("topic".into(), topic.clone().into());
            let w: Vec<Value> = writers
                .iter()
                .map(|w| {
                    json!({
                        "partitioner": w.partitioner.spec(),
                        "setting": w.partitioner.setting(),
                        "partitioners": w.candidates,
                        "share": w.share,
                    })
                })
                .collect();
            m.insert("writers".into(), w.into());
            m.insert("unexplained".into(), (*unexplained).into());
            m.insert("split_keys".into(), (*split_keys).into());
        }
        Reason::ObservedKeyEncodingsDiffer { encodings } => {
            let e: Map<String, Value> = encodings
                .iter()
                .map(|(t, e)| (t.clone(), e.clone().into()))
                .collect();
            m.insert("key_encodings".into(), e.into());
        }
        _ => {}
    }
    sample_json(&mut m, r.sample());
    Value::Object(m)
}

fn alignment_json(m: &mut Map<String, Value>, a: Option<Alignment>, what: &str) {
    let (keys, n) = a.map_or((Value::Null, Value::Null), |a| {
        (a.keys.into(), a.aligned.into())
    });
    m.insert("sample_keys".into(), keys);
    m.insert(format!("{what}_keys"), n);
    m.insert(
        format!("{what}_fraction"),
        a.map_or(Value::Null, |a| fraction(a.aligned, a.keys)),
    );
}

fn group_json(g: &GroupVerdict) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("name".into(), g.name.clone().into());
    m.insert("topics".into(), g.topics.clone().into());
    m.insert("copartitioned".into(), g.ok().into());
    alignment_json(&mut m, g.sample, "aligned");
    // Filled by `with_records` when the keys came with their counts.
    for f in ["records", "aligned_records", "aligned_records_share"] {
        m.insert(f.into(), Value::Null);
    }
    m.insert(
        "reasons".into(),
        g.reasons.iter().map(reason_json).collect(),
    );
    m
}

fn family_json(f: &FamilyVerdict) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("name".into(), f.name.clone().into());
    m.insert("patterns".into(), f.patterns.clone().into());
    m.insert("hash_tags".into(), json!(f.hash_tags));
    m.insert("shared_hash_tag".into(), f.shared_hash_tag.into());
    m.insert("colocated".into(), f.ok().into());
    alignment_json(&mut m, f.colocated, "colocated");
    let reasons: Vec<Value> = f.reasons.iter().map(family_reason_json).collect();
    m.insert("reasons".into(), reasons.into());
    m
}

/// A Redis family finding as JSON: `kind`, `message`, `fix`, and the
/// patterns (`pattern` too when it names one) and tags it is about.
pub fn family_reason_json(r: &FamilyReason) -> Value {
    let mut v = json!({"kind": r.kind(), "message": r.to_string(), "fix": r.fix()});
    match r {
        FamilyReason::NoHashTag { patterns } => {
            if let [one] = patterns.as_slice() {
                v["pattern"] = json!(one);
            }
            v["patterns"] = json!(patterns);
        }
        FamilyReason::EmptyTag { pattern } => v["pattern"] = json!(pattern),
        FamilyReason::TagWithoutKey { pattern, tag, slot } => {
            v["pattern"] = json!(pattern);
            v["tag"] = json!(tag);
            v["slot"] = json!(slot);
        }
        FamilyReason::TagNotJustKey { pattern, tag } => {
            v["pattern"] = json!(pattern);
            v["tag"] = json!(tag);
        }
        FamilyReason::HashTagsDiffer { tags } => {
            v["tags"] = tags
                .iter()
                .map(|(p, t)| json!({ "pattern": p, "tag": t }))
                .collect();
        }
        FamilyReason::SampleKeysSplit { split, keys } => {
            v["split"] = json!(split);
            v["sample_keys"] = json!(keys);
        }
        _ => {}
    }
    v
}

/// A placement verdict as JSON, as `check` prints it.
pub fn placement_json(p: &PlacementVerdict) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("consumer_group".into(), p.consumer_group.clone().into());
    m.insert("assignor".into(), p.assignor.spec().into());
    m.insert("copartition_group".into(), p.copartition.clone().into());
    m.insert("topics".into(), p.topics.clone().into());
    m.insert("units_whole".into(), p.ok().into());
    m.insert("kind".into(), p.kind().into());
    m.insert("unsubscribed".into(), p.unsubscribed.clone().into());
    m.insert("splitting_counts".into(), p.splitting_counts().into());
    let counts: Vec<Value> = p
        .counts
        .iter()
        .map(|c| {
            json!({
                "members": c.members,
                "split_indices": c.split,
                "split_count": c.split_count,
                "indices": c.indices,
                "error": c.error,
            })
        })
        .collect();
    m.insert("counts".into(), counts.into());
    // Only when the simulation budget cut the sweep short, so the JSON of
    // a file within it is what it always was.
    if let Some(c) = &p.cut {
        m.insert(
            "cut_short".into(),
            json!({
                "declared_counts": [c.declared.0, c.declared.1],
                "asked": c.asked,
                "checked": c.checked,
                "checked_to": p.counts.last().map(|c| c.members),
                "assignors_not_run_everywhere": c.assignors.iter().map(|a| a.spec()).collect::<Vec<_>>(),
                "note": c.note(),
            }),
        );
    }
    m.insert(
        "fix".into(),
        p.fix.as_ref().map_or(Value::Null, placement_fix_json),
    );
    m
}

/// A placement fix as JSON, as `check`, `assign` and `report` print it:
/// `assignors`, `member_counts`, `advice`, and `realign` (null unless the
/// co-partitioned topics' counts differ: the count to reach, each topic to
/// raise with what it moves, and the procedures with their costs).
pub fn placement_fix_json(f: &PlacementFix) -> Value {
    json!({
        "assignors": f.assignors.iter().map(|a| a.spec()).collect::<Vec<_>>(),
        "member_counts": f.member_counts,
        "advice": f.advice,
        "realign": f.realign.as_ref().map(realign_json),
    })
}

fn realign_json(r: &Realign) -> Value {
    let moved = |m: Option<Moved>| m.map(|m| json!({"moved": m.moved, "of": m.of}));
    json!({
        "counts": r.counts.iter().map(|(t, n)| json!({"topic": t, "partitions": n})).collect::<Vec<_>>(),
        "to": r.to,
        "raise": r.raise.iter().map(|x| json!({
            "topic": x.topic,
            "from": x.from,
            "to": x.to,
            "moved_fraction": x.moved.map(|f| f.value()),
            "moved": x.moved.map(|f| format!("{}/{}", f.moved, f.period)),
            "sample_keys": moved(x.sample_keys),
            "records": moved(x.records),
        })).collect::<Vec<_>>(),
        "procedures": Procedure::ALL.iter().map(|&p| json!({
            "kind": p.kind(),
            "text": r.procedure(p),
        })).collect::<Vec<_>>(),
    })
}

/// The whole `check` report as JSON (`report` carries it as its findings).
pub fn report_json(file: &Path, r: &Report) -> Value {
    json!({
        "file": file.display().to_string(),
        "ok": r.ok(),
        "sample_keys": r.sample_keys,
        "copartition_groups": r.groups.iter().map(group_json).collect::<Vec<_>>(),
        "redis_families": r.families.iter().map(family_json).collect::<Vec<_>>(),
        "placements": r.placements.iter().map(placement_json).collect::<Vec<_>>(),
    })
}

/// Each co-partition group's records on sample keys that land on one
/// partition number everywhere, and all their records (`--counts`): one per
/// group, `None` where no producer places keys.
pub fn group_records(t: &Topology, samples: &[&[u8]], weights: &[u64]) -> Vec<Option<(u64, u64)>> {
    t.copartition_groups
        .iter()
        .map(|g| partwise::topology::partition_map(t, g, samples).aligned_records(weights))
        .collect()
}

/// Fills each group of a [`report_json`] document with its records.
pub fn with_records(doc: &mut Value, records: &[Option<(u64, u64)>]) {
    let Some(groups) = doc["copartition_groups"].as_array_mut() else {
        return;
    };
    for (g, r) in groups.iter_mut().zip(records) {
        fill_records(g, *r);
    }
}

fn fill_records(g: &mut Value, r: Option<(u64, u64)>) {
    if let Some((aligned, total)) = r {
        g["records"] = total.into();
        g["aligned_records"] = aligned.into();
        g["aligned_records_share"] = if total == 0 {
            Value::Null
        } else {
            (aligned as f64 / total as f64).into()
        };
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
    if p.kind() == Some("placement_unchecked") {
        writeln!(out, "{head}: NOT ALL COUNTS CHECKED")?;
    } else if p.kind() == Some("counts_differ") {
        writeln!(out, "{head}: PARTITION COUNTS DIFFER")?;
    } else {
        writeln!(out, "{head}: UNITS SPLIT")?;
    }
    note(out)?;
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

/// A placement fix as `check` and `assign` print it, indented by `indent`.
pub fn write_fix(f: &PlacementFix, indent: &str, out: &mut impl Write) -> Result<()> {
    writeln!(out, "{indent}fix: {}", f.advice)?;
    if let Some(r) = &f.realign {
        for (i, p) in Procedure::ALL.iter().enumerate() {
            writeln!(out, "{indent}     {}. {}", i + 1, r.procedure(*p))?;
        }
    }
    if !f.assignors.is_empty() {
        let specs: Vec<&str> = f.assignors.iter().map(|a| a.spec()).collect();
        writeln!(
            out,
            "{indent}     assignors that keep units whole: {}",
            specs.join(", ")
        )?;
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
