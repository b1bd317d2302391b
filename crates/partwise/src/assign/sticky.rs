//! Java's `StickyAssignor` and `CooperativeStickyAssignor`
//! (`AbstractStickyAssignor`) for groups whose members all subscribe to the
//! same topics: the `ConstrainedAssignmentBuilder` path, without racks.
//!
//! The real code walks members in `HashMap<String, _>` iteration order when it
//! resolves owned partitions and decides which members keep `maxQuota`; that
//! order is emulated ([`super::order::java_hashmap_order`]) with
//! `Group::members` as the insertion order (the coordinator's member list).
//! Groups with unequal subscriptions take the real code's
//! `GeneralAssignmentBuilder` ([`super::sticky_general`]).

use super::order::{java_cmp, java_hashmap_order};
use super::{AssignError, Assignment, Group, Tp};
use std::collections::{HashMap, HashSet, VecDeque};

const DEFAULT_GENERATION: i32 = -1;

/// The exception Java's sticky assignors throw when their quotas do not add up.
pub(super) const ILLEGAL_STATE: &str = "java.lang.IllegalStateException";

pub fn constrained(group: &Group, cooperative: bool) -> Result<Assignment, AssignError> {
    let spec = if cooperative {
        "java:cooperative-sticky"
    } else {
        "java:sticky"
    };
    if !group.homogeneous() {
        return super::sticky_general::general(group, cooperative);
    }
    let subs = group.subscriptions();
    let topics: Vec<usize> = (0..group.topics.len()).filter(|&t| subs[0][t]).collect();
    let subscribed: HashSet<u32> = topics.iter().map(|&t| t as u32).collect();
    let ids: Vec<&str> = group.members.iter().map(|m| m.id.as_str()).collect();
    let iter_order = java_hashmap_order(&ids);
    let generation = |m: usize| group.members[m].generation.unwrap_or(DEFAULT_GENERATION);

    // allSubscriptionsEqual: owned partitions, with claims by two members resolved by generation.
    let mut owned: Vec<Vec<Tp>> = vec![Vec::new(); group.members.len()];
    let mut claimed_by: HashMap<Tp, usize> = HashMap::new();
    let mut multiple_owners: HashSet<Tp> = HashSet::new();
    for &m in &iter_order {
        for &tp in &group.members[m].owned {
            // Java filters claims by topic only: a claim past the topic's
            // count (a stale leader's metadata, a topic recreated smaller)
            // is kept, and counts towards its claimant's quota.
            if !subscribed.contains(&tp.topic) {
                continue;
            }
            match claimed_by.get(&tp).copied() {
                None => {
                    owned[m].push(tp);
                    claimed_by.insert(tp, m);
                }
                Some(other) if generation(m) == generation(other) => {
                    multiple_owners.insert(tp);
                    owned[other].retain(|x| *x != tp);
                    claimed_by.insert(tp, m);
                }
                Some(other) if generation(m) > generation(other) => {
                    owned[m].push(tp);
                    owned[other].retain(|x| *x != tp);
                    claimed_by.insert(tp, m);
                }
                Some(_) => {}
            }
        }
    }

    let total: u32 = topics.iter().map(|&t| group.topics[t].partitions).sum();
    let n = group.members.len() as u32;
    let (min_quota, max_quota) = (total / n, total.div_ceil(n));
    let expected_over_min = total % n;
    let mut current_over_min = 0u32;
    let mut assignment: Vec<Vec<Tp>> = vec![Vec::new(); group.members.len()];
    let mut assigned: HashSet<Tp> = HashSet::new();
    let mut revoked: HashSet<Tp> = HashSet::new();
    let mut under_min: Vec<usize> = Vec::new();
    let mut exactly_min: VecDeque<usize> = VecDeque::new();
    let name = |tp: &Tp| group.topics[tp.topic as usize].name.as_str();

    // assignOwnedPartitions
    for &m in &iter_order {
        let mut mine: Vec<Tp> = owned[m]
            .iter()
            .copied()
            .filter(|tp| !multiple_owners.contains(tp))
            .collect();
        mine.sort_by(|a, b| {
            a.partition
                .cmp(&b.partition)
                .then_with(|| java_cmp(name(a), name(b)))
        });
        let len = mine.len() as u32;
        let keep = if len < min_quota {
            under_min.push(m);
            len
        } else if len >= max_quota && current_over_min < expected_over_min {
            current_over_min += 1;
            if current_over_min == expected_over_min {
                exactly_min.clear();
            }
            max_quota
        } else {
            if current_over_min < expected_over_min {
                exactly_min.push_back(m);
            }
            min_quota
        };
        let (kept, rest) = mine.split_at(keep as usize);
        assignment[m].extend_from_slice(kept);
        assigned.extend(kept.iter().copied());
        revoked.extend(rest.iter().copied());
    }

    // getUnassignedPartitions: topics by name, partitions ascending, less the
    // kept partitions, found by walking both sorted lists side by side. A
    // kept claim past its topic's count is never met by the walk, which then
    // stops skipping: every partition after it counts as unassigned, even
    // one a member keeps (so it can be handed out twice).
    let mut sorted_topics = topics.clone();
    sorted_topics.sort_by(|&a, &b| java_cmp(&group.topics[a].name, &group.topics[b].name));
    let mut kept: Vec<Tp> = assigned.iter().copied().collect();
    kept.sort_by(|a, b| java_cmp(name(a), name(b)).then(a.partition.cmp(&b.partition)));
    let mut unassigned: Vec<Tp> = Vec::new();
    let mut next = kept.iter();
    let mut pending = next.next();
    for &t in &sorted_topics {
        for partition in 0..group.topics[t].partitions {
            let tp = Tp {
                topic: t as u32,
                partition,
            };
            if pending == Some(&tp) {
                pending = next.next();
            } else {
                unassigned.push(tp);
            }
        }
    }

    let by_id = |a: &usize, b: &usize| java_cmp(&group.members[*a].id, &group.members[*b].id);
    under_min.sort_by(by_id);
    exactly_min.make_contiguous().sort_by(by_id);

    // assignRoundRobin: `under_min` is a list walked by a restartable iterator
    // whose `remove` drops the member it last returned.
    let mut transferring: Vec<Tp> = Vec::new();
    let mut cursor = 0usize;
    for tp in unassigned {
        let member = if cursor < under_min.len() {
            cursor += 1;
            under_min[cursor - 1]
        } else if under_min.is_empty() {
            match exactly_min.pop_front() {
                Some(m) => m,
                None => {
                    return Err(AssignError::LeaderThrows {
                        assignor: spec,
                        exception: ILLEGAL_STATE,
                        message: "No more unfilled consumers to be assigned.".into(),
                    })
                }
            }
        } else {
            cursor = 1;
            under_min[0]
        };
        assignment[member].push(tp);
        if revoked.contains(&tp) || multiple_owners.contains(&tp) {
            transferring.push(tp);
        }
        let count = assignment[member].len() as u32;
        if count == min_quota {
            // The real iterator's remove(): the element it returned last.
            if cursor > 0 && under_min.get(cursor - 1) == Some(&member) {
                under_min.remove(cursor - 1);
                cursor -= 1;
            }
            exactly_min.push_back(member);
        } else if count == max_quota {
            current_over_min += 1;
        }
    }

    // verifyUnfilledMembers
    if !under_min.is_empty() {
        if current_over_min != expected_over_min {
            return Err(AssignError::LeaderThrows {
                assignor: spec,
                exception: ILLEGAL_STATE,
                message: "We haven't reached the expected number of members with more than the \
                          minQuota partitions, but no more partitions to be assigned"
                    .into(),
            });
        }
        if let Some(&m) = under_min
            .iter()
            .find(|&&m| assignment[m].len() as u32 != min_quota)
        {
            return Err(AssignError::LeaderThrows {
                assignor: spec,
                exception: ILLEGAL_STATE,
                message: format!(
                    "Consumer: [{}] doesn't reach minQuota partitions, and no more partitions to be assigned",
                    group.members[m].id
                ),
            });
        }
    }

    let mut order: Vec<usize> = (0..group.members.len()).collect();
    order.sort_by(by_id);
    let mut result = Assignment::new(group, order, assignment);
    if cooperative {
        // CooperativeStickyAssignor.adjustAssignment: a partition changing
        // owner is withheld until its old owner has revoked it.
        let withheld: HashSet<Tp> = transferring.iter().copied().collect();
        for list in &mut result.partitions {
            list.retain(|tp| !withheld.contains(tp));
        }
        let rank = super::topic_name_rank(group);
        let mut w: Vec<Tp> = withheld.into_iter().collect();
        w.sort_by_key(|tp| (rank[tp.topic as usize], tp.partition));
        result.withheld = w;
    }
    Ok(result)
}
