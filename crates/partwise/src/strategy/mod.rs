//! What to change about a topic, and what it costs: its partition count
//! from rates ([`sizing`]) and what changing it moves ([`resize`]), a hot
//! key spread over partitions ([`salt`]), and how key-less records batch
//! ([`batching`]).

pub mod batching;
pub mod resize;
pub mod salt;
pub mod sizing;
