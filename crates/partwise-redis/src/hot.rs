//! Hot-tag sampling: `SCAN` on every primary (never `KEYS`, which blocks the
//! node), grouping the sampled keys by hash tag and slot, and scaling the
//! sample to each node's `DBSIZE` to estimate where keys crowd. Read-only.

use crate::error::Error;
use crate::node::{NodeAddr, NodeConn};
use crate::slots::SlotMap;
use partwise::slot::{hash_tag, key_slot};
use std::collections::HashMap;
use std::time::Duration;

/// Keys asked for per `SCAN` call: a hint to the server, which may return
/// more or fewer.
const SCAN_COUNT: usize = 1000;

/// What was sampled on one primary.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeSample {
    /// The primary.
    pub node: NodeAddr,
    /// Its keys (`DBSIZE`).
    pub keys: u64,
    /// Keys sampled.
    pub sampled: usize,
    /// Sampled keys without a hash tag.
    pub untagged: usize,
}

/// The sampled load of one hash tag (all its keys share one slot).
#[derive(Clone, Debug, PartialEq)]
pub struct TagLoad {
    /// The tag.
    pub tag: Vec<u8>,
    /// Its slot.
    pub slot: u16,
    /// The primary serving it.
    pub node: NodeAddr,
    /// Sampled keys with this tag.
    pub sampled: usize,
    /// Estimated keys with this tag on the node.
    pub estimated_keys: f64,
    /// Its fraction of the node's sampled keys.
    pub node_share: f64,
}

/// The sampled load of one slot.
#[derive(Clone, Debug, PartialEq)]
pub struct SlotLoad {
    /// The slot.
    pub slot: u16,
    /// The primary serving it.
    pub node: NodeAddr,
    /// Sampled keys in it.
    pub sampled: usize,
    /// Estimated keys in it.
    pub estimated_keys: f64,
}

/// The result of [`sample`].
#[derive(Clone, Debug, PartialEq)]
pub struct HotReport {
    /// One entry per primary that answered.
    pub nodes: Vec<NodeSample>,
    /// Tags, most sampled keys first.
    pub tags: Vec<TagLoad>,
    /// Slots, most sampled keys first.
    pub slots: Vec<SlotLoad>,
    /// Primaries that failed; their keys are missing from the estimates.
    pub errors: Vec<Error>,
}

/// When a tag counts as hot.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HotRule {
    /// At least this fraction of its node's sampled keys.
    pub node_share: f64,
    /// And at least this fraction of all the cluster's keys (estimated), so
    /// that a tag of two keys on a near-empty node is not called hot.
    pub cluster_share: f64,
}

impl HotReport {
    /// The tag's estimated fraction of every key the answering primaries hold.
    pub fn cluster_share(&self, t: &TagLoad) -> f64 {
        let total: u64 = self.nodes.iter().map(|n| n.keys).sum();
        if total == 0 {
            0.0
        } else {
            t.estimated_keys / total as f64
        }
    }

    /// Whether `t` concentrates keys under `rule` (and has more than one key).
    pub fn is_hot(&self, t: &TagLoad, rule: HotRule) -> bool {
        t.sampled > 1
            && t.node_share >= rule.node_share
            && self.cluster_share(t) >= rule.cluster_share
    }

    /// The hot tags: those that concentrate keys on one node.
    pub fn hot_tags(&self, rule: HotRule) -> impl Iterator<Item = &TagLoad> {
        self.tags.iter().filter(move |t| self.is_hot(t, rule))
    }
}

