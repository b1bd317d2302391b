//! `salt --topology`'s report: a key of a co-partition group salted in
//! every topic of the group, or refused, with the join-keeping alternative.

use super::super::{custom_partitioner_setting, recommend_group, GroupProducer, GroupSaltPlan};
use super::{busiest, carried, groups, Consumers, Measured, Separator, TargetOn, TRADE_OFF};
use crate::findings::Finding;
use crate::partitioner::Partitioner;
use crate::ser::{key_label, key_text, KeyText};
use crate::topology::Topology;
use crate::Error;
use serde::{Serialize, Serializer};

/// A producer of a topic of the group, and what it must change.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProducerChange {
    /// Its name.
    pub name: Option<String>,
    /// The partitioner that places the keys.
    pub partitioner: Option<Partitioner>,
    /// How its client selects that partitioner.
    pub setting: Option<String>,
    /// How it serializes keys.
    pub key_format: String,
    /// What it must change to write the sub-keys.
    pub change: String,
    /// How its client plugs in the isolating partitioner.
    pub isolate_with: Option<&'static str>,
    /// How to name it in a sentence.
    #[serde(skip)]
    pub label: String,
}

/// A topic of the group and its producers' changes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TopicChange {
    /// Its name.
    pub name: String,
    /// The partition count.
    pub partitions: u32,
    /// Its producers and what each must change.
    pub producers: Vec<ProducerChange>,
}

/// Per topic of the group (in the report's topic order), a sub-key's partition.
#[derive(Clone, Debug, PartialEq)]
pub struct PerTopic {
    /// The group's topics.
    pub topics: Vec<String>,
    /// Per topic, the partition (none: that topic's producers cannot place it).
    pub partitions: Vec<Option<u32>>,
}

impl Serialize for PerTopic {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.topics.iter().zip(&self.partitions))
    }
}

/// A sub-key of a salted key and where it lands in each topic.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SubKeyRow {
    #[serde(serialize_with = "key_text")]
    /// The key.
    pub key: Vec<u8>,
    #[serde(serialize_with = "key_text")]
    /// The sub-key.
    pub sub_key: Vec<u8>,
    /// Per topic of the group, its partition.
    pub partitions: PerTopic,
}

/// A salted key of the group and what its join costs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JoinedKey {
    #[serde(serialize_with = "key_text")]
    /// The key.
    pub key: Vec<u8>,
    /// Its records.
    pub count: u64,
    /// Its share of the records.
    pub share: f64,
    /// The partitions its sub-keys span in every topic.
    pub spans: Vec<u32>,
    /// The units its join state is spread over.
    pub join_units: usize,
    /// The join's cost, in words.
    pub join_cost: String,
}

/// A key isolated on its own partition.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Reserved {
    #[serde(serialize_with = "key_text")]
    /// The key.
    pub key: Vec<u8>,
    /// Its partition.
    pub partition: u32,
}

/// The join-keeping alternative, or why it is not offered.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum IsolationReport {
    /// Offered: each key alone on its partition.
    Offered {
        /// partwise's spec of the isolating partitioner.
        spec: String,
        /// Per isolated key, its partition.
        reserved: Vec<Reserved>,
        /// Loads per partition with it.
        loads: Vec<f64>,
        /// The busiest partition's (or consumer's) share with it.
        busiest: f64,
        /// The busiest over the mean with it.
        max_over_mean: f64,
        /// The share of the records whose partition changes.
        moved: f64,
        /// The partitions the other keys are hashed over.
        #[serde(skip)]
        rest: usize,
    },
    /// Not offered.
    Unavailable {
        /// Why it is not offered.
        unavailable: String,
    },
}

