//! Limits checked before any work starts, so that a typo (`-p 2147483647`,
//! `--messages 9e12`) is exit 2 naming the flag instead of an allocation of
//! many GiB, an abort or an hour of simulation. Partition ids are int32, so
//! a topic may legally be that large; the commands that keep a counter per
//! partition, simulate an assignor or a producer do work per partition and
//! stop at the limits below and the core's for a simulated group
//! ([`partwise::assign::limits`]), each documented in the README; here each
//! is named by its flag.

use crate::exit::{CliError, Result};

/// Partitions of one topic for a command that keeps a counter (or a load, or
/// an owner) per partition: 8 MB per counter array. Real topics stay far
/// below (Kafka's own guidance is thousands per broker).
pub const MAX_COUNTED_PARTITIONS: u32 = 1_000_000;

/// `-p N` (or another flag naming a partition count) for a command that keeps
/// a counter per partition.
pub fn counted_partitions(flag: &str, n: u32) -> Result<()> {
    if n > MAX_COUNTED_PARTITIONS {
        return Err(CliError::msg(format!(
            "{flag} {n}: this command keeps a counter per partition; at most {MAX_COUNTED_PARTITIONS}"
        )));
    }
    Ok(())
}

/// A consumer count for a simulated group ([`partwise::assign::limits`]).
pub fn members(flag: &str, m: u64) -> Result<()> {
    partwise::assign::limits::members(m).map_err(|e| CliError::context(format!("{flag} {m}"), e))
}

/// A simulated group of `partitions` (over all its topics) and up to
/// `members` members, assigned `runs` times (once per member count of a
/// range or sweep), named `what` ([`partwise::assign::limits`]).
pub fn assigned(what: &str, partitions: u64, members: u64, runs: u64) -> Result<()> {
    partwise::assign::limits::assigned(partitions, members, runs)
        .map_err(|e| CliError::context(what, e))
}
