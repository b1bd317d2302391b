//! Limits checked before any work starts, so that a typo (`-p 2147483647`,
//! `--messages 9e12`) is exit 2 naming the flag instead of an allocation of
//! many GiB, an abort or an hour of simulation. Partition ids are int32, so
//! a topic may legally be that large; the commands that keep a counter per
//! partition, simulate an assignor or a producer do work per partition and
//! stop at the limits below (each is documented in the README).

use crate::exit::{CliError, Result};

/// Partitions of one topic for a command that keeps a counter (or a load, or
/// an owner) per partition: 8 MB per counter array. Real topics stay far
/// below (Kafka's own guidance is thousands per broker).
pub const MAX_COUNTED_PARTITIONS: u32 = 1_000_000;

/// Consumers of a simulated group (`assign` has the same limit).
pub const MAX_MEMBERS: u32 = 100_000;

/// Partitions summed over the member counts an assignor is run for (`check`
/// ranges, `assign --sweep`): every run assigns every partition.
pub const MAX_ASSIGNED: u64 = 20_000_000;

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

/// A consumer count for a simulated group.
pub fn members(flag: &str, m: u64) -> Result<()> {
    if m > u64::from(MAX_MEMBERS) {
        return Err(CliError::msg(format!(
            "{flag} {m}: the assignor is simulated per member; at most {MAX_MEMBERS}"
        )));
    }
    Ok(())
}

/// Partitions (summed over topics) a simulated group may be assigned: the
/// assignors, and the fix that tries every assignor and up to 64 member
/// counts, run over every partition.
pub const MAX_GROUP_PARTITIONS: u64 = 200_000;

/// Members x partitions of one simulated group: the sticky assignors (and
/// the fix, which tries them) re-sort the members on each move, as
/// librdkafka's does.
pub const MAX_MEMBER_PARTITIONS: u64 = 50_000_000;

/// A simulated group of `partitions` (over all its topics) and up to
/// `members` members, assigned `runs` times (once per member count of a
/// range or sweep).
pub fn assigned(what: &str, partitions: u64, members: u64, runs: u64) -> Result<()> {
    if partitions > MAX_GROUP_PARTITIONS {
        return Err(CliError::msg(format!(
            "{what}: {partitions} partitions to assign; at most {MAX_GROUP_PARTITIONS}"
        )));
    }
    let pairs = partitions.saturating_mul(members);
    if pairs > MAX_MEMBER_PARTITIONS {
        return Err(CliError::msg(format!(
            "{what}: {members} members x {partitions} partitions; at most {MAX_MEMBER_PARTITIONS} member-partition pairs"
        )));
    }
    let work = partitions.saturating_mul(runs);
    if work > MAX_ASSIGNED {
        return Err(CliError::msg(format!(
            "{what}: {runs} member counts x {partitions} partitions; at most {MAX_ASSIGNED} partitions assigned in all"
        )));
    }
    Ok(())
}
