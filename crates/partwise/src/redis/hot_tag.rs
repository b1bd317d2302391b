//! When a Redis hash tag is hot: the rule `redis hot` applies to sampled keys.
//!
//! Every key of a tag hashes to one slot, so a tag's keys can never spread.
//! Holding a large share of a small cluster is not a fault, though: with ten
//! symbols each tag necessarily holds a tenth of the keys. A tag is hot only
//! when it holds more than a slot's worth: more keys than the other slots in
//! use hold on average, by a margin, on its node and in the cluster, and
//! enough keys to matter.
//!
//! Precisely, for a tag with `k` (estimated) keys, in a scope (its node, or
//! the whole cluster) of `K` keys over `U` slots in use (slots with a sampled
//! key, the tag's own included):
//!
//! - what one slot holds there is `(K - k) / (U - 1)`, the mean of the other
//!   slots in use; when the tag's slot is the only one in use, the scope's
//!   keys spread over every slot it owns, `K / slots owned`;
//! - the tag's *ratio* in the scope is `k` over that;
//! - the tag is hot when, in both scopes, its ratio is at least
//!   [`HotRule::margin`] and its share (`k / K`) at least the scope's floor
//!   ([`HotRule::node_share`], [`HotRule::cluster_share`]), it has at least
//!   [`HotRule::min_keys`] keys, and more than one of them was sampled.
//!
//! ```
//! use partwise::redis::hot_tag::{judge, HotRule, Scope};
//! let rule = HotRule::default();
//! // Ten tags of 60 keys on a 3-node cluster: each is a tenth, none is hot.
//! let node = Scope { keys: 240.0, slots_in_use: 4, slots_owned: 5461 };
//! let cluster = Scope { keys: 600.0, slots_in_use: 10, slots_owned: 16384 };
//! assert!(!judge(rule, 60.0, 60, node, cluster).hot);
//! // One tag of 600 keys beside them is.
//! let node = Scope { keys: 840.0, slots_in_use: 5, slots_owned: 5461 };
//! let cluster = Scope { keys: 1200.0, slots_in_use: 11, slots_owned: 16384 };
//! assert!(judge(rule, 600.0, 600, node, cluster).hot);
//! ```

/// When a tag counts as hot (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HotRule {
    /// Its keys at least this many times what one slot in use holds, both on
    /// its node and in the cluster.
    pub margin: f64,
    /// At least this many keys (estimated), so a handful is never hot.
    pub min_keys: f64,
    /// At least this fraction of its node's keys.
    pub node_share: f64,
    /// At least this fraction of the cluster's keys, so that a tag of a few
    /// keys on a near-empty node is not called hot.
    pub cluster_share: f64,
}

impl Default for HotRule {
    fn default() -> HotRule {
        HotRule {
            margin: 3.0,
            min_keys: 50.0,
            node_share: 0.05,
            cluster_share: 0.01,
        }
    }
}

/// Where a tag is measured: its node, or the whole cluster.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scope {
    /// Keys in the scope (estimated), the tag's included.
    pub keys: f64,
    /// Distinct slots with a sampled key, the tag's included.
    pub slots_in_use: usize,
    /// Slots the scope serves (16384 for a whole cluster).
    pub slots_owned: u32,
}

impl Scope {
    /// What one slot holds in this scope, the tag's `k` keys aside.
    pub fn per_slot(&self, k: f64) -> f64 {
        if self.slots_in_use > 1 {
            (self.keys - k).max(0.0) / (self.slots_in_use - 1) as f64
        } else {
            self.keys / f64::from(self.slots_owned.max(1))
        }
    }

    /// `k` over what one slot holds: how many slots' worth the tag is.
    pub fn ratio(&self, k: f64) -> f64 {
        let per = self.per_slot(k);
        if per > 0.0 {
            k / per
        } else if k > 0.0 {
            // Every other slot in use holds nothing: the tag is all there is.
            f64::from(self.slots_owned.max(1))
        } else {
            0.0
        }
    }

    /// `k`'s share of the scope's keys.
    pub fn share(&self, k: f64) -> f64 {
        if self.keys > 0.0 {
            (k / self.keys).min(1.0)
        } else {
            0.0
        }
    }
}

