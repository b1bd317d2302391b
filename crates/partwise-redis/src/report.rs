//! The `redis` commands' reports: the slot map with each node's own answer
//! (`redis slots`), a family check's rows and summary (`redis check`), and
//! the sampled hash tags by key count (`redis hot --by keys`). Each derives
//! `Serialize`: its JSON is the fields in declaration order.

use crate::{CheckReport, Error, Family, HotReport, HotRule, KeyPlacement, Node, SlotMap, Source};
use partwise::ser::{key_hex, key_text};
use serde::Serialize;
use std::time::Duration;

// ---- redis slots

/// A node of the slot map, with its own answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NodeRow {
    /// The node id (40 hex digits).
    pub id: String,
    /// `HOST:PORT`.
    pub addr: String,
    /// Its host.
    pub host: String,
    /// Its port.
    pub port: u16,
    /// `primary` or `replica`.
    pub role: &'static str,
    /// The cluster's opinion of it (`online`, `failed`, ...).
    pub health: String,
    /// Its keys (`DBSIZE`) when they were asked for: `null` when it did not answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keys: Option<Option<u64>>,
    /// Whether the node itself answered (the health column is the cluster's
    /// opinion, which lags a node that froze by up to cluster-node-timeout).
    pub answered: bool,
}

/// A primary, its replicas and the slot ranges they serve.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShardRow {
    /// Inclusive slot ranges, ascending.
    pub slots: Vec<[u16; 2]>,
    /// Slots served.
    pub slot_count: u32,
    /// The primary.
    pub primary: NodeRow,
    /// Its replicas.
    pub replicas: Vec<NodeRow>,
}

/// One node with its shard's slots (`redis slots --format ndjson`, a line per node).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NodeLine<'a> {
    /// The node.
    #[serde(flatten)]
    pub node: &'a NodeRow,
    /// Its shard's slot ranges.
    pub slots: &'a [[u16; 2]],
    /// Its shard's slot count.
    pub slot_count: u32,
}

/// The live slot map (`redis slots`).
#[derive(Clone, Debug, Serialize)]
pub struct SlotsReport {
    /// The node that answered.
    pub seed: String,
    /// `CLUSTER SHARDS` or `CLUSTER SLOTS`.
    pub source: &'static str,
    /// `cluster_state` from `CLUSTER INFO`.
    pub cluster_state: String,
    /// The shards.
    pub shards: Vec<ShardRow>,
    /// Slots no node serves.
    pub unassigned: Vec<[u16; 2]>,
    /// Whether key counts were asked for.
    #[serde(skip)]
    pub with_keys: bool,
    /// The nodes that did not answer `DBSIZE`, with why.
    #[serde(skip)]
    pub errors: Vec<Error>,
}

impl SlotsReport {
    /// Every node, shard by shard, primary first, with its shard.
    pub fn nodes(&self) -> impl Iterator<Item = (&ShardRow, &NodeRow)> {
        self.shards.iter().flat_map(|s| {
            std::iter::once(&s.primary)
                .chain(&s.replicas)
                .map(move |n| (s, n))
        })
    }

    /// The lines of `--format ndjson`.
    pub fn lines(&self) -> impl Iterator<Item = NodeLine<'_>> {
        self.nodes().map(|(s, n)| NodeLine {
            node: n,
            slots: &s.slots,
            slot_count: s.slot_count,
        })
    }

    /// Whether the cluster serves every slot and every node answered.
    pub fn healthy(&self) -> bool {
        self.cluster_state == "ok" && self.unassigned.is_empty() && self.errors.is_empty()
    }
}

fn pairs(ranges: &[(u16, u16)]) -> Vec<[u16; 2]> {
    ranges.iter().map(|&(a, b)| [a, b]).collect()
}

/// The slot map from the first of `seeds` that answers, every node asked
/// `DBSIZE` (O(1), read-only) whether or not `with_keys`: the answer is the
/// node's own word, which the cluster's health column is not.
pub fn slots_report(
    seeds: &[crate::NodeAddr],
    timeout: Duration,
    with_keys: bool,
) -> Result<SlotsReport, Error> {
    let map = SlotMap::fetch(seeds, timeout)?;
    Ok(slots_of(&map, &map.key_counts(timeout), with_keys))
}

