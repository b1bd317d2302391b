//! The JSON of a routing inference (`kafka audit`, `report -b`): what the
//! sampled records say about the partitioner that wrote them. The fields are
//! named and ordered for the reader of the JSON, with the figures the types
//! compute (a match rate, a mixture's unexplained share, a family's name and
//! setting) written beside the counts they come from.

use super::{Candidate, Forensics, Member, Misrouted, Mixture, Routing, SplitKey, Switch};
use crate::ser::{key_hex, key_text};
use serde::{Serialize, Serializer};

/// Candidates as their names (`java`, `murmur2/utf8`).
fn names<S: Serializer>(c: &[Candidate], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(c.iter().map(ToString::to_string))
}

impl Serialize for Routing {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Rate {
            partitioner: &'static str,
            key_format: String,
            matched: u64,
            keyed: u64,
            rate: f64,
        }
        #[derive(Serialize)]
        struct Json<'a> {
            sampled: u64,
            keyed: u64,
            keyless: u64,
            empty_keys: u64,
            key_encoding: Option<String>,
            #[serde(serialize_with = "names")]
            inferred: &'a [Candidate],
            match_rates: Vec<Rate>,
            misrouted_total: u64,
            forensics: Option<&'a Forensics>,
            misrouted: &'a [Misrouted],
        }
        Json {
            sampled: self.sampled,
            keyed: self.keyed,
            keyless: self.keyless,
            empty_keys: self.empty_keys,
            key_encoding: self.encoding.map(|e| e.to_string()),
            inferred: &self.inferred,
            match_rates: self
                .rates
                .iter()
                .map(|m| Rate {
                    partitioner: m.candidate.partitioner.spec(),
                    key_format: m
                        .candidate
                        .format
                        .map_or("stored".to_string(), |f| f.to_string()),
                    matched: m.matched,
                    keyed: m.keyed,
                    rate: m.rate(),
                })
                .collect(),
            misrouted_total: self.misrouted_total,
            forensics: self.forensics.as_ref(),
            misrouted: &self.misrouted,
        }
        .serialize(s)
    }
}

/// A misrouted record: its key, where it is and where the partitioner
/// would have put it (`null`: no fixed partition).
impl Serialize for Misrouted {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Json<'a> {
            #[serde(serialize_with = "key_text")]
            key: &'a [u8],
            #[serde(serialize_with = "key_hex")]
            key_hex: &'a [u8],
            partition: u32,
            offset: i64,
            expected: Option<u32>,
        }
        Json {
            key: &self.key,
            key_hex: &self.key,
            partition: self.partition,
            offset: self.offset,
            expected: self.expected,
        }
        .serialize(s)
    }
}

impl Serialize for Forensics {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Json<'a> {
            mixture: Option<&'a Mixture>,
            distinct_keys: Option<u64>,
            keys_capped: bool,
            split_keys_total: u64,
            split_keys: &'a [SplitKey],
            switches: &'a [Switch],
        }
        Json {
            mixture: self.mixture.as_ref(),
            distinct_keys: self.distinct_keys,
            keys_capped: self.keys_capped,
            split_keys_total: self.split_keys_total,
            split_keys: &self.split_keys,
            switches: &self.switches,
        }
        .serialize(s)
    }
}

impl Serialize for Mixture {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        /// A record no member explains: it has no `expected` partition.
        #[derive(Serialize)]
        struct Unexplained<'a> {
            #[serde(serialize_with = "key_text")]
            key: &'a [u8],
            #[serde(serialize_with = "key_hex")]
            key_hex: &'a [u8],
            partition: u32,
            offset: i64,
        }
        #[derive(Serialize)]
        struct Json<'a> {
            minimal: bool,
            explained: u64,
            unexplained: u64,
            unexplained_share: f64,
            partitions: u32,
            members: &'a [Member],
            unexplained_records: Vec<Unexplained<'a>>,
        }
        Json {
            minimal: self.minimal,
            explained: self.explained,
            unexplained: self.unexplained,
            unexplained_share: self.unexplained_share(),
            partitions: self.partitions,
            members: &self.members,
            unexplained_records: self
                .unexplained_records
                .iter()
                .map(|u| Unexplained {
                    key: &u.key,
                    key_hex: &u.key,
                    partition: u.partition,
                    offset: u.offset,
                })
                .collect(),
        }
        .serialize(s)
    }
}

impl Serialize for Member {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Json<'a> {
            partitioner: String,
            setting: String,
            #[serde(serialize_with = "names")]
            partitioners: &'a [Candidate],
            records: u64,
            records_only: u64,
            records_shared: u64,
            share: f64,
            keys: u64,
            key_share: f64,
            chance: f64,
        }
        let primary = self.primary();
        Json {
            partitioner: primary.to_string(),
            setting: primary.partitioner.setting(),
            partitioners: &self.family,
            records: self.records,
            records_only: self.records_only,
            records_shared: self.records_shared,
            share: self.share,
            keys: self.keys,
            key_share: self.key_share,
            chance: self.chance,
        }
        .serialize(s)
    }
}

impl Serialize for SplitKey {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Part {
            partition: u32,
            records: u64,
        }
        #[derive(Serialize)]
        struct Json<'a> {
            #[serde(serialize_with = "key_text")]
            key: &'a [u8],
            #[serde(serialize_with = "key_hex")]
            key_hex: &'a [u8],
            records: u64,
            partitions: Vec<Part>,
        }
        Json {
            key: &self.key,
            key_hex: &self.key,
            records: self.records(),
            partitions: self
                .partitions
                .iter()
                .map(|&(partition, records)| Part { partition, records })
                .collect(),
        }
        .serialize(s)
    }
}

impl Serialize for Switch {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Json<'a> {
            partition: u32,
            offset: i64,
            earliest: i64,
            #[serde(serialize_with = "names")]
            from: &'a [Candidate],
            #[serde(serialize_with = "names")]
            to: &'a [Candidate],
            records_before: u64,
            records_after: u64,
        }
        Json {
            partition: self.partition,
            offset: self.offset,
            earliest: self.earliest,
            from: &self.from,
            to: &self.to,
            records_before: self.before,
            records_after: self.after,
        }
        .serialize(s)
    }
}
