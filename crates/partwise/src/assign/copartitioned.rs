//! partwise's co-partitioned sticky assignor.
//!
//! Its unit is a partition index across a co-partition group, like a Kafka
//! Streams task: topics with the same partition count and the same
//! subscribers form a group, and partition `p` of every topic in a group goes
//! to one member, so co-location holds by construction, also with unequal
//! subscriptions. Each generation it
//!
//! 1. keeps every unit with its previous owner (the member that owned most of
//!    the unit's partitions; ties to the member sorted first), if that member
//!    still subscribes;
//! 2. hands the other units, heaviest first, to the least-loaded subscriber;
//! 3. moves units from the most- to the least-loaded member while that
//!    strictly narrows the gap (a unit of weight `w` moves from `a` to `b`
//!    only if `load(b) + w < load(a)`).
//!
//! Load is the number of units, or with weights the sum of the unit's
//! partition weights. With equal subscriptions and no weights step 3 ends
//! with loads within one of each other, and only units of members above
//! their share move: a member leaving moves exactly its units. Every choice
//! is ordered by (load, member rank, unit), so equal inputs give equal
//! outputs.

use super::order::java_member_order;
use super::{AssignError, Assignment, Group, Tp};
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

/// The co-partition groups of `group`: topic indices grouped by partition
/// count and subscriber set, each group's topics in the order given, groups
/// ordered by their first topic. Topics nobody subscribes to are left out.
pub fn copartition_groups(group: &Group) -> Vec<Vec<u32>> {
    groups_of(group, &group.subscriptions())
}

fn groups_of(group: &Group, subs: &[Vec<bool>]) -> Vec<Vec<u32>> {
    let mut keys: Vec<(u32, Vec<bool>)> = Vec::new();
    let mut groups: Vec<Vec<u32>> = Vec::new();
    for (t, topic) in group.topics.iter().enumerate() {
        let subscribers: Vec<bool> = subs.iter().map(|s| s[t]).collect();
        if !subscribers.iter().any(|&s| s) {
            continue;
        }
        let key = (topic.partitions, subscribers);
        match keys.iter().position(|k| *k == key) {
            Some(g) => groups[g].push(t as u32),
            None => {
                keys.push(key);
                groups.push(vec![t as u32]);
            }
        }
    }
    groups
}

const NONE: u32 = u32::MAX;

/// Least-loaded member per co-partition group: a min-heap of (load, rank)
/// whose entries go stale when the member's load changes; a stale entry is
/// dropped when it reaches the top. Cheaper than an ordered set that must
/// remove the old entry on every change.
struct Lightest {
    heaps: Vec<BinaryHeap<Reverse<(u64, u32)>>>,
}

impl Lightest {
    fn top(&mut self, g: usize, load: &[u64], order: &[usize]) -> (u64, u32) {
        let heap = &mut self.heaps[g];
        loop {
            let Reverse((l, r)) = *heap.peek().expect("every group has a subscriber");
            if load[order[r as usize]] == l {
                return (l, r);
            }
            heap.pop();
        }
    }
}