/// [`slots_report`] of a map already read, with each node's `DBSIZE`.
pub fn slots_of(
    map: &SlotMap,
    probes: &[(Node, Result<u64, Error>)],
    with_keys: bool,
) -> SlotsReport {
    let probe = |n: &Node| {
        probes
            .iter()
            .find(|(m, _)| m.addr == n.addr)
            .map(|(_, r)| r)
    };
    let row = |n: &Node| NodeRow {
        id: n.id.clone(),
        addr: n.addr.to_string(),
        host: n.addr.host.clone(),
        port: n.addr.port,
        role: n.role.as_str(),
        health: n.health.clone(),
        keys: with_keys.then(|| probe(n).and_then(|r| r.as_ref().ok().copied())),
        answered: probe(n).is_some_and(|r| r.is_ok()),
    };
    SlotsReport {
        seed: map.seed.to_string(),
        source: match map.source {
            Source::Shards => "CLUSTER SHARDS",
            Source::Slots => "CLUSTER SLOTS",
        },
        cluster_state: map.state.clone(),
        shards: map
            .shards
            .iter()
            .map(|s| ShardRow {
                slots: pairs(&s.ranges),
                slot_count: s.slot_count(),
                primary: row(&s.primary),
                replicas: s.replicas.iter().map(row).collect(),
            })
            .collect(),
        unassigned: pairs(&map.unassigned()),
        with_keys,
        errors: probes
            .iter()
            .filter_map(|(_, r)| r.as_ref().err().cloned())
            .collect(),
    }
}

// ---- redis check

/// A family member of a logical key.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemberRow {
    /// The key as text (`null` when it is not UTF-8).
    #[serde(serialize_with = "key_text")]
    pub key: Vec<u8>,
    /// The key in hex.
    #[serde(serialize_with = "key_hex", rename = "key_hex")]
    pub hex: Vec<u8>,
    /// Its slot by partwise.
    pub slot: u16,
    /// Its slot by the owning node (`null`: that node did not answer).
    pub live_slot: Option<u16>,
    /// The primary serving the slot.
    pub node: Option<String>,
}

/// One logical key of a `redis check` (a line of `--format ndjson`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KeyRow {
    /// The logical key as text (`null` when it is not UTF-8).
    #[serde(serialize_with = "key_text")]
    pub key: Vec<u8>,
    /// The logical key in hex.
    #[serde(serialize_with = "key_hex", rename = "key_hex")]
    pub hex: Vec<u8>,
    /// Its family members.
    pub members: Vec<MemberRow>,
    /// Whether every member shares one slot.
    pub co_located: bool,
    /// Whether every member is on one node.
    pub same_node: bool,
    /// Whether every member's node answered.
    pub verified: bool,
}

impl KeyRow {
    /// The row of one logical key.
    pub fn of(k: &KeyPlacement) -> KeyRow {
        KeyRow {
            key: k.key.clone(),
            hex: k.key.clone(),
            members: k
                .members
                .iter()
                .map(|m| MemberRow {
                    key: m.key.clone(),
                    hex: m.key.clone(),
                    slot: m.slot,
                    live_slot: m.live_slot,
                    node: m.node.as_ref().map(ToString::to_string),
                })
                .collect(),
            co_located: k.co_located(),
            same_node: k.same_node(),
            verified: k.verified(),
        }
    }
}

/// A `redis check`'s summary, its lints written as `L`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CheckSummary<L> {
    /// Logical keys checked.
    pub keys: usize,
    /// Those whose members share one slot.
    pub co_located: usize,
    /// Those whose members share one node.
    pub same_node: usize,
    /// Those some of whose nodes did not answer.
    pub unverified: usize,
    /// The family's patterns.
    pub patterns: Vec<String>,
    /// The lint of the patterns.
    pub lints: Vec<L>,
    /// Nodes that failed, and disagreements.
    pub errors: Vec<String>,
}

impl CheckReport {
    /// The summary of this check of `family`, each lint written by `lint`.
    pub fn summary<L>(
        &self,
        family: &Family,
        lint: impl Fn(&crate::FamilyReason) -> L,
    ) -> CheckSummary<L> {
        CheckSummary {
            keys: self.keys.len(),
            co_located: self.co_located(),
            same_node: self.same_node(),
            unverified: self.unverified(),
            patterns: family
                .patterns()
                .iter()
                .map(|p| p.as_str().to_string())
                .collect(),
            lints: self.lints.iter().map(lint).collect(),
            errors: self.errors.iter().map(ToString::to_string).collect(),
        }
    }

    /// Every logical key's row.
    pub fn rows(&self) -> Vec<KeyRow> {
        self.keys.iter().map(KeyRow::of).collect()
    }
}

// ---- redis hot --by keys

