//! The work each slot costs, from `CLUSTER SLOT-STATS` (Valkey 8.0+, Redis
//! 8.2+): keys, CPU microseconds and network bytes per slot, read on every
//! primary, and the hash tags of a [`HotReport`] weighed by the work on
//! their slots instead of by their keys.
//!
//! Reading never writes: the server setting that makes a server count CPU
//! and bytes per slot (`cluster-slot-stats-enabled`, the user's to own) is
//! read with `CONFIG GET`, and only [`enable_slot_stats`], which a caller
//! runs only when its user asked, sets it. Where a primary cannot give the
//! measure asked (a server without `CLUSTER SLOT-STATS`, the setting off,
//! `CONFIG` refused), the caller falls back to key counts and
//! [`choose_measure`] says why, naming the node.

use crate::error::Error;
use crate::hot::HotReport;
use crate::node::{NodeAddr, NodeConn};
use partwise::redis::hot_tag::{judge_load, HotRule, Measure, Scope, Verdict};
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

/// The name of the server setting that makes a server count CPU and bytes
/// per slot.
pub const SETTING: &str = "cluster-slot-stats-enabled";

/// One slot's counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotStat {
    /// The slot.
    pub slot: u16,
    /// Keys in it.
    pub keys: u64,
    /// CPU microseconds spent on its commands (with the setting on).
    pub cpu_usec: Option<u64>,
    /// Network bytes in and out for its commands (with the setting on).
    pub net_bytes: Option<u64>,
}

impl SlotStat {
    /// The slot's load by `m`, when the server counts it.
    pub fn load(&self, m: Measure) -> Option<u64> {
        match m {
            Measure::Keys => Some(self.keys),
            Measure::Cpu => self.cpu_usec,
            Measure::Net => self.net_bytes,
        }
    }
}

/// What one primary says about its slots.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeSlotStats {
    /// The primary.
    pub node: NodeAddr,
    /// Its server and version (`valkey 8.1.8`, `redis 7.0.15`), from `INFO server`.
    pub server: String,
    /// `cluster-slot-stats-enabled` as `CONFIG GET` reads it: `None` when
    /// the server has no such setting or refuses `CONFIG`.
    pub setting: Option<bool>,
    /// Every slot it serves with its counters; `None` without `CLUSTER
    /// SLOT-STATS`.
    pub slots: Option<Vec<SlotStat>>,
    /// Why there are no counters, when there are none.
    pub missing: Option<String>,
}

impl NodeSlotStats {
    /// Why this primary cannot weigh by `m`, or `None` when it can.
    pub fn lacks(&self, m: Measure) -> Option<String> {
        let Some(slots) = &self.slots else {
            return Some(format!(
                "{} ({}) has no CLUSTER SLOT-STATS{}",
                self.node,
                self.server,
                self.missing
                    .as_deref()
                    .map_or(String::new(), |w| format!(": {w}"))
            ));
        };
        if slots.is_empty() || slots.iter().all(|s| s.load(m).is_some()) {
            return None;
        }
        Some(match self.setting {
            Some(false) => format!(
                "{} ({}) has {SETTING} no, so it counts no CPU or bytes per slot; partwise reads that setting and never changes it (set it with CONFIG SET {SETTING} yes, or give --enable-slot-stats)",
                self.node, self.server
            ),
            _ => format!(
                "{} ({}) gives no {} per slot",
                self.node,
                self.server,
                m.unit()
            ),
        })
    }
}

/// Reads `INFO server`, the setting and `CLUSTER SLOT-STATS` on each of
/// `primaries` (those of a [`SlotMap`](crate::SlotMap), or those that answered a sample); a
/// primary that does not answer is an error beside the others' stats.
pub fn read_slot_stats(
    primaries: &[NodeAddr],
    timeout: Duration,
) -> (Vec<NodeSlotStats>, Vec<Error>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for addr in primaries {
        match node_stats(addr, timeout) {
            Ok(s) => out.push(s),
            Err(e) => errors.push(e),
        }
    }
    (out, errors)
}

