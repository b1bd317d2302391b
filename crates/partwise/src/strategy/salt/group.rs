//! Salting a key of a co-partition group (`salt --topology`): every
//! topic of the group must change with it, each producer in its client's
//! terms; what refuses it, and the isolating alternative.

use super::*;
use crate::findings::Finding;

// ---- salting a key of a co-partition group

/// A producer of a topic of the group, and what it must change.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupProducer {
    /// Its label, when declared.
    pub name: Option<String>,
    /// Its partitioner, when it places keyed records by their key.
    pub partitioner: Option<Partitioner>,
    /// Its partitioner as declared, even one that ignores keys.
    pub declared: Option<Partitioner>,
    /// How it serializes keys.
    pub key_format: KeyFormat,
}

impl GroupProducer {
    /// How to name it in a sentence: its label, else its client.
    pub fn label(&self) -> String {
        match (&self.name, self.declared) {
            (Some(n), _) => n.clone(),
            (None, Some(p)) => format!("the {} producer", p.client()),
            (None, None) => "an unnamed producer".to_string(),
        }
    }
}

/// A topic of the group.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupTopic {
    /// Its name.
    pub name: String,
    /// Its partition count.
    pub partitions: PartitionCount,
    /// Its declared producers, in file order.
    pub producers: Vec<GroupProducer>,
}

/// The partition each sub-key of a salted key lands on, per topic.
#[derive(Clone, Debug, PartialEq)]
pub struct SubKeyPlacement {
    /// The sub-key, as the producers write it before serializing (`KEY_i`).
    pub sub_key: Vec<u8>,
    /// Per topic of the group, in [`GroupSaltPlan::topics`] order: the
    /// partition every producer of it puts the sub-key on.
    pub partitions: Vec<Option<u32>>,
}

/// The alternative that keeps the join whole: the key alone on its own
/// partition in every topic of the group, by a priority partitioner.
#[derive(Clone, Debug, PartialEq)]
pub struct Isolation {
    /// partwise's spec of the partitioner every producer of the group must use.
    pub spec: String,
    /// Per isolated key, the partition reserved for it (where it lands now).
    pub reserved: Vec<(Vec<u8>, u32)>,
    /// Loads per partition (fractions of the total) with it.
    pub loads: Vec<f64>,
    /// The busiest partition (or consumer) over the mean with it.
    pub max_over_mean: f64,
    /// The share of the records whose partition changes (every other key is
    /// hashed over the partitions left).
    pub moved: f64,
}

/// What salting keys of a topic means for its co-partition group.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupSaltPlan {
    /// The co-partition groups the topic is in (with those their topics are
    /// in, since every joined topic must move alike).
    pub groups: Vec<String>,
    /// Every topic of those groups, the salted one first.
    pub topics: Vec<GroupTopic>,
    /// The salted topic's loads before and after salting, from its counts
    /// (placed by its first keyed producer).
    pub plan: CountsPlan,
    /// Every salted key's sub-keys and where they land in each topic.
    pub placements: Vec<(Vec<u8>, Vec<SubKeyPlacement>)>,
    /// Per salted key, the partitions its sub-keys span (the same numbers in
    /// every topic when the plan is not refused): the units its join state
    /// is spread over.
    pub spans: Vec<(Vec<u8>, Vec<u32>)>,
    /// Why salting would break the join; empty when every topic can be salted alike.
    pub refusals: Vec<Finding>,
    /// The salted keys whose records already land on different partitions
    /// (different partitioners or key formats), unsalted: their join is
    /// broken before any salt.
    pub already_split: Vec<Vec<u8>>,
    /// The join-keeping alternative, when a priority rule can express it.
    pub isolation: Result<Isolation, String>,
}

impl GroupSaltPlan {
    /// Whether every topic of the group can be salted alike.
    pub fn feasible(&self) -> bool {
        self.refusals.is_empty()
    }
}

