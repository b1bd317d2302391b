//! `salt`'s reports: what salting one key, a measured distribution, or a
//! key of a co-partition group means, with the sentences the command prints.
//! Each derives `Serialize`: its JSON is the fields in declaration order.

use super::{partitions_spanned, recommend, recommend_counts, salted_key, CountsPlan};
use crate::assign::Assignor;
use crate::count::PartitionCount;
use crate::partitioner::Partitioner;
use crate::ser::{key_label, key_text, KeyText};
use crate::Error;
use serde::Serialize;

mod joined;
pub use joined::{
    joined, IsolationReport, JoinedKey, JoinedReport, PerTopic, ProducerChange, Reserved,
    SubKeyRow, TopicChange,
};

/// Said whenever a salt is planned without a topology: salting one topic of
/// a joined pair alone breaks the key's join.
pub const JOIN_NOTE: &str = "if this topic is joined with others (co-partitioned), every one of them must write the same sub-keys or the key's join breaks; give the topology file with --topology and the topic with --topic to plan the whole group";

/// What salting costs the readers.
pub const TRADE_OFF: &str = "records of the key stay ordered only within each salt (KEY_1, KEY_2, ...), not across them; readers must merge the partitions listed";

/// Salted keys a one-key report lists.
const SALTED_LISTED: u32 = 64;

/// A consumer group's assignor and each member's name and partitions.
pub type Consumers = (Assignor, Vec<(String, Vec<u32>)>);

/// What the target is held on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetOn {
    /// What each consumer carries (a group was given).
    Consumers,
    /// Each partition.
    Partitions,
}

impl TargetOn {
    fn of<T>(consumers: &Option<T>) -> TargetOn {
        if consumers.is_some() {
            TargetOn::Consumers
        } else {
            TargetOn::Partitions
        }
    }
}

// ---- one key and its share

/// One hot key with its share, the rest assumed uniform (`salt --key --share`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OneKeyReport {
    /// The key.
    pub key: String,
    /// Its share of the records.
    pub share: f64,
    /// The partitioner that places the keys.
    pub partitioner: Partitioner,
    /// The partition count.
    pub partitions: u32,
    /// The target: the busiest at most this x the mean.
    pub target_ratio: f64,
    /// The smallest range that meets the target, if any does.
    pub range: Option<u32>,
    /// Whether some range meets the target.
    pub target_reached: bool,
    /// The busiest over the mean, before.
    pub before_max_over_mean: f64,
    /// The busiest over the mean, after.
    pub after_max_over_mean: f64,
    /// Loads per partition (fractions of the total), before.
    pub before: Vec<f64>,
    /// Loads per partition (fractions of the total), after salting.
    pub after: Vec<f64>,
    /// The partitions the salted key spans.
    pub spans: Vec<u32>,
    /// The first salted keys (at most 64).
    pub salted_keys: Vec<String>,
    /// What salting costs the readers.
    pub trade_off: &'static str,
    /// What salting one topic alone risks.
    pub note: &'static str,
    /// The largest range tried.
    #[serde(skip)]
    pub max_range: u32,
}

/// The smallest salt range for `key` carrying `share` of the traffic.
pub fn one_key(
    p: Partitioner,
    key: &str,
    share: f64,
    n: PartitionCount,
    target_ratio: f64,
    max_range: u32,
) -> Result<OneKeyReport, Error> {
    let plan = recommend(p, key.as_bytes(), share, n, target_ratio, max_range)?;
    let used = plan.range.unwrap_or(max_range.max(1));
    let salted_keys = (1..=used.min(SALTED_LISTED))
        .map(|i| String::from_utf8_lossy(&salted_key(key.as_bytes(), b'_', i)).into_owned())
        .collect();
    Ok(OneKeyReport {
        key: key.to_string(),
        share,
        partitioner: p,
        partitions: n.get(),
        target_ratio,
        range: plan.range,
        target_reached: plan.range.is_some(),
        before_max_over_mean: plan.before_max_over_mean,
        after_max_over_mean: plan.after_max_over_mean,
        before: plan.before,
        after: plan.after,
        spans: plan.spans,
        salted_keys,
        trade_off: TRADE_OFF,
        note: JOIN_NOTE,
        max_range,
    })
}

// ---- a measured distribution

