//! KIP-848's server-side `uniform` assignor (`UniformAssignor`) for groups
//! whose members all subscribe to the same topics
//! (`UniformHomogeneousAssignmentBuilder`).
//!
//! Two orders in the real code come from hash sets and maps: topics are
//! walked in `HashSet<Uuid>` order of their random topic ids, which partwise
//! cannot know, so the topics' order in [`Group::topics`] stands in for it;
//! members are walked in `HashMap<String, _>` order, emulated by
//! [`super::order::java_hashmap_order`]. Unequal subscriptions take the real
//! code's `UniformHeterogeneousAssignmentBuilder` ([`super::uniform_hetero`]).

use super::order::java_hashmap_order;
use super::{AssignError, Assignment, Group, Tp};
use std::collections::HashSet;

pub fn homogeneous(group: &Group) -> Result<Assignment, AssignError> {
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
    for &m in &order {
        let mut quota = min_quota;
        if extra > 0 {
            quota += 1;
            extra -= 1;
        }
        for &t in &topics {
            let mut parts: Vec<u32> = owned[m]
                .iter()
                .filter(|tp| tp.topic as usize == t)
                .map(|tp| tp.partition)
                .collect();
            parts.sort_unstable();
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
        if quota > 0 {
            unfilled.push((m, quota));
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
            assignor: "kip848:uniform",
            reason:
                "partitions left unassigned (the real assignor throws PartitionAssignorException)"
                    .into(),
        });
    }
    Ok(Assignment::new(group, order, assignment))
}
