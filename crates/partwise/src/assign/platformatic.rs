//! @platformatic/kafka's group assigners, as its Consumer's leader runs them
//! (`Consumer#createAssignments`, release 2.12): the leader hands the
//! assigner its map of members in the coordinator's order and a set of its
//! own subscribed topics, so what is dealt is the leader's subscription, not
//! the group's. Known answers: `tests/vectors/regen/node-groups`.
//!
//! `roundRobinAssigner` (the default) deals every partition of the leader's
//! topics over all members in the coordinator's order with one counter,
//! whatever each member subscribed to. `cooperativeStickyAssigner` (the
//! default under protocol `cooperative-sticky`) keeps each partition with
//! its one claimant of the newest generation, gives the rest to the least
//! loaded subscriber, moves partitions from members above the ceiling
//! quota to members below the floor, and withholds a partition whose
//! claimant loses it until that member has revoked it.

use super::order::java_cmp;
use super::{Assignment, Group, Tp};
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The member that leads: the group's named leader, else the first member.
fn leader(group: &Group) -> usize {
    group.leader.unwrap_or(0)
}

/// The leader's subscription as a JavaScript `Set` keeps it (first
/// occurrence, in order), topics the group has.
fn leader_topics(group: &Group) -> Vec<usize> {
    let mut seen = BTreeSet::new();
    group.members[leader(group)]
        .topics
        .iter()
        .filter_map(|name| group.topic_index(name))
        .filter(|&t| seen.insert(t))
        .map(|t| t as usize)
        .collect()
}

/// `roundRobinAssigner`: every partition of the leader's topics (in its
/// subscription's order, partitions ascending) dealt over the members in the
/// coordinator's order with one counter. Members get topics they did not
/// subscribe to.
pub fn roundrobin(group: &Group) -> Assignment {
    let order: Vec<usize> = (0..group.members.len()).collect();
    let mut out = vec![Vec::new(); group.members.len()];
    let mut i = 0usize;
    for t in leader_topics(group) {
        for partition in 0..group.topics[t].partitions {
            out[order[i % order.len()]].push(Tp {
                topic: t as u32,
                partition,
            });
            i += 1;
        }
    }
    Assignment::new(group, order, out)
}

/// `String.prototype.localeCompare` as Node's ICU root collation orders
/// the characters a Kafka topic name may hold (`[a-zA-Z0-9._-]`): first by
/// letters regardless of case with `_` < `-` < `.` < digits < letters,
/// then, where those agree, lower case before upper case from the left.
/// Any other character falls back to code-unit order after those.
pub fn locale_compare(a: &str, b: &str) -> Ordering {
    fn primary(c: char) -> (u32, u32) {
        match c {
            '_' => (0, 0),
            '-' => (0, 1),
            '.' => (0, 2),
            '0'..='9' => (1, c as u32),
            'a'..='z' => (2, c as u32),
            'A'..='Z' => (2, c.to_ascii_lowercase() as u32),
            _ => (3, c as u32),
        }
    }
    let p = a.chars().map(primary).cmp(b.chars().map(primary));
    if p != Ordering::Equal {
        return p;
    }
    a.chars()
        .map(|c| c.is_ascii_uppercase())
        .cmp(b.chars().map(|c| c.is_ascii_uppercase()))
}

