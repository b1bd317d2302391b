/*!
Live Redis Cluster for partwise: the slot map, hash-tag co-location of key
families, hot-tag sampling and atomic multi-key writes.

# Overview

partwise's core (`partwise::redis::slot`) computes a key's slot; this crate asks a
running cluster where that slot lives and whether related keys really share
it. Everything here is synchronous and talks to one node at a time over a
plain connection bounded by a timeout, so a dead or frozen node is an error
naming it, never a hang:

- [`SlotMap`]: primaries, replicas and slot ranges from `CLUSTER SHARDS`
  (`CLUSTER SLOTS` on servers before 7.0), with `DBSIZE` per node on request.
- [`Family`] (from the core, `partwise::redis::family`): patterns such as
  `market:{%s}` filled with a logical key, and [`Family::lint`] of the
  patterns themselves, in the core's [`FamilyReason`] terms.
- [`check`]: for each logical key, the slot and node of every family member,
  with each owning node's own `CLUSTER KEYSLOT`.
- [`sample`]: `SCAN` per primary (never `KEYS`) and the hash tags that
  concentrate keys on one node. Read-only.
- [`read_slot_stats`], [`weigh`]: `CLUSTER SLOT-STATS` per primary (Valkey
  8.0+, Redis 8.2+) and the sampled hash tags weighed by the CPU or bytes
  their slots cost; [`choose_measure`] falls back to key counts, saying why.
  Read-only: the server setting is read, and set only by [`enable_slot_stats`].
- [`Writer`]: one MULTI/EXEC on the right node, and [`Error::CrossSlot`]
  before sending anything when the keys cannot share a slot.

# Examples

```no_run
use partwise_redis::{check, Family, SlotMap};
use std::time::Duration;

let timeout = Duration::from_secs(2);
let map = SlotMap::fetch(&["127.0.0.1:7100".parse()?], timeout)?;
let family = Family::new(&["market:{%s}", "notif:{%s}"])?;
let report = check(&map, &family, &[b"BBCA".to_vec()], timeout);
assert_eq!(report.co_located(), 1);
# Ok::<(), Box<dyn std::error::Error>>(())
```
*/
#![deny(missing_docs)]

mod check;
mod error;
mod hot;
mod node;
mod report;
mod slots;
mod traffic;
mod write;

pub use check::{check, CheckReport, KeyPlacement, Member};
pub use error::{Error, RedisCause};
pub use hot::{
    sample, sample_matching, HotReport, HotRule, NodeSample, SlotLoad, TagLoad, Verdict,
};
pub use node::{NodeAddr, NodeConn};
pub use partwise::redis::family::{Family, FamilyReason, Pattern};
pub use partwise::redis::hot_tag::Measure;
pub use report::{
    slots_of, slots_report, CheckSummary, KeyRow, KeysHotReport, MemberRow, NodeLine, NodeRow,
    RuleRow, SampledNode, ShardRow, SlotRow, SlotsReport, TagRow,
};
pub use slots::{Node, Role, Shard, SlotMap, Source};
pub use traffic::{
    choose_measure, cluster_load, enable_slot_stats, family_hot_tags, node_loads, pattern_glob,
    read_slot_stats, server_version, weigh, ClusterLoad, HotTag, NodeLoad, NodeSlotStats,
    PrimaryLoad, SlotStat, TagTraffic, TrafficReport, SETTING,
};
pub use write::{common_slot, Command, Reply, Writer};

/// The redis crate this one is built on, for [`Writer::transaction`]'s
/// pipeline and [`NodeConn::query`]'s commands.
pub use redis;
