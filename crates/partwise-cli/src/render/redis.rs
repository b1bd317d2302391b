//! The JSON of a `redis check`: `redis check --format json`, and the live
//! part of `report -c`'s JSON twin.

use crate::output::{hex, key_json};
use partwise::findings::FamilyReason;
use partwise_redis::{CheckReport, CheckSummary, Family, KeyRow};
use serde::Serialize;
use serde_json::Value;

/// A lint finding of a family as JSON: the finding, and whether it is a
/// problem or advice.
pub fn lint_json(l: &FamilyReason) -> Value {
    let mut v = crate::render::findings::family_reason_json(l);
    v["problem"] = Value::Bool(l.is_problem());
    v
}

/// A `redis check`'s summary, its lints as JSON.
pub fn check_summary(report: &CheckReport, family: &Family) -> CheckSummary<Value> {
    report.summary(family, lint_json)
}

/// A `redis check` as one document: the summary, the rows, and with
/// `redis check` the load per primary.
#[derive(Serialize)]
pub struct CheckDoc {
    #[serde(flatten)]
    pub summary: CheckSummary<Value>,
    pub rows: Vec<KeyRow>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_load: Option<ClusterLoadJson>,
}

impl CheckDoc {
    pub fn of(report: &CheckReport, family: &Family) -> CheckDoc {
        CheckDoc {
            summary: check_summary(report, family),
            rows: report.rows(),
            node_load: None,
        }
    }
}

/// A sampled tag weighed by the work on its slot (`redis hot --by cpu|net`).
#[derive(serde::Serialize)]
pub struct TagTrafficJson {
    /// The tag as text (`null` when it is not UTF-8).
    pub tag: Value,
    /// The tag in hex.
    pub tag_hex: String,
    pub slot: u16,
    pub node: String,
    /// Its keys among the sampled ones.
    pub sampled: usize,
    /// Its estimated keys.
    pub estimated_keys: f64,
    /// The measure's load on its slot.
    pub load: u64,
    /// Sampled tags sharing the slot (itself included): the load is theirs together.
    pub slot_tags: usize,
    pub node_share: f64,
    pub cluster_share: f64,
    pub node_ratio: f64,
    pub cluster_ratio: f64,
    pub hot: bool,
}

/// One primary's load by the measure.
#[derive(serde::Serialize)]
pub struct NodeLoadJson {
    pub node: String,
    /// Its server and version (`valkey 8.1.8`).
    pub server: String,
    pub load: u64,
    pub share: f64,
    pub slots_in_use: usize,
    pub slots_owned: u32,
}

/// A busy slot.
#[derive(serde::Serialize)]
pub struct SlotLoadJson {
    pub slot: u16,
    pub node: String,
    pub load: u64,
}

/// The rule a tag is judged by.
#[derive(serde::Serialize)]
pub struct RuleJson {
    pub margin: f64,
    pub node_share: f64,
    pub cluster_share: f64,
}

/// `redis hot --by cpu|net --format json`.
#[derive(serde::Serialize)]
pub struct TrafficJson {
    /// `cpu` or `net`.
    pub measure: partwise_redis::Measure,
    /// Why this measure: where the numbers come from.
    pub measure_reason: String,
    pub nodes: Vec<NodeLoadJson>,
    pub rule: RuleJson,
    /// The sampled tags, heaviest slot first (the first `--top`).
    pub tags: Vec<TagTrafficJson>,
    pub hot_tags: Vec<TagTrafficJson>,
    pub slots: Vec<SlotLoadJson>,
    /// Keys sampled per node (the hash-tag map the loads are read through).
    pub sampled_keys: usize,
}

