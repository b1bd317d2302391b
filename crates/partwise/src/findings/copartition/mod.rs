//! The co-partition findings: every way topics that are joined fail to put a
//! key on the same partition number, whether declared in a topology file
//! (`partwise check`) or observed on live topics (`partwise kafka audit`).
//!
//! A finding that both can see (partition counts that differ, partitioners
//! or key encodings that disagree) has one variant or one `kind` id and one
//! wording here, so the two commands report it alike.

use crate::encoding::KeyFormat;
use crate::partitioner::Partitioner;
use std::fmt;

mod fix;

/// A producer named in a report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProducerRef {
    /// Its topic.
    pub topic: String,
    /// Its index among the topic's producers.
    pub index: usize,
    /// Its label, when given.
    pub name: Option<String>,
    /// Its partitioner, when declared.
    pub partitioner: Option<Partitioner>,
    /// Its key format.
    pub key_format: KeyFormat,
}

impl fmt::Display for ProducerRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.name {
            Some(n) => write!(f, "{} producer '{n}'", self.topic)?,
            None => write!(f, "{} producer[{}]", self.topic, self.index)?,
        }
        match self.partitioner {
            Some(p) => write!(f, " ({p}, {})", self.key_format),
            None => write!(f, " ({})", self.key_format),
        }
    }
}

/// How many sample keys a difference affects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleDiff {
    /// Sample keys compared.
    pub keys: usize,
    /// Keys that land on different partition numbers (including those one
    /// side cannot encode at all).
    pub differ: usize,
    /// Keys that one side's key format cannot encode (an `int32` producer
    /// cannot write `BBCA`).
    pub unencodable: usize,
}

impl SampleDiff {
    /// `differ / keys`, 0 when there are no keys.
    pub fn fraction(&self) -> f64 {
        if self.keys == 0 {
            0.0
        } else {
            self.differ as f64 / self.keys as f64
        }
    }
}

impl fmt::Display for SampleDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of {} sample keys land differently",
            self.differ, self.keys
        )?;
        if self.unencodable > 0 {
            write!(f, ", {} cannot be encoded at all", self.unencodable)?;
        }
        Ok(())
    }
}

/// One way a co-partition group breaks.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Reason {
    /// The topics do not all have the same partition count.
    PartitionCountsDiffer {
        /// Each topic's count, in group order.
        counts: Vec<(String, u32)>,
        /// Sample keys whose partition differs between the counts, under one
        /// producer's partitioner and key format (so only the count varies).
        sample: Option<SampleDiff>,
    },
    /// The topics declare different keys (`symbol` vs `userId`).
    KeysDiffer {
        /// Each topic that declares a key, with it.
        keys: Vec<(String, String)>,
    },
    /// A topic declares no producers, so nothing shows how it is keyed.
    NoProducers {
        /// The topic.
        topic: String,
    },
    /// A producer whose records do not follow their key.
    KeylessProducer {
        /// The producer.
        producer: ProducerRef,
        /// Declared `keyless = true` (else its partitioner ignores keys).
        declared: bool,
        /// `round-robin`, `random`, `sticky`, or `keyless` when declared.
        behaviour: &'static str,
    },
    /// Sample keys a producer cannot place by key: its partitioner rejects
    /// them (a priority rule's reserved partitions outside the count) or its
    /// key format cannot encode them, so a join on them cannot hold.
    SampleKeysUnplaced {
        /// The producer.
        producer: ProducerRef,
        /// Sample keys it cannot place.
        unplaced: usize,
        /// Sample keys in all.
        keys: usize,
        /// The first such key, as text (escaped where it is not UTF-8).
        example: String,
        /// Why, for the first such key: `unencodable` (by the key format),
        /// `rejected` (by the partitioner), or how the partitioner places it
        /// instead of by key (`random`, `sticky`, `round-robin`: librdkafka's
        /// `consistent_random` on an empty key, for one).
        why: &'static str,
    },
    /// Two producers hash keys differently.
    PartitionersDisagree {
        /// One producer.
        a: ProducerRef,
        /// The other.
        b: ProducerRef,
        /// Sample keys placed differently by the two partitioners, with the
        /// same key bytes (`a`'s format) and count (`a`'s topic).
        sample: Option<SampleDiff>,
    },
    /// Two producers serialize the same logical key to different bytes.
    KeyEncodingsDiffer {
        /// One producer.
        a: ProducerRef,
        /// The other.
        b: ProducerRef,
        /// Sample keys placed differently by `a`'s partitioner and count
        /// when encoded by each format.
        sample: Option<SampleDiff>,
    },
    /// Observed: a topic that could not be read, so nothing shows how it is
    /// partitioned.
    TopicUnreadable {
        /// The topic.
        topic: String,
        /// Why it could not be read.
        error: String,
    },
    /// Observed: no keyed record was sampled from a topic, so its partitioner
    /// is unknown.
    NoKeyedRecords {
        /// The topic.
        topic: String,
    },
    /// Observed: no candidate partitioner puts every sampled keyed record of
    /// a topic where it is stored.
    RecordsUnexplained {
        /// The topic.
        topic: String,
        /// Records misplaced under the best candidate.
        misplaced: u64,
        /// The best candidate, as printed (`java`, `sarama on int32`), when
        /// any was tried.
        best: Option<String>,
        /// What the records say beyond the best candidate, when the audit
        /// looked for several producers: at most one known partitioner
        /// explains clearly more than chance, the rest is unexplained.
        found: Option<Unexplained>,
    },
    /// Observed: the topics' sampled records are explained by no one
    /// partitioner (the same finding as [`Reason::PartitionersDisagree`],
    /// seen from the records instead of the declarations).
    ObservedPartitionersDisagree {
        /// Each topic with the partitioners that explain its sample.
        topics: Vec<ObservedWriter>,
    },
    /// Observed: a topic written by producers that hash keys differently: no
    /// one partitioner explains its sampled keyed records, a set of them does.
    MixedPartitioners {
        /// The topic.
        topic: String,
        /// The set's members, most records first.
        writers: Vec<MixedWriter>,
        /// Keyed records no member explains: an unknown partitioner, or
        /// explicit partitions.
        unexplained: u64,
        /// Their share of the keyed records, in 0..=1.
        unexplained_share: f64,
        /// Keys stored on more than one partition.
        split_keys: u64,
        /// The split key with the most records, as text (escaped where it is
        /// not UTF-8), with its partitions.
        example: Option<(String, Vec<u32>)>,
    },
    /// Observed: the topics' sampled keys are not all serialized one way
    /// (the same finding as [`Reason::KeyEncodingsDiffer`]).
    ObservedKeyEncodingsDiffer {
        /// Each topic with the encoding of its keys (`string`, `int32`,
        /// `mixed`, ...).
        encodings: Vec<(String, String)>,
    },
}