/// The measured keys and the choice of which to salt.
#[derive(Clone, Copy, Debug)]
pub struct Measured<'a> {
    /// The keys and their counts, as read.
    pub keys: &'a [(Vec<u8>, u64)],
    /// Their total.
    pub total: u64,
    /// Per key, whether to salt it.
    pub salt: &'a [bool],
    /// The share above which a key is salted; `None` when the keys were named.
    pub threshold: Option<f64>,
    /// The share that applied (the default when keys were named).
    pub threshold_used: f64,
    /// Target: the busiest partition (or consumer) at most this x the mean.
    pub target_ratio: f64,
    /// Largest range to try.
    pub max_range: u32,
}

impl Measured<'_> {
    fn refs(&self) -> Vec<(&[u8], u64)> {
        self.keys.iter().map(|(k, c)| (k.as_slice(), *c)).collect()
    }

    fn salted(&self) -> impl Iterator<Item = (&[u8], u64)> + '_ {
        self.keys
            .iter()
            .zip(self.salt)
            .filter(|(_, s)| **s)
            .map(|((k, c), _)| (k.as_slice(), *c))
    }

    fn share(&self, c: u64) -> f64 {
        c as f64 / self.total as f64
    }
}

/// A salted key of a measured distribution.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SaltedKey {
    #[serde(serialize_with = "key_text")]
    /// The key.
    pub key: Vec<u8>,
    /// Its records.
    pub count: u64,
    /// Its share of the records.
    pub share: f64,
    /// Where it lands unsalted.
    pub partition: Option<u32>,
    /// The partitions its sub-keys span.
    pub spans: Vec<u32>,
}

/// The sub-keys' separator, with the measured keys that ruled out `_`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Separator {
    /// The sub-keys' separator.
    pub separator: String,
    /// Measured keys shaped like sub-keys with `_`.
    pub existing_sub_keys: Vec<KeyText>,
    /// The byte itself.
    #[serde(skip)]
    pub byte: u8,
}

impl Separator {
    fn of(plan: &CountsPlan) -> Separator {
        Separator {
            separator: char::from(plan.separator).to_string(),
            existing_sub_keys: plan.lookalikes.iter().cloned().map(KeyText).collect(),
            byte: plan.separator,
        }
    }

    /// `KEY_1 .. KEY_S` with this separator (`KEY_1` for one salt).
    pub fn sub_key_range(&self, k: &str, s: u32) -> String {
        let sep = char::from(self.byte);
        if s == 1 {
            format!("{k}{sep}1")
        } else {
            format!("{k}{sep}1 .. {k}{sep}{s}")
        }
    }

    /// Why the sub-keys do not take `_`, when they do not.
    pub fn note(&self) -> Option<String> {
        let found = &self.existing_sub_keys;
        if found.is_empty() {
            return None;
        }
        let named: Vec<String> = found.iter().take(5).map(|k| key_label(&k.0)).collect();
        Some(format!(
            "note: the measured keys already hold {}{}, shaped like sub-keys with '_': the sub-keys take '{}' so that none is a real key and a reader that strips the suffix folds no real key into the hot one",
            named.join(", "),
            if found.len() > 5 { format!(" and {} more", found.len() - 5) } else { String::new() },
            self.separator
        ))
    }
}

/// One member's partitions and what it carries before and after.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemberLoad {
    /// The member.
    pub member: String,
    /// Its partitions.
    pub partitions: Vec<u32>,
    /// Loads per partition (fractions of the total), before.
    pub before: f64,
    /// Loads per partition (fractions of the total), after salting.
    pub after: f64,
}

/// What each consumer of the group carries.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConsumerLoads {
    /// The group's assignor.
    pub assignor: Assignor,
    /// Each member and what it carries.
    pub members: Vec<MemberLoad>,
    /// The busiest partition's (or consumer's) share, before.
    pub busiest_before: f64,
    /// The busiest partition's (or consumer's) share, after.
    pub busiest_after: f64,
}

/// What each consumer carries: the sum of its partitions' loads.
fn carried(owned: &[(String, Vec<u32>)], loads: &[f64]) -> Vec<f64> {
    owned
        .iter()
        .map(|(_, ps)| ps.iter().map(|&q| loads[q as usize]).sum())
        .collect()
}

fn busiest(v: &[f64]) -> f64 {
    v.iter().cloned().fold(0.0, f64::max)
}