/// A key of a co-partition group salted in every topic of it, or refused
/// (`salt --topology --topic -i`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JoinedReport {
    /// The topology file, as named.
    pub topology: String,
    /// The topic whose keys are measured.
    pub topic: String,
    /// The co-partition groups of the topic.
    pub groups: Vec<String>,
    /// The partition count.
    pub partitions: u32,
    /// Keys measured.
    pub keys: usize,
    /// Their records.
    pub total: u64,
    /// The share above which a key is salted (`None`: the keys were named).
    pub threshold: Option<f64>,
    /// The keys salted.
    pub salted: Vec<JoinedKey>,
    /// Whether every topic can be salted alike.
    pub feasible: bool,
    /// Why salting would break the join.
    pub refusals: Vec<Finding>,
    /// The sub-keys' separator.
    pub separator: Separator,
    /// Salted keys whose records already land apart.
    pub already_split: Vec<KeyText>,
    /// Every topic of the group, the salted one first.
    pub topics: Vec<TopicChange>,
    /// Every sub-key and where it lands.
    pub sub_keys: Vec<SubKeyRow>,
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
    /// Loads per partition (fractions of the total), before.
    pub before: Vec<f64>,
    /// Loads per partition (fractions of the total), after salting.
    pub after: Vec<f64>,
    /// The busiest partition's (or consumer's) share, before.
    pub busiest_before: f64,
    /// The busiest partition's (or consumer's) share, after.
    pub busiest_after: f64,
    /// The busiest over the mean, before.
    pub before_max_over_mean: f64,
    /// The busiest over the mean, after.
    pub after_max_over_mean: f64,
    /// The join-keeping alternative.
    pub isolation: IsolationReport,
    /// What salting costs the readers.
    pub trade_off: &'static str,
    /// The plan itself (the sub-keys per salted key, the isolation's keys).
    #[serde(skip)]
    pub plan: GroupSaltPlan,
    /// The salted keys, named for a sentence.
    #[serde(skip)]
    pub names: String,
    /// `KEY_1 .. KEY_S`, for one key or for each.
    #[serde(skip)]
    pub sub_key_range: String,
    #[serde(skip)]
    /// Threshold used.
    pub threshold_used: f64,
    #[serde(skip)]
    /// Max range.
    pub max_range: u32,
}

/// Words about the plan that need the group and the consumers.
struct Words<'a> {
    plan: &'a GroupSaltPlan,
    separator: &'a Separator,
    consumers: &'a Option<Consumers>,
    names: String,
    sub_key_range: String,
}

impl Words<'_> {
    /// The busiest partition's (or consumer's) share of the records.
    fn busiest(&self, loads: &[f64]) -> f64 {
        match self.consumers {
            Some((_, owned)) => busiest(&carried(owned, loads)),
            None => busiest(loads),
        }
    }

    /// What one producer must change to salt the key, keeping its partitioner.
    fn change(&self, p: &GroupProducer) -> String {
        match p.partitioner {
            Some(pt) => format!(
                "write {} as {}, one sub-key per record, and keep {} (key format {})",
                self.names,
                self.sub_key_range,
                pt.setting(),
                p.key_format
            ),
            None => "places no record by its key: it cannot carry the sub-keys".to_string(),
        }
    }

    /// The join's cost for one key: the units its state is spread over.
    fn cost(&self, key: &[u8], parts: &[u32]) -> String {
        let list: Vec<String> = parts.iter().map(u32::to_string).collect();
        let k = key_label(key);
        let sep = char::from(self.separator.byte);
        let owners = match self.consumers {
            Some((assignor, owned)) => {
                let mut members: Vec<&str> = owned
                    .iter()
                    .filter(|(_, ps)| ps.iter().any(|q| parts.contains(q)))
                    .map(|(m, _)| m.as_str())
                    .collect();
                members.dedup();
                format!(
                    ", which {} gives to {} of the {} members ({})",
                    assignor.spec(),
                    members.len(),
                    owned.len(),
                    members.join(", ")
                )
            }
            None => ", which the assignor may give to different members".to_string(),
        };
        let s = if parts.len() == 1 { "" } else { "s" };
        format!(
            "{k}'s join state is spread over {} unit{s} (partition{s} {} in every topic of the group): a record of {k}{sep}2 meets only records of {k}{sep}2, so a record that must meet all of {k}'s (an alert on {k}) is written once per sub-key, or the joiner merges {k}'s state across those units{owners}",
            parts.len(),
            list.join(", ")
        )
    }

    fn isolation(&self) -> IsolationReport {
        match &self.plan.isolation {
            Ok(iso) => {
                let mut taken: Vec<u32> = iso.reserved.iter().map(|(_, q)| *q).collect();
                taken.sort_unstable();
                taken.dedup();
                IsolationReport::Offered {
                    spec: iso.spec.clone(),
                    reserved: iso
                        .reserved
                        .iter()
                        .map(|(k, q)| Reserved {
                            key: k.clone(),
                            partition: *q,
                        })
                        .collect(),
                    loads: iso.loads.clone(),
                    busiest: self.busiest(&iso.loads),
                    max_over_mean: iso.max_over_mean,
                    moved: iso.moved,
                    rest: self.plan.topics[0].partitions.get() as usize - taken.len(),
                }
            }
            Err(why) => IsolationReport::Unavailable {
                unavailable: why.clone(),
            },
        }
    }
}

