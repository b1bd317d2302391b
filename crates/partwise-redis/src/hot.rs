//! Hot-tag sampling: `SCAN` on every primary (never `KEYS`, which blocks the
//! node), grouping the sampled keys by hash tag and slot, and scaling the
//! sample to each node's `DBSIZE` to estimate where keys crowd. Read-only.
//! Which tags are hot is the core's rule, [`partwise::redis::hot_tag`].

use crate::error::Error;
use crate::node::{NodeAddr, NodeConn};
use crate::slots::SlotMap;
use partwise::redis::hot_tag::{judge, Scope};
pub use partwise::redis::hot_tag::{HotRule, Verdict};
use partwise::redis::slot::{hash_tag, key_slot};
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// Keys asked for per `SCAN` call: a hint to the server, which may return
/// more or fewer.
const SCAN_COUNT: usize = 1000;

/// What was sampled on one primary.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeSample {
    /// The primary.
    pub node: NodeAddr,
    /// Its keys (`DBSIZE`; with a pattern, the keys that match it).
    pub keys: u64,
    /// Keys sampled.
    pub sampled: usize,
    /// Sampled keys without a hash tag.
    pub untagged: usize,
    /// Distinct slots among the sampled keys.
    pub slots_in_use: usize,
    /// Slots the node serves, by the slot map.
    pub slots_owned: u32,
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

impl HotReport {
    /// Every key the answering primaries hold (estimated), over their slots.
    fn cluster_scope(&self) -> Scope {
        Scope {
            keys: self.nodes.iter().map(|n| n.keys as f64).sum(),
            slots_in_use: self.nodes.iter().map(|n| n.slots_in_use).sum(),
            slots_owned: self.nodes.iter().map(|n| n.slots_owned).sum(),
        }
    }

    fn node_scope(&self, node: &NodeAddr) -> Scope {
        self.nodes.iter().find(|n| n.node == *node).map_or(
            Scope {
                keys: 0.0,
                slots_in_use: 0,
                slots_owned: 0,
            },
            |n| Scope {
                keys: n.keys as f64,
                slots_in_use: n.slots_in_use,
                slots_owned: n.slots_owned,
            },
        )
    }

    /// The tag's estimated fraction of every key the answering primaries hold.
    pub fn cluster_share(&self, t: &TagLoad) -> f64 {
        self.cluster_scope().share(t.estimated_keys)
    }

    /// `t` measured against `rule`: its shares and how many slots' worth of
    /// keys it holds on its node and in the cluster.
    pub fn verdict(&self, t: &TagLoad, rule: HotRule) -> Verdict {
        judge(
            rule,
            t.estimated_keys,
            t.sampled,
            self.node_scope(&t.node),
            self.cluster_scope(),
        )
    }

    /// Whether `t` is hot under `rule`.
    pub fn is_hot(&self, t: &TagLoad, rule: HotRule) -> bool {
        self.verdict(t, rule).hot
    }

    /// The hot tags, most sampled keys first.
    pub fn hot_tags(&self, rule: HotRule) -> impl Iterator<Item = &TagLoad> {
        self.tags.iter().filter(move |t| self.is_hot(t, rule))
    }
}

/// Samples up to `per_node` keys on every primary of `map`.
pub fn sample(map: &SlotMap, per_node: usize, timeout: Duration) -> HotReport {
    sample_matching(map, per_node, None, timeout)
}