/// A tag measured against [`HotRule`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Verdict {
    /// Its share of its node's keys.
    pub node_share: f64,
    /// Its share of the cluster's keys.
    pub cluster_share: f64,
    /// Its keys over what one slot in use holds on its node.
    pub node_ratio: f64,
    /// Its keys over what one slot in use holds in the cluster.
    pub cluster_ratio: f64,
    /// Whether it is hot.
    pub hot: bool,
}

/// Judges a tag of `keys` estimated keys (`sampled` of them seen) on `node`
/// in `cluster`.
pub fn judge(rule: HotRule, keys: f64, sampled: usize, node: Scope, cluster: Scope) -> Verdict {
    let (node_share, cluster_share) = (node.share(keys), cluster.share(keys));
    let (node_ratio, cluster_ratio) = (node.ratio(keys), cluster.ratio(keys));
    let hot = sampled > 1
        && keys >= rule.min_keys
        && node_share >= rule.node_share
        && cluster_share >= rule.cluster_share
        && node_ratio >= rule.margin
        && cluster_ratio >= rule.margin;
    Verdict {
        node_share,
        cluster_share,
        node_ratio,
        cluster_ratio,
        hot,
    }
}

/// What a tag is weighed by: its keys (sampled by `SCAN`, as on every
/// server), or the work the server spent on its slot (`CLUSTER SLOT-STATS`:
/// CPU microseconds, or network bytes in and out).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Measure {
    /// Keys (sampled).
    Keys,
    /// CPU microseconds spent on the slot's commands.
    Cpu,
    /// Network bytes read and written for the slot's commands.
    Net,
}

impl Measure {
    /// The measure as the `--by` flag names it.
    pub fn name(self) -> &'static str {
        match self {
            Measure::Keys => "keys",
            Measure::Cpu => "cpu",
            Measure::Net => "net",
        }
    }

    /// Its unit, for tables.
    pub fn unit(self) -> &'static str {
        match self {
            Measure::Keys => "keys",
            Measure::Cpu => "CPU us",
            Measure::Net => "bytes",
        }
    }
}