/// The salting plan for the keys `m` marks of `topic`, in every topic of its
/// co-partition groups of `topology` (named `file` in the report); `None`
/// when the topic is in no group (salting it alone moves no join).
pub fn joined(
    topology: &Topology,
    file: &str,
    topic: &str,
    m: &Measured<'_>,
    consumers: Option<Consumers>,
) -> Result<Option<JoinedReport>, Error> {
    let Some(plan) = recommend_group(
        topology,
        topic,
        &m.refs(),
        m.salt,
        &groups(&consumers),
        m.target_ratio,
        m.max_range,
    )?
    else {
        return Ok(None);
    };
    let cp = &plan.plan;
    let separator = Separator::of(cp);
    let salted: Vec<(&[u8], u64)> = m.salted().collect();
    let labels: Vec<String> = salted.iter().map(|(k, _)| key_label(k)).collect();
    let sub_key_range = match &labels[..] {
        [k] => separator.sub_key_range(k, cp.used),
        _ => format!(
            "{} for each of them",
            separator.sub_key_range("KEY", cp.used)
        ),
    };
    let words = Words {
        plan: &plan,
        separator: &separator,
        consumers: &consumers,
        names: labels.join(", "),
        sub_key_range,
    };
    let topics = plan
        .topics
        .iter()
        .map(|t| TopicChange {
            name: t.name.clone(),
            partitions: t.partitions.get(),
            producers: t
                .producers
                .iter()
                .map(|p| ProducerChange {
                    name: p.name.clone(),
                    partitioner: p.partitioner,
                    setting: p.partitioner.map(|x| x.setting()),
                    key_format: p.key_format.to_string(),
                    change: words.change(p),
                    isolate_with: p
                        .partitioner
                        .map(|x| custom_partitioner_setting(x.client())),
                    label: p.label(),
                })
                .collect(),
        })
        .collect();
    let names: Vec<String> = plan.topics.iter().map(|t| t.name.clone()).collect();
    let sub_keys = plan
        .placements
        .iter()
        .flat_map(|(key, subs)| {
            subs.iter().map(|s| SubKeyRow {
                key: key.clone(),
                sub_key: s.sub_key.clone(),
                partitions: PerTopic {
                    topics: names.clone(),
                    partitions: s.partitions.clone(),
                },
            })
        })
        .collect();
    let keys = salted
        .iter()
        .zip(&plan.spans)
        .map(|((k, c), (_, span))| JoinedKey {
            key: k.to_vec(),
            count: *c,
            share: m.share(*c),
            spans: span.clone(),
            join_units: span.len(),
            join_cost: words.cost(k, span),
        })
        .collect();
    let report = JoinedReport {
        topology: file.to_string(),
        topic: topic.to_string(),
        groups: plan.groups.clone(),
        partitions: plan.topics[0].partitions.get(),
        keys: m.keys.len(),
        total: m.total,
        threshold: m.threshold,
        salted: keys,
        feasible: plan.feasible(),
        refusals: plan.refusals.clone(),
        already_split: plan.already_split.iter().cloned().map(KeyText).collect(),
        topics,
        sub_keys,
        target_ratio: m.target_ratio,
        target_on: TargetOn::of(&consumers),
        range: cp.range,
        range_used: cp.used,
        target_reached: cp.range.is_some(),
        before: cp.before.clone(),
        after: cp.after.clone(),
        busiest_before: words.busiest(&cp.before),
        busiest_after: words.busiest(&cp.after),
        before_max_over_mean: cp.before_max_over_mean,
        after_max_over_mean: cp.after_max_over_mean,
        isolation: words.isolation(),
        trade_off: TRADE_OFF,
        names: words.names.clone(),
        sub_key_range: words.sub_key_range.clone(),
        threshold_used: m.threshold_used,
        max_range: m.max_range,
        separator: separator.clone(),
        plan: plan.clone(),
    };
    Ok(Some(report))
}
