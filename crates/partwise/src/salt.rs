//! Key salting: spreading one hot key over several partitions.
//!
//! A producer writes `KEY_1 .. KEY_S` instead of `KEY` (the seed article's
//! `Key + "_" + random(1, S)`); readers must merge the partitions those salted
//! keys land on. The trade-off: records of `KEY` are ordered only within each
//! salt, no longer across all of them.
//!
//! ```
//! use partwise::salt::{salted_key, partitions_spanned};
//! use partwise::{PartitionCount, Partitioner};
//! assert_eq!(salted_key(b"ID", b'_', 2), b"ID_2".to_vec());
//! let java: Partitioner = "java".parse()?;
//! let spans = partitions_spanned(java, b"ID", b'_', 3, PartitionCount::new(12)?);
//! assert!(!spans.is_empty() && spans.len() <= 3);
//! # Ok::<(), partwise::Error>(())
//! ```

use crate::count::PartitionCount;
use crate::encoding::KeyFormat;
use crate::partitioner::Partitioner;
use crate::topology::Topology;
use crate::Error;

pub mod report;

/// The `i`-th salted form of `key` (1-based): `KEY_i` with `sep` `_`.
pub fn salted_key(key: &[u8], sep: u8, i: u32) -> Vec<u8> {
    let mut k = key.to_vec();
    k.push(sep);
    k.extend_from_slice(i.to_string().as_bytes());
    k
}

/// The separators a sub-key may take, in order of preference: `_` is the
/// usual `KEY_i`; the others serve when the measured keys already hold
/// keys of that shape.
pub const SEPARATORS: [u8; 6] = [b'_', b'-', b'#', b'~', b'|', b'.'];

/// The keys of `keys` shaped like a sub-key of a key of `hot` with `sep`:
/// the hot key, `sep`, then digits only. A reader that strips the suffix
/// to merge a salted key's records would fold such a real key into the
/// hot one, and a producer's sub-key may be that real key itself.
fn sub_key_lookalikes(hot: &[&[u8]], keys: &[(&[u8], u64)], sep: u8) -> Vec<Vec<u8>> {
    let hot: std::collections::HashSet<&[u8]> = hot.iter().copied().collect();
    keys.iter()
        .filter_map(|&(k, _)| {
            let digits = k.iter().rev().take_while(|b| b.is_ascii_digit()).count();
            let stem = k.len() - digits;
            (digits > 0 && stem > 0 && k[stem - 1] == sep && hot.contains(&k[..stem - 1]))
                .then(|| k.to_vec())
        })
        .collect()
}

/// The first separator of [`SEPARATORS`] whose sub-keys of the keys marked
/// in `salt` match no key of `counts`, with the keys that ruled out `_`
/// (empty when `_` serves); an error naming the keys when every separator
/// is taken.
pub fn choose_separator(
    counts: &[(&[u8], u64)],
    salt: &[bool],
) -> Result<(u8, Vec<Vec<u8>>), Error> {
    let hot: Vec<&[u8]> = counts
        .iter()
        .zip(salt)
        .filter(|(_, s)| **s)
        .map(|((k, _), _)| *k)
        .collect();
    if hot.is_empty() {
        return Ok((SEPARATORS[0], Vec::new()));
    }
    let taken = sub_key_lookalikes(&hot, counts, SEPARATORS[0]);
    if taken.is_empty() {
        return Ok((SEPARATORS[0], taken));
    }
    for &sep in &SEPARATORS[1..] {
        if sub_key_lookalikes(&hot, counts, sep).is_empty() {
            return Ok((sep, taken));
        }
    }
    let named: Vec<String> = taken
        .iter()
        .take(5)
        .map(|k| String::from_utf8_lossy(k).into_owned())
        .collect();
    Err(Error::Invalid {
        what: "salt".into(),
        reason: format!(
            "the measured keys already hold keys shaped like the hot keys' sub-keys with every separator ({}): {}{}; salting would write into real keys",
            SEPARATORS.iter().map(|&b| char::from(b).to_string()).collect::<Vec<_>>().join(" "),
            named.join(", "),
            if taken.len() > 5 { format!(" and {} more", taken.len() - 5) } else { String::new() }
        ),
    })
}