/// A live topic's producers as its sampled records reveal them.
#[derive(Clone, Debug, PartialEq)]
pub struct ObservedWriter {
    /// The topic.
    pub topic: String,
    /// The candidates that explain every keyed record, as printed, best first.
    pub candidates: Vec<String>,
    /// The partitioner the fix is written against: the candidates' first
    /// client default (`sarama` for FNV-1a), else their first.
    pub partitioner: Option<Partitioner>,
    /// Every partitioner among the candidates: the clients the records
    /// cannot tell apart, each told its own setting in the fix.
    pub family: Vec<Partitioner>,
}

/// A topic whose keyed records no set of known partitioners explains
/// clearly more than chance does: what one known partitioner explains, if
/// any, and what none does.
#[derive(Clone, Debug, PartialEq)]
pub struct Unexplained {
    /// The one known family that explains clearly more than chance, if any.
    pub writer: Option<MixedWriter>,
    /// Keyed records no known partitioner explains.
    pub records: u64,
    /// Their share of the keyed records, in 0..=1.
    pub share: f64,
    /// The topic's partition count: a partitioner that did not write a
    /// record puts it where it is with chance 1 in this.
    pub partitions: u32,
    /// Keys stored on more than one partition.
    pub split_keys: u64,
}

/// One producer of a topic written by several, as its records reveal it.
#[derive(Clone, Debug, PartialEq)]
pub struct MixedWriter {
    /// The candidates that place its records alike, as printed.
    pub candidates: Vec<String>,
    /// The partitioner its family is named by (a client default where the
    /// family has one), which the fix is written against.
    pub partitioner: Partitioner,
    /// Every partitioner of its family: the clients the records cannot tell
    /// apart, each told its own setting in the fix.
    pub family: Vec<Partitioner>,
    /// Its share of the keyed records, in 0..=1.
    pub share: f64,
}

/// A family of equivalent candidates for messages: the name it goes by
/// first, then how many more.
fn family<S: AsRef<str>>(names: &[S]) -> String {
    match names {
        [] => "-".to_string(),
        [one] => one.as_ref().to_string(),
        [first, rest @ ..] => format!("{} (and {} equivalent)", first.as_ref(), rest.len()),
    }
}

