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
use std::collections::BTreeSet;

/// The co-partition groups of `group`: topic indices grouped by partition
/// count and subscriber set, each group's topics in the order given, groups
/// ordered by their first topic. Topics nobody subscribes to are left out.
pub fn copartition_groups(group: &Group) -> Vec<Vec<u32>> {
    let subs = group.subscriptions();
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

struct Unit {
    group: usize,
    index: u32,
    weight: u64,
}

pub fn assign(group: &Group) -> Result<Assignment, AssignError> {
    let members = group.members.len();
    let order = java_member_order(&group.members);
    let mut rank = vec![0usize; members];
    for (r, &m) in order.iter().enumerate() {
        rank[m] = r;
    }
    let subs = group.subscriptions();
    let groups = copartition_groups(group);
    // eligible[g]: subscribers of group g (every topic of a group has the same ones).
    let eligible: Vec<Vec<usize>> = groups
        .iter()
        .map(|g| (0..members).filter(|&m| subs[m][g[0] as usize]).collect())
        .collect();

    let mut units: Vec<Unit> = Vec::new();
    for (g, topics) in groups.iter().enumerate() {
        let n = group.topics[topics[0] as usize].partitions;
        for index in 0..n {
            let weight = topics
                .iter()
                .map(|&t| {
                    group.topics[t as usize]
                        .weights
                        .as_ref()
                        .map_or(1, |w| w[index as usize])
                })
                .sum::<u64>();
            units.push(Unit {
                group: g,
                index,
                weight: if group.topics.iter().any(|t| t.weights.is_some()) {
                    weight
                } else {
                    1
                },
            });
        }
    }
    // Step 1: previous owners. A partition claimed twice goes to the member sorted first.
    let mut prev: Vec<Vec<Option<usize>>> = group
        .topics
        .iter()
        .map(|t| vec![None; t.partitions as usize])
        .collect();
    for (m, member) in group.members.iter().enumerate() {
        for tp in &member.owned {
            if let Some(slot) = prev
                .get_mut(tp.topic as usize)
                .and_then(|v| v.get_mut(tp.partition as usize))
            {
                if slot.is_none_or(|o| rank[m] < rank[o]) {
                    *slot = Some(m);
                }
            }
        }
    }
    // The unit's previous owner: most of its partitions, ties to the member sorted first.
    let mut best: Vec<Option<usize>> = vec![None; units.len()];
    let mut tally: Vec<(usize, u32)> = Vec::new();
    for (u, unit) in units.iter().enumerate() {
        tally.clear();
        for &t in &groups[unit.group] {
            if let Some(m) = prev[t as usize][unit.index as usize] {
                match tally.iter_mut().find(|(x, _)| *x == m) {
                    Some((_, c)) => *c += 1,
                    None => tally.push((m, 1)),
                }
            }
        }
        best[u] = tally
            .iter()
            .max_by(|a, b| a.1.cmp(&b.1).then(rank[b.0].cmp(&rank[a.0])))
            .map(|&(m, _)| m);
    }
    let mut owner: Vec<Option<usize>> = vec![None; units.len()];
    let mut load = vec![0u64; members];
    for (u, unit) in units.iter().enumerate() {
        if let Some(m) = best[u] {
            if subs[m][groups[unit.group][0] as usize] {
                owner[u] = Some(m);
                load[m] += unit.weight;
            }
        }
    }

    // Per-group sets of eligible members by (load, rank), for "least loaded subscriber".
    let mut by_load: Vec<BTreeSet<(u64, usize)>> = eligible
        .iter()
        .map(|e| e.iter().map(|&m| (load[m], rank[m])).collect())
        .collect();
    let member_groups: Vec<Vec<usize>> = (0..members)
        .map(|m| {
            (0..groups.len())
                .filter(|&g| eligible[g].contains(&m))
                .collect()
        })
        .collect();
    let set_load =
        |by_load: &mut Vec<BTreeSet<(u64, usize)>>, load: &mut Vec<u64>, m: usize, new: u64| {
            for &g in &member_groups[m] {
                by_load[g].remove(&(load[m], rank[m]));
                by_load[g].insert((new, rank[m]));
            }
            load[m] = new;
        };

    // Step 2: unowned units, heaviest first, then by group and index.
    let mut free: Vec<usize> = (0..units.len()).filter(|&u| owner[u].is_none()).collect();
    free.sort_by_key(|&u| (std::cmp::Reverse(units[u].weight), u));
    for u in free {
        let g = units[u].group;
        let &(_, r) = by_load[g].first().expect("every group has a subscriber");
        let m = order[r];
        owner[u] = Some(m);
        let new = load[m] + units[u].weight;
        set_load(&mut by_load, &mut load, m, new);
    }

    let unweighted = units.iter().all(|u| u.weight == 1);
    // Step 3: move units from heavy to light members while that narrows the gap.
    let mut held: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); members];
    for (u, o) in owner.iter().enumerate() {
        if let Some(m) = o {
            held[*m].insert(u);
        }
    }
    let mut all: BTreeSet<(u64, usize)> = (0..members).map(|m| (load[m], rank[m])).collect();
    loop {
        let mut moved = false;
        // Try members from the heaviest down; the first improving move wins.
        let heavy: Vec<(u64, usize)> = all.iter().rev().copied().collect();
        for (la, ra) in heavy {
            let a = order[ra];
            // Best move: the unit whose move to its group's lightest member
            // leaves the pair closest to even; ties to the highest unit index
            // so low indices stay put.
            let mut best_move: Option<(u64, usize, usize)> = None; // (imbalance, unit, to)
            for &g in &member_groups[a] {
                let &(lb, rb) = by_load[g].first().expect("a is in the group");
                if rb == ra {
                    continue;
                }
                for &u in held[a].iter().rev().filter(|&&u| units[u].group == g) {
                    let w = units[u].weight;
                    if lb + w < la {
                        let after = (la - w).abs_diff(lb + w);
                        if best_move.is_none_or(|(b, _, _)| after < b) {
                            best_move = Some((after, u, order[rb]));
                        }
                    }
                    if unweighted {
                        // Every unit weighs the same: the highest index is as good as any.
                        break;
                    }
                }
            }
            if let Some((_, u, b)) = best_move {
                let w = units[u].weight;
                held[a].remove(&u);
                held[b].insert(u);
                owner[u] = Some(b);
                all.remove(&(load[a], rank[a]));
                all.remove(&(load[b], rank[b]));
                let (na, nb) = (load[a] - w, load[b] + w);
                set_load(&mut by_load, &mut load, a, na);
                set_load(&mut by_load, &mut load, b, nb);
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

    let mut out: Vec<Vec<Tp>> = vec![Vec::new(); members];
    for (u, unit) in units.iter().enumerate() {
        let m = owner[u].expect("every unit is assigned");
        for &t in &groups[unit.group] {
            out[m].push(Tp {
                topic: t,
                partition: unit.index,
            });
        }
    }
    Ok(Assignment::new(group, order, out))
}