fn node_stats(addr: &NodeAddr, timeout: Duration) -> Result<NodeSlotStats, Error> {
    let mut conn = NodeConn::open(addr, timeout)?;
    let info: String = conn.query(redis::cmd("INFO").arg("server"), "INFO server")?;
    let server = server_version(&info);
    let mut pipe = redis::pipe();
    pipe.cmd("CONFIG").arg("GET").arg(SETTING);
    pipe.cmd("CLUSTER")
        .arg("SLOT-STATS")
        .arg("SLOTSRANGE")
        .arg(0)
        .arg(16383);
    let replies = conn.query_batch(&pipe, "CLUSTER SLOT-STATS")?;
    let setting = replies.first().and_then(setting_value);
    let (slots, missing) = match replies.get(1) {
        Some(redis::Value::ServerError(e)) => (
            None,
            Some(format!(
                "the server answers {} (Valkey 8.0 and Redis 8.2 have it)",
                e.details().unwrap_or(e.code())
            )),
        ),
        Some(v) => match parse_slot_stats(v) {
            Some(s) => (Some(s), None),
            None => (None, Some("its answer is not slot statistics".into())),
        },
        None => (None, Some("no answer".into())),
    };
    Ok(NodeSlotStats {
        node: addr.clone(),
        server,
        setting,
        slots,
        missing,
    })
}

/// `valkey 8.1.8` or `redis 7.0.15` from `INFO server` (Valkey also reports
/// a `redis_version` for compatibility: its own comes first).
pub fn server_version(info: &str) -> String {
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .map(str::to_string)
    };
    if let Some(v) = field("valkey_version:") {
        format!("valkey {v}")
    } else if let Some(v) = field("redis_version:") {
        format!("redis {v}")
    } else {
        "an unknown server".into()
    }
}

fn text(v: &redis::Value) -> Option<String> {
    match v {
        redis::Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
        redis::Value::SimpleString(s) => Some(s.clone()),
        _ => None,
    }
}

fn number(v: &redis::Value) -> Option<u64> {
    match v {
        redis::Value::Int(i) => u64::try_from(*i).ok(),
        other => text(other)?.parse().ok(),
    }
}

/// The pairs of a RESP2 flat array or a RESP3 map.
fn pairs(v: &redis::Value) -> Option<Vec<(&redis::Value, &redis::Value)>> {
    match v {
        redis::Value::Array(items) if items.len() % 2 == 0 => {
            Some(items.chunks(2).map(|c| (&c[0], &c[1])).collect())
        }
        redis::Value::Map(m) => Some(m.iter().map(|(k, v)| (k, v)).collect()),
        _ => None,
    }
}

fn setting_value(v: &redis::Value) -> Option<bool> {
    let found = pairs(v)?
        .into_iter()
        .find(|(k, _)| text(k).as_deref() == Some(SETTING))?;
    match text(found.1)?.as_str() {
        "yes" => Some(true),
        "no" => Some(false),
        _ => None,
    }
}

/// `CLUSTER SLOT-STATS`'s answer: `[[slot, [name, value, ...]], ...]`.
fn parse_slot_stats(v: &redis::Value) -> Option<Vec<SlotStat>> {
    let redis::Value::Array(rows) = v else {
        return None;
    };
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let redis::Value::Array(parts) = row else {
            return None;
        };
        let [slot, fields] = parts.as_slice() else {
            return None;
        };
        let slot = u16::try_from(number(slot)?).ok().filter(|&s| s < 16384)?;
        let mut s = SlotStat {
            slot,
            keys: 0,
            cpu_usec: None,
            net_bytes: None,
        };
        for (k, v) in pairs(fields)? {
            let n = number(v)?;
            match text(k)?.as_str() {
                "key-count" => s.keys = n,
                "cpu-usec" => s.cpu_usec = Some(n),
                "network-bytes-in" | "network-bytes-out" => {
                    s.net_bytes = Some(s.net_bytes.unwrap_or(0).saturating_add(n));
                }
                _ => {}
            }
        }
        out.push(s);
    }
    Some(out)
}