/// Judges a slot (and every tag in it) by the work spent on it: `load` of
/// the measure on the slot, in its node's and the cluster's scopes (whose
/// `keys` are then the scope's total load and whose slots in use are those
/// with any load). The same margin and share floors as keys; no key floor,
/// since work is what a hot tag costs whatever its keys: a tag is hot when
/// its slot carries at least `rule.margin` times what one busy slot carries
/// on its node and in the cluster, and at least the shares of both.
pub fn judge_load(rule: HotRule, load: f64, node: Scope, cluster: Scope) -> Verdict {
    let (node_share, cluster_share) = (node.share(load), cluster.share(load));
    let (node_ratio, cluster_ratio) = (node.ratio(load), cluster.ratio(load));
    let hot = load > 0.0
        && node_share >= rule.node_share
        && cluster_share >= rule.cluster_share
        && node_ratio >= rule.margin
        && cluster_ratio >= rule.margin;
    Verdict {
        node_share,
        cluster_share,
        node_ratio,
        cluster_ratio,
        hot,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_with_most_of_the_work_is_hot_and_a_quiet_one_is_not() {
        let rule = HotRule::default();
        // 100 busy slots of 30 us each on 3 nodes, and one of 7000 us.
        let node = Scope {
            keys: 34.0 * 30.0 + 7000.0,
            slots_in_use: 35,
            slots_owned: NODE_SLOTS,
        };
        let cluster = Scope {
            keys: 100.0 * 30.0 + 7000.0,
            slots_in_use: 101,
            slots_owned: ALL,
        };
        let v = judge_load(rule, 7000.0, node, cluster);
        assert!(v.hot && v.cluster_share > 0.69, "{v:?}");
        // A slot of 60 us (twice the others): uneven, not hot.
        let node = Scope {
            keys: 34.0 * 30.0 + 60.0,
            ..node
        };
        let cluster = Scope {
            keys: 100.0 * 30.0 + 60.0,
            ..cluster
        };
        assert!(!judge_load(rule, 60.0, node, cluster).hot);
        // No work at all is never hot.
        assert!(!judge_load(rule, 0.0, node, cluster).hot);
        assert_eq!(Measure::Cpu.name(), "cpu");
    }

    const NODE_SLOTS: u32 = 5461;
    const ALL: u32 = 16384;

    /// Tags of `counts[i]` keys on node `nodes[i]` (of 3): each tag's verdict.
    fn verdicts(rule: HotRule, counts: &[f64], nodes: &[usize]) -> Vec<bool> {
        let total: f64 = counts.iter().sum();
        (0..counts.len())
            .map(|i| {
                let on = |n| (0..counts.len()).filter(move |&j| nodes[j] == n);
                let node = Scope {
                    keys: on(nodes[i]).map(|j| counts[j]).sum(),
                    slots_in_use: on(nodes[i]).count(),
                    slots_owned: NODE_SLOTS,
                };
                let cluster = Scope {
                    keys: total,
                    slots_in_use: counts.len(),
                    slots_owned: ALL,
                };
                judge(rule, counts[i], counts[i] as usize, node, cluster).hot
            })
            .collect()
    }

    #[test]
    fn ten_even_symbols_are_not_hot_however_few_the_nodes() {
        // The seeds' ten symbols, 60 keys each, lumped 5/4/1 on three nodes:
        // each tag is a tenth of the cluster and up to all of its node.
        let nodes = [0, 0, 0, 0, 0, 1, 1, 1, 1, 2];
        let v = verdicts(HotRule::default(), &[60.0; 10], &nodes);
        assert_eq!(v, [false; 10]);
        // The old floors alone (5% of the node, 1% of the cluster) call every
        // one of them hot: the margin is what tells them apart.
        let floors_only = HotRule {
            margin: 0.0,
            min_keys: 0.0,
            ..HotRule::default()
        };
        assert_eq!(verdicts(floors_only, &[60.0; 10], &nodes), [true; 10]);
    }

    #[test]
    fn one_tag_far_above_the_others_is_hot_and_only_it() {
        let mut counts = vec![60.0; 20];
        counts.push(1200.0);
        let nodes: Vec<usize> = (0..21).map(|i| i % 3).collect();
        let v = verdicts(HotRule::default(), &counts, &nodes);
        assert_eq!(v.iter().filter(|h| **h).count(), 1);
        assert!(v[20]);
    }

    #[test]
    fn uneven_but_healthy_tags_stay_under_the_margin() {
        // Counts vary by 2.5x around the mean: uneven, but no slot's worth.
        let counts: Vec<f64> = (0..30).map(|i| 40.0 + f64::from(i % 7) * 10.0).collect();
        let nodes: Vec<usize> = (0..30).map(|i| (i * 7) % 3).collect();
        assert!(verdicts(HotRule::default(), &counts, &nodes)
            .iter()
            .all(|h| !h));
    }

    #[test]
    fn a_lone_tag_holding_every_key_is_hot() {
        // No other slot in use: a slot's worth is the keys over every slot.
        let node = Scope {
            keys: 200.0,
            slots_in_use: 1,
            slots_owned: NODE_SLOTS,
        };
        let cluster = Scope {
            keys: 200.0,
            slots_in_use: 1,
            slots_owned: ALL,
        };
        let v = judge(HotRule::default(), 200.0, 200, node, cluster);
        assert!(v.hot, "{v:?}");
        assert_eq!(v.cluster_ratio, f64::from(ALL));
        // Alone on its node but one of ten even tags cluster-wide: not hot.
        let cluster = Scope {
            keys: 2000.0,
            slots_in_use: 10,
            slots_owned: ALL,
        };
        assert!(!judge(HotRule::default(), 200.0, 200, node, cluster).hot);
    }

    #[test]
    fn volume_and_sample_floors() {
        // Far above the other slots, but too few keys to matter.
        let node = Scope {
            keys: 40.0,
            slots_in_use: 11,
            slots_owned: NODE_SLOTS,
        };
        let cluster = Scope {
            keys: 60.0,
            slots_in_use: 31,
            slots_owned: ALL,
        };
        let rule = HotRule::default();
        let v = judge(rule, 30.0, 30, node, cluster);
        assert!(!v.hot && v.node_ratio >= rule.margin && v.cluster_ratio >= rule.margin);
        let loose = HotRule {
            min_keys: 10.0,
            ..rule
        };
        assert!(judge(loose, 30.0, 30, node, cluster).hot);
        // One sampled key scaled up is an estimate of nothing.
        assert!(!judge(loose, 30.0, 1, node, cluster).hot);
    }
}