/// Samples up to `per_node` keys on every primary of `map`.
pub fn sample(map: &SlotMap, per_node: usize, timeout: Duration) -> HotReport {
    let mut nodes = Vec::new();
    let mut errors = Vec::new();
    let mut tags: HashMap<(Vec<u8>, NodeAddr), usize> = HashMap::new();
    let mut slots: HashMap<u16, (NodeAddr, usize)> = HashMap::new();
    for shard in &map.shards {
        let addr = &shard.primary.addr;
        let keys = match scan(addr, per_node, timeout) {
            Ok(k) => k,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        let (dbsize, sampled) = keys;
        let mut untagged = 0;
        for key in &sampled {
            let slot = key_slot(key);
            match hash_tag(key) {
                Some(t) => *tags.entry((t.to_vec(), addr.clone())).or_default() += 1,
                None => untagged += 1,
            }
            slots.entry(slot).or_insert_with(|| (addr.clone(), 0)).1 += 1;
        }
        nodes.push(NodeSample {
            node: addr.clone(),
            keys: dbsize,
            sampled: sampled.len(),
            untagged,
        });
    }
    let scale = |node: &NodeAddr, n: usize| -> (f64, f64) {
        let s = nodes
            .iter()
            .find(|s| s.node == *node)
            .expect("sampled node");
        let share = n as f64 / s.sampled.max(1) as f64;
        (share * s.keys as f64, share)
    };
    let mut tags: Vec<TagLoad> = tags
        .into_iter()
        .map(|((tag, node), n)| {
            let (estimated_keys, node_share) = scale(&node, n);
            TagLoad {
                slot: key_slot(&tag),
                tag,
                node,
                sampled: n,
                estimated_keys,
                node_share,
            }
        })
        .collect();
    tags.sort_by(|a, b| b.sampled.cmp(&a.sampled).then_with(|| a.tag.cmp(&b.tag)));
    let mut slots: Vec<SlotLoad> = slots
        .into_iter()
        .map(|(slot, (node, n))| SlotLoad {
            slot,
            estimated_keys: scale(&node, n).0,
            node,
            sampled: n,
        })
        .collect();
    slots.sort_by(|a, b| b.sampled.cmp(&a.sampled).then(a.slot.cmp(&b.slot)));
    HotReport {
        nodes,
        tags,
        slots,
        errors,
    }
}

/// `DBSIZE` and up to `limit` keys of one node, by `SCAN`.
fn scan(addr: &NodeAddr, limit: usize, timeout: Duration) -> Result<(u64, Vec<Vec<u8>>), Error> {
    let mut conn = NodeConn::open(addr, timeout)?;
    let dbsize: u64 = conn.query(&redis::cmd("DBSIZE"), "DBSIZE")?;
    let mut keys = Vec::new();
    let mut cursor: u64 = 0;
    while keys.len() < limit {
        let (next, batch): (u64, Vec<Vec<u8>>) = conn.query(
            redis::cmd("SCAN")
                .arg(cursor)
                .arg("COUNT")
                .arg(SCAN_COUNT.min(limit - keys.len()).max(10)),
            "SCAN",
        )?;
        keys.extend(batch);
        cursor = next;
        if cursor == 0 {
            break;
        }
    }
    keys.truncate(limit);
    Ok((dbsize, keys))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(name: &str, node: &NodeAddr, sampled: usize, estimated: f64, share: f64) -> TagLoad {
        TagLoad {
            tag: name.as_bytes().to_vec(),
            slot: key_slot(name.as_bytes()),
            node: node.clone(),
            sampled,
            estimated_keys: estimated,
            node_share: share,
        }
    }

    #[test]
    fn a_small_tag_on_a_near_empty_node_is_not_hot() {
        let (a, b) = (NodeAddr::new("a", 1), NodeAddr::new("b", 2));
        let node = |n: &NodeAddr, keys| NodeSample {
            node: n.clone(),
            keys,
            sampled: keys as usize,
            untagged: 0,
        };
        let report = HotReport {
            nodes: vec![node(&a, 3), node(&b, 100_000)],
            // 2 of the 3 keys of node a; 30,000 of node b's 100,000.
            tags: vec![
                tag("tiny", &a, 2, 2.0, 2.0 / 3.0),
                tag("big", &b, 3000, 30_000.0, 0.3),
            ],
            slots: Vec::new(),
            errors: Vec::new(),
        };
        let rule = HotRule {
            node_share: 0.05,
            cluster_share: 0.01,
        };
        let hot: Vec<&[u8]> = report.hot_tags(rule).map(|t| t.tag.as_slice()).collect();
        assert_eq!(hot, [b"big".as_slice()]);
        // Without the cluster-wide floor, the two keys would count.
        let loose = HotRule {
            cluster_share: 0.0,
            ..rule
        };
        assert_eq!(report.hot_tags(loose).count(), 2);
    }
}
