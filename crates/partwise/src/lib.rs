//! partwise: where Kafka keys land and where Redis Cluster keys live, exactly.
//!
//! This crate is the pure core of partwise: no network, no async, no C. It owns
//!
//! - [`hash`]: the hashes the clients use (murmur2, KafkaJS's legacy murmur2,
//!   FNV-1a, CRC-32, CRC-16/XMODEM), bit-exact;
//! - [`partitioner`]: every major client's key-to-partition function by spec
//!   (`java`, `librdkafka:murmur2_random`, `sarama:reference-hash`, ...), with
//!   their null-key and empty-key behaviour; priority isolation, routing many
//!   keys at once, and partitioners compared over the same keys;
//! - [`encoding`]: how a key becomes bytes (raw formats and serializers), and
//!   which serializer wrote the bytes of a stored key;
//! - [`inference`]: which partitioner (and key encoding) wrote a sampled topic;
//! - [`redis`]: Redis Cluster's key-to-slot function, key families and hot tags;
//! - [`topology`]: topology files and the co-partitioning check;
//! - [`check`]: a topology file checked whole (groups, families, placement);
//! - [`assign`]: the clients' and brokers' assignors, simulated;
//! - [`group`]: a declared consumer group's placement, a live group's
//!   description against its assignor, and which client a member runs;
//! - [`readiness`]: whether a live group can move to the consumer protocol
//!   (KIP-848) online, and which broker-side assignor keeps its units whole;
//! - [`streams`]: Kafka Streams topologies and streams groups;
//! - [`traffic`]: what a measured key stream does to a topic and its
//!   consumers (loads, skew statistics, heavy hitters, consumer shares, lag);
//! - [`strategy`]: what to change and what it costs: sizing, resize, salting
//!   hot keys, batching of key-less records;
//! - [`findings`]: what the checks report, declared or observed, with stable ids;
//! - [`verdict`]: the verdict of a topology file over its sample keys, in
//!   the words `partwise report` shows;
//! - [`ser`]: how the core's reports write keys and specs in JSON;
//! - [`duration`]: the one syntax of duration values (`500ms`, `10s`, `2m`,
//!   `1h`, a bare number in the setting's own unit).
//!
//! ```
//! use partwise::redis::slot;
//! use partwise::{PartitionCount, Partitioner, Placement};
//!
//! // The seeds' facts: BBCA is partition 0 of 6 and 2 of 8 under the Java client.
//! let java: Partitioner = "java".parse()?;
//! assert_eq!(java.place(Some(b"BBCA"), PartitionCount::new(6)?), Placement::Partition(0));
//! assert_eq!(java.place(Some(b"BBCA"), PartitionCount::new(8)?), Placement::Partition(2));
//!
//! // librdkafka's default (and so confluent-kafka's and kcat's) is not Java-compatible.
//! let rdk: Partitioner = "librdkafka".parse()?;
//! assert_eq!(rdk.place(Some(b"BBCA"), PartitionCount::new(12)?), Placement::Partition(8));
//!
//! // Redis: keys that share a hash tag share a slot.
//! assert_eq!(slot::key_slot(b"market:{BBCA}"), slot::key_slot(b"notif:{BBCA}"));
//! # Ok::<(), partwise::Error>(())
//! ```

#![deny(missing_docs)]

pub mod assign;
pub mod check;
mod count;
pub mod duration;
pub mod encoding;
mod error;
pub mod findings;
pub mod group;
pub mod hash;
pub mod inference;
pub mod partitioner;
pub mod readiness;
pub mod redis;
pub mod report;
pub mod ser;
pub mod strategy;
pub mod streams;
pub mod topology;
pub mod traffic;
pub mod verdict;

pub use count::{PartitionCount, MAX_PARTITIONS};
pub use encoding::KeyFormat;
pub use error::{AssignError, Error, TopologyError};
pub use partitioner::{Partitioner, Placement, NOT_FIXED};