/// A list of equivalent candidates for messages: the first three, then a count.
pub fn summarize<S: AsRef<str>>(names: &[S]) -> String {
    let names: Vec<&str> = names.iter().map(AsRef::as_ref).collect();
    if names.len() <= 3 {
        names.join(" / ")
    } else {
        format!(
            "{} and {} more equivalent",
            names[..3].join(" / "),
            names.len() - 3
        )
    }
}

impl Reason {
    /// Its stable id (in [`KINDS`](super::KINDS)): `partition-counts-differ`,
    /// `keys-differ`, `no-producers`, `keyless-producer`, `sample-keys-unplaced`,
    /// `partitioners-disagree`, `key-encodings-differ`, and for live topics
    /// only `topic-unreadable`, `no-keyed-records`, `records-unexplained`,
    /// `mixed-partitioners`.
    /// A finding seen both ways has one id.
    pub fn kind(&self) -> &'static str {
        match self {
            Reason::PartitionCountsDiffer { .. } => "partition-counts-differ",
            Reason::KeysDiffer { .. } => "keys-differ",
            Reason::NoProducers { .. } => "no-producers",
            Reason::KeylessProducer { .. } => "keyless-producer",
            Reason::SampleKeysUnplaced { .. } => "sample-keys-unplaced",
            Reason::PartitionersDisagree { .. } | Reason::ObservedPartitionersDisagree { .. } => {
                "partitioners-disagree"
            }
            Reason::KeyEncodingsDiffer { .. } | Reason::ObservedKeyEncodingsDiffer { .. } => {
                "key-encodings-differ"
            }
            Reason::TopicUnreadable { .. } => "topic-unreadable",
            Reason::NoKeyedRecords { .. } => "no-keyed-records",
            Reason::RecordsUnexplained { .. } => "records-unexplained",
            Reason::MixedPartitioners { .. } => "mixed-partitioners",
        }
    }

    /// The sample-key figure attached to the reason, if any.
    pub fn sample(&self) -> Option<SampleDiff> {
        match self {
            Reason::PartitionCountsDiffer { sample, .. }
            | Reason::PartitionersDisagree { sample, .. }
            | Reason::KeyEncodingsDiffer { sample, .. } => *sample,
            _ => None,
        }
    }
}

/// `: a, b` for a list, nothing for an empty one.
fn listed(list: &[String]) -> String {
    listed_by(list, ", ")
}

fn listed_by(list: &[String], sep: &str) -> String {
    if list.is_empty() {
        String::new()
    } else {
        format!(": {}", list.join(sep))
    }
}

