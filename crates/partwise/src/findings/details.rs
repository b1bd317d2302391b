//! The JSON of each check's typed details: the fields a [`Finding`] carries
//! after its kind, message and fix. Written by hand because a detail's JSON
//! is not its Rust shape (a topic's count is `{"topic": n}`, a sample diff
//! is four fields beside the others), and scripts read these names.
//!
//! [`Finding`]: super::Finding

use super::{FamilyReason, MixedWriter, ProducerRef, Reason, SampleDiff};
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

/// `part / whole`, `None` (null) when `whole` is 0.
fn fraction(part: usize, whole: usize) -> Option<f64> {
    (whole != 0).then(|| part as f64 / whole as f64)
}

/// A list of pairs as one JSON object, in list order.
struct Pairs<'a, V>(&'a [(String, V)]);

impl<V: Serialize> Serialize for Pairs<'_, V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

impl Serialize for ProducerRef {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(5))?;
        m.serialize_entry("topic", &self.topic)?;
        m.serialize_entry("index", &self.index)?;
        m.serialize_entry("name", &self.name)?;
        m.serialize_entry("partitioner", &self.partitioner.map(|p| p.spec()))?;
        m.serialize_entry("key_format", &self.key_format.to_string())?;
        m.end()
    }
}

impl Serialize for MixedWriter {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(4))?;
        m.serialize_entry("partitioner", self.partitioner.spec())?;
        m.serialize_entry("setting", &self.partitioner.setting())?;
        m.serialize_entry("partitioners", &self.candidates)?;
        m.serialize_entry("share", &self.share)?;
        m.end()
    }
}

fn sample<M: SerializeMap>(m: &mut M, s: Option<SampleDiff>) -> Result<(), M::Error> {
    if let Some(s) = s {
        m.serialize_entry("sample_keys", &s.keys)?;
        m.serialize_entry("differ", &s.differ)?;
        m.serialize_entry("differ_fraction", &fraction(s.differ, s.keys))?;
        m.serialize_entry("unencodable", &s.unencodable)?;
    }
    Ok(())
}

impl Serialize for Reason {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        match self {
            Reason::PartitionCountsDiffer { counts, .. } => {
                m.serialize_entry("partitions", &Pairs(counts))?;
            }
            Reason::KeysDiffer { keys } => m.serialize_entry("keys", &Pairs(keys))?,
            Reason::NoProducers { topic } | Reason::NoKeyedRecords { topic } => {
                m.serialize_entry("topic", topic)?;
            }
            Reason::SampleKeysUnplaced {
                producer,
                unplaced,
                example,
                why,
                ..
            } => {
                m.serialize_entry("producer", producer)?;
                m.serialize_entry("unplaced", unplaced)?;
                m.serialize_entry("example", example)?;
                m.serialize_entry("why", why)?;
            }
            Reason::KeylessProducer {
                producer,
                declared,
                behaviour,
            } => {
                m.serialize_entry("producer", producer)?;
                m.serialize_entry("declared", declared)?;
                m.serialize_entry("behaviour", behaviour)?;
            }
            Reason::PartitionersDisagree { a, b, .. } | Reason::KeyEncodingsDiffer { a, b, .. } => {
                m.serialize_entry("producers", &[a, b])?;
            }
            Reason::TopicUnreadable { topic, error } => {
                m.serialize_entry("topic", topic)?;
                m.serialize_entry("error", error)?;
            }
            Reason::RecordsUnexplained {
                topic,
                misplaced,
                best,
                found,
            } => {
                m.serialize_entry("topic", topic)?;
                m.serialize_entry("misplaced", misplaced)?;
                m.serialize_entry("best", best)?;
                if let Some(u) = found {
                    m.serialize_entry("writer", &u.writer)?;
                    m.serialize_entry("unexplained", &u.records)?;
                    m.serialize_entry("unexplained_share", &u.share)?;
                    m.serialize_entry("split_keys", &u.split_keys)?;
                }
            }
            Reason::ObservedPartitionersDisagree { topics } => {
                #[derive(Serialize)]
                struct Topic<'a> {
                    topic: &'a str,
                    partitioners: &'a [String],
                }
                let t: Vec<Topic> = topics
                    .iter()
                    .map(|w| Topic {
                        topic: &w.topic,
                        partitioners: &w.candidates,
                    })
                    .collect();
                m.serialize_entry("topics", &t)?;
            }
            Reason::MixedPartitioners {
                topic,
                writers,
                unexplained,
                unexplained_share,
                split_keys,
                ..
            } => {
                m.serialize_entry("topic", topic)?;
                m.serialize_entry("writers", writers)?;
                m.serialize_entry("unexplained", unexplained)?;
                m.serialize_entry("unexplained_share", unexplained_share)?;
                m.serialize_entry("split_keys", split_keys)?;
            }
            Reason::ObservedKeyEncodingsDiffer { encodings } => {
                m.serialize_entry("key_encodings", &Pairs(encodings))?;
            }
        }
        sample(&mut m, self.sample())?;
        m.end()
    }
}

impl Serialize for FamilyReason {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Tag<'a> {
            pattern: &'a str,
            tag: &'a str,
        }
        let mut m = s.serialize_map(None)?;
        match self {
            FamilyReason::NoHashTag { patterns } => {
                if let [one] = patterns.as_slice() {
                    m.serialize_entry("pattern", one)?;
                }
                m.serialize_entry("patterns", patterns)?;
            }
            FamilyReason::EmptyTag { pattern } => m.serialize_entry("pattern", pattern)?,
            FamilyReason::TagWithoutKey { pattern, tag, slot } => {
                m.serialize_entry("pattern", pattern)?;
                m.serialize_entry("tag", tag)?;
                m.serialize_entry("slot", slot)?;
            }
            FamilyReason::TagNotJustKey { pattern, tag } => {
                m.serialize_entry("pattern", pattern)?;
                m.serialize_entry("tag", tag)?;
            }
            FamilyReason::HashTagsDiffer { tags } => {
                let t: Vec<Tag> = tags
                    .iter()
                    .map(|(p, t)| Tag { pattern: p, tag: t })
                    .collect();
                m.serialize_entry("tags", &t)?;
            }
            FamilyReason::SampleKeysSplit { split, keys } => {
                m.serialize_entry("split", split)?;
                m.serialize_entry("sample_keys", keys)?;
            }
        }
        m.end()
    }
}
