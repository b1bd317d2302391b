//! The JSON of a `redis check`: `redis check --format json`, and the live
//! part of `report -c`'s JSON twin.

use crate::output::{hex, key_json};
use partwise::findings::FamilyReason;
use partwise_redis::{CheckReport, Family};
use serde_json::{json, Value};

/// A lint finding of a family as JSON: the finding, and whether it is a
/// problem or advice.
pub fn lint_json(l: &FamilyReason) -> Value {
    let mut v = crate::render::findings::family_reason_json(l);
    v["problem"] = json!(l.is_problem());
    v
}

/// One logical key of a `redis check` as JSON.
pub fn check_row_json(k: &partwise_redis::KeyPlacement) -> Value {
    json!({
        "key": key_json(&k.key),
        "key_hex": hex(&k.key),
        "members": k.members.iter().map(|m| json!({
            "key": key_json(&m.key),
            "key_hex": hex(&m.key),
            "slot": m.slot,
            "live_slot": m.live_slot,
            "node": m.node.as_ref().map(ToString::to_string),
        })).collect::<Vec<_>>(),
        "co_located": k.co_located(),
        "same_node": k.same_node(),
        "verified": k.verified(),
    })
}

/// A `redis check`'s summary as JSON (its document without the rows).
pub fn check_summary_json(report: &CheckReport, family: &Family) -> Value {
    json!({
        "keys": report.keys.len(),
        "co_located": report.co_located(),
        "same_node": report.same_node(),
        "unverified": report.unverified(),
        "patterns": family.patterns().iter().map(|p| p.as_str()).collect::<Vec<_>>(),
        "lints": report.lints.iter().map(lint_json).collect::<Vec<_>>(),
        "errors": report.errors.iter().map(ToString::to_string).collect::<Vec<_>>(),
    })
}

/// A `redis check` as one JSON document (`redis check --format json`, and `report -c`).
pub fn check_json(report: &CheckReport, family: &Family) -> Value {
    let mut doc = check_summary_json(report, family);
    doc["rows"] = report.keys.iter().map(check_row_json).collect();
    doc
}
