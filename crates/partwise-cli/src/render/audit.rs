//! The JSON of a Kafka audit: `kafka audit --format json`, and the live part
//! of `report -b`'s JSON twin.

use crate::output::{hex, key_json};
use crate::render::findings::reason_json;
use partwise::inference::{Candidate, Forensics, Routing};
use partwise_kafka::audit::{AuditReport, TopicAudit, Window, WindowTraffic};
use serde_json::{json, Value};

pub fn routing_json(r: &Routing) -> Value {
    json!({
        "sampled": r.sampled,
        "keyed": r.keyed,
        "keyless": r.keyless,
        "empty_keys": r.empty_keys,
        "key_encoding": r.encoding.map(|e| e.to_string()),
        "inferred": r.inferred.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "match_rates": r.rates.iter().map(|m| json!({
            "partitioner": m.candidate.partitioner.spec(),
            "key_format": m.candidate.format.map_or("stored".to_string(), |f| f.to_string()),
            "matched": m.matched,
            "keyed": m.keyed,
            "rate": m.rate(),
        })).collect::<Vec<_>>(),
        "misrouted_total": r.misrouted_total,
        "forensics": r.forensics.as_ref().map(forensics_json),
        "misrouted": r.misrouted.iter().map(|m| json!({
            "key": key_json(&m.key),
            "key_hex": hex(&m.key),
            "partition": m.partition,
            "offset": m.offset,
            "expected": m.expected,
        })).collect::<Vec<_>>(),
    })
}

pub fn candidates_json(c: &[Candidate]) -> Vec<String> {
    c.iter().map(ToString::to_string).collect()
}

pub fn forensics_json(f: &Forensics) -> Value {
    json!({
        "mixture": f.mixture.as_ref().map(|m| json!({
            "minimal": m.minimal,
            "explained": m.explained,
            "unexplained": m.unexplained,
            "unexplained_share": m.unexplained_share(),
            "partitions": m.partitions,
            "members": m.members.iter().map(|x| json!({
                "partitioner": x.primary().to_string(),
                "setting": x.primary().partitioner.setting(),
                "partitioners": candidates_json(&x.family),
                "records": x.records,
                "records_only": x.records_only,
                "records_shared": x.records_shared,
                "share": x.share,
                "keys": x.keys,
                "key_share": x.key_share,
                "chance": x.chance,
            })).collect::<Vec<_>>(),
            "unexplained_records": m.unexplained_records.iter().map(|u| json!({
                "key": key_json(&u.key),
                "key_hex": hex(&u.key),
                "partition": u.partition,
                "offset": u.offset,
            })).collect::<Vec<_>>(),
        })),
        "distinct_keys": f.distinct_keys,
        "keys_capped": f.keys_capped,
        "split_keys_total": f.split_keys_total,
        "split_keys": f.split_keys.iter().map(|k| json!({
            "key": key_json(&k.key),
            "key_hex": hex(&k.key),
            "records": k.records(),
            "partitions": k.partitions.iter().map(|&(p, n)| json!({"partition": p, "records": n})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "switches": f.switches.iter().map(|s| json!({
            "partition": s.partition,
            "offset": s.offset,
            "earliest": s.earliest,
            "from": candidates_json(&s.from),
            "to": candidates_json(&s.to),
            "records_before": s.before,
            "records_after": s.after,
        })).collect::<Vec<_>>(),
    })
}

/// The window of recent records an audit sampled, and the keys that carry it.
#[derive(serde::Serialize)]
pub struct WindowJson<'a> {
    /// `since` or `from_end`.
    pub kind: &'static str,
    /// `--since`'s duration, in the flag's grammar (`10m`).
    pub since: Option<String>,
    /// Where it starts, in ms since the epoch (`--since`).
    pub since_ms: Option<i64>,
    /// `--from-end`'s records per partition.
    pub from_end: Option<u64>,
    /// The window in words, as the table says it.
    pub description: String,
    /// The heaviest keys, overall and per partition.
    pub heavy_hitters: &'a partwise::traffic::hitters::HeavyHitters,
}

impl<'a> WindowJson<'a> {
    pub fn of(w: &'a WindowTraffic) -> WindowJson<'a> {
        let (kind, since, from_end) = match w.window {
            Window::Since(d) => ("since", Some(partwise::duration::label(d)), None),
            Window::FromEnd(n) => ("from_end", None, Some(n)),
            Window::Oldest => ("oldest", None, None),
        };
        WindowJson {
            kind,
            since,
            since_ms: w.since_ms,
            from_end,
            description: window_label(w.window),
            heavy_hitters: &w.hitters,
        }
    }
}

/// `--counts`'s value that asks for `w` (`live:10m`, `live:last=500`).
pub fn window_flag(w: Window) -> String {
    match w {
        Window::FromEnd(n) => format!("live:last={n}"),
        Window::Since(d) => format!("live:{}", partwise::duration::label(d)),
        Window::Oldest => "live".into(),
    }
}

/// The window the numbers are of, in words.
pub fn window_label(w: Window) -> String {
    match w {
        Window::Oldest => "the oldest records of each partition".into(),
        Window::Since(d) => format!(
            "the records of the last {} (by timestamp)",
            partwise::duration::label(d)
        ),
        Window::FromEnd(n) => format!("the newest {n} records of each partition"),
    }
}

pub fn topic_json(t: &TopicAudit) -> Value {
    json!({
        "topic": t.name,
        "error": t.error,
        "partial": t.partial,
        "partitions": t.partition_count(),
        "per_partition": t.partitions.iter().map(|p| json!({
            "partition": p.partition,
            "leader": p.leader,
            "low": p.low,
            "high": p.high,
            "records": p.records,
            "sampled": p.sampled,
            "start": p.start,
            "error": p.error,
        })).collect::<Vec<_>>(),
        "window": t.traffic.as_ref().map(|w| serde_json::to_value(WindowJson::of(w)).unwrap_or(Value::Null)),
        "skew": t.skew.as_ref().map(|s| json!({
            "total": s.total,
            "mean": s.mean,
            "max": s.max,
            "max_over_mean": s.max_over_mean,
            "cv": s.cv,
            "gini": s.gini,
            "hot_partitions": s.hot_partitions,
            "idle_partitions": s.idle_partitions,
        })),
        "routing": t.routing.as_ref().map(routing_json),
        "findings": topic_finding(t).iter().map(reason_json).collect::<Vec<_>>(),
    })
}

/// The topic's own finding: the producers that wrote it differently.
pub fn topic_finding(t: &TopicAudit) -> Option<partwise::findings::Reason> {
    partwise::inference::mixture_finding(&t.name, t.routing.as_ref()?)
}

/// Each fix once, in the order first given.
pub fn distinct_fixes(findings: &[partwise::findings::Reason]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in findings {
        let fix = f.fix();
        if !fix.is_empty() && !out.contains(&fix) {
            out.push(fix);
        }
    }
    out
}

/// An audit as JSON (`kafka audit --format json`, and `report -b`).
pub fn report_json(r: &AuditReport) -> Value {
    let mut doc = json!({
        "topics": r.topics.iter().map(topic_json).collect::<Vec<_>>(),
        "partial": r.partial(),
    });
    if let Some(v) = &r.verdict {
        doc["copartitioning"] = json!({
            "copartitioned": v.copartitioned,
            "reasons": v.findings.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "fixes": distinct_fixes(&v.findings),
            "findings": v.findings.iter().map(reason_json).collect::<Vec<_>>(),
            "common_partitioners": v.common.iter().map(ToString::to_string).collect::<Vec<_>>(),
        });
    }
    doc
}
