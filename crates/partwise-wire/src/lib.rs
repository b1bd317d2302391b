//! Kafka's wire bytes, without sockets: everything partwise reads from or
//! writes to a Kafka connection that is not a message kafka-protocol already
//! types, in one place for every adapter (partwise-kafka, partwise-group,
//! partwise-faults).
//!
//! - [`frame`]: the 4-byte length frame with its one size limit
//!   ([`frame::MAX_FRAME`]), request and response headers, and the
//!   correlation-id check;
//! - [`consumer`]: the consumer protocol's embedded bytes, the
//!   subscription a member sends in JoinGroup and the assignment the leader
//!   sends in SyncGroup;
//! - [`leader`]: the classic-protocol leader's computation, subscriptions
//!   and partition counts in, each member's assignment bytes out (the
//!   core's assignor), shared by the Rust runtime and the KafkaJS binding;
//! - [`records`]: a Fetch response's record batches;
//! - [`streams_info`]: the user data of a classic-protocol Kafka Streams
//!   group (its members' `SubscriptionInfo` and `AssignmentInfo`);
//! - [`streams`]: StreamsGroupDescribe (a Kafka Streams group under the
//!   streams protocol), which kafka-protocol does not type;
//!
//! Everything here is bytes in, typed values or an [`Error`] out, so each
//! decoder is unit-tested and fuzzed alone (`fuzz/`); the sockets, timeouts
//! and retries stay in the adapters.

pub mod consumer;
mod error;
pub mod frame;
pub mod leader;
pub mod records;
pub mod streams;
pub mod streams_info;

pub use error::{Error, Result};

// The unit tests decode hostile responses, so they run under the allocator
// the binaries install.
#[cfg(all(test, unix))]
#[global_allocator]
static ALLOC: partwise_alloc::ReserveHuge = partwise_alloc::ReserveHuge;