pub fn assign(group: &Group) -> Result<Assignment, AssignError> {
    let members = group.members.len();
    let order = java_member_order(&group.members);
    let mut rank = vec![0u32; members];
    for (r, &m) in order.iter().enumerate() {
        rank[m] = r as u32;
    }
    let subs = group.subscriptions();
    let groups = groups_of(group, &subs);
    // member_groups[m]: the groups member m subscribes to (every topic of a
    // group has the same subscribers, so its first topic decides).
    let member_groups: Vec<Vec<usize>> = subs
        .iter()
        .map(|s| {
            (0..groups.len())
                .filter(|&g| s[groups[g][0] as usize])
                .collect()
        })
        .collect();

    // Units are contiguous per group, index ascending: unit u of group g is
    // index u - unit_base[g].
    let weighted = group.topics.iter().any(|t| t.weights.is_some());
    let mut unit_base = Vec::with_capacity(groups.len() + 1);
    let mut unit_group: Vec<u32> = Vec::new();
    let mut weight: Vec<u64> = Vec::new();
    for (g, topics) in groups.iter().enumerate() {
        unit_base.push(unit_group.len());
        let n = group.topics[topics[0] as usize].partitions;
        unit_group.extend(std::iter::repeat_n(g as u32, n as usize));
        if weighted {
            weight.extend((0..n as usize).map(|i| {
                topics
                    .iter()
                    .map(|&t| {
                        group.topics[t as usize]
                            .weights
                            .as_ref()
                            .map_or(1, |w| w[i])
                    })
                    .sum::<u64>()
            }));
        } else {
            weight.extend(std::iter::repeat_n(1, n as usize));
        }
    }
    unit_base.push(unit_group.len());
    let units = unit_group.len();
    let index = |u: usize| (u - unit_base[unit_group[u] as usize]) as u32;

    // Step 1: previous owners, flat per topic, as member ranks (one random
    // access fewer per owned partition). A partition claimed twice goes to
    // the member sorted first.
    let mut topic_base = Vec::with_capacity(group.topics.len());
    let mut total = 0usize;
    for t in &group.topics {
        topic_base.push(total);
        total += t.partitions as usize;
    }
    let mut prev = vec![NONE; total];
    for (m, member) in group.members.iter().enumerate() {
        let r = rank[m];
        for tp in &member.owned {
            let t = tp.topic as usize;
            if t < group.topics.len() && tp.partition < group.topics[t].partitions {
                let slot = &mut prev[topic_base[t] + tp.partition as usize];
                if r < *slot {
                    *slot = r;
                }
            }
        }
    }
    // The unit's previous owner: most of its partitions, ties to the member
    // sorted first; it keeps the unit if it still subscribes.
    let mut owner = vec![NONE; units];
    let mut load = vec![0u64; members];
    let mut tally: Vec<(u32, u32)> = Vec::new();
    for (g, topics) in groups.iter().enumerate() {
        let first = topics[0] as usize;
        for u in unit_base[g]..unit_base[g + 1] {
            let i = index(u) as usize;
            let best = if let [t] = topics[..] {
                prev[topic_base[t as usize] + i]
            } else {
                tally.clear();
                for &t in topics {
                    let r = prev[topic_base[t as usize] + i];
                    if r == NONE {
                        continue;
                    }
                    match tally.iter_mut().find(|(x, _)| *x == r) {
                        Some((_, c)) => *c += 1,
                        None => tally.push((r, 1)),
                    }
                }
                tally
                    .iter()
                    .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
                    .map_or(NONE, |&(r, _)| r)
            };
            if best != NONE {
                let m = order[best as usize];
                if subs[m][first] {
                    owner[u] = m as u32;
                    load[m] += weight[u];
                }
            }
        }
    }

    // Step 2: unowned units, heaviest first, then by group and index, each
    // to its group's least-loaded subscriber.
    let mut lightest = Lightest {
        heaps: (0..groups.len())
            .map(|g| {
                let first = groups[g][0] as usize;
                (0..members)
                    .filter(|&m| subs[m][first])
                    .map(|m| Reverse((load[m], rank[m])))
                    .collect()
            })
            .collect(),
    };
    let mut free: Vec<usize> = (0..units).filter(|&u| owner[u] == NONE).collect();
    if weighted {
        free.sort_by_key(|&u| (Reverse(weight[u]), u));
    }
    for u in free {
        let g = unit_group[u] as usize;
        let (_, r) = lightest.top(g, &load, &order);
        let m = order[r as usize];
        owner[u] = m as u32;
        load[m] += weight[u];
        for &h in &member_groups[m] {
            lightest.heaps[h].push(Reverse((load[m], rank[m])));
        }
    }

    // Step 3: move units from heavy to light members while that narrows the
    // gap. Unweighted loads within one of each other admit no such move.
    let (min, max) = (
        load.iter().copied().min().unwrap_or(0),
        load.iter().copied().max().unwrap_or(0),
    );
    if weighted || max > min + 1 {
        rebalance(
            &groups,
            &member_groups,
            &unit_group,
            &weight,
            &order,
            &rank,
            !weighted,
            &mut owner,
            &mut load,
        );
    }

    // Members' partitions in (topic name, partition) order, written member by
    // member: units bucketed by owner (in unit order, so by group, then
    // index), then each member's bucket walked once per topic.
    let mut start = vec![0usize; members + 1];
    for &m in &owner {
        start[m as usize + 1] += 1;
    }
    for m in 0..members {
        start[m + 1] += start[m];
    }
    let mut fill = start.clone();
    let mut bucket = vec![0u32; units];
    for (u, &m) in owner.iter().enumerate() {
        bucket[fill[m as usize]] = u as u32;
        fill[m as usize] += 1;
    }
    let mut group_of_topic = vec![NONE; group.topics.len()];
    for (g, topics) in groups.iter().enumerate() {
        for &t in topics {
            group_of_topic[t as usize] = g as u32;
        }
    }
    let by_name: Vec<(u32, u32)> = super::topics_by_name(group)
        .into_iter()
        .filter(|&t| group_of_topic[t] != NONE)
        .map(|t| (t as u32, group_of_topic[t]))
        .collect();
    let out: Vec<Vec<Tp>> = (0..members)
        .map(|m| {
            let mine = &bucket[start[m]..start[m + 1]];
            let size = mine
                .iter()
                .map(|&u| groups[unit_group[u as usize] as usize].len())
                .sum();
            let mut list = Vec::with_capacity(size);
            for &(t, g) in &by_name {
                let lo = mine.partition_point(|&u| unit_group[u as usize] < g);
                let hi = mine.partition_point(|&u| unit_group[u as usize] <= g);
                list.extend(mine[lo..hi].iter().map(|&u| Tp {
                    topic: t,
                    partition: index(u as usize),
                }));
            }
            list
        })
        .collect();
    Ok(Assignment::presorted(order, out))
}

