//! `resize --from --to`'s report: the keys a partition-count change moves
//! (the first ones listed, every one counted), what moves of their records,
//! and the plan that makes the change safe. It derives `Serialize`: its
//! JSON is the fields in declaration order.

use super::{key_move, plan_measured, KeyMove, Plan, Together};
use crate::count::PartitionCount;
use crate::encoding::KeyFormat;
use crate::partitioner::Partitioner;
use crate::ser::{key_hex, key_text};
use serde::Serialize;

/// Why the answer is about new records only.
pub const NOTE: &str = "existing records stay where they are: Kafka never moves them, so after \
the resize the old records of a moved key stay on its old partition while new ones go to \
the new partition; per-key order across the change, and co-partitioning with every topic \
not resized the same way, break for the moved keys";

/// A key as given (its text for a serializer format, else its bytes), the
/// bytes a producer hashes, and its records.
pub type GivenKey = (Vec<u8>, Vec<u8>, u64);

/// A listed moved key.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MovedKey {
    /// The key as the user knows it: the logical key for a serializer
    /// format, else its bytes.
    #[serde(serialize_with = "key_text")]
    pub key: Vec<u8>,
    /// The bytes hashed, in hex.
    #[serde(serialize_with = "key_hex")]
    pub key_hex: Vec<u8>,
    /// Its partition with the old count.
    pub from: Option<u32>,
    /// Its partition with the new count.
    pub to: Option<u32>,
    /// Its records (with counts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// The move itself (a placement that is no partition says its behaviour).
    #[serde(skip)]
    pub moved: KeyMove,
}

/// The multiple of the current count that is no better, with what it moves.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MultipleRow {
    /// Its partition count.
    pub partitions: u32,
    /// Keys it moves.
    pub keys_moved: u64,
    /// Records it moves (with counts).
    pub records_moved: Option<u64>,
    /// Their share (with counts).
    pub records_moved_share: Option<f64>,
}

/// A topic that must change with the resized one.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TopicCount {
    /// Its name.
    pub topic: String,
    /// Its partition count.
    pub partitions: u32,
}

/// A co-partition group of the topic and its other topics.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TogetherRow {
    /// The group.
    pub group: String,
    /// Its other topics.
    pub topics: Vec<TopicCount>,
}

/// A partition-count change of one topic (`resize --from --to`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResizeReport {
    /// The partitioner.
    pub partitioner: Partitioner,
    /// How the keys were given.
    pub key_format: KeyFormat,
    /// The current count.
    pub from: u32,
    /// The new count.
    pub to: u32,
    /// The topic of the topology file, when one was given.
    pub topic: Option<String>,
    /// Keys given.
    pub keys: u64,
    /// Keys whose new records go elsewhere.
    pub moved_count: usize,
    /// Their share (`None` without keys).
    pub moved_fraction: Option<f64>,
    /// Records of the keys (with counts).
    pub records: Option<u64>,
    /// Records of the moved keys (with counts).
    pub records_moved: Option<u64>,
    /// Their share (with counts).
    pub records_moved_share: Option<f64>,
    /// The multiple of the current count that is no better.
    pub multiple_no_better: Option<MultipleRow>,
    /// The share of uniformly hashed keys that move.
    pub expected_moved_fraction: Option<f64>,
    /// The same as `MOVED/PERIOD`.
    pub expected_moved_exact: Option<String>,
    /// The first moved keys.
    pub moved: Vec<MovedKey>,
    /// Moved keys not listed.
    pub moved_omitted: usize,
    /// The co-partition groups whose other topics must change with it.
    pub change_together: Vec<TogetherRow>,
    /// Why the answer is about new records only.
    pub note: &'static str,
    /// How to make the resize safe.
    pub fix: Vec<String>,
    /// Whether the keys came with their counts.
    #[serde(skip)]
    pub weighted: bool,
    /// The plan itself.
    #[serde(skip)]
    pub plan: Plan,
}

/// What resizing a topic written by `p` from `from` to `to` partitions
/// moves of `keys` (given as `format`; `weighted`: with their counts),
/// listing the first `listed` moved keys, in the co-partition groups
/// `together`.
#[allow(clippy::too_many_arguments)]
pub fn resize_report(
    p: Partitioner,
    format: KeyFormat,
    from: PartitionCount,
    to: PartitionCount,
    topic: Option<String>,
    together: Vec<Together>,
    keys: &[GivenKey],
    weighted: bool,
    listed: usize,
) -> ResizeReport {
    let mut moved = Vec::new();
    let mut moved_count = 0usize;
    for (input, key, c) in keys {
        let m = key_move(p, Some(key), from, to);
        if m.moved() {
            moved_count += 1;
            if moved.len() < listed {
                moved.push(MovedKey {
                    key: if format.is_serializer() {
                        input.clone()
                    } else {
                        key.clone()
                    },
                    key_hex: key.clone(),
                    from: m.from.partition(),
                    to: m.to.partition(),
                    count: weighted.then_some(*c),
                    moved: m,
                });
            }
        }
    }
    let measured: Vec<(&[u8], u64)> = keys.iter().map(|(_, k, c)| (k.as_slice(), *c)).collect();
    let plan = plan_measured(
        p,
        from,
        to,
        together,
        (!measured.is_empty()).then_some(&measured[..]),
    );
    let total = keys.len() as u64;
    let records = plan.measured.filter(|_| weighted);
    let expected = plan.expected;
    ResizeReport {
        partitioner: p,
        key_format: format,
        from: from.get(),
        to: to.get(),
        topic,
        keys: total,
        moved_count,
        moved_fraction: (total > 0).then(|| moved_count as f64 / total as f64),
        records: records.map(|m| m.records),
        records_moved: records.map(|m| m.records_moved),
        records_moved_share: records.and_then(|m| m.records_share()),
        multiple_no_better: plan.multiple_no_better.map(|(n, m)| MultipleRow {
            partitions: n,
            keys_moved: m.keys_moved,
            records_moved: weighted.then_some(m.records_moved),
            records_moved_share: if weighted { m.records_share() } else { None },
        }),
        expected_moved_fraction: expected.map(|f| f.value()),
        expected_moved_exact: expected.map(|f| format!("{}/{}", f.moved, f.period)),
        moved_omitted: moved_count - moved.len(),
        moved,
        change_together: plan
            .together
            .iter()
            .map(|g| TogetherRow {
                group: g.group.clone(),
                topics: g
                    .topics
                    .iter()
                    .map(|(t, n)| TopicCount {
                        topic: t.clone(),
                        partitions: *n,
                    })
                    .collect(),
            })
            .collect(),
        note: NOTE,
        fix: plan.fixes.iter().map(ToString::to_string).collect(),
        weighted,
        plan,
    }
}
