//! The co-partition check of one group declared in a topology file: every
//! [`Reason`] its topics and producers break, with the fraction of sample
//! keys each moves, and the sample keys that land alike everywhere.

use super::{CopartitionGroup, Producer, Topic, Topology};
use crate::count::PartitionCount;
use crate::encoding::KeyFormat;
use crate::findings::{ProducerRef, Reason, SampleDiff};
use crate::partitioner::{KeyRule, Partitioner};
use crate::Placement;

/// Whether two key formats write the same bytes for the same logical key:
/// `utf8` and `string` both write the text's UTF-8 bytes.
fn same_bytes(a: KeyFormat, b: KeyFormat) -> bool {
    let norm = |f| {
        if f == KeyFormat::Utf8 {
            KeyFormat::String
        } else {
            f
        }
    };
    norm(a) == norm(b)
}

/// Sample keys that every keyed producer of a group puts on one partition number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Alignment {
    /// Sample keys.
    pub keys: usize,
    /// Keys on the same partition number in every topic, by every producer.
    pub aligned: usize,
}

/// The verdict on one co-partition group.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupVerdict {
    /// The group name.
    pub name: String,
    /// Its topics.
    pub topics: Vec<String>,
    /// Every reason it breaks; empty when co-partitioned.
    pub reasons: Vec<Reason>,
    /// The sample keys, end to end (when keys were given and a producer is keyed).
    pub sample: Option<Alignment>,
}

impl GroupVerdict {
    /// Whether the group is co-partitioned.
    pub fn ok(&self) -> bool {
        self.reasons.is_empty()
    }
}

/// A producer with its topic, flattened for pairwise comparison.
struct Writer<'a> {
    topic: &'a Topic,
    index: usize,
    producer: &'a Producer,
}

impl Writer<'_> {
    fn reference(&self) -> ProducerRef {
        ProducerRef {
            topic: self.topic.name.clone(),
            index: self.index,
            name: self.producer.name.clone(),
            partitioner: self.producer.partitioner,
            key_format: self.producer.key_format,
        }
    }
}

/// The partition of logical key `key` written with `format` and placed by
/// `p` over `n`, or `None` when it cannot be encoded or is not placed by key.
fn place(p: Partitioner, format: KeyFormat, key: &[u8], n: PartitionCount) -> Option<u32> {
    let bytes = format.encode(key).ok()?;
    p.place(Some(&bytes), n).partition()
}

fn compare(
    samples: &[&[u8]],
    a: (Partitioner, KeyFormat, PartitionCount),
    b: (Partitioner, KeyFormat, PartitionCount),
) -> Option<SampleDiff> {
    if samples.is_empty() {
        return None;
    }
    let mut d = SampleDiff {
        keys: samples.len(),
        differ: 0,
        unencodable: 0,
    };
    for k in samples {
        if a.1.encode(k).is_err() || b.1.encode(k).is_err() {
            d.unencodable += 1;
            d.differ += 1;
            continue;
        }
        let pa = place(a.0, a.1, k, a.2);
        let pb = place(b.0, b.1, k, b.2);
        if pa.is_none() || pa != pb {
            d.differ += 1;
        }
    }
    Some(d)
}

/// Where each sample key lands under each keyed producer of a co-partition
/// group: the partition map `partwise report` draws.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionMap {
    /// The group name.
    pub name: String,
    /// The keyed producers, in topic then producer order (the columns).
    pub producers: Vec<ProducerRef>,
    /// Each producer's topic's partition count, by column.
    pub partitions: Vec<u32>,
    /// One row per sample key: its partition under each producer (`None`
    /// when the producer cannot encode it or does not place it by key).
    pub rows: Vec<Vec<Option<u32>>>,
}

impl PartitionMap {
    /// The records of the sample keys that land on one partition number
    /// under every producer ([`PartitionMap::aligned`]), and the records of
    /// all of them: `weights[i]` is sample key `i`'s (its count). `None`
    /// when no producer places keys (nothing lands by key) or the weights
    /// are not one per sample key. Sums saturate.
    pub fn aligned_records(&self, weights: &[u64]) -> Option<(u64, u64)> {
        if self.producers.is_empty() || weights.len() != self.rows.len() {
            return None;
        }
        let mut aligned = 0u64;
        let mut total = 0u64;
        for (row, &w) in weights.iter().enumerate() {
            total = total.saturating_add(w);
            if self.aligned(row) {
                aligned = aligned.saturating_add(w);
            }
        }
        Some((aligned, total))
    }