/// How a producer of `client` plugs in a partitioner of its own, in the
/// client's terms.
pub fn custom_partitioner_setting(client: &str) -> &'static str {
    match client {
        "java" => {
            "partitioner.class = a class implementing org.apache.kafka.clients.producer.Partitioner"
        }
        "kafkajs" => "createPartitioner: a function of your own (KafkaJS's custom partitioner)",
        "sarama" => "Producer.Partitioner = a sarama.PartitionerConstructor of your own",
        "librdkafka" => "a partitioner callback (rd_kafka_topic_conf_set_partitioner_cb)",
        "kafka-python" => "partitioner = a callable of your own (KafkaProducer)",
        "kafka-go" => "Balancer: a kafka.Balancer of your own",
        "franz-go" => "kgo.RecordPartitioner(a kgo.Partitioner of your own)",
        _ => "a partitioner of your own",
    }
}

/// The topics of every co-partition group `topic` is in, transitively (a
/// partner's other groups too), `topic` first; and the groups' names.
fn joined_topics(t: &Topology, topic: &str) -> (Vec<String>, Vec<String>) {
    let mut topics = vec![topic.to_string()];
    let mut groups: Vec<String> = Vec::new();
    let mut i = 0;
    while i < topics.len() {
        let name = topics[i].clone();
        for g in t.groups_of(&name) {
            if !groups.contains(&g.name) {
                groups.push(g.name.clone());
            }
            for m in &g.topics {
                if !topics.contains(m) {
                    topics.push(m.clone());
                }
            }
        }
        i += 1;
    }
    (groups, topics)
}

