//! The JSON (and the text of a placement fix) of the core's findings, the
//! same whichever command found them: `check`, `kafka audit`, `redis check`,
//! `assign` and `report` all print them through these.

use crate::exit::Result;
use partwise::check::Report;
use partwise::findings::{FamilyReason, Finding, Reason};
use partwise::group::placement::{PlacementFix, PlacementVerdict};
use partwise::strategy::resize::joined::Procedure;
use partwise::topology::{FamilyVerdict, GroupVerdict};
use serde::Serialize;
use serde_json::Value;
use std::io::Write;
use std::path::Path;

/// `part / whole`, `None` (null) when `whole` is 0.
fn fraction(part: u64, whole: u64) -> Option<f64> {
    (whole != 0).then(|| part as f64 / whole as f64)
}

/// A co-partition finding as JSON: the core's [`Finding`] (`kind`,
/// `message`, `fix` and its details), the same whichever command found it.
///
/// [`Finding`]: partwise::findings::Finding
pub fn reason_json(r: &Reason) -> Value {
    serde_json::to_value(r.finding()).unwrap_or_default()
}

/// A co-partition group's verdict as `check` prints it: its sample keys
/// that land on one partition number everywhere and, when the keys came
/// with their counts, their records.
#[derive(Serialize)]
pub struct GroupJson<'a> {
    name: &'a str,
    topics: &'a [String],
    copartitioned: bool,
    sample_keys: Option<usize>,
    aligned_keys: Option<usize>,
    aligned_fraction: Option<f64>,
    records: Option<u64>,
    aligned_records: Option<u64>,
    aligned_records_share: Option<f64>,
    reasons: Vec<Finding>,
}

impl<'a> GroupJson<'a> {
    /// `g`, with `records` (aligned, all) when known.
    pub fn of(g: &'a GroupVerdict, records: Option<(u64, u64)>) -> Self {
        GroupJson {
            name: &g.name,
            topics: &g.topics,
            copartitioned: g.ok(),
            sample_keys: g.sample.map(|a| a.keys),
            aligned_keys: g.sample.map(|a| a.aligned),
            aligned_fraction: g
                .sample
                .and_then(|a| fraction(a.aligned as u64, a.keys as u64)),
            records: records.map(|r| r.1),
            aligned_records: records.map(|r| r.0),
            aligned_records_share: records.and_then(|(a, n)| fraction(a, n)),
            reasons: g.reasons.iter().map(Reason::finding).collect(),
        }
    }
}

/// A Redis key family's verdict as `check` prints it.
#[derive(Serialize)]
pub struct FamilyJson<'a> {
    name: &'a str,
    patterns: &'a [String],
    hash_tags: &'a [Option<String>],
    shared_hash_tag: bool,
    colocated: bool,
    sample_keys: Option<usize>,
    colocated_keys: Option<usize>,
    colocated_fraction: Option<f64>,
    reasons: Vec<Finding>,
}

impl<'a> FamilyJson<'a> {
    pub fn of(f: &'a FamilyVerdict) -> Self {
        FamilyJson {
            name: &f.name,
            patterns: &f.patterns,
            hash_tags: &f.hash_tags,
            shared_hash_tag: f.shared_hash_tag,
            colocated: f.ok(),
            sample_keys: f.colocated.map(|a| a.keys),
            colocated_keys: f.colocated.map(|a| a.aligned),
            colocated_fraction: f
                .colocated
                .and_then(|a| fraction(a.aligned as u64, a.keys as u64)),
            reasons: f.reasons.iter().map(FamilyReason::finding).collect(),
        }
    }
}

/// A Redis family finding as JSON: the core's finding with the patterns
/// (`pattern` too when it names one) and tags it is about.
pub fn family_reason_json(r: &FamilyReason) -> Value {
    serde_json::to_value(r.finding()).unwrap_or_default()
}

/// The whole `check` report as JSON (`report` carries it as its findings):
/// each group with its records (aligned, all; `None` without counts).
#[derive(Serialize)]
pub struct ReportJson<'a> {
    file: String,
    ok: bool,
    sample_keys: usize,
    copartition_groups: Vec<GroupJson<'a>>,
    redis_families: Vec<FamilyJson<'a>>,
    placements: &'a [PlacementVerdict],
}

impl<'a> ReportJson<'a> {
    /// `r`, read from `file`; `records[i]` is group `i`'s (none: no counts).
    pub fn of(file: &Path, r: &'a Report, records: &[Option<(u64, u64)>]) -> Self {
        ReportJson {
            file: file.display().to_string(),
            ok: r.ok(),
            sample_keys: r.sample_keys,
            copartition_groups: r
                .groups
                .iter()
                .enumerate()
                .map(|(i, g)| GroupJson::of(g, records.get(i).copied().flatten()))
                .collect(),
            redis_families: r.families.iter().map(FamilyJson::of).collect(),
            placements: &r.placements,
        }
    }
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