/// The measure a command weighs by, and why: `asked`, or by default the
/// CPU; key counts when a primary cannot give the measure (each node that
/// cannot is named), or when keys were asked.
pub fn choose_measure(stats: &[NodeSlotStats], asked: Option<Measure>) -> (Measure, String) {
    let want = asked.unwrap_or(Measure::Cpu);
    if want == Measure::Keys {
        return (Measure::Keys, "key counts, as asked (--by keys)".into());
    }
    let lacking: Vec<String> = stats.iter().filter_map(|s| s.lacks(want)).collect();
    if stats.is_empty() {
        return (
            Measure::Keys,
            format!(
                "fell back to key counts: no primary answered for {}",
                want.unit()
            ),
        );
    }
    if lacking.is_empty() {
        let servers: std::collections::BTreeSet<&str> =
            stats.iter().map(|s| s.server.as_str()).collect();
        let servers: Vec<&str> = servers.into_iter().collect();
        return (
            want,
            format!(
                "{} per slot from CLUSTER SLOT-STATS on every primary ({})",
                want.unit(),
                servers.join(", ")
            ),
        );
    }
    (
        Measure::Keys,
        format!(
            "fell back to key counts (no {} per slot): {}",
            want.unit(),
            lacking.join("; ")
        ),
    )
}

/// Sets `cluster-slot-stats-enabled yes` on every primary of `stats` where
/// it reads `no`; the nodes changed. Only for a user who asked.
pub fn enable_slot_stats(
    stats: &[NodeSlotStats],
    timeout: Duration,
) -> Result<Vec<NodeAddr>, Error> {
    let mut changed = Vec::new();
    for s in stats.iter().filter(|s| s.setting == Some(false)) {
        let mut conn = NodeConn::open(&s.node, timeout)?;
        let () = conn.query(
            redis::cmd("CONFIG").arg("SET").arg(SETTING).arg("yes"),
            "CONFIG SET",
        )?;
        changed.push(s.node.clone());
    }
    Ok(changed)
}

/// One primary's load by the measure.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeLoad {
    /// The primary.
    pub node: NodeAddr,
    /// Its server and version.
    pub server: String,
    /// The load on all its slots.
    pub load: u64,
    /// Its share of the cluster's load.
    pub share: f64,
    /// Its slots with any load.
    pub slots_in_use: usize,
    /// The slots it serves.
    pub slots_owned: u32,
}

/// A sampled hash tag weighed by the work on its slot.
#[derive(Clone, Debug, PartialEq)]
pub struct TagTraffic {
    /// The tag.
    pub tag: Vec<u8>,
    /// Its slot.
    pub slot: u16,
    /// The primary serving it.
    pub node: NodeAddr,
    /// Its keys among the sampled ones.
    pub sampled: usize,
    /// Its estimated keys.
    pub estimated_keys: f64,
    /// The load of its slot.
    pub load: u64,
    /// The sampled tags that share its slot (itself included): the slot's
    /// load is theirs together.
    pub slot_tags: usize,
    /// The slot measured by the rule on its node and in the cluster.
    pub verdict: Verdict,
}

/// The cluster weighed by a measure of work.
#[derive(Clone, Debug, PartialEq)]
pub struct TrafficReport {
    /// The measure.
    pub measure: Measure,
    /// Per primary, in slot-map order.
    pub nodes: Vec<NodeLoad>,
    /// The sampled tags, heaviest slot first.
    pub tags: Vec<TagTraffic>,
    /// The busiest slots (slot, node, load), heaviest first.
    pub slots: Vec<(u16, NodeAddr, u64)>,
}

impl TrafficReport {
    /// The hot tags.
    pub fn hot_tags(&self) -> impl Iterator<Item = &TagTraffic> {
        self.tags.iter().filter(|t| t.verdict.hot)
    }
}

/// Per-node loads by `m` (a measure every node of `stats` gives).
pub fn node_loads(stats: &[NodeSlotStats], m: Measure) -> Vec<NodeLoad> {
    let loads: Vec<(u64, usize, u32)> = stats
        .iter()
        .map(|s| {
            let slots = s.slots.as_deref().unwrap_or(&[]);
            let load = slots
                .iter()
                .filter_map(|x| x.load(m))
                .fold(0u64, u64::saturating_add);
            let used = slots.iter().filter(|x| x.load(m).unwrap_or(0) > 0).count();
            (load, used, slots.len() as u32)
        })
        .collect();
    let total: u64 = loads.iter().map(|l| l.0).fold(0, u64::saturating_add);
    stats
        .iter()
        .zip(loads)
        .map(|(s, (load, slots_in_use, slots_owned))| NodeLoad {
            node: s.node.clone(),
            server: s.server.clone(),
            load,
            share: if total == 0 {
                0.0
            } else {
                load as f64 / total as f64
            },
            slots_in_use,
            slots_owned,
        })
        .collect()
}