/// Salting the keys marked in `salt` (of the measured `counts` of `topic`)
/// when `topic` is joined: every topic of its co-partition groups must write
/// the same sub-keys `KEY_1 .. KEY_S`, each landing on one partition number
/// in all of them; [`GroupSaltPlan::refusals`] says why that is impossible
/// when it is. Beside it, the alternative that keeps the key's join whole:
/// isolating it on its own partition in every topic. `groups` are the
/// partitions each consumer owns (empty: every partition alone), as in
/// [`recommend_counts`]. `None` when `topic` is in no co-partition group.
#[allow(clippy::too_many_arguments)]
pub fn recommend_group(
    t: &Topology,
    topic: &str,
    counts: &[(&[u8], u64)],
    salt: &[bool],
    groups: &[Vec<u32>],
    target_ratio: f64,
    max_range: u32,
) -> Result<Option<GroupSaltPlan>, Error> {
    let Some(home) = t.topic(topic) else {
        return Err(Error::Invalid {
            what: "topic".into(),
            reason: format!("'{topic}' is not a [[topic]] of the topology file"),
        });
    };
    let (group_names, names) = joined_topics(t, topic);
    if group_names.is_empty() {
        return Ok(None);
    }
    let topics: Vec<GroupTopic> = names
        .iter()
        .filter_map(|n| t.topic(n))
        .map(|tp| GroupTopic {
            name: tp.name.clone(),
            partitions: tp.partitions,
            producers: tp
                .producers
                .iter()
                .map(|p| GroupProducer {
                    name: p.name.clone(),
                    partitioner: p.keyed_partitioner(),
                    declared: p.partitioner,
                    key_format: p.key_format,
                })
                .collect(),
        })
        .collect();
    let n = home.partitions;
    let mut refusals = Vec::new();
    for tp in &topics[1..] {
        if tp.partitions != n {
            refusals.push(Finding::new("partition-counts-differ", format!(
                    "{} has {} partitions and {} has {}: a sub-key lands on different partition numbers in them, salted or not",
                    home.name, n, tp.name, tp.partitions
                ), format!(
                    "bring {} and {} to one partition count first (partwise resize shows the procedures), then salt them alike",
                    home.name, tp.name
                )));
        }
        let (a, b) = (&home.key, &t.topic(&tp.name).and_then(|x| x.key.clone()));
        if let (Some(a), Some(b)) = (a, b) {
            if a != b {
                refusals.push(Finding::new("key-fields-differ", format!(
                        "{} is keyed by {a} and {} by {b}: the same sub-key names different things in them",
                        home.name, tp.name
                    ), format!(
                        "key {} and {} by one field before joining or salting them",
                        home.name, tp.name
                    )));
            }
        }
    }
    for tp in &topics {
        if tp.producers.is_empty() {
            refusals.push(Finding::new("no-producer", format!(
                    "{} declares no producer: which client writes it, and so where its sub-keys land, is unknown",
                    tp.name
                ), format!(
                    "declare the producers that write {} under its [[topic]] ([[topic.producer]] with partitioner and key_format)",
                    tp.name
                )));
        }
        for p in &tp.producers {
            if p.partitioner.is_none() {
                refusals.push(Finding::new("keyless-producer", format!(
                        "{} writes {} without placing records by key: its records follow no key, so none can follow a sub-key",
                        p.label(),
                        tp.name
                    ), format!(
                        "make {} write {}'s key with its client's default key-hashing partitioner, as the other producers of the group do, before salting",
                        p.label(),
                        tp.name
                    )));
            }
        }
    }
    let hot: Vec<&[u8]> = counts
        .iter()
        .zip(salt)
        .filter(|(_, s)| **s)
        .map(|((k, _), _)| *k)
        .collect();
    // The first producer that places by key decides the salted topic's loads.
    let reference = topics[0]
        .producers
        .iter()
        .find(|p| p.partitioner.is_some())
        .cloned();
    let plan = match &reference {
        Some(r) => {
            let (pt, fmt) = (r.partitioner.expect("keyed"), r.key_format);
            let place = move |k: &[u8]| {
                fmt.encode(k)
                    .ok()
                    .and_then(|b| pt.place(Some(&b), n).partition())
            };
            recommend_placed(&place, n, counts, salt, groups, target_ratio, max_range)?
        }
        None => recommend_placed(&|_| None, n, counts, salt, groups, target_ratio, max_range)?,
    };
    let range = plan.used;
    let mut placements = Vec::new();
    let mut spans = Vec::new();
    let mut apart_reported = false;
    let mut unencodable: Vec<(String, String)> = Vec::new();
    for key in &hot {
        let mut subs = Vec::new();
        let mut span: Vec<u32> = Vec::new();
        for i in 1..=range {
            let sub = salted_key(key, plan.separator, i);
            let mut per_topic = Vec::new();
            let mut first: Option<(String, u32, Partitioner, KeyFormat)> = None;
            for tp in &topics {
                let mut here: Option<u32> = None;
                for p in &tp.producers {
                    let Some(pt) = p.partitioner else { continue };
                    let Ok(bytes) = p.key_format.encode(&sub) else {
                        let who = (p.label(), tp.name.clone());
                        if !unencodable.contains(&who) {
                            refusals.push(Finding::new("key-format-cannot-salt", format!(
                                    "{} writes {} keys as {}: '{}' is no key it can serialize, so its records cannot carry the sub-keys",
                                    who.0,
                                    tp.name,
                                    p.key_format,
                                    String::from_utf8_lossy(&sub)
                                ), format!(
                                    "isolate the key instead (its own partition in every topic of the group), or give {} a string key format so it can write the sub-keys",
                                    who.0
                                )));
                            unencodable.push(who);
                        }
                        continue;
                    };
                    let Some(q) = pt.place(Some(&bytes), tp.partitions).partition() else {
                        continue;
                    };
                    here.get_or_insert(q);
                    match &first {
                        None => {
                            first =
                                Some((format!("{} in {}", p.label(), tp.name), q, pt, p.key_format))
                        }
                        Some((who, f, fpt, ffmt)) if *f != q && !apart_reported => {
                            apart_reported = true;
                            refusals.push(Finding::new("sub-keys-land-apart", format!(
                                    "'{}' goes to partition {f} by {who} ({}, key format {ffmt}) but to partition {q} by {} in {} ({}, key format {}): with different partitioners or key formats the sub-keys do not meet",
                                    String::from_utf8_lossy(&sub),
                                    fpt.setting(),
                                    p.label(),
                                    tp.name,
                                    pt.setting(),
                                    p.key_format
                                ), match fpt.compatible_in(pt.client()).first() {
                                    Some(c) if *ffmt == p.key_format => format!(
                                        "make {} place keys as {who} does: {}; then salt every topic alike",
                                        p.label(),
                                        c.setting()
                                    ),
                                    _ => format!(
                                        "make every producer of the group use one partitioner and key format (as {who} does), or isolate the key with one partitioner in all of them"
                                    ),
                                }));
                        }
                        _ => {}
                    }
                }
                per_topic.push(here);
            }
            if let Some(q) = per_topic.first().copied().flatten() {
                span.push(q);
            }
            subs.push(SubKeyPlacement {
                sub_key: sub,
                partitions: per_topic,
            });
        }
        span.sort_unstable();
        span.dedup();
        placements.push((key.to_vec(), subs));
        spans.push((key.to_vec(), span));
    }
    let already_split = hot
        .iter()
        .filter(|k| {
            let mut at = topics.iter().flat_map(|tp| {
                tp.producers.iter().filter_map(move |p| {
                    let pt = p.partitioner?;
                    let bytes = p.key_format.encode(k).ok()?;
                    pt.place(Some(&bytes), tp.partitions).partition()
                })
            });
            let first = at.next();
            at.any(|q| Some(q) != first)
        })
        .map(|k| k.to_vec())
        .collect();
    let isolation = isolate(&reference, n, counts, &hot, groups);
    Ok(Some(GroupSaltPlan {
        already_split,
        groups: group_names,
        topics,
        plan,
        placements,
        spans,
        refusals,
        isolation,
    }))
}