/// Samples up to `per_node` keys on every primary of `map`; with a
/// `pattern` (a `SCAN MATCH` glob, such as one application's prefix), only
/// the keys that match it, and each node's whole keyspace is scanned to
/// count them, so the estimates are of those keys alone.
pub fn sample_matching(
    map: &SlotMap,
    per_node: usize,
    pattern: Option<&[u8]>,
    timeout: Duration,
) -> HotReport {
    let mut nodes = Vec::new();
    let mut errors = Vec::new();
    let mut tags: HashMap<(Vec<u8>, NodeAddr), usize> = HashMap::new();
    let mut slots: HashMap<u16, (NodeAddr, usize)> = HashMap::new();
    for shard in &map.shards {
        let addr = &shard.primary.addr;
        let keys = match scan(addr, per_node, pattern, timeout) {
            Ok(k) => k,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        let (dbsize, sampled) = keys;
        let mut untagged = 0;
        let mut used = HashSet::new();
        for key in &sampled {
            let slot = key_slot(key);
            used.insert(slot);
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
            slots_in_use: used.len(),
            slots_owned: shard.slot_count(),
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

/// `DBSIZE` and up to `limit` keys of one node, by `SCAN`; with a pattern,
/// the number of keys that match it (the whole keyspace scanned) and up to
/// `limit` of them.
fn scan(
    addr: &NodeAddr,
    limit: usize,
    pattern: Option<&[u8]>,
    timeout: Duration,
) -> Result<(u64, Vec<Vec<u8>>), Error> {
    let mut conn = NodeConn::open(addr, timeout)?;
    let dbsize: u64 = conn.query(&redis::cmd("DBSIZE"), "DBSIZE")?;
    let mut keys = Vec::new();
    let mut matched: u64 = 0;
    let mut cursor: u64 = 0;
    loop {
        let mut cmd = redis::cmd("SCAN");
        cmd.arg(cursor);
        if let Some(p) = pattern {
            cmd.arg("MATCH").arg(p).arg("COUNT").arg(SCAN_COUNT);
        } else {
            cmd.arg("COUNT")
                .arg(SCAN_COUNT.min(limit.saturating_sub(keys.len())).max(10));
        }
        let (next, batch): (u64, Vec<Vec<u8>>) = conn.query(&cmd, "SCAN")?;
        matched += batch.len() as u64;
        let room = limit.saturating_sub(keys.len());
        keys.extend(batch.into_iter().take(room));
        cursor = next;
        if cursor == 0 || (pattern.is_none() && keys.len() >= limit) {
            break;
        }
    }
    keys.truncate(limit);
    // SCAN may return a key twice while the node rehashes: never count more
    // matches than the node holds.
    let total = if pattern.is_some() {
        matched.min(dbsize)
    } else {
        dbsize
    };
    Ok((total, keys))
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
    fn tags_are_judged_against_their_own_node_and_the_whole_cluster() {
        let (a, b) = (NodeAddr::new("a", 1), NodeAddr::new("b", 2));
        let node = |n: &NodeAddr, keys, slots_in_use| NodeSample {
            node: n.clone(),
            keys,
            sampled: keys as usize,
            untagged: 0,
            slots_in_use,
            slots_owned: 8192,
        };
        let report = HotReport {
            // Node a: 3 keys on 2 slots; node b: 100,000 keys on 3,000 slots.
            nodes: vec![node(&a, 3, 2), node(&b, 100_000, 3000)],
            tags: vec![
                tag("tiny", &a, 2, 2.0, 2.0 / 3.0),
                tag("big", &b, 3000, 30_000.0, 0.3),
            ],
            slots: Vec::new(),
            errors: Vec::new(),
        };
        let rule = HotRule::default();
        let hot: Vec<&[u8]> = report.hot_tags(rule).map(|t| t.tag.as_slice()).collect();
        assert_eq!(hot, [b"big".as_slice()]);
        let big = report.verdict(&report.tags[1], rule);
        // 30,000 keys against the other 70,000 over 2,999 slots on node b,
        // and the other 70,003 over 3,001 slots in the cluster.
        assert!((big.node_ratio - 30_000.0 / (70_000.0 / 2999.0)).abs() < 1e-6);
        assert!((big.cluster_ratio - 30_000.0 / (70_003.0 / 3001.0)).abs() < 1e-6);
        assert!((report.cluster_share(&report.tags[1]) - 30_000.0 / 100_003.0).abs() < 1e-12);
        // Two keys are no volume: only with every floor off would they count.
        let loose = HotRule {
            margin: 0.0,
            min_keys: 0.0,
            node_share: 0.0,
            cluster_share: 0.0,
        };
        assert_eq!(report.hot_tags(loose).count(), 2);
    }
}
