//! partwise's one Kafka client, on the [`kafka_protocol`] message types and
//! tokio, with the bytes on the wire from [`partwise_wire`]. Both adapters
//! talk to brokers through it: partwise-group's consumer-group member runs
//! on [`cluster::Cluster`], and partwise-kafka sends the requests librdkafka
//! does not make (DescribeGroups where its listing is empty,
//! ConsumerGroupDescribe, ApiVersions, ListGroups with each group's type)
//! through [`blocking`]. Every
//! connection is secured as the same librdkafka / Java properties say
//! ([`Security::from_properties`]), so every request gets TLS and SASL alike.
//!
//! Modules: [`wire`] (one broker connection, with TLS and SASL as
//! [`security`] says; [`sasl`] builds the PLAIN and SCRAM messages),
//! [`cluster`] (brokers, leaders, coordinators, admin requests), [`groups`]
//! (ListGroups over every broker, with each group's type), [`blocking`]
//! (the admin calls for callers without a runtime), [`error`].

#![deny(missing_docs)]

pub mod blocking;
pub mod cluster;
pub mod error;
pub mod groups;
pub mod sasl;
pub mod security;
pub mod wire;

pub use error::{code_name, Error, Result};
pub use security::{Protocol, Security};

// The unit tests decode hostile responses, whose array counts kafka-protocol
// reserves before reading, so they run under the allocator the binaries install.
#[cfg(all(test, unix))]
#[global_allocator]
static ALLOC: partwise_alloc::ReserveHuge = partwise_alloc::ReserveHuge;