    /// Whether sample key `row` lands on one partition number under every
    /// producer (a key no producer places is not aligned).
    pub fn aligned(&self, row: usize) -> bool {
        let r = &self.rows[row];
        r.first()
            .is_some_and(|f| f.is_some() && r.iter().all(|p| p == f))
    }
}

/// The partition map of group `g` over `samples` (logical keys, each encoded
/// with its producer's key format), placed the way [`check`](crate::check::check) places them.
pub fn partition_map(t: &Topology, g: &CopartitionGroup, samples: &[&[u8]]) -> PartitionMap {
    let mut producers = Vec::new();
    let mut columns = Vec::new();
    for topic in g.topics.iter().filter_map(|n| t.topic(n)) {
        for (index, producer) in topic.producers.iter().enumerate() {
            if let Some(p) = producer.keyed_partitioner() {
                let w = Writer {
                    topic,
                    index,
                    producer,
                };
                producers.push(w.reference());
                columns.push((p, producer.key_format, topic.partitions));
            }
        }
    }
    let rows = samples
        .iter()
        .map(|k| columns.iter().map(|&(p, f, n)| place(p, f, k, n)).collect())
        .collect();
    PartitionMap {
        name: g.name.clone(),
        partitions: columns.iter().map(|c| c.2.get()).collect(),
        producers,
        rows,
    }
}

/// Each co-partition group's records on sample keys that land on one
/// partition number everywhere, and all their records ([`PartitionMap::aligned_records`]
/// over every sample key, `weights[i]` being key `i`'s count): one per
/// group, `None` where no producer places keys.
pub fn group_records(t: &Topology, samples: &[&[u8]], weights: &[u64]) -> Vec<Option<(u64, u64)>> {
    // A batch of keys at a time: the map holds a row per key it is given.
    const BATCH: usize = 4096;
    if samples.is_empty() || samples.len() != weights.len() {
        return t
            .copartition_groups
            .iter()
            .map(|g| partition_map(t, g, samples).aligned_records(weights))
            .collect();
    }
    t.copartition_groups
        .iter()
        .map(|g| {
            samples.chunks(BATCH).zip(weights.chunks(BATCH)).try_fold(
                (0u64, 0u64),
                |(a, n), (keys, w)| {
                    let (ka, kn) = partition_map(t, g, keys).aligned_records(w)?;
                    Some((a.saturating_add(ka), n.saturating_add(kn)))
                },
            )
        })
        .collect()
}

