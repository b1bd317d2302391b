//! The JSON of a Kafka audit: `kafka audit --format json`, and the live part
//! of `report -b`'s JSON twin.

use crate::render::findings::reason_json;
use partwise::findings::Reason;
use partwise_kafka::audit::{AuditReport, TopicAudit, Window};
use serde::Serialize;
use serde_json::Value;

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
    w.describe()
}

/// A topic's audit as JSON: the audit's own fields, then its findings.
#[derive(Serialize)]
pub struct TopicJson<'a> {
    #[serde(flatten)]
    pub audit: &'a TopicAudit,
    pub findings: Vec<Value>,
}

pub fn topic_json(t: &TopicAudit) -> TopicJson<'_> {
    TopicJson {
        audit: t,
        findings: topic_finding(t).iter().map(reason_json).collect(),
    }
}

/// The topic's own finding: the producers that wrote it differently.
pub fn topic_finding(t: &TopicAudit) -> Option<Reason> {
    partwise::inference::mixture_finding(&t.name, t.routing.as_ref()?)
}

/// Each fix once, in the order first given.
pub fn distinct_fixes(findings: &[Reason]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in findings {
        let fix = f.fix();
        if !fix.is_empty() && !out.contains(&fix) {
            out.push(fix);
        }
    }
    out
}

/// Whether the audited topics are co-partitioned, with every reason they
/// are not and each fix once.
#[derive(Serialize)]
pub struct CopartitioningJson {
    pub copartitioned: bool,
    pub reasons: Vec<String>,
    pub fixes: Vec<String>,
    pub findings: Vec<Value>,
    pub common_partitioners: Vec<String>,
}

/// An audit as JSON (`kafka audit --format json`, and `report -b`).
#[derive(Serialize)]
pub struct AuditJson<'a> {
    pub topics: Vec<TopicJson<'a>>,
    pub partial: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copartitioning: Option<CopartitioningJson>,
}

pub fn report_json(r: &AuditReport) -> AuditJson<'_> {
    AuditJson {
        topics: r.topics.iter().map(topic_json).collect(),
        partial: r.partial(),
        copartitioning: r.verdict.as_ref().map(|v| CopartitioningJson {
            copartitioned: v.copartitioned,
            reasons: v.findings.iter().map(ToString::to_string).collect(),
            fixes: distinct_fixes(&v.findings),
            findings: v.findings.iter().map(reason_json).collect(),
            common_partitioners: v.common.iter().map(ToString::to_string).collect(),
        }),
    }
}
