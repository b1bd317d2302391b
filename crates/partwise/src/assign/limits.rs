//! How large a simulated group may be: every run assigns every partition,
//! the sticky assignors (and the fix, which tries them) re-sort the members
//! on each move, and a typo (`-m 100000000`) must be an error naming the
//! input, not an hour of simulation or an allocation of many GiB.

use crate::Error;

/// Consumers of a simulated group.
pub const MAX_MEMBERS: u32 = 100_000;

/// Partitions summed over the member counts an assignor is run for (a
/// declared range, `assign --sweep`): every run assigns every partition.
pub const MAX_ASSIGNED: u64 = 20_000_000;

/// Partitions (summed over topics) a simulated group may be assigned: the
/// assignors, and the fix that tries every assignor and up to 64 member
/// counts, run over every partition.
pub const MAX_GROUP_PARTITIONS: u64 = 200_000;

/// Members x partitions of one simulated group: the sticky assignors (and
/// the fix, which tries them) re-sort the members on each move, as
/// librdkafka's does.
pub const MAX_MEMBER_PARTITIONS: u64 = 50_000_000;

fn too_large(reason: String) -> Error {
    Error::Refused { reason }
}

/// A consumer count `m` for a simulated group.
pub fn members(m: u64) -> Result<(), Error> {
    if m > u64::from(MAX_MEMBERS) {
        return Err(too_large(format!(
            "the assignor is simulated per member; at most {MAX_MEMBERS}"
        )));
    }
    Ok(())
}

/// A simulated group of `partitions` (over all its topics) and up to
/// `members` members, assigned `runs` times (once per member count of a
/// range or sweep).
pub fn assigned(partitions: u64, members: u64, runs: u64) -> Result<(), Error> {
    if partitions > MAX_GROUP_PARTITIONS {
        return Err(too_large(format!(
            "{partitions} partitions to assign; at most {MAX_GROUP_PARTITIONS}"
        )));
    }
    let pairs = partitions.saturating_mul(members);
    if pairs > MAX_MEMBER_PARTITIONS {
        return Err(too_large(format!(
            "{members} members x {partitions} partitions; at most {MAX_MEMBER_PARTITIONS} member-partition pairs"
        )));
    }
    let work = partitions.saturating_mul(runs);
    if work > MAX_ASSIGNED {
        return Err(too_large(format!(
            "{runs} member counts x {partitions} partitions; at most {MAX_ASSIGNED} partitions assigned in all"
        )));
    }
    Ok(())
}