/// How a producer picks the salt for each record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaltMode {
    /// A uniformly random salt per record (the seed's `random(1, S)`).
    Random,
    /// Salts in turn: 1, 2, ..., S, 1, ... (perfectly even).
    RoundRobin,
}

/// The producer-side helper: hands out salted keys for one hot key.
#[derive(Clone, Debug)]
pub struct Salter {
    key: Vec<u8>,
    range: u32,
    mode: SaltMode,
    next: u32,
    rng: u64,
}

impl Salter {
    /// A salter over `range` salts (`range >= 1`), seeded for reproducibility.
    pub fn new(key: &[u8], range: u32, mode: SaltMode, seed: u64) -> Result<Salter, Error> {
        if range == 0 {
            return Err(Error::Invalid {
                what: "salt range".into(),
                reason: "must be at least 1".into(),
            });
        }
        Ok(Salter {
            key: key.to_vec(),
            range,
            mode,
            next: 0,
            rng: seed | 1,
        })
    }

    /// The key for the next record.
    pub fn next_key(&mut self) -> Vec<u8> {
        let i = match self.mode {
            SaltMode::RoundRobin => {
                self.next = self.next % self.range + 1;
                self.next
            }
            SaltMode::Random => {
                // xorshift64*: cheap, and reproducible given the seed.
                self.rng ^= self.rng >> 12;
                self.rng ^= self.rng << 25;
                self.rng ^= self.rng >> 27;
                let r = self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d);
                ((r >> 32) % u64::from(self.range)) as u32 + 1
            }
        };
        salted_key(&self.key, SEPARATORS[0], i)
    }
}