/// The priority partitioner that puts each of `hot` alone on the partition
/// it lands on now, and its loads from `counts`.
fn isolate(
    reference: &Option<GroupProducer>,
    n: PartitionCount,
    counts: &[(&[u8], u64)],
    hot: &[&[u8]],
    groups: &[Vec<u32>],
) -> Result<Isolation, String> {
    let Some(r) = reference else {
        return Err("no producer of the topic places records by key".into());
    };
    let (pt, fmt) = (r.partitioner.expect("keyed"), r.key_format);
    if !matches!(fmt, KeyFormat::Utf8 | KeyFormat::String) {
        return Err(format!(
            "its keys are serialized as {fmt}, and a priority rule matches the serialized bytes"
        ));
    }
    if hot.is_empty() {
        return Err("no key to isolate".into());
    }
    let mut reserved: Vec<(Vec<u8>, u32)> = Vec::new();
    let mut rules = Vec::new();
    for k in hot {
        let text = std::str::from_utf8(k).map_err(|_| {
            format!(
                "'{}' is not text a priority rule can match",
                String::from_utf8_lossy(k)
            )
        })?;
        if text.contains([',', ';']) {
            return Err(format!(
                "'{text}' holds a comma or semicolon, which a priority spec cannot carry"
            ));
        }
        let Some(q) = pt.place(Some(k), n).partition() else {
            return Err(format!("'{text}' has no partition now"));
        };
        rules.push(format!("regex=^{}$,reserved={q}", regex::escape(text)));
        reserved.push((k.to_vec(), q));
    }
    let spec = format!("priority:{}", rules.join(";"));
    let prio: Partitioner = spec.parse().map_err(|e: Error| e.to_string())?;
    if prio.priority().is_some_and(|p| p.reserves_all(n)) {
        return Err(format!(
            "the keys would take every one of the {n} partitions, leaving none for the others"
        ));
    }
    let parts = n.get() as usize;
    let mut loads = vec![0f64; parts];
    let (mut total, mut moved) = (0u64, 0u64);
    for &(k, c) in counts {
        let Some(now) = pt.place(Some(k), n).partition() else {
            continue;
        };
        let Some(q) = prio.place(Some(k), n).partition() else {
            continue;
        };
        loads[q as usize] += c as f64;
        total += c;
        if q != now {
            moved += c;
        }
    }
    let max_over_mean = over_mean(&loads, groups);
    let t = total.max(1) as f64;
    Ok(Isolation {
        spec,
        reserved,
        loads: loads.iter().map(|x| x / t).collect(),
        max_over_mean,
        moved: moved as f64 / t,
    })
}
