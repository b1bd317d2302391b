//! Redis Cluster: where a key lives and which keys must live together.
//!
//! - [`slot`]: the key-to-slot function with its hash-tag rule;
//! - [`family`]: key families (`market:{%s}`) that must share a slot:
//!   filling and the pattern lint;
//! - [`hot_tag`]: when a sampled hash tag is hot.

pub mod family;
pub mod hot_tag;
pub mod slot;