pub(crate) fn check_group(t: &Topology, g: &CopartitionGroup, samples: &[&[u8]]) -> GroupVerdict {
    // Validation guarantees every name resolves.
    let topics: Vec<&Topic> = g.topics.iter().filter_map(|n| t.topic(n)).collect();
    let writers: Vec<Writer<'_>> = topics
        .iter()
        .flat_map(|topic| {
            topic
                .producers
                .iter()
                .enumerate()
                .map(move |(index, producer)| Writer {
                    topic,
                    index,
                    producer,
                })
        })
        .collect();
    let keyed: Vec<(&Writer<'_>, Partitioner)> = writers
        .iter()
        .filter_map(|w| w.producer.keyed_partitioner().map(|p| (w, p)))
        .collect();
    let mut reasons = Vec::new();

    // Fields are public, so a hand-built topology may hold names that do not
    // resolve; they are skipped rather than trusted.
    let first_count = topics.first().map(|t| t.partitions);
    if topics.iter().any(|t| Some(t.partitions) != first_count) {
        // Hold partitioner and bytes fixed so the figure is the count's alone.
        let reference = match keyed.first() {
            Some((w, p)) => Some((*p, w.producer.key_format)),
            None => "java".parse().ok().map(|p| (p, KeyFormat::String)),
        };
        let sample = reference.filter(|_| !samples.is_empty()).map(|(p, f)| {
            let mut d = SampleDiff {
                keys: samples.len(),
                differ: 0,
                unencodable: 0,
            };
            for k in samples {
                let parts: Vec<Option<u32>> = topics
                    .iter()
                    .map(|t| place(p, f, k, t.partitions))
                    .collect();
                if parts[0].is_none() || parts.iter().any(|x| *x != parts[0]) {
                    d.differ += 1;
                }
                if f.encode(k).is_err() {
                    d.unencodable += 1;
                }
            }
            d
        });
        reasons.push(Reason::PartitionCountsDiffer {
            counts: topics
                .iter()
                .map(|t| (t.name.clone(), t.partitions.get()))
                .collect(),
            sample,
        });
    }

    let declared: Vec<(String, String)> = topics
        .iter()
        .filter_map(|t| t.key.as_ref().map(|k| (t.name.clone(), k.clone())))
        .collect();
    if declared
        .iter()
        .any(|(_, k)| k.trim() != declared[0].1.trim())
    {
        reasons.push(Reason::KeysDiffer { keys: declared });
    }

    for topic in &topics {
        if topic.producers.is_empty() {
            reasons.push(Reason::NoProducers {
                topic: topic.name.clone(),
            });
        }
    }

    for w in &writers {
        if w.producer.keyed_partitioner().is_none() {
            let behaviour = match w.producer.partitioner.map(|p| p.key_rule()) {
                Some(KeyRule::Ignore(pl)) if !w.producer.keyless => pl.behaviour(),
                _ => "keyless",
            };
            reasons.push(Reason::KeylessProducer {
                producer: w.reference(),
                declared: w.producer.keyless,
                behaviour,
            });
        }
    }

    for (i, (wa, pa)) in keyed.iter().enumerate() {
        for (wb, pb) in &keyed[i + 1..] {
            let (fa, fb) = (wa.producer.key_format, wb.producer.key_format);
            let n = wa.topic.partitions;
            if pa.key_rule() != pb.key_rule() {
                reasons.push(Reason::PartitionersDisagree {
                    a: wa.reference(),
                    b: wb.reference(),
                    sample: compare(samples, (*pa, fa, n), (*pb, fa, n)),
                });
            }
            if !same_bytes(fa, fb) {
                reasons.push(Reason::KeyEncodingsDiffer {
                    a: wa.reference(),
                    b: wb.reference(),
                    sample: compare(samples, (*pa, fa, n), (*pa, fb, n)),
                });
            }
        }
    }

    // A key a producer cannot place at all breaks the join for that key
    // whatever the other producers do. Keys its format cannot encode are
    // already counted by a key-encodings finding on it, when there is one.
    for (w, p) in &keyed {
        let encodings_told = reasons.iter().any(|r| match r {
            Reason::KeyEncodingsDiffer {
                a,
                b,
                sample: Some(d),
            } => d.unencodable > 0 && [a, b].iter().any(|x| **x == w.reference()),
            _ => false,
        });
        let mut unplaced = samples.iter().filter_map(|k| {
            let why = match w.producer.key_format.encode(k) {
                Err(_) if encodings_told => return None,
                Err(_) => "unencodable",
                Ok(bytes) => match p.place(Some(&bytes), w.topic.partitions) {
                    Placement::Partition(_) => return None,
                    other => other.behaviour(),
                },
            };
            Some((k, why))
        });
        if let Some((first, why)) = unplaced.next() {
            reasons.push(Reason::SampleKeysUnplaced {
                producer: w.reference(),
                unplaced: 1 + unplaced.count(),
                keys: samples.len(),
                example: match std::str::from_utf8(first) {
                    Ok(text) => text.to_string(),
                    Err(_) => first.escape_ascii().to_string(),
                },
                why,
            });
        }
    }

    let sample = (!samples.is_empty() && !keyed.is_empty()).then(|| {
        let aligned = samples
            .iter()
            .filter(|k| {
                let parts: Vec<Option<u32>> = keyed
                    .iter()
                    .map(|(w, p)| place(*p, w.producer.key_format, k, w.topic.partitions))
                    .collect();
                parts[0].is_some() && parts.iter().all(|x| *x == parts[0])
            })
            .count();
        Alignment {
            keys: samples.len(),
            aligned,
        }
    });

    GroupVerdict {
        name: g.name.clone(),
        topics: g.topics.clone(),
        reasons,
        sample,
    }
}