fn sample_suffix(f: &mut fmt::Formatter<'_>, s: &Option<SampleDiff>) -> fmt::Result {
    match s {
        Some(s) => write!(f, " ({s})"),
        None => Ok(()),
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::PartitionCountsDiffer { counts, sample } => {
                let list: Vec<String> = counts.iter().map(|(t, n)| format!("{t} {n}")).collect();
                write!(
                    f,
                    "partition counts differ{}; the modulus changes the partition of a key",
                    listed(&list)
                )?;
                sample_suffix(f, sample)
            }
            Reason::KeysDiffer { keys } => {
                let list: Vec<String> = keys.iter().map(|(t, k)| format!("{t} by {k}")).collect();
                write!(
                    f,
                    "keys differ{}; the same entity lands on unrelated partitions",
                    listed(&list)
                )
            }
            Reason::SampleKeysUnplaced {
                producer,
                unplaced,
                keys,
                example,
                why,
            } => {
                let how = match *why {
                    "rejected" => "its partitioner rejects them".to_string(),
                    "unencodable" => "its key format cannot encode them".to_string(),
                    other => format!("its partitioner places them {other}, not by key"),
                };
                write!(
                    f,
                    "sample keys unplaced: {producer} cannot place {unplaced} of {keys} sample keys ({how}; e.g. '{example}')"
                )
            }
            Reason::NoProducers { topic } => {
                write!(f, "topic {topic} declares no producers: nothing shows how its keys are partitioned")
            }
            Reason::KeylessProducer {
                producer,
                declared,
                behaviour,
            } => {
                if *declared {
                    write!(f, "keyless producer: {producer} writes records without keys, so they land on any partition")
                } else {
                    write!(f, "keyless producer: {producer} ignores keys ({behaviour}), so records land on any partition")
                }
            }
            Reason::PartitionersDisagree { a, b, sample } => {
                write!(
                    f,
                    "partitioners disagree: {a} and {b} hash keys differently"
                )?;
                sample_suffix(f, sample)
            }
            Reason::KeyEncodingsDiffer { a, b, sample } => {
                write!(
                    f,
                    "key encodings differ: {a} writes {} and {b} writes {}, so the key bytes differ",
                    a.key_format, b.key_format
                )?;
                sample_suffix(f, sample)
            }
            Reason::TopicUnreadable { topic, error } => {
                write!(f, "{topic}: cannot be checked ({error})")
            }
            Reason::NoKeyedRecords { topic } => write!(
                f,
                "{topic}: no keyed records sampled, so its partitioner is unknown"
            ),
            Reason::RecordsUnexplained {
                topic,
                found: Some(u),
                misplaced,
                best,
            } => {
                let of = |share: f64| format!("{:.1}%", 100.0 * share);
                match &u.writer {
                    None => {
                        write!(
                            f,
                            "{topic}: no known partitioner explains more of its keyed records than chance does (1 in {} on {} partitions",
                            u.partitions, u.partitions
                        )?;
                        if let Some(b) = best {
                            let matched = u.records.saturating_sub(*misplaced);
                            write!(
                                f,
                                "; the best, {b}, puts {matched} of {} where they are",
                                u.records
                            )?;
                        }
                        write!(
                            f,
                            "): an unknown partitioner, or explicit partitions, placed them ({} of keyed records)",
                            of(u.share)
                        )
                    }
                    Some(w) => {
                        write!(
                            f,
                            "{topic}: {} explains {} of its keyed records, more than chance (1 in {}) can; the other {} ({} records) no known partitioner explains: an unknown partitioner, or explicit partitions, placed them",
                            family(&w.candidates),
                            of(w.share),
                            u.partitions,
                            of(u.share),
                            u.records
                        )?;
                        if u.split_keys == 0 {
                            write!(
                                f,
                                " (no sampled key is on two partitions, so one unknown partitioner that places some keys as {} does would write the same records)",
                                w.partitioner.spec()
                            )?;
                        }
                        Ok(())
                    }
                }
            }
            Reason::RecordsUnexplained {
                topic,
                found: None,
                misplaced,
                best,
            } => match best {
                Some(b) => write!(
                    f,
                    "{topic}: no candidate partitioner explains every keyed record ({misplaced} misplaced under the best, {b})"
                ),
                None => write!(
                    f,
                    "{topic}: no candidate partitioner explains every keyed record ({misplaced} misplaced; no candidate was tried)"
                ),
            },
            Reason::ObservedPartitionersDisagree { topics } => {
                let list: Vec<String> = topics
                    .iter()
                    .map(|t| format!("{} is written by {}", t.topic, summarize(&t.candidates)))
                    .collect();
                write!(f, "partitioners disagree{}", listed_by(&list, "; "))
            }
            Reason::MixedPartitioners {
                topic,
                writers,
                unexplained,
                unexplained_share,
                split_keys,
                example,
            } => {
                let list: Vec<String> = writers
                    .iter()
                    .map(|w| format!("{} ({:.1}% of records)", family(&w.candidates), 100.0 * w.share))
                    .collect();
                match list.as_slice() {
                    [] => write!(f, "{topic}: written by partitioners partwise cannot name")?,
                    [one] => write!(f, "{topic}: written by {one} and by partitioners partwise cannot name")?,
                    _ => write!(
                        f,
                        "{topic}: written by {} partitioners that hash keys differently: {}",
                        list.len(),
                        list.join(", ")
                    )?,
                }
                match (split_keys, example) {
                    (0, _) => write!(f, "; no sampled key is on more than one partition")?,
                    (n, Some((key, parts))) => {
                        let ps: Vec<String> = parts.iter().map(u32::to_string).collect();
                        write!(
                            f,
                            "; {n} keys are on more than one partition, so the join breaks for these keys (e.g. {key} on partitions {})",
                            ps.join(" and ")
                        )?
                    }
                    (n, None) => write!(
                        f,
                        "; {n} keys are on more than one partition, so the join breaks for these keys"
                    )?,
                }
                if *unexplained > 0 {
                    write!(
                        f,
                        "; {unexplained} keyed records ({:.1}%) no known partitioner explains: an unknown partitioner, or explicit partitions, placed them",
                        100.0 * unexplained_share
                    )?;
                }
                Ok(())
            }
            Reason::ObservedKeyEncodingsDiffer { encodings } => {
                let list: Vec<String> = encodings
                    .iter()
                    .map(|(t, e)| format!("{t} writes {e}"))
                    .collect();
                write!(
                    f,
                    "key encodings differ{}, so the key bytes differ",
                    listed(&list)
                )
            }
        }
    }
}