/// A sampled primary.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SampledNode {
    /// The primary.
    pub node: String,
    /// Its keys (`DBSIZE`, or the matching keys counted by a full scan).
    pub keys: u64,
    /// Keys sampled.
    pub sampled: usize,
    /// Sampled keys without a hash tag.
    pub untagged: usize,
    /// Slots the sample found in use.
    pub slots_in_use: usize,
    /// Slots it serves.
    pub slots_owned: u32,
}

/// The rule a tag is judged hot by.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RuleRow {
    /// Times what one slot in use holds.
    pub margin: f64,
    /// Keys at least (estimated).
    pub min_keys: f64,
    /// Share of its node's keys at least.
    pub node_share: f64,
    /// Share of the cluster's keys at least.
    pub cluster_share: f64,
}

/// A sampled hash tag by its keys (a line of `--format ndjson`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TagRow {
    /// The tag as text (`null` when it is not UTF-8).
    #[serde(serialize_with = "key_text")]
    pub tag: Vec<u8>,
    /// The tag in hex.
    #[serde(serialize_with = "key_hex", rename = "tag_hex")]
    pub hex: Vec<u8>,
    /// Its slot.
    pub slot: u16,
    /// The primary serving it.
    pub node: String,
    /// Its keys among the sampled ones.
    pub sampled: usize,
    /// Its estimated keys, rounded.
    pub estimated_keys: f64,
    /// Its share of its node's keys.
    pub node_share: f64,
    /// Its share of the cluster's keys.
    pub cluster_share: f64,
    /// Times what one slot in use holds on its node.
    pub node_ratio: f64,
    /// Times what one slot in use holds in the cluster.
    pub cluster_ratio: f64,
    /// Whether it is hot by the rule.
    pub hot: bool,
}

/// A sampled slot.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SlotRow {
    /// The slot.
    pub slot: u16,
    /// The primary serving it.
    pub node: String,
    /// Its keys among the sampled ones.
    pub sampled: usize,
    /// Its estimated keys, rounded.
    pub estimated_keys: f64,
}

/// `redis hot` by key counts.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KeysHotReport {
    /// Always `keys`.
    pub measure: &'static str,
    /// Why key counts: where the numbers come from.
    pub measure_reason: String,
    /// The sampled primaries.
    pub nodes: Vec<SampledNode>,
    /// The rule.
    pub rule: RuleRow,
    /// The first `top` tags, most keys first.
    pub tags: Vec<TagRow>,
    /// Every hot tag.
    pub hot_tags: Vec<TagRow>,
    /// The first `top` slots.
    pub slots: Vec<SlotRow>,
    /// Nodes that failed.
    pub errors: Vec<String>,
}

impl HotReport {
    /// This sample as `redis hot`'s report by keys: the first `top` tags and
    /// slots, judged by `rule`; `why` says why key counts are the measure.
    pub fn by_keys(&self, top: usize, rule: HotRule, why: &str) -> KeysHotReport {
        let tag = |t: &crate::TagLoad| {
            let v = self.verdict(t, rule);
            TagRow {
                tag: t.tag.clone(),
                hex: t.tag.clone(),
                slot: t.slot,
                node: t.node.to_string(),
                sampled: t.sampled,
                estimated_keys: t.estimated_keys.round(),
                node_share: t.node_share,
                cluster_share: v.cluster_share,
                node_ratio: v.node_ratio,
                cluster_ratio: v.cluster_ratio,
                hot: v.hot,
            }
        };
        KeysHotReport {
            measure: "keys",
            measure_reason: why.to_string(),
            nodes: self
                .nodes
                .iter()
                .map(|n| SampledNode {
                    node: n.node.to_string(),
                    keys: n.keys,
                    sampled: n.sampled,
                    untagged: n.untagged,
                    slots_in_use: n.slots_in_use,
                    slots_owned: n.slots_owned,
                })
                .collect(),
            rule: RuleRow {
                margin: rule.margin,
                min_keys: rule.min_keys,
                node_share: rule.node_share,
                cluster_share: rule.cluster_share,
            },
            tags: self.tags.iter().take(top).map(tag).collect(),
            hot_tags: self.hot_tags(rule).map(tag).collect(),
            slots: self
                .slots
                .iter()
                .take(top)
                .map(|s| SlotRow {
                    slot: s.slot,
                    node: s.node.to_string(),
                    sampled: s.sampled,
                    estimated_keys: s.estimated_keys.round(),
                })
                .collect(),
            errors: self.errors.iter().map(ToString::to_string).collect(),
        }
    }
}