impl TrafficJson {
    pub fn of(
        t: &partwise_redis::TrafficReport,
        sample: &partwise_redis::HotReport,
        top: usize,
        rule: partwise_redis::HotRule,
        why: &str,
    ) -> TrafficJson {
        let tag = |x: &partwise_redis::TagTraffic| TagTrafficJson {
            tag: key_json(&x.tag),
            tag_hex: hex(&x.tag),
            slot: x.slot,
            node: x.node.to_string(),
            sampled: x.sampled,
            estimated_keys: x.estimated_keys.round(),
            load: x.load,
            slot_tags: x.slot_tags,
            node_share: x.verdict.node_share,
            cluster_share: x.verdict.cluster_share,
            node_ratio: x.verdict.node_ratio,
            cluster_ratio: x.verdict.cluster_ratio,
            hot: x.verdict.hot,
        };
        TrafficJson {
            measure: t.measure,
            measure_reason: why.to_string(),
            nodes: t
                .nodes
                .iter()
                .map(|n| NodeLoadJson {
                    node: n.node.to_string(),
                    server: n.server.clone(),
                    load: n.load,
                    share: n.share,
                    slots_in_use: n.slots_in_use,
                    slots_owned: n.slots_owned,
                })
                .collect(),
            rule: RuleJson {
                margin: rule.margin,
                node_share: rule.node_share,
                cluster_share: rule.cluster_share,
            },
            tags: t.tags.iter().take(top).map(tag).collect(),
            hot_tags: t.hot_tags().map(tag).collect(),
            slots: t
                .slots
                .iter()
                .map(|(s, n, l)| SlotLoadJson {
                    slot: *s,
                    node: n.to_string(),
                    load: *l,
                })
                .collect(),
            sampled_keys: sample.nodes.iter().map(|n| n.sampled).sum(),
        }
    }
}

/// One primary's share of the load (`redis check`, the report's slot view).
#[derive(serde::Serialize)]
pub struct PrimaryLoadJson {
    pub node: String,
    /// Its server and version (`valkey 8.1.8`).
    pub server: String,
    pub load: u64,
    pub share: f64,
    pub slots_owned: u32,
}

/// Per-primary load by the measure `redis hot` takes by default.
#[derive(serde::Serialize)]
pub struct ClusterLoadJson {
    /// `cpu` where every primary counts it, else `keys`.
    pub measure: partwise_redis::Measure,
    /// Where the numbers come from, or why it fell back to key counts.
    pub measure_reason: String,
    pub nodes: Vec<PrimaryLoadJson>,
    /// Primaries that did not answer, with why.
    pub unanswered: Vec<String>,
}

impl ClusterLoadJson {
    pub fn of(l: &partwise_redis::ClusterLoad) -> ClusterLoadJson {
        ClusterLoadJson {
            measure: l.measure,
            measure_reason: l.reason.clone(),
            nodes: l
                .nodes
                .iter()
                .map(|n| PrimaryLoadJson {
                    node: n.node.to_string(),
                    server: n.server.clone(),
                    load: n.load,
                    share: n.share,
                    slots_owned: n.slots_owned,
                })
                .collect(),
            unanswered: l.errors.iter().map(ToString::to_string).collect(),
        }
    }
}

/// The per-primary load as a table, its measure and reason first.
pub fn write_load(
    l: &partwise_redis::ClusterLoad,
    out: &mut impl std::io::Write,
) -> crate::exit::Result<()> {
    use crate::output::{visible, Table};
    writeln!(
        out,
        "load per primary by {} ({})",
        l.measure.unit(),
        visible(&l.reason)
    )?;
    let mut tab = Table::new(["NODE", "SERVER", l.measure.unit(), "SHARE", "SLOTS"]);
    for n in &l.nodes {
        tab.row([
            n.node.to_string(),
            visible(&n.server).into_owned(),
            n.load.to_string(),
            format!("{:.1}%", 100.0 * n.share),
            n.slots_owned.to_string(),
        ]);
    }
    tab.write(out)
}

/// A hot tag of a family's keys (`report -c`).
#[derive(serde::Serialize)]
pub struct HotTagJson {
    /// The tag as text (`null` when it is not UTF-8).
    pub tag: Value,
    pub tag_hex: String,
    pub slot: u16,
    pub node: String,
    pub estimated_keys: f64,
    pub node_share: f64,
    pub cluster_share: f64,
}

impl HotTagJson {
    pub fn of(t: &partwise_redis::HotTag) -> HotTagJson {
        HotTagJson {
            tag: key_json(&t.tag),
            tag_hex: hex(&t.tag),
            slot: t.slot,
            node: t.node.to_string(),
            estimated_keys: t.estimated_keys.round(),
            node_share: t.node_share,
            cluster_share: t.cluster_share,
        }
    }
}
