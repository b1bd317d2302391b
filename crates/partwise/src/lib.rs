//! partwise: where Kafka keys land and where Redis Cluster keys live, exactly.
//!
//! This crate is the pure core of partwise: no network, no async, no C. It owns
//!
//! - [`hash`]: the hashes the clients use (murmur2, KafkaJS's legacy murmur2,
//!   FNV-1a, CRC-32, CRC-16/XMODEM), bit-exact;
//! - [`partitioner`]: every major client's key-to-partition function by spec
//!   (`java`, `librdkafka:murmur2_random`, `sarama:reference-hash`, ...), with
//!   their null-key and empty-key behaviour;
//! - [`priority`]: a rule-based partitioner that isolates priority traffic;
//! - [`compare`]: partitioners compared over the same keys (agreement, and
//!   what a producer migration moves);
//! - [`salt`]: salting hot keys, for producers and for readers;
//! - [`sizing`]: how many partitions a topic needs;
//! - [`skew`]: load statistics and streaming heavy hitters;
//! - [`traffic`]: what a measured key stream does to a topic and its
//!   consumers (loads, heavy hitters, consumer shares, lag forecast);
//! - [`slot`]: Redis Cluster's key-to-slot function with its hash-tag rule;
//! - [`encoding`]: how a key becomes bytes (raw formats and serializers), and
//!   which serializer wrote the bytes of a stored key;
//! - [`routing`]: which partitioner (and key encoding) wrote a sampled topic;
//! - [`batch`]: routing many keys at once, fast;
//! - [`batching`]: the sticky partitioner for key-less records, and a batching simulation;
//! - [`topology`]: topology files and the co-partitioning check;
//! - [`described`]: a live consumer group's described assignment checked
//!   for co-location, beside an assignor's prediction;
//! - [`clients`]: which Kafka client a group member runs, and what each
//!   client can do about the consumer protocol (the one table of those facts);
//! - [`readiness`]: whether a live group can move to the consumer protocol
//!   (KIP-848) online, and which broker-side assignor keeps its units whole;
//! - [`findings`]: what the checks report, declared or observed, with stable ids;
//! - [`family`]: Redis key families (`market:{%s}`): filling and the pattern lint;
//! - [`resize`]: which keys move when a partition count changes;
//! - [`verdict`]: the verdict of a topology file over its sample keys, in
//!   the words `partwise report` shows;
//! - [`duration`]: the one syntax of duration values (`500ms`, `10s`, `2m`,
//!   `1h`, a bare number in the setting's own unit).
//!
//! ```
//! use partwise::{slot, PartitionCount, Partitioner, Placement};
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
pub mod batch;
pub mod batching;
pub mod clients;
pub mod compare;
mod count;
pub mod described;
pub mod duration;
pub mod encoding;
mod error;
pub mod family;
pub mod findings;
pub mod hash;
pub mod hitters;
pub mod hot_tag;
mod landing;
pub mod partitioner;
pub use topology::placement;
pub mod priority;
pub mod readiness;
pub mod resize;
pub mod routing;
mod routing_ser;
pub mod salt;
pub mod ser;
pub mod sizing;
pub mod skew;
pub mod slot;
pub mod streams;
pub mod streams_group;
pub mod topology;
pub mod traffic;
pub mod verdict;

pub use count::{PartitionCount, MAX_PARTITIONS};
pub use encoding::KeyFormat;
pub use error::{AssignError, Error, TopologyError};
pub use partitioner::{Partitioner, Placement, NOT_FIXED};
