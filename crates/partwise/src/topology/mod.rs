//! Topology files and the co-partitioning check.
//!
//! This module owns the TOML description of a deployment that teams keep in
//! Git (topics, the producers that write them, co-partition groups, consumer
//! groups and Redis key families) and the checks of one co-partition group
//! and one Redis family: a verdict with every reason it breaks, in the terms
//! of [`crate::findings`]. The whole file is checked by [`crate::check`],
//! its consumer groups by [`crate::group::placement`]. Its parts, by job:
//!
//! - `schema`: the TOML mirror serde reads;
//! - `validate`: what serde cannot check (names, counts, specs, patterns);
//! - `location`: the line, column and field path of a bad value;
//! - `copartition`: the check of one co-partition group;
//! - `redis`: the check of one Redis family;
//!
//! It parses text only; reading the file is the caller's business, so the core
//! stays free of I/O.
//!
//! ```
//! use partwise::check::check;
//! use partwise::topology::Topology;
//!
//! let t: Topology = r#"
//! [[topic]]
//! name = "market-updates"
//! partitions = 6
//! producer = [{ partitioner = "kafkajs", key_format = "string" }]
//!
//! [[topic]]
//! name = "notifications"
//! partitions = 8
//! producer = [{ partitioner = "java" }]
//!
//! [[copartition]]
//! name = "ticker"
//! topics = ["market-updates", "notifications"]
//! "#.parse()?;
//! let report = check(&t, &[b"BBCA"]);
//! assert!(!report.ok());
//! assert_eq!(report.groups[0].reasons[0].kind(), "partition-counts-differ");
//! # Ok::<(), partwise::Error>(())
//! ```
//!
//! # The file
//!
//! ```toml
//! [[topic]]
//! name = "notifications"        # required, unique
//! partitions = 6                # required, 1 ..= 2147483647
//! key = "symbol"                # optional: what the key is; differing keys break a group
//! [[topic.producer]]
//! name = "alerts-service"       # optional label
//! partitioner = "kafkajs"       # a partitioner spec (`client` is accepted too)
//! key_format = "string"         # how the key is serialized (default "string")
//! keyless = false               # true: this producer writes records without keys
//!
//! [[copartition]]               # topics that are joined
//! name = "ticker"
//! topics = ["market-updates", "notifications"]
//!
//! [[consumer_group]]            # placement: crate::group::placement runs its assignor
//! name = "ticker-joiner"
//! assignor = "kafkajs:roundrobin"
//! members = 3                   # a count, a list of member ids, or "1..8"
//! subscriptions = ["market-updates", "notifications"]
//!
//! [[redis_family]]              # keys that must share a slot
//! name = "ticker"
//! patterns = ["market:{%s}", "notif:{%s}"]
//! ```

pub mod bounds;
mod copartition;
mod location;
mod redis;
mod schema;
#[cfg(test)]
mod tests;
mod validate;

pub(crate) use self::copartition::check_group;
pub use self::copartition::{group_records, partition_map, Alignment, GroupVerdict, PartitionMap};
pub(crate) use self::redis::check_family;
pub use self::redis::FamilyVerdict;
pub use self::validate::MAX_NAME_BYTES;
pub use crate::error::TopologyError;
pub use crate::findings::{FamilyReason, ProducerRef, Reason, SampleDiff};

use crate::count::PartitionCount;
use crate::encoding::KeyFormat;
use crate::error::Error;
use crate::partitioner::{KeyRule, Partitioner};
use std::str::FromStr;
use toml::de::DeTable;

/// A validated topology file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    /// The topics, in file order; names are unique.
    pub topics: Vec<Topic>,
    /// Groups of topics that are joined, so must be co-partitioned.
    pub copartition_groups: Vec<CopartitionGroup>,
    /// Consumer groups (validated, not simulated).
    pub consumer_groups: Vec<ConsumerGroup>,
    /// Redis key families whose members must share a slot.
    pub redis_families: Vec<RedisFamily>,
}

/// A Kafka topic and the producers that write it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topic {
    /// The topic name.
    pub name: String,
    /// Its partition count.
    pub partitions: PartitionCount,
    /// What the key is (`symbol`, `userId`), when declared.
    pub key: Option<String>,
    /// The producers that write it.
    pub producers: Vec<Producer>,
}

/// One producer (client) writing a topic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Producer {
    /// A label, when given.
    pub name: Option<String>,
    /// Its partitioner (absent only for a declared keyless producer).
    pub partitioner: Option<Partitioner>,
    /// How it serializes keys.
    pub key_format: KeyFormat,
    /// Declared to write records without keys.
    pub keyless: bool,
}

impl Producer {
    /// How this producer places keyed records, or `None` when its records do
    /// not follow their key: declared keyless, or a partitioner that ignores keys.
    pub fn keyed_partitioner(&self) -> Option<Partitioner> {
        match self.partitioner {
            Some(p) if !self.keyless && matches!(p.key_rule(), KeyRule::Hash(..)) => Some(p),
            _ => None,
        }
    }
}

/// Topics that are joined, so a key must land on the same partition number in each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopartitionGroup {
    /// The group name.
    pub name: String,
    /// Its topics (at least two, each declared under `[[topic]]`).
    pub topics: Vec<String>,
}

/// A consumer group. Its assignor is kept as written: the assignor simulations
/// interpret it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsumerGroup {
    /// The group id.
    pub name: String,
    /// The assignor spec, as written.
    pub assignor: String,
    /// Its members.
    pub members: Members,
    /// The topics it subscribes to, in the order given.
    pub subscriptions: Vec<String>,
}

/// The members of a consumer group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Members {
    /// This many anonymous members.
    Count(u32),
    /// Members by id (unique, non-empty).
    Ids(Vec<String>),
    /// Every member count from the first to the second, inclusive
    /// (`members = "1..8"`): placement is checked at each.
    Range(u32, u32),
}

/// Redis key patterns whose keys for one logical key must share a slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisFamily {
    /// The family name.
    pub name: String,
    /// Patterns with exactly one `%s` where the logical key goes.
    pub patterns: Vec<String>,
}

impl FromStr for Topology {
    type Err = Error;

    fn from_str(s: &str) -> Result<Topology, Error> {
        Topology::parse(s)
    }
}

impl Topology {
    /// Parses and validates a topology file's text; a bad file is an
    /// [`Error::Topology`] with the line, column and field at fault.
    pub fn parse(input: &str) -> Result<Topology, Error> {
        Topology::parse_located(input).map_err(Error::Topology)
    }

    fn parse_located(input: &str) -> Result<Topology, TopologyError> {
        let tree = match DeTable::parse(input) {
            Ok(t) => t,
            Err(e) => return Err(location::syntax_error(input, &e)),
        };
        let raw: schema::RawFile = toml::from_str(input).map_err(|e| {
            let off = e.span().map_or(0, |s| s.start);
            let mut field = location::field_at(&tree, off);
            let message = e.message().trim();
            // A missing field is reported at its table: name the field itself.
            if let Some(missing) = schema::missing_field(message) {
                location::push_key(&mut field, missing);
            }
            location::at(input, off, field, message)
        })?;
        validate::Validator { input }.topology(raw)
    }

    /// The topic called `name`.
    pub fn topic(&self, name: &str) -> Option<&Topic> {
        self.topics.iter().find(|t| t.name == name)
    }

    /// The co-partition groups that contain topic `name`.
    pub fn groups_of<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a CopartitionGroup> {
        self.copartition_groups
            .iter()
            .filter(move |g| g.topics.iter().any(|t| t == name))
    }
}
