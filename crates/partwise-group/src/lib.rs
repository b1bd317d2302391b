//! A Kafka consumer-group member that runs partwise's `copartitioned`
//! assignor and hands the application co-partitioned units.
//!
//! Two topics that are joined locally need partition `p` of both in one
//! process. librdkafka cannot take a custom assignor, so this crate speaks the
//! classic group protocol itself (on the [`kafka_protocol`] message types and
//! tokio): the leader computes the assignment with
//! [`partwise::assign`]'s `copartitioned` assignor (or `range` when the broker
//! picks it). With [`GroupProtocol::Consumer`] it speaks KIP-848's consumer
//! protocol instead, where the broker's server assignor
//! ([`Config::remote_assignor`]) assigns and the member reconciles,
//! revoking before taking. Either way the application receives [`Event`]s
//! per [`Unit`]: unit
//! `p` assigned, records of unit `p`, unit `p` revoked. A unit is processed
//! only when this member owns partition `p` of every topic of its
//! co-partition group, and its handled offsets are committed before it is
//! given up: delivery is at least once.
//!
//! ```no_run
//! use partwise_group::{Config, Consumer, Event, OffsetReset};
//!
//! # async fn run() -> Result<(), partwise_group::Error> {
//! let mut cfg = Config::new(
//!     vec!["127.0.0.1:9092".into()],
//!     "ticker-joiner",
//!     vec!["market-updates".into(), "notifications".into()],
//! );
//! cfg.auto_offset_reset = OffsetReset::Earliest;
//! let mut consumer = Consumer::new(cfg).await?;
//! for _ in 0..100 {
//!     match consumer.poll().await? {
//!         Event::Assigned(a) => println!("units {:?}", a.units),
//!         Event::Revoked(a) => println!("gave up {:?}", a.units),
//!         Event::Records { unit, records } => {
//!             // Both topics' partition `unit.partition` are owned here.
//!             println!("unit {}: {} records", unit.partition, records.len());
//!         }
//!         // A generation the broker could not store; the member rejoins.
//!         Event::Unstored(u) => eprintln!("{u}"),
//!     }
//! }
//! consumer.close().await // commit, leave the group
//! # }
//! ```
//!
//! Brokers are reached through [`partwise_client`] (connections with TLS and
//! SASL, the cluster's brokers and leaders, admin requests), the client
//! partwise-kafka uses too. Modules: [`protocol`] (subscription and
//! assignment bytes),
//! [`units`] (units as the core defines them, and the leader's assignment),
//! and the member itself, split by job under `consumer` and re-exported at
//! the top.

/// The cluster the member runs on ([`partwise_client::cluster`]): brokers,
/// leaders, and the admin requests (Metadata, CreateTopics) of a caller
/// that sets up the member's topics, such as the ticker's `up`.
pub use partwise_client::cluster;
mod consumer;
mod error;
pub mod protocol;
pub mod units;

pub use consumer::{
    Config, ConsumedRecord, Consumer, Event, GroupAssignor, GroupProtocol, LargeMember,
    OffsetReset, PartitionRecords, RecordRef, Records, UnitAssignment, Unstored,
};
pub use error::{code_name, Error, Result};
pub use partwise_client::{Protocol, Security};
pub use units::Unit;