/// The consumer-side helper: the partitions that `KEY_1 .. KEY_range` land on,
/// sorted and distinct, so readers know which ones to merge.
pub fn partitions_spanned(
    p: Partitioner,
    key: &[u8],
    sep: u8,
    range: u32,
    n: PartitionCount,
) -> Vec<u32> {
    let mut v: Vec<u32> = (1..=range)
        .filter_map(|i| p.place(Some(&salted_key(key, sep, i)), n).partition())
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The load per partition when `share` of the traffic carries `key`, salted over
/// `range` salts evenly, and the rest is spread evenly over all partitions.
/// Loads are fractions of the total (they sum to 1).
pub fn salted_loads(
    p: Partitioner,
    key: &[u8],
    share: f64,
    range: u32,
    n: PartitionCount,
) -> Vec<f64> {
    let parts = n.get() as usize;
    let mut loads = vec![(1.0 - share) / parts as f64; parts];
    for i in 1..=range {
        if let Some(q) = p
            .place(Some(&salted_key(key, SEPARATORS[0], i)), n)
            .partition()
        {
            loads[q as usize] += share / f64::from(range);
        }
    }
    loads
}

/// A salting recommendation.
#[derive(Clone, Debug, PartialEq)]
pub struct SaltPlan {
    /// The smallest salt range that meets the target, if any up to the limit does.
    pub range: Option<u32>,
    /// The hottest partition over the mean, without salting.
    pub before_max_over_mean: f64,
    /// The hottest partition over the mean, with the recommended (or largest tried) range.
    pub after_max_over_mean: f64,
    /// Loads (fractions of the total) without salting.
    pub before: Vec<f64>,
    /// Loads with the recommended (or largest tried) range.
    pub after: Vec<f64>,
    /// The partitions the salted key spans.
    pub spans: Vec<u32>,
}

/// The smallest salt range `S <= max_range` that brings the hottest partition
/// under `target_ratio` x mean.
pub fn recommend(
    p: Partitioner,
    key: &[u8],
    share: f64,
    n: PartitionCount,
    target_ratio: f64,
    max_range: u32,
) -> Result<SaltPlan, Error> {
    if !(0.0..=1.0).contains(&share) {
        return Err(Error::Invalid {
            what: "share".into(),
            reason: format!("{share} is not a fraction between 0 and 1"),
        });
    }
    if !target_ratio.is_finite() || target_ratio < 1.0 {
        return Err(Error::Invalid {
            what: "target ratio".into(),
            reason: format!("{target_ratio}: the hottest partition is at least the mean, so the target must be >= 1"),
        });
    }
    let ratio = |loads: &[f64]| loads.iter().cloned().fold(0.0, f64::max) * f64::from(n.get());
    // Before salting the key is written as it is, not as KEY_1.
    let parts = n.get() as usize;
    let mut before = vec![(1.0 - share) / parts as f64; parts];
    if let Some(q) = p.place(Some(key), n).partition() {
        before[q as usize] += share;
    }
    let mut after = before.clone();
    let mut range = None;
    for s in 1..=max_range.max(1) {
        after = salted_loads(p, key, share, s, n);
        if ratio(&after) <= target_ratio + 1e-12 {
            range = Some(s);
            break;
        }
    }
    let used = range.unwrap_or(max_range.max(1));
    Ok(SaltPlan {
        range,
        before_max_over_mean: ratio(&before),
        after_max_over_mean: ratio(&after),
        before,
        after,
        spans: partitions_spanned(p, key, SEPARATORS[0], used, n),
    })
}

/// A salting plan for a measured key distribution (`key,count` pairs).
#[derive(Clone, Debug, PartialEq)]
pub struct CountsPlan {
    /// The smallest common salt range that meets the target, if any does.
    pub range: Option<u32>,
    /// The range the `after` loads use: `range`, or the best one tried.
    pub used: u32,
    /// Loads per partition (fractions of the total) as the keys are now.
    pub before: Vec<f64>,
    /// Loads per partition with the chosen keys salted over `used` salts.
    pub after: Vec<f64>,
    /// The busiest partition (or consumer) over the mean, before.
    pub before_max_over_mean: f64,
    /// The busiest partition (or consumer) over the mean, after.
    pub after_max_over_mean: f64,
    /// The byte between a key and its salt (`KEY_i` with `_`): the first
    /// of [`SEPARATORS`] whose sub-keys are no measured key.
    pub separator: u8,
    /// The measured keys shaped like sub-keys with `_` (why the separator
    /// is another); empty when it is `_`.
    pub lookalikes: Vec<Vec<u8>>,
}

/// The smallest salt range `S <= max_range`, the same for every key marked
/// in `salt`, that brings the busiest of `groups` (the partitions each
/// consumer owns; empty: every partition alone) of the measured distribution
/// `counts` under `target_ratio` x the mean; when none does, the `S` with the
/// coolest busiest group. Unsalted keys stay where the partitioner puts them
/// now (keys it does not place by key are left out: they follow no key).
pub fn recommend_counts(
    p: Partitioner,
    n: PartitionCount,
    counts: &[(&[u8], u64)],
    salt: &[bool],
    groups: &[Vec<u32>],
    target_ratio: f64,
    max_range: u32,
) -> Result<CountsPlan, Error> {
    let place = |key: &[u8]| p.place(Some(key), n).partition();
    recommend_placed(&place, n, counts, salt, groups, target_ratio, max_range)
}

/// [`recommend_counts`] with the placement given: `place` puts a key (as the
/// user wrote it) on a partition; the sub-keys take the separator
/// [`choose_separator`] finds free among the measured keys.
fn recommend_placed(
    place: &impl Fn(&[u8]) -> Option<u32>,
    n: PartitionCount,
    counts: &[(&[u8], u64)],
    salt: &[bool],
    groups: &[Vec<u32>],
    target_ratio: f64,
    max_range: u32,
) -> Result<CountsPlan, Error> {
    let (sep, lookalikes) = choose_separator(counts, salt)?;
    if !target_ratio.is_finite() || target_ratio < 1.0 {
        return Err(Error::Invalid {
            what: "target ratio".into(),
            reason: format!("{target_ratio}: the hottest partition is at least the mean, so the target must be >= 1"),
        });
    }
    let parts = n.get() as usize;
    let mut base = vec![0u64; parts];
    let mut hot: Vec<(&[u8], u64)> = Vec::new();
    let mut before = vec![0u64; parts];
    for (i, &(key, c)) in counts.iter().enumerate() {
        let Some(q) = place(key) else {
            continue;
        };
        before[q as usize] += c;
        if salt.get(i).copied().unwrap_or(false) {
            hot.push((key, c));
        } else {
            base[q as usize] += c;
        }
    }
    let total: u64 = before.iter().sum();
    let frac = |v: &[f64]| -> Vec<f64> {
        v.iter()
            .map(|x| if total == 0 { 0.0 } else { x / total as f64 })
            .collect()
    };
    let ratio = |v: &[f64]| over_mean(v, groups);
    let spread = |s: u32| -> Vec<f64> {
        let mut loads: Vec<f64> = base.iter().map(|&x| x as f64).collect();
        for &(key, c) in &hot {
            for i in 1..=s {
                if let Some(q) = place(&salted_key(key, sep, i)) {
                    loads[q as usize] += c as f64 / f64::from(s);
                }
            }
        }
        loads
    };
    let before: Vec<f64> = before.iter().map(|&x| x as f64).collect();
    let mut best = (ratio(&before), 1u32, before.clone());
    let mut range = None;
    if !hot.is_empty() {
        for s in 1..=max_range.max(1) {
            let loads = spread(s);
            let r = ratio(&loads);
            if r < best.0 - 1e-12 {
                best = (r, s, loads);
            }
            if r <= target_ratio + 1e-12 {
                range = Some(s);
                best = (r, s, spread(s));
                break;
            }
        }
    } else if best.0 <= target_ratio + 1e-12 {
        range = Some(1);
    }
    Ok(CountsPlan {
        range,
        used: best.1,
        before_max_over_mean: ratio(&before),
        after_max_over_mean: best.0,
        before: frac(&before),
        after: frac(&best.2),
        separator: sep,
        lookalikes,
    })
}

/// The busiest of `groups` (empty: every partition alone) over the mean.
fn over_mean(v: &[f64], groups: &[Vec<u32>]) -> f64 {
    let loads: Vec<f64> = if groups.is_empty() {
        v.to_vec()
    } else {
        groups
            .iter()
            .map(|g| {
                g.iter()
                    .map(|&q| v.get(q as usize).copied().unwrap_or(0.0))
                    .sum()
            })
            .collect()
    };
    let mean = loads.iter().sum::<f64>() / loads.len().max(1) as f64;
    if mean == 0.0 {
        0.0
    } else {
        loads.iter().cloned().fold(0.0, f64::max) / mean
    }
}

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

/// Why a key of a co-partition group cannot be salted without breaking its
/// join. `kind` is stable; the message names the topic and producer.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Refusal {
    /// A stable id: `partition_counts_differ`, `no_producer`, `keyless_producer`,
    /// `key_fields_differ`, `key_format_cannot_salt`, `sub_keys_land_apart`.
    pub kind: &'static str,
    /// What makes it impossible, naming the topics and producers.
    pub message: String,
    /// What to change first, in the clients' own terms.
    pub fix: String,
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
    pub refusals: Vec<Refusal>,
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
            refusals.push(Refusal {
                kind: "partition_counts_differ",
                message: format!(
                    "{} has {} partitions and {} has {}: a sub-key lands on different partition numbers in them, salted or not",
                    home.name, n, tp.name, tp.partitions
                ),
                fix: format!(
                    "bring {} and {} to one partition count first (partwise resize shows the procedures), then salt them alike",
                    home.name, tp.name
                ),
            });
        }
        let (a, b) = (&home.key, &t.topic(&tp.name).and_then(|x| x.key.clone()));
        if let (Some(a), Some(b)) = (a, b) {
            if a != b {
                refusals.push(Refusal {
                    kind: "key_fields_differ",
                    message: format!(
                        "{} is keyed by {a} and {} by {b}: the same sub-key names different things in them",
                        home.name, tp.name
                    ),
                    fix: format!(
                        "key {} and {} by one field before joining or salting them",
                        home.name, tp.name
                    ),
                });
            }
        }
    }
    for tp in &topics {
        if tp.producers.is_empty() {
            refusals.push(Refusal {
                kind: "no_producer",
                message: format!(
                    "{} declares no producer: which client writes it, and so where its sub-keys land, is unknown",
                    tp.name
                ),
                fix: format!(
                    "declare the producers that write {} under its [[topic]] ([[topic.producer]] with partitioner and key_format)",
                    tp.name
                ),
            });
        }
        for p in &tp.producers {
            if p.partitioner.is_none() {
                refusals.push(Refusal {
                    kind: "keyless_producer",
                    message: format!(
                        "{} writes {} without placing records by key: its records follow no key, so none can follow a sub-key",
                        p.label(),
                        tp.name
                    ),
                    fix: format!(
                        "make {} write {}'s key with its client's default key-hashing partitioner, as the other producers of the group do, before salting",
                        p.label(),
                        tp.name
                    ),
                });
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
                            refusals.push(Refusal {
                                kind: "key_format_cannot_salt",
                                message: format!(
                                    "{} writes {} keys as {}: '{}' is no key it can serialize, so its records cannot carry the sub-keys",
                                    who.0,
                                    tp.name,
                                    p.key_format,
                                    String::from_utf8_lossy(&sub)
                                ),
                                fix: format!(
                                    "isolate the key instead (its own partition in every topic of the group), or give {} a string key format so it can write the sub-keys",
                                    who.0
                                ),
                            });
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
                            refusals.push(Refusal {
                                kind: "sub_keys_land_apart",
                                message: format!(
                                    "'{}' goes to partition {f} by {who} ({}, key format {ffmt}) but to partition {q} by {} in {} ({}, key format {}): with different partitioners or key formats the sub-keys do not meet",
                                    String::from_utf8_lossy(&sub),
                                    fpt.setting(),
                                    p.label(),
                                    tp.name,
                                    pt.setting(),
                                    p.key_format
                                ),
                                fix: match fpt.compatible_in(pt.client()).first() {
                                    Some(c) if *ffmt == p.key_format => format!(
                                        "make {} place keys as {who} does: {}; then salt every topic alike",
                                        p.label(),
                                        c.setting()
                                    ),
                                    _ => format!(
                                        "make every producer of the group use one partitioner and key format (as {who} does), or isolate the key with one partitioner in all of them"
                                    ),
                                },
                            });
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

#[cfg(test)]
mod tests {
    use super::*;

    fn java() -> Partitioner {
        "java".parse().unwrap()
    }

    #[test]
    fn seed_95_percent_on_id() {
        // 95% of traffic on key ID: one partition takes ~95%, the rest idle-ish.
        let n = PartitionCount::new(12).unwrap();
        let before = salted_loads(java(), b"ID", 0.95, 1, n);
        let hot = before.iter().cloned().fold(0.0, f64::max);
        assert!((hot - (0.95 + 0.05 / 12.0)).abs() < 1e-12);
        // Salting over 3 spreads it over up to 3 partitions.
        let spans = partitions_spanned(java(), b"ID", b'_', 3, n);
        assert!((1..=3).contains(&spans.len()));
        let after = salted_loads(java(), b"ID", 0.95, 3, n);
        assert!(after.iter().cloned().fold(0.0, f64::max) < hot);
        assert!((after.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn recommend_meets_target() {
        let n = PartitionCount::new(6).unwrap();
        let plan = recommend(java(), b"ID", 0.95, n, 2.0, 200).unwrap();
        let s = plan.range.unwrap();
        assert!(plan.after_max_over_mean <= 2.0);
        if s > 1 {
            let worse = salted_loads(java(), b"ID", 0.95, s - 1, n);
            assert!(worse.iter().cloned().fold(0.0, f64::max) * 6.0 > 2.0);
        }
        assert!(recommend(java(), b"ID", 1.5, n, 2.0, 10).is_err());
        assert!(recommend(java(), b"ID", 0.5, n, 0.5, 10).is_err());
    }

    #[test]
    fn salters() {
        let mut rr = Salter::new(b"ID", 3, SaltMode::RoundRobin, 1).unwrap();
        let keys: Vec<Vec<u8>> = (0..4).map(|_| rr.next_key()).collect();
        assert_eq!(
            keys,
            [
                b"ID_1".to_vec(),
                b"ID_2".to_vec(),
                b"ID_3".to_vec(),
                b"ID_1".to_vec()
            ]
        );
        let mut r = Salter::new(b"ID", 3, SaltMode::Random, 7).unwrap();
        let mut seen = [0; 4];
        for _ in 0..3000 {
            let k = r.next_key();
            seen[(k[3] - b'0') as usize] += 1;
        }
        assert!(seen[0] == 0 && seen[1..].iter().all(|&c| c > 800));
        assert!(Salter::new(b"ID", 0, SaltMode::Random, 1).is_err());
    }

    const SYMBOLS: [&str; 10] = [
        "BBCA", "ANTM", "ASII", "UNVR", "TLKM", "BBRI", "BMRI", "GOTO", "ADRO", "ICBP",
    ];

    /// The seeds' ticker with the notifications producer given, and BBCA at
    /// 45% of the ticks.
    fn ticker(notif_producer: &str, notif_partitions: u32) -> (Topology, Vec<(Vec<u8>, u64)>) {
        let t: Topology = format!(
            r#"
[[topic]]
name = "market-updates"
partitions = 6
key = "symbol"
producer = [{{ name = "market-feed", partitioner = "kafkajs", key_format = "string" }}]

[[topic]]
name = "notifications"
partitions = {notif_partitions}
key = "symbol"
producer = [{notif_producer}]

[[topic]]
name = "audit-log"
partitions = 3
producer = [{{ partitioner = "java" }}]

[[copartition]]
name = "ticker"
topics = ["market-updates", "notifications"]
"#
        )
        .parse()
        .unwrap();
        let counts = SYMBOLS
            .iter()
            .map(|s| (s.as_bytes().to_vec(), if *s == "BBCA" { 4500 } else { 611 }))
            .collect();
        (t, counts)
    }

    fn group_plan(t: &Topology, counts: &[(Vec<u8>, u64)]) -> GroupSaltPlan {
        let refs: Vec<(&[u8], u64)> = counts.iter().map(|(k, c)| (k.as_slice(), *c)).collect();
        let salt: Vec<bool> = counts.iter().map(|(k, _)| k == b"BBCA").collect();
        recommend_group(t, "market-updates", &refs, &salt, &[], 1.5, 64)
            .unwrap()
            .expect("market-updates is joined")
    }

    const ALERTS: &str =
        r#"{ name = "alert-service", partitioner = "kafkajs", key_format = "string" }"#;

    #[test]
    fn salting_a_joined_key_salts_every_topic_alike_and_the_join_holds() {
        let (t, counts) = ticker(ALERTS, 6);
        let plan = group_plan(&t, &counts);
        assert!(plan.feasible(), "{:?}", plan.refusals);
        assert!(plan.already_split.is_empty());
        assert_eq!(plan.groups, ["ticker"]);
        let names: Vec<&str> = plan.topics.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["market-updates", "notifications"]);
        assert!(plan.plan.range.is_some() && plan.plan.used > 1);
        let six = PartitionCount::new(6).unwrap();
        let kafkajs: Partitioner = "kafkajs".parse().unwrap();
        let (_, subs) = &plan.placements[0];
        assert_eq!(subs.len() as u32, plan.plan.used);
        for s in subs {
            // Routed by each topic's own producer: one partition number in both.
            let want = kafkajs.place(Some(&s.sub_key), six).partition();
            assert_eq!(
                s.partitions,
                [want, want],
                "{}",
                String::from_utf8_lossy(&s.sub_key)
            );
        }
        // Salting market-updates alone (the old advice) sends some of BBCA's
        // ticks where its alerts, still keyed BBCA, are not.
        let alerts_at = kafkajs.place(Some(b"BBCA"), six).partition();
        assert!(subs.iter().any(|s| s.partitions[0] != alerts_at));
        assert!(plan.spans[0].1.len() > 1);
    }

    #[test]
    fn isolation_keeps_the_key_whole_on_its_own_partition() {
        let (t, counts) = ticker(ALERTS, 6);
        let plan = group_plan(&t, &counts);
        let iso = plan.isolation.as_ref().unwrap();
        let six = PartitionCount::new(6).unwrap();
        let kafkajs: Partitioner = "kafkajs".parse().unwrap();
        let home = kafkajs.place(Some(b"BBCA"), six).partition().unwrap();
        assert_eq!(iso.reserved, [(b"BBCA".to_vec(), home)]);
        let prio: Partitioner = iso.spec.parse().unwrap();
        // Alone there: its partition carries exactly its own share.
        let total: u64 = counts.iter().map(|(_, c)| c).sum();
        assert!((iso.loads[home as usize] - 4500.0 / total as f64).abs() < 1e-12);
        for (k, _) in &counts {
            let q = prio.place(Some(k), six).partition().unwrap();
            assert_eq!(q == home, k == b"BBCA", "{}", String::from_utf8_lossy(k));
        }
        assert!(iso.moved > 0.0 && iso.moved < 1.0);
    }

    #[test]
    fn refused_with_the_reason_when_the_partners_cannot_follow() {
        let kinds = |producer: &str, parts: u32| -> Vec<&'static str> {
            let (t, counts) = ticker(producer, parts);
            group_plan(&t, &counts)
                .refusals
                .iter()
                .map(|r| r.kind)
                .collect()
        };
        // Sarama's default hash (FNV-1a) puts the sub-keys elsewhere.
        assert_eq!(
            kinds(r#"{ name = "go-alerts", partitioner = "sarama" }"#, 6),
            ["sub_keys_land_apart"]
        );
        assert_eq!(
            kinds(
                r#"{ name = "batch", partitioner = "kafkajs", keyless = true }"#,
                6
            ),
            ["keyless_producer"]
        );
        assert!(kinds(ALERTS, 9).contains(&"partition_counts_differ"));
        assert_eq!(kinds("", 6), ["no_producer"]);
        assert_eq!(
            kinds(
                r#"{ name = "ids", partitioner = "kafkajs", key_format = "int32" }"#,
                6
            ),
            ["key_format_cannot_salt"]
        );
        let (t, counts) = ticker(r#"{ name = "go-alerts", partitioner = "sarama" }"#, 6);
        let plan = group_plan(&t, &counts);
        let m = &plan.refusals[0].message;
        assert!(
            m.contains("go-alerts") && m.contains("sarama.NewHashPartitioner"),
            "{m}"
        );
    }

    #[test]
    fn a_topic_in_no_group_has_no_group_plan() {
        let (t, counts) = ticker(ALERTS, 6);
        let refs: Vec<(&[u8], u64)> = counts.iter().map(|(k, c)| (k.as_slice(), *c)).collect();
        let salt = vec![true; refs.len()];
        assert!(recommend_group(&t, "audit-log", &refs, &salt, &[], 1.5, 8)
            .unwrap()
            .is_none());
        assert!(recommend_group(&t, "nope", &refs, &salt, &[], 1.5, 8).is_err());
    }

    #[test]
    fn sub_keys_avoid_the_measured_keys() {
        let counts: Vec<(&[u8], u64)> = vec![
            (b"BBCA", 90),
            (b"BBCA_1", 5),
            (b"BBCA_x2", 5),
            (b"UNVR_1", 5),
            (b"BBCA_", 1),
        ];
        let salt = [true, false, false, false, false];
        // BBCA_1 is shaped like a sub-key; BBCA_x2, BBCA_ and UNVR_1 are not.
        let (sep, taken) = choose_separator(&counts, &salt).unwrap();
        assert_eq!((sep, taken), (b'-', vec![b"BBCA_1".to_vec()]));
        let plan = recommend_counts(
            java(),
            PartitionCount::new(6).unwrap(),
            &counts,
            &salt,
            &[],
            1.5,
            50,
        )
        .unwrap();
        assert_eq!(plan.separator, b'-');
        // A salted key's own lookalike counts too: salting BBCA and BBCA_1
        // would make BBCA's sub-key BBCA_1 the other hot key.
        let both = [true, true, false, false, false];
        assert_eq!(choose_separator(&counts, &both).unwrap().0, b'-');
        // Nothing shaped like a sub-key: the usual `_`.
        assert_eq!(
            choose_separator(&counts[..1], &salt[..1]).unwrap(),
            (b'_', vec![])
        );
    }
}
