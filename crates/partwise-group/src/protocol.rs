//! The consumer protocol's embedded bytes as this member uses them: the
//! subscription it sends in JoinGroup and the assignment the leader sends in
//! SyncGroup. They are [`partwise_wire::consumer`]'s, shared with
//! partwise-kafka's group description, and re-exported here for the
//! runtime's callers.

pub use partwise_wire::consumer::{
    decode_assignment, encode_assignment, Assignment, Subscription, VERSION,
};
