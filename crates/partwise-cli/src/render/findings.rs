//! The JSON (and the text of a placement fix) of the core's findings, the
//! same whichever command found them: `check`, `kafka audit`, `redis check`,
//! `assign` and `report` all print them through these.

use crate::exit::Result;
use partwise::check::Report;
use partwise::findings::{FamilyReason, Reason};
use partwise::group::placement::{PlacementFix, PlacementVerdict};
use partwise::strategy::resize::joined::Procedure;
use partwise::topology::{Alignment, FamilyVerdict, GroupVerdict};
use serde_json::{json, Map, Value};
use std::io::Write;
use std::path::Path;

fn fraction(part: usize, whole: usize) -> Value {
    if whole == 0 {
        Value::Null
    } else {
        (part as f64 / whole as f64).into()
    }
}

/// A co-partition finding as JSON: the core's [`Finding`] (`kind`,
/// `message`, `fix` and its details), the same whichever command found it.
///
/// [`Finding`]: partwise::findings::Finding
pub fn reason_json(r: &Reason) -> Value {
    serde_json::to_value(r.finding()).unwrap_or_default()
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

pub fn group_json(g: &GroupVerdict) -> Map<String, Value> {
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

pub fn family_json(f: &FamilyVerdict) -> Map<String, Value> {
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

/// A Redis family finding as JSON: the core's finding with the patterns
/// (`pattern` too when it names one) and tags it is about.
pub fn family_reason_json(r: &FamilyReason) -> Value {
    serde_json::to_value(r.finding()).unwrap_or_default()
}

/// A placement verdict as JSON, as `check` prints it (the core's
/// serialization).
pub fn placement_json(p: &PlacementVerdict) -> Map<String, Value> {
    match serde_json::to_value(p) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
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

/// Fills each group of a [`report_json`] document with its records.
pub fn with_records(doc: &mut Value, records: &[Option<(u64, u64)>]) {
    let Some(groups) = doc["copartition_groups"].as_array_mut() else {
        return;
    };
    for (g, r) in groups.iter_mut().zip(records) {
        fill_records(g, *r);
    }
}

pub fn fill_records(g: &mut Value, r: Option<(u64, u64)>) {
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
