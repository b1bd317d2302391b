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

    /// What to change so that the reason goes away, in the terms of the
    /// client at fault where there is one.
    pub fn fix(&self) -> String {
        match self {
            Reason::PartitionCountsDiffer { counts, .. } => {
                let max = counts.iter().map(|(_, n)| *n).max().unwrap_or(0);
                let smaller: Vec<&str> = counts
                    .iter()
                    .filter(|(_, n)| *n < max)
                    .map(|(t, _)| t.as_str())
                    .collect();
                let raise = if smaller.is_empty() {
                    String::new()
                } else {
                    let commands: Vec<String> = smaller
                        .iter()
                        .map(|t| format!("kafka-topics --alter --topic {t} --partitions {max}"))
                        .collect();
                    format!(
                        ": raise {} to {max} partitions ({})",
                        smaller.join(", "),
                        commands.join("; ")
                    )
                };
                format!(
                    "give every topic the same count{raise}; keys move when a count changes and records already written stay put, so change them together (partwise resize shows which keys move)"
                )
            }
            Reason::KeysDiffer { keys } => match keys.first() {
                Some((_, k)) => format!(
                    "key every topic by the same field ({k}), so one entity has one key everywhere"
                ),
                None => "key every topic by the same field, so one entity has one key everywhere"
                    .to_string(),
            },
            Reason::SampleKeysUnplaced { producer, why, .. } => match *why {
                "rejected" => format!(
                    "give {producer} a partitioner that places every key (a priority spec's reserved partitions must exist in the topic: partwise route KEY -p N -P SPEC shows where each key goes)"
                ),
                "unencodable" => format!(
                    "make {producer}'s key_format match what its keys are (partwise route KEY --key-format F shows the bytes), or keep such keys out of the join"
                ),
                _ => format!(
                    "give such records a key {producer}'s partitioner hashes (an empty key is placed without hashing by some clients), or a partitioner that hashes every key"
                ),
            },
            Reason::NoProducers { topic } => format!(
                "declare the producers of {topic} ([[topic.producer]] with partitioner and key_format) so that the layout can be proven"
            ),
            Reason::KeylessProducer {
                producer, declared, ..
            } => match (declared, producer.partitioner) {
                (false, Some(p)) => {
                    let java: Partitioner = Partitioner::all().next().expect("java is first");
                    match java.compatible_in(p.client()).first() {
                        Some(c) => format!(
                            "make {producer} hash its keys: {} ({}, Java-compatible murmur2)",
                            c.setting_and_version(),
                            c.spec()
                        ),
                        None => format!(
                            "make {producer} hash its keys with a key-hashing partitioner of {}",
                            p.client()
                        ),
                    }
                }
                _ => format!("write the join key on {producer}'s records"),
            },
            Reason::PartitionersDisagree { a, b, .. } => match (a.partitioner, b.partitioner) {
                (Some(pa), Some(pb)) => {
                    if let Some(c) = pa.compatible_in(pb.client()).first() {
                        format!(
                            "set {b} to {} ({}), which places keys as {} does",
                            c.setting_and_version(),
                            c.spec(),
                            pa.spec()
                        )
                    } else if let Some(c) = pb.compatible_in(pa.client()).first() {
                        format!(
                            "set {a} to {} ({}), which places keys as {} does",
                            c.setting_and_version(),
                            c.spec(),
                            pb.spec()
                        )
                    } else {
                        format!(
                            "no {} partitioner places keys as {} does: give both producers a Java-compatible murmur2 partitioner, or set partitions explicitly (partwise kafka produce -P SPEC)",
                            pb.client(),
                            pa.spec()
                        )
                    }
                }
                _ => "declare both producers' partitioners".to_string(),
            },
            Reason::KeyEncodingsDiffer { a, b, .. } => format!(
                "serialize the key one way in both: give {b} the key serializer of {a} ({}), or the other way round",
                a.key_format
            ),
            Reason::TopicUnreadable { topic, .. } => format!(
                "check the name {topic} and that this client may Describe and Read it"
            ),
            Reason::NoKeyedRecords { topic } => format!(
                "sample more of {topic} (--sample N), or key its records: a join needs keyed records"
            ),
            Reason::RecordsUnexplained {
                topic,
                found: None,
                ..
            } => format!(
                "find the producer of {topic}'s misplaced records (the JSON output lists their keys and offsets): it sets partitions itself or uses a partitioner partwise does not know; route it through one partitioner (partwise kafka produce -P SPEC)"
            ),
            Reason::RecordsUnexplained {
                topic,
                found: Some(u),
                ..
            } => format!(
                "find the producer of the {} unexplained records of {topic} (the JSON output lists their keys and offsets): it sets partitions itself or uses a partitioner partwise does not know; then give every producer of {topic} one Java-compatible murmur2 partitioner (the Java client's default, which every client has a setting for)",
                u.records
            ),
            Reason::ObservedPartitionersDisagree { topics } => observed_partitioners_fix(topics),
            Reason::MixedPartitioners {
                writers,
                unexplained,
                unexplained_share,
                split_keys,
                ..
            } => mixed_fix(writers, *unexplained, *unexplained_share, *split_keys),
            Reason::ObservedKeyEncodingsDiffer { .. } => {
                "serialize the key one way for every topic (the same key serializer, e.g. string, in every producer)"
                    .to_string()
            }
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

/// The same move for the other clients whose partitioners place keys as
/// `pb` does (the records cannot tell them apart), each in its own words;
/// empty when there are none.
fn other_clients(pa: Partitioner, pb: Partitioner, family: &[Partitioner]) -> String {
    let mut seen = vec![pb.client(), pa.client()];
    let mut out: Vec<String> = Vec::new();
    for p in family {
        let c = p.client();
        if seen.contains(&c) {
            continue;
        }
        seen.push(c);
        if let Some(x) = pa.compatible_in(c).first() {
            out.push(format!("{c}: {}", x.setting_and_version()));
        }
    }
    if out.is_empty() {
        String::new()
    } else {
        format!(
            " (if they are not {} producers, the same in their client: {})",
            pb.client(),
            out.join("; ")
        )
    }
}

/// Whether `p` hashes keys as the Java producer does (murmur2, masked): the
/// placement most clients can be set to, so the one a fix moves others to.
fn java_compatible(p: Partitioner) -> bool {
    let java: Partitioner = Partitioner::all().next().expect("java is first");
    p.priority().is_none() && p.key_rule() == java.key_rule()
}

/// The setting that makes the other topics' producers place keys as one
/// topic's do: the same client's compatible partitioner where there is one.
/// The topic the others follow does not depend on the order the topics are
/// given in: a Java-compatible one if any, else the first by partitioner
/// and name; the steps are in topic-name order, each once.
fn observed_partitioners_fix(topics: &[ObservedWriter]) -> String {
    let mut known: Vec<(&ObservedWriter, Partitioner)> = topics
        .iter()
        .filter_map(|t| Some((t, t.partitioner?)))
        .collect();
    known.sort_by(|a, b| {
        (!java_compatible(a.1), a.1.spec(), &a.0.topic).cmp(&(
            !java_compatible(b.1),
            b.1.spec(),
            &b.0.topic,
        ))
    });
    let Some(((first, pa), rest)) = known.split_first() else {
        return "declare or find each topic's partitioner (partwise kafka audit shows what wrote it)"
            .to_string();
    };
    let mut rest: Vec<&(&ObservedWriter, Partitioner)> = rest.iter().collect();
    rest.sort_by(|a, b| a.0.topic.cmp(&b.0.topic));
    let mut steps: Vec<String> = Vec::new();
    for (t, pb) in rest {
        if pb.key_rule() == pa.key_rule() && pb.priority().is_none() && pa.priority().is_none() {
            continue;
        }
        let step = match pa.compatible_in(pb.client()).first() {
            Some(c) => format!(
                "set {}'s {} producers to {} ({}), which places keys as {} does on {}{}",
                t.topic,
                pb.client(),
                c.setting_and_version(),
                c.spec(),
                pa.spec(),
                first.topic,
                other_clients(*pa, *pb, &t.family)
            ),
            None => format!(
                "no {} partitioner places keys as {} does: give {}'s and {}'s producers one Java-compatible murmur2 partitioner",
                pb.client(),
                pa.spec(),
                first.topic,
                t.topic
            ),
        };
        if !steps.contains(&step) {
            steps.push(step);
        }
    }
    if steps.is_empty() {
        return format!(
            "give every producer of {} one partitioner",
            known
                .iter()
                .map(|(t, _)| t.topic.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    steps.join("; ")
}

/// Every producer of a mixed topic moved to the placement of one of them:
/// the Java-compatible member if there is one (most clients have a setting
/// for it), else the one that wrote most; each other member's producers told
/// in their own client's words.
///
/// When most records are unexplained, the known members wrote the lesser
/// part: the fix starts from the unknown producer and moves no one to a
/// member's partitioner as if it had written the topic.
fn mixed_fix(
    writers: &[MixedWriter],
    unexplained: u64,
    unexplained_share: f64,
    split_keys: u64,
) -> String {
    if unexplained_share > 0.5 {
        return format!(
            "find the producer of the {unexplained} unexplained records, {:.1}% of the keyed ones (the JSON output lists their keys and offsets): it sets partitions itself or uses a partitioner partwise does not know; then give every producer of the topic one Java-compatible murmur2 partitioner (the Java client's default, which every client has a setting for)",
            100.0 * unexplained_share
        );
    }
    let mut steps: Vec<String> = Vec::new();
    let target = writers
        .iter()
        .find(|w| java_compatible(w.partitioner))
        .or_else(|| writers.first());
    if let Some(t) = target {
        let pa = t.partitioner;
        for w in writers {
            let pb = w.partitioner;
            if std::ptr::eq(w, t) {
                continue;
            }
            let step = match pa.compatible_in(pb.client()).first() {
                Some(c) => format!(
                    "set the {} producers (now {}) to {} ({}), which places keys as {} does{}",
                    pb.client(),
                    pb.setting(),
                    c.setting_and_version(),
                    c.spec(),
                    pa.spec(),
                    other_clients(pa, pb, &w.family)
                ),
                None => format!(
                    "no {} partitioner places keys as {} does: move the producers that write like {} ({}) and those of {} to one Java-compatible murmur2 partitioner",
                    pb.client(),
                    pa.spec(),
                    pb.spec(),
                    pb.setting(),
                    pa.spec()
                ),
            };
            if !steps.contains(&step) {
                steps.push(step);
            }
        }
    }
    if split_keys > 0 {
        steps.push(
            "records already written stay where they are: the split keys stay on two partitions until those records expire or the topic is re-written"
                .to_string(),
        );
    }
    if unexplained > 0 {
        steps.push(format!(
            "find the producer of the {unexplained} unexplained records (the JSON output lists their keys and offsets): it sets partitions itself or uses a partitioner partwise does not know"
        ));
    }
    if steps.is_empty() {
        // No member to move the others to, no record left over: what holds
        // whatever wrote the topic.
        steps.push("give every producer of the topic one Java-compatible murmur2 partitioner (the Java client's default, which every client has a setting for)".to_string());
    }
    steps.join("; ")
}
