//! KIP-848's server-side `uniform` assignor (`UniformAssignor`) for groups
//! whose members all subscribe to the same topics
//! (`UniformHomogeneousAssignmentBuilder`).
//!
//! Two orders in the real code come from hash sets and maps: topics are
//! walked in `HashSet<Uuid>` order of their random topic ids, which is the
//! order of [`Group::topics`] here (a group file whose topics carry their
//! ids is put in that order, [`super::group_file`]; without them the given
//! order stands in for it);
//! members are walked in `HashMap<String, _>` order, emulated by
//! [`super::order::java_hashmap_order`]. Unequal subscriptions take the real
//! code's `UniformHeterogeneousAssignmentBuilder` ([`super::uniform_hetero`]).
//!
//! A member's owned partitions of one topic reach the builder as the
//! coordinator rebuilds them from its records, `new HashSet<>(list)`, and are
//! walked in that set's order ([`super::order::java_int_hashset_order`]): when
//! a member owns more than its quota, the first ones in set order stay.

use super::order::{java_hashmap_order, java_int_hashset_order};
use super::{AssignError, Assignment, Group, Tp};
use std::collections::HashSet;

/// Which release's homogeneous builder to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Release {
    /// Kafka 4.0.0: a member takes a spare partition (quota + 1) whenever
    /// spares are left, in `memberIds()` order.
    V4_0_0,
    /// Kafka 4.0.1 to 4.4.0: a member that keeps fewer owned partitions than
    /// its quota gives its spare up to a later member, unless it is one of
    /// the last members that must take one.
    V4_0_1,
}

pub fn homogeneous(
    group: &Group,
    release: Release,
    spec: &'static str,
) -> Result<Assignment, AssignError> {
    if !group.homogeneous() {
        return Ok(super::uniform_hetero::heterogeneous(group));
    }
    let subs = group.subscriptions();
    let topics: Vec<usize> = (0..group.topics.len()).filter(|&t| subs[0][t]).collect();
    let ids: Vec<&str> = group.members.iter().map(|m| m.id.as_str()).collect();
    let order = java_hashmap_order(&ids);

    // The coordinator never lets two members own one partition; keep the first claim.
    let mut owned: Vec<Vec<Tp>> = vec![Vec::new(); group.members.len()];
    let mut taken: HashSet<Tp> = HashSet::new();
    for &m in &order {
        for &tp in &group.members[m].owned {
            if (tp.topic as usize) < group.topics.len()
                && tp.partition < group.topics[tp.topic as usize].partitions
                && taken.insert(tp)
            {
                owned[m].push(tp);
            }
        }
    }

    let mut unassigned: Vec<Tp> = Vec::new();
    let mut total = 0u32;
    for &t in &topics {
        for partition in 0..group.topics[t].partitions {
            let tp = Tp {
                topic: t as u32,
                partition,
            };
            if !taken.contains(&tp) {
                unassigned.push(tp);
            }
        }
        total += group.topics[t].partitions;
    }
    let n = group.members.len() as u32;
    let min_quota = total / n;
    let mut extra = total % n;

    // maybeRevokePartitions: each member keeps owned partitions up to its
    // quota, topic by topic (in topic-set order), partitions ascending.
    let mut assignment: Vec<Vec<Tp>> = vec![Vec::new(); group.members.len()];
    let mut unfilled: Vec<(usize, u32)> = Vec::new();
    let count = order.len();
    for (index, &m) in order.iter().enumerate() {
        let mut quota = min_quota;
        let mut has_extra = false;
        if extra > 0 {
            quota += 1;
            match release {
                Release::V4_0_0 => extra -= 1,
                Release::V4_0_1 => has_extra = true,
            }
        }
        for &t in &topics {
            let list: Vec<u32> = owned[m]
                .iter()
                .filter(|tp| tp.topic as usize == t)
                .map(|tp| tp.partition)
                .collect();
            let parts = java_int_hashset_order(&list).ok_or_else(|| AssignError::Unsupported {
                assignor: spec,
                reason: format!(
                    "member '{}' owns partitions of topic '{}' that share a bucket of a \
                     Java HashSet so often that it turns into a tree, whose order is not modelled",
                    group.members[m].id, group.topics[t].name
                ),
            })?;
            if parts.len() as u32 <= quota {
                quota -= parts.len() as u32;
                assignment[m].extend(parts.iter().map(|&partition| Tp {
                    topic: t as u32,
                    partition,
                }));
            } else {
                for partition in parts {
                    let tp = Tp {
                        topic: t as u32,
                        partition,
                    };
                    if quota > 0 {
                        quota -= 1;
                        assignment[m].push(tp);
                    } else {
                        unassigned.push(tp);
                    }
                }
            }
        }
        if release == Release::V4_0_1 && quota > 0 && has_extra && count - index > extra as usize {
            // Not one of the last `extra` members, which must take a spare.
            quota -= 1;
            has_extra = false;
        }
        if quota > 0 {
            unfilled.push((m, quota));
        }
        if has_extra {
            extra -= 1;
        }
    }

    // assignRemainingPartitions: each unfilled member takes the next contiguous slice.
    let mut next = 0usize;
    for (m, quota) in unfilled {
        for _ in 0..quota {
            if next == unassigned.len() {
                break;
            }
            assignment[m].push(unassigned[next]);
            next += 1;
        }
    }
    if next < unassigned.len() {
        return Err(AssignError::Unsupported {
            assignor: spec,
            reason:
                "partitions left unassigned (the real assignor throws PartitionAssignorException)"
                    .into(),
        });
    }
    Ok(Assignment::new(group, order, assignment))
}