impl ConsumerLoads {
    fn of((assignor, owned): &Consumers, before: &[f64], after: &[f64]) -> ConsumerLoads {
        let (b, z) = (carried(owned, before), carried(owned, after));
        ConsumerLoads {
            assignor: *assignor,
            members: owned
                .iter()
                .enumerate()
                .map(|(i, (name, ps))| MemberLoad {
                    member: name.clone(),
                    partitions: ps.clone(),
                    before: b[i],
                    after: z[i],
                })
                .collect(),
            busiest_before: busiest(&b),
            busiest_after: busiest(&z),
        }
    }
}

/// The partitions each consumer owns, for the target (empty: none given).
fn groups(consumers: &Option<Consumers>) -> Vec<Vec<u32>> {
    consumers.as_ref().map_or_else(Vec::new, |(_, o)| {
        o.iter().map(|(_, ps)| ps.clone()).collect()
    })
}

/// A measured distribution's salting plan (`salt -i FILE`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CountsReport {
    /// The partitioner that places the keys.
    pub partitioner: Partitioner,
    /// The partition count.
    pub partitions: u32,
    /// Keys measured.
    pub keys: usize,
    /// Their records.
    pub total: u64,
    /// The share above which a key is salted (`None`: the keys were named).
    pub threshold: Option<f64>,
    /// The keys salted.
    pub salted: Vec<SaltedKey>,
    /// The target: the busiest at most this x the mean.
    pub target_ratio: f64,
    /// What the target is held on.
    pub target_on: TargetOn,
    /// The smallest range that meets the target, if any does.
    pub range: Option<u32>,
    /// The range the `after` loads use.
    pub range_used: u32,
    /// Whether some range meets the target.
    pub target_reached: bool,
    /// The busiest over the mean, before.
    pub before_max_over_mean: f64,
    /// The busiest over the mean, after.
    pub after_max_over_mean: f64,
    /// Loads per partition (fractions of the total), before.
    pub before: Vec<f64>,
    /// Loads per partition (fractions of the total), after salting.
    pub after: Vec<f64>,
    /// The sub-keys' separator.
    pub separator: Separator,
    /// What salting costs the readers.
    pub trade_off: &'static str,
    /// [`JOIN_NOTE`], when keys are salted and it is unknown whether the topic is joined.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// Consumers.
    pub consumers: Option<ConsumerLoads>,
    /// The share that applied.
    #[serde(skip)]
    pub threshold_used: f64,
    /// The largest range tried.
    #[serde(skip)]
    pub max_range: u32,
}

/// The smallest common salt range for the keys `m` marks, placed by `p`
/// over `n` partitions; with `consumers`, the target is on what each
/// carries. `join_note`: whether it is unknown if the topic is joined.
pub fn counts(
    p: Partitioner,
    n: PartitionCount,
    m: &Measured<'_>,
    consumers: Option<Consumers>,
    join_note: bool,
) -> Result<CountsReport, Error> {
    let plan = recommend_counts(
        p,
        n,
        &m.refs(),
        m.salt,
        &groups(&consumers),
        m.target_ratio,
        m.max_range,
    )?;
    let salted: Vec<SaltedKey> = m
        .salted()
        .map(|(k, c)| SaltedKey {
            key: k.to_vec(),
            count: c,
            share: m.share(c),
            partition: p.place(Some(k), n).partition(),
            spans: partitions_spanned(p, k, plan.separator, plan.used, n),
        })
        .collect();
    Ok(CountsReport {
        partitioner: p,
        partitions: n.get(),
        keys: m.keys.len(),
        total: m.total,
        threshold: m.threshold,
        target_ratio: m.target_ratio,
        target_on: TargetOn::of(&consumers),
        range: plan.range,
        range_used: plan.used,
        target_reached: plan.range.is_some(),
        before_max_over_mean: plan.before_max_over_mean,
        after_max_over_mean: plan.after_max_over_mean,
        separator: Separator::of(&plan),
        trade_off: TRADE_OFF,
        note: (!salted.is_empty() && join_note).then_some(JOIN_NOTE),
        consumers: consumers
            .as_ref()
            .map(|c| ConsumerLoads::of(c, &plan.before, &plan.after)),
        salted,
        before: plan.before,
        after: plan.after,
        threshold_used: m.threshold_used,
        max_range: m.max_range,
    })
}