/// `cooperativeStickyAssigner`, with the leader's cooperative adjustment.
pub fn cooperative_sticky(group: &Group) -> Assignment {
    let n = group.members.len();
    let subs = group.subscriptions();
    // JavaScript's default sort: UTF-16 code units.
    let mut sorted: Vec<usize> = (0..n).collect();
    sorted.sort_by(|&a, &b| java_cmp(&group.members[a].id, &group.members[b].id));
    // listAssignablePartitions: the leader's topics, sorted, that some member subscribes to.
    let mut topics = leader_topics(group);
    topics.sort_by(|&a, &b| java_cmp(&group.topics[a].name, &group.topics[b].name));
    topics.retain(|&t| subs.iter().any(|s| s[t]));
    let all: Vec<Tp> = topics
        .iter()
        .flat_map(|&t| {
            (0..group.topics[t].partitions).map(move |partition| Tp {
                topic: t as u32,
                partition,
            })
        })
        .collect();
    let valid: BTreeSet<Tp> = all.iter().copied().collect();

    // previousOwnership: claims of the newest generation's members only, of
    // topics the claimant subscribes to; a partition claimed more than once
    // is contested and kept by no one.
    let generation = |m: usize| group.members[m].generation.unwrap_or(-1);
    let newest = (0..n).map(generation).max().unwrap_or(-1).max(-1);
    let mut claims: BTreeMap<Tp, Vec<usize>> = BTreeMap::new();
    for (m, sub) in subs.iter().enumerate() {
        if newest >= 0 && generation(m) < newest {
            continue;
        }
        for tp in &group.members[m].owned {
            if sub[tp.topic as usize] && valid.contains(tp) {
                claims.entry(*tp).or_default().push(m);
            }
        }
    }
    let mut owners: HashMap<Tp, usize> = HashMap::new();
    let mut contested: BTreeSet<Tp> = BTreeSet::new();
    for (tp, who) in &claims {
        if who.len() == 1 {
            owners.insert(*tp, who[0]);
        } else {
            contested.insert(*tp);
        }
    }

    let mut held: Vec<BTreeSet<Tp>> = vec![BTreeSet::new(); n];
    for tp in &all {
        if let Some(&m) = owners.get(tp) {
            held[m].insert(*tp);
        }
    }
    // assignUnassignedPartitions: the first least loaded subscriber, by id.
    let assigned: BTreeSet<Tp> = held.iter().flatten().copied().collect();
    for tp in &all {
        if assigned.contains(tp) {
            continue;
        }
        let mut best: Option<usize> = None;
        for &m in &sorted {
            if subs[m][tp.topic as usize] && best.is_none_or(|b| held[m].len() < held[b].len()) {
                best = Some(m);
            }
        }
        if let Some(m) = best {
            held[m].insert(*tp);
        }
    }
    // balanceAssignments: quotas over every member, subscribed or not.
    let total: usize = held.iter().map(BTreeSet::len).sum();
    if total > 0 {
        let (min_quota, max_quota) = (total / n, total.div_ceil(n));
        loop {
            let under: Vec<usize> = sorted
                .iter()
                .copied()
                .filter(|&m| held[m].len() < min_quota)
                .collect();
            let mut over: Vec<usize> = sorted
                .iter()
                .copied()
                .filter(|&m| held[m].len() > max_quota)
                .collect();
            // A stable sort, largest first.
            over.sort_by_key(|&m| std::cmp::Reverse(held[m].len()));
            if under.is_empty() || over.is_empty() {
                break;
            }
            let mut moved = false;
            'search: for &u in &under {
                for &o in &over {
                    let mut candidates: Vec<Tp> = held[o].iter().copied().collect();
                    candidates.sort_by(|a, b| {
                        locale_compare(
                            &group.topics[a.topic as usize].name,
                            &group.topics[b.topic as usize].name,
                        )
                        .then(a.partition.cmp(&b.partition))
                    });
                    if let Some(tp) = candidates.into_iter().find(|tp| subs[u][tp.topic as usize]) {
                        held[o].remove(&tp);
                        held[u].insert(tp);
                        moved = true;
                        break 'search;
                    }
                }
            }
            if !moved {
                break;
            }
        }
    }
    // adjustCooperativeTransfers: a partition new to its member that a
    // claimant (trusted or contested) no longer gets is withheld.
    let mut added: Vec<(Tp, usize)> = Vec::new();
    let mut revoked: BTreeSet<Tp> = BTreeSet::new();
    for (m, member) in group.members.iter().enumerate() {
        let owned = &member.owned;
        let trusted: BTreeSet<Tp> = owned
            .iter()
            .copied()
            .filter(|tp| owners.get(tp) == Some(&m))
            .collect();
        for tp in &held[m] {
            if !trusted.contains(tp) {
                added.push((*tp, m));
            }
        }
        for tp in owned {
            let claimed = owners.get(tp) == Some(&m) || contested.contains(tp);
            if claimed && !held[m].contains(tp) {
                revoked.insert(*tp);
            }
        }
    }
    let mut withheld = Vec::new();
    for (tp, m) in added {
        if revoked.contains(&tp) {
            held[m].remove(&tp);
            withheld.push(tp);
        }
    }
    let partitions: Vec<Vec<Tp>> = held.into_iter().map(|s| s.into_iter().collect()).collect();
    let mut a = Assignment::new(group, sorted, partitions);
    let rank = super::topic_name_rank(group);
    withheld.sort_by_key(|tp| (rank[tp.topic as usize], tp.partition));
    a.withheld = withheld;
    a
}