/// Step 3 of [`assign`].
#[allow(clippy::too_many_arguments)]
fn rebalance(
    groups: &[Vec<u32>],
    member_groups: &[Vec<usize>],
    unit_group: &[u32],
    weight: &[u64],
    order: &[usize],
    rank: &[u32],
    unweighted: bool,
    owner: &mut [u32],
    load: &mut [u64],
) {
    let members = load.len();
    let mut by_load: Vec<BTreeSet<(u64, u32)>> = vec![BTreeSet::new(); groups.len()];
    for m in 0..members {
        for &g in &member_groups[m] {
            by_load[g].insert((load[m], rank[m]));
        }
    }
    let mut held: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); members];
    for (u, &m) in owner.iter().enumerate() {
        held[m as usize].insert(u);
    }
    let mut all: BTreeSet<(u64, u32)> = (0..members).map(|m| (load[m], rank[m])).collect();
    let set_load =
        |by_load: &mut Vec<BTreeSet<(u64, u32)>>, load: &mut [u64], m: usize, new: u64| {
            for &g in &member_groups[m] {
                by_load[g].remove(&(load[m], rank[m]));
                by_load[g].insert((new, rank[m]));
            }
            load[m] = new;
        };
    loop {
        let mut moved = false;
        // Try members from the heaviest down; the first improving move wins.
        let heavy: Vec<(u64, u32)> = all.iter().rev().copied().collect();
        for (la, ra) in heavy {
            let a = order[ra as usize];
            // Best move: the unit whose move to its group's lightest member
            // leaves the pair closest to even; ties to the highest unit index
            // so low indices stay put.
            let mut best_move: Option<(u64, usize, usize)> = None; // (imbalance, unit, to)
            for &g in &member_groups[a] {
                let &(lb, rb) = by_load[g].first().expect("a is in the group");
                if rb == ra {
                    continue;
                }
                for &u in held[a]
                    .iter()
                    .rev()
                    .filter(|&&u| unit_group[u] as usize == g)
                {
                    let w = weight[u];
                    if lb + w < la {
                        let after = (la - w).abs_diff(lb + w);
                        if best_move.is_none_or(|(b, _, _)| after < b) {
                            best_move = Some((after, u, order[rb as usize]));
                        }
                    }
                    if unweighted {
                        // Every unit weighs the same: the highest index is as good as any.
                        break;
                    }
                }
            }
            if let Some((_, u, b)) = best_move {
                let w = weight[u];
                held[a].remove(&u);
                held[b].insert(u);
                owner[u] = b as u32;
                all.remove(&(load[a], rank[a]));
                all.remove(&(load[b], rank[b]));
                let (na, nb) = (load[a] - w, load[b] + w);
                set_load(&mut by_load, load, a, na);
                set_load(&mut by_load, load, b, nb);
                all.insert((load[a], rank[a]));
                all.insert((load[b], rank[b]));
                moved = true;
                break;
            }
            if unweighted && la <= all.first().map_or(0, |f| f.0) + 1 {
                // Unweighted: no lighter member can gain from anyone lighter than `a`.
                break;
            }
        }
        if !moved {
            break;
        }
    }
}