/// The tags of `hot` weighed by `m` from `stats`, under `rule`'s margin and
/// shares (its key floor does not apply to work); `top` busiest slots kept.
pub fn weigh(
    hot: &HotReport,
    stats: &[NodeSlotStats],
    m: Measure,
    rule: HotRule,
    top: usize,
) -> TrafficReport {
    let nodes = node_loads(stats, m);
    let mut slot_load: HashMap<u16, (NodeAddr, u64)> = HashMap::new();
    for s in stats {
        for x in s.slots.as_deref().unwrap_or(&[]) {
            slot_load.insert(x.slot, (s.node.clone(), x.load(m).unwrap_or(0)));
        }
    }
    let cluster = Scope {
        keys: nodes.iter().map(|n| n.load as f64).sum(),
        slots_in_use: nodes.iter().map(|n| n.slots_in_use).sum(),
        slots_owned: nodes.iter().map(|n| n.slots_owned).sum(),
    };
    let mut per_slot: BTreeMap<u16, usize> = BTreeMap::new();
    for t in &hot.tags {
        *per_slot.entry(t.slot).or_default() += 1;
    }
    let mut tags: Vec<TagTraffic> = hot
        .tags
        .iter()
        .map(|t| {
            let (node, load) = slot_load
                .get(&t.slot)
                .cloned()
                .unwrap_or_else(|| (t.node.clone(), 0));
            let n = nodes.iter().find(|n| n.node == node);
            let scope = Scope {
                keys: n.map_or(0.0, |n| n.load as f64),
                slots_in_use: n.map_or(0, |n| n.slots_in_use),
                slots_owned: n.map_or(0, |n| n.slots_owned),
            };
            TagTraffic {
                tag: t.tag.clone(),
                slot: t.slot,
                node,
                sampled: t.sampled,
                estimated_keys: t.estimated_keys,
                load,
                slot_tags: per_slot.get(&t.slot).copied().unwrap_or(1),
                verdict: judge_load(rule, load as f64, scope, cluster),
            }
        })
        .collect();
    tags.sort_by(|a, b| b.load.cmp(&a.load).then_with(|| a.tag.cmp(&b.tag)));
    let mut slots: Vec<(u16, NodeAddr, u64)> = slot_load
        .into_iter()
        .filter(|(_, (_, l))| *l > 0)
        .map(|(s, (n, l))| (s, n, l))
        .collect();
    slots.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    slots.truncate(top);
    TrafficReport {
        measure: m,
        nodes,
        tags,
        slots,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redis::Value as V;

    #[test]
    fn a_patterns_glob_escapes_its_own_glob_characters() {
        assert_eq!(pattern_glob("market:{%s}"), b"market:{*}");
        assert_eq!(pattern_glob("a*b?[c]\\:%s"), b"a\\*b\\?\\[c\\]\\\\:*");
        assert_eq!(pattern_glob("%s"), b"*");
    }

    fn bulk(s: &str) -> V {
        V::BulkString(s.as_bytes().to_vec())
    }

    #[test]
    fn reads_slot_stats_and_the_setting() {
        let answer = V::Array(vec![
            V::Array(vec![
                V::Int(7),
                V::Array(vec![
                    bulk("key-count"),
                    V::Int(3),
                    bulk("cpu-usec"),
                    V::Int(120),
                    bulk("network-bytes-in"),
                    V::Int(40),
                    bulk("network-bytes-out"),
                    V::Int(2),
                ]),
            ]),
            V::Array(vec![
                V::Int(8),
                V::Array(vec![bulk("key-count"), V::Int(0)]),
            ]),
        ]);
        let s = parse_slot_stats(&answer).unwrap();
        assert_eq!(
            s[0],
            SlotStat {
                slot: 7,
                keys: 3,
                cpu_usec: Some(120),
                net_bytes: Some(42)
            }
        );
        assert_eq!(s[1].cpu_usec, None);
        assert_eq!(
            setting_value(&V::Array(vec![bulk(SETTING), bulk("yes")])),
            Some(true)
        );
        assert_eq!(setting_value(&V::Array(vec![])), None);
        assert_eq!(parse_slot_stats(&V::Int(1)), None);
        assert_eq!(
            server_version("# Server\r\nredis_version:7.2.4\r\nvalkey_version:8.1.8\r\n"),
            "valkey 8.1.8"
        );
        assert_eq!(server_version("redis_version:7.0.15\r\n"), "redis 7.0.15");
    }

    #[test]
    fn falls_back_to_keys_naming_the_node_and_why() {
        let node = |port, slots: Option<Vec<SlotStat>>, setting| NodeSlotStats {
            node: NodeAddr::new("127.0.0.1", port),
            server: "valkey 8.1.8".into(),
            setting,
            slots,
            missing: None,
        };
        let full = SlotStat {
            slot: 1,
            keys: 1,
            cpu_usec: Some(5),
            net_bytes: Some(9),
        };
        let keys_only = SlotStat {
            cpu_usec: None,
            net_bytes: None,
            ..full
        };
        let (m, why) = choose_measure(&[node(1, Some(vec![full]), Some(true))], None);
        assert_eq!(m, Measure::Cpu, "{why}");
        let (m, why) = choose_measure(
            &[
                node(1, Some(vec![full]), Some(true)),
                node(2, Some(vec![keys_only]), Some(false)),
            ],
            Some(Measure::Net),
        );
        assert_eq!(m, Measure::Keys);
        assert!(
            why.contains("127.0.0.1:2") && why.contains("cluster-slot-stats-enabled no"),
            "{why}"
        );
        let mut old = node(3, None, None);
        old.server = "redis 7.0.15".into();
        old.missing = Some("the server answers unknown subcommand".into());
        let (m, why) = choose_measure(&[old], None);
        assert_eq!(m, Measure::Keys);
        assert!(
            why.starts_with("fell back to key counts") && why.contains("redis 7.0.15"),
            "{why}"
        );
    }
}

/// One primary's share of the cluster's load, as `redis check` and the
/// report's slot view show it.
#[derive(Clone, Debug, PartialEq)]
pub struct PrimaryLoad {
    /// The primary.
    pub node: NodeAddr,
    /// Its server and version (empty when it did not answer `INFO`).
    pub server: String,
    /// The load on all its slots by the measure.
    pub load: u64,
    /// Its share of the load of the primaries that answered.
    pub share: f64,
    /// The slots it serves (the slot map's ranges).
    pub slots_owned: u32,
}

/// Every primary's load by the measure `redis hot` takes by default: the
/// CPU per slot from `CLUSTER SLOT-STATS` where every primary counts it,
/// otherwise key counts (`DBSIZE`), with the reason. Only reads: the
/// setting is never changed here.
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterLoad {
    /// The measure.
    pub measure: Measure,
    /// Why this measure: where the numbers come from, or why it fell back.
    pub reason: String,
    /// Per primary that answered, in slot-map order.
    pub nodes: Vec<PrimaryLoad>,
    /// The primaries that did not answer (their load is not counted).
    pub errors: Vec<Error>,
    /// The slot statistics read (empty where a server has none), for
    /// weighing hot tags by the same measure ([`family_hot_tags`]).
    pub stats: Vec<NodeSlotStats>,
}

/// Reads the load of every primary of `map` (see [`ClusterLoad`]).
pub fn cluster_load(map: &crate::SlotMap, timeout: Duration) -> ClusterLoad {
    let primaries: Vec<(&NodeAddr, u32)> = map
        .shards
        .iter()
        .map(|s| (&s.primary.addr, s.slot_count()))
        .collect();
    let addrs: Vec<NodeAddr> = primaries.iter().map(|(a, _)| (*a).clone()).collect();
    let (stats, mut errors) = read_slot_stats(&addrs, timeout);
    let (measure, mut reason) = choose_measure(&stats, None);
    let owned = |a: &NodeAddr| primaries.iter().find(|(p, _)| *p == a).map_or(0, |p| p.1);
    let mut loads: Vec<(NodeAddr, String, u64, u32)> = Vec::new();
    if measure == Measure::Keys {
        for s in &stats {
            let keys = NodeConn::open(&s.node, timeout)
                .and_then(|mut c| c.query::<u64>(&redis::cmd("DBSIZE"), "DBSIZE"));
            match keys {
                Ok(k) => loads.push((s.node.clone(), s.server.clone(), k, owned(&s.node))),
                Err(e) => errors.push(e),
            }
        }
        reason.push_str("; keys per primary by DBSIZE");
    } else {
        for n in node_loads(&stats, measure) {
            let o = owned(&n.node);
            loads.push((n.node, n.server, n.load, o));
        }
    }
    if !errors.is_empty() {
        reason.push_str(&format!(
            "; {} primaries did not answer, their load is not counted",
            errors.len()
        ));
    }
    let total = loads.iter().fold(0u64, |t, l| t.saturating_add(l.2));
    let nodes = loads
        .into_iter()
        .map(|(node, server, load, slots_owned)| PrimaryLoad {
            node,
            server,
            load,
            share: if total == 0 {
                0.0
            } else {
                load as f64 / total as f64
            },
            slots_owned,
        })
        .collect();
    ClusterLoad {
        measure,
        reason,
        nodes,
        errors,
        stats,
    }
}

/// A hot tag of a family's keys, by the measure of a [`ClusterLoad`].
#[derive(Clone, Debug, PartialEq)]
pub struct HotTag {
    /// The tag.
    pub tag: Vec<u8>,
    /// Its slot.
    pub slot: u16,
    /// The primary serving it.
    pub node: NodeAddr,
    /// Its estimated keys.
    pub estimated_keys: f64,
    /// Its share of its node's load.
    pub node_share: f64,
    /// Its share of the cluster's load.
    pub cluster_share: f64,
}

/// `SCAN MATCH`'s glob of the keys of `pattern` (`market:{%s}` gives
/// `market:{*}`), the pattern's own glob characters escaped.
pub fn pattern_glob(pattern: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(pattern.len());
    let (before, after) = pattern.split_once("%s").unwrap_or((pattern, ""));
    let lit = |out: &mut Vec<u8>, s: &str| {
        for &b in s.as_bytes() {
            if matches!(b, b'*' | b'?' | b'[' | b']' | b'\\') {
                out.push(b'\\');
            }
            out.push(b);
        }
    };
    lit(&mut out, before);
    out.push(b'*');
    lit(&mut out, after);
    out
}

/// The hot tags among the keys matching `pattern` (up to `per_node`
/// sampled per primary), judged by `rule` on `load`'s measure: the work of
/// their slots where the slot statistics give it, their keys otherwise (as
/// `redis hot`). Only reads. The errors are of the primaries whose keys
/// could not be sampled.
pub fn family_hot_tags(
    map: &crate::SlotMap,
    pattern: &str,
    load: &ClusterLoad,
    per_node: usize,
    rule: HotRule,
    timeout: Duration,
) -> (Vec<HotTag>, Vec<Error>) {
    let glob = pattern_glob(pattern);
    let sample = crate::hot::sample_matching(map, per_node, Some(&glob), timeout);
    let tags = if load.measure == Measure::Keys {
        sample
            .tags
            .iter()
            .filter_map(|t| {
                let v = sample.verdict(t, rule);
                v.hot.then(|| HotTag {
                    tag: t.tag.clone(),
                    slot: t.slot,
                    node: t.node.clone(),
                    estimated_keys: t.estimated_keys,
                    node_share: v.node_share,
                    cluster_share: v.cluster_share,
                })
            })
            .collect()
    } else {
        weigh(&sample, &load.stats, load.measure, rule, 0)
            .hot_tags()
            .map(|t| HotTag {
                tag: t.tag.clone(),
                slot: t.slot,
                node: t.node.clone(),
                estimated_keys: t.estimated_keys,
                node_share: t.verdict.node_share,
                cluster_share: t.verdict.cluster_share,
            })
            .collect()
    };
    (tags, sample.errors)
}
