//! partwise-kafka: partwise against live Kafka clusters, through librdkafka
//! (rdkafka, vendored), kafka-protocol for the payloads librdkafka leaves
//! undecoded, and partwise-client (partwise's own client, with the same TLS
//! and SASL settings) for the group requests librdkafka does not make. The core crate stays free of network code; this crate owns
//!
//! - [`connect`]: connection settings (bootstrap, librdkafka properties,
//!   properties files, timeout) and keeping secrets out of output;
//! - [`cluster`]: topics, partitions, leaders, watermarks, the groups with
//!   their types (ListGroups through partwise-client);
//! - [`audit`]: counts and skew per partition, a read-only sample, the
//!   partitioner that wrote each topic (inferred by the core's
//!   [`partwise::inference`]), and the co-partitioning verdict;
//! - [`fetch`]: reading partitions in batches without a consumer group, and
//!   a whole topic up to its end;
//! - [`group`]: consumer groups with decoded subscriptions and assignments
//!   (DescribeGroups and ConsumerGroupDescribe through partwise-client where
//!   librdkafka's answer is empty), and their analysis against the cluster;
//! - [`produce`]: producing with any partwise partitioner, set explicitly;
//! - [`measure`]: produce and consume throughput on a temporary topic;
//! - [`readiness`]: whether a group can move to the consumer protocol
//!   (KIP-848), from its description and the brokers' group settings;
//! - [`subscribe`]: a member of a group that librdkafka's own assignor
//!   places (the client whose placements partwise checks, run for real);
//! - [`admin`]: deleting topics and groups, confirmed by the cluster;
//! - [`diag`]: librdkafka's own account of a failure that only timed out.
//!
//! Everything here reads only, except [`produce`] (to the topic named),
//! [`measure`] (a temporary topic it creates and deletes), [`admin`] (what
//! its caller names) and [`subscribe`] (which joins a group).

#![deny(missing_docs)]

pub mod admin;
pub mod audit;
mod audit_ser;
pub mod cluster;
pub mod connect;
pub mod diag;
mod error;
pub mod fetch;
pub mod group;
mod group_ser;
pub mod measure;
pub mod produce;
pub mod readiness;
pub mod streams;
pub mod subscribe;
pub mod topics;

pub use connect::Connection;
pub use error::{ClientCause, Error, KafkaCause, Result};
