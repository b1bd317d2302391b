//! What partwise's checks report, in one vocabulary with stable `kind` ids:
//! [`Reason`] for topics that must be co-partitioned (declared in a topology
//! file, or observed on live topics) and [`FamilyReason`] for Redis key
//! families (a topology file's, or patterns linted against a live cluster).
//!
//! Each finding carries its message (`Display`) and its fix (`fix()`), so
//! every command that sees the same finding reports it in the same words.

mod copartition;
mod family;

pub use copartition::{summarize, ObservedWriter, ProducerRef, Reason, SampleDiff};
pub use family::FamilyReason;
