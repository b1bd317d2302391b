//! The live family check: for each logical key, the slot and node of every
//! family member, with each owning node asked (`CLUSTER KEYSLOT`, pipelined)
//! so the answer is the cluster's, not only partwise's arithmetic.

use crate::error::Error;
use crate::node::{NodeAddr, NodeConn};
use crate::slots::SlotMap;
use partwise::redis::family::{Family, FamilyReason};
use partwise::redis::slot::key_slot;
use std::collections::BTreeMap;
use std::time::Duration;

/// Keys per pipeline: keeps one node's replies small and a slow node's
/// timeout per batch, not per key.
const PIPELINE: usize = 1000;

/// Where one member key lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// The key.
    pub key: Vec<u8>,
    /// Its slot by partwise's `key_slot`.
    pub slot: u16,
    /// Its slot by the owning node's `CLUSTER KEYSLOT`; `None` when that node
    /// did not answer.
    pub live_slot: Option<u16>,
    /// The primary serving the slot; `None` when no node serves it.
    pub node: Option<NodeAddr>,
}

/// One logical key and its family members.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyPlacement {
    /// The logical key.
    pub key: Vec<u8>,
    /// One member per pattern, in pattern order.
    pub members: Vec<Member>,
}

impl KeyPlacement {
    /// Whether every member shares one slot: one MULTI/EXEC or Lua script can
    /// touch them all.
    pub fn co_located(&self) -> bool {
        self.members.windows(2).all(|w| w[0].slot == w[1].slot)
    }

    /// Whether every member is on one node (possibly in different slots,
    /// which is not enough for a multi-key command).
    pub fn same_node(&self) -> bool {
        self.members.iter().all(|m| m.node.is_some())
            && self.members.windows(2).all(|w| w[0].node == w[1].node)
    }

    /// Whether every member's node answered.
    pub fn verified(&self) -> bool {
        self.members.iter().all(|m| m.live_slot.is_some())
    }
}

/// The result of [`check`]. Node failures do not stop the check: the keys
/// they own are reported unverified and the failures listed in `errors`.
#[derive(Clone, Debug)]
pub struct CheckReport {
    /// The lint of the family's patterns.
    pub lints: Vec<FamilyReason>,
    /// One placement per logical key, in input order.
    pub keys: Vec<KeyPlacement>,
    /// Nodes that failed (unreachable, timed out, answered an error), and
    /// disagreements between a node's slot and partwise's.
    pub errors: Vec<Error>,
}

impl CheckReport {
    /// Logical keys whose members share a slot.
    pub fn co_located(&self) -> usize {
        self.keys.iter().filter(|k| k.co_located()).count()
    }

    /// Logical keys whose members share a node.
    pub fn same_node(&self) -> usize {
        self.keys.iter().filter(|k| k.same_node()).count()
    }

    /// Logical keys some of whose nodes did not answer.
    pub fn unverified(&self) -> usize {
        self.keys.iter().filter(|k| !k.verified()).count()
    }

    /// Whether every key co-locates and no lint is a problem.
    pub fn ok(&self) -> bool {
        self.co_located() == self.keys.len() && !self.lints.iter().any(FamilyReason::is_problem)
    }
}

/// Places every member of every logical key with `map` and asks each owning
/// primary for its slots. Each node gets at most one connection attempt, so
/// a dead node costs one `timeout`, not one per key.
pub fn check(map: &SlotMap, family: &Family, keys: &[Vec<u8>], timeout: Duration) -> CheckReport {
    let mut placements: Vec<KeyPlacement> = keys
        .iter()
        .map(|k| KeyPlacement {
            key: k.clone(),
            members: family
                .keys(k)
                .into_iter()
                .map(|key| {
                    let slot = key_slot(&key);
                    Member {
                        node: map.owner(slot).map(|s| s.primary.addr.clone()),
                        key,
                        slot,
                        live_slot: None,
                    }
                })
                .collect(),
        })
        .collect();
    let mut errors = Vec::new();
    let unowned = placements
        .iter()
        .flat_map(|p| &p.members)
        .filter(|m| m.node.is_none())
        .count();
    if unowned > 0 {
        errors.push(Error::ClusterDown {
            node: map.seed.clone(),
            reason: format!("{unowned} member keys are in slots no node serves"),
            cause: None,
        });
    }

    let mut by_node: BTreeMap<NodeAddr, Vec<(usize, usize)>> = BTreeMap::new();
    for (i, p) in placements.iter().enumerate() {
        for (j, m) in p.members.iter().enumerate() {
            if let Some(n) = &m.node {
                by_node.entry(n.clone()).or_default().push((i, j));
            }
        }
    }
    for (node, members) in by_node {
        let mut conn = match NodeConn::open(&node, timeout) {
            Ok(c) => c,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        for batch in members.chunks(PIPELINE) {
            let mut pipe = redis::pipe();
            for &(i, j) in batch {
                pipe.cmd("CLUSTER")
                    .arg("KEYSLOT")
                    .arg(&placements[i].members[j].key);
            }
            match conn.query_batch(&pipe, "CLUSTER KEYSLOT") {
                Ok(replies) => {
                    for (&(i, j), reply) in batch.iter().zip(replies) {
                        let m = &mut placements[i].members[j];
                        let live = match reply {
                            redis::Value::Int(s) if (0..16384).contains(&s) => s as u16,
                            other => {
                                errors.push(Error::Server {
                                    node: node.clone(),
                                    command: "CLUSTER KEYSLOT".to_string(),
                                    reason: format!("unexpected reply {other:?}"),
                                    cause: None,
                                });
                                continue;
                            }
                        };
                        m.live_slot = Some(live);
                        if live != m.slot {
                            errors.push(Error::Server {
                                node: node.clone(),
                                command: "CLUSTER KEYSLOT".to_string(),
                                reason: format!(
                                    "slot {live} for key {}, partwise computes {}",
                                    String::from_utf8_lossy(&m.key),
                                    m.slot
                                ),
                                cause: None,
                            });
                        }
                    }
                }
                Err(e) => {
                    errors.push(e);
                    break;
                }
            }
        }
    }
    CheckReport {
        lints: family.lint(),
        keys: placements,
        errors,
    }
}
