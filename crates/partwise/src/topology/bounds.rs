//! How large a topology file the checks take: they compare every pair of a
//! co-partition group's producers, look topics up by name and run a
//! consumer group's assignor at every member count of a declared range, so
//! the sizes are bounded; and a file with nothing to check is refused,
//! since a verdict on it would say an empty (or misnamed) file holds.

use super::{Members, Topology};
use crate::assign::limits;
use crate::Error;

/// Topics of one topology file at most.
pub const MAX_TOPICS: usize = 10_000;
/// Producers (a topic without any counts as one) over a co-partition
/// group's topics at most: each pair is compared.
pub const MAX_GROUP_PRODUCERS: usize = 2_000;

/// Refuses `t` when it has nothing to check or is too large to check; the
/// error names the part of the file at fault, the caller the file.
pub fn bounded(t: &Topology) -> Result<(), Error> {
    let refused = |reason: String| Error::Refused { reason };
    if t.topics.is_empty() && t.redis_families.is_empty() {
        return Err(refused(
            "nothing to check: no [[topic]] and no [[redis_family]]".into(),
        ));
    }
    if t.topics.len() > MAX_TOPICS {
        return Err(refused(format!(
            "{} topics; at most {MAX_TOPICS}",
            t.topics.len()
        )));
    }
    for (i, g) in t.copartition_groups.iter().enumerate() {
        let producers: usize = g
            .topics
            .iter()
            .filter_map(|x| t.topic(x))
            .map(|x| x.producers.len().max(1))
            .sum();
        if producers > MAX_GROUP_PRODUCERS {
            return Err(refused(format!(
                "copartition[{i}] '{}': {producers} producers over its topics; at most {MAX_GROUP_PRODUCERS}",
                g.name
            )));
        }
    }
    for (i, g) in t.consumer_groups.iter().enumerate() {
        let partitions: u64 = g
            .subscriptions
            .iter()
            .filter_map(|s| t.topics.iter().find(|x| &x.name == s))
            .map(|x| u64::from(x.partitions.get()))
            .sum();
        let (runs, most) = match &g.members {
            Members::Range(lo, hi) => (u64::from(hi.saturating_sub(*lo)) + 1, u64::from(*hi)),
            Members::Count(m) => {
                limits::members(u64::from(*m))
                    .map_err(|e| refused(format!("consumer_group[{i}].members {m}: {e}")))?;
                (1, u64::from(*m))
            }
            Members::Ids(ids) => (1, ids.len() as u64),
        };
        limits::assigned(partitions, most, runs)
            .map_err(|e| refused(format!("consumer_group[{i}] '{}': {e}", g.name)))?;
    }
    Ok(())
}
