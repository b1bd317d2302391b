//! Sarama's sticky strategies (`NewBalanceStrategySticky`,
//! `NewBalanceStrategyCooperativeSticky`, `balance_strategy.go`), as Sarama
//! 1.61.1 computes them: a Go port of Java's old sticky algorithm, with its
//! own flaws. Known answers: `tests/vectors/regen/go-groups` (`-sticky`).
//!
//! The eager strategy reads a member's claims from the user data its leader
//! handed it last time (`StickyAssignorUserDataV1`, or version 0 without a
//! generation); the cooperative one from the subscription's owned
//! partitions and generation, and withholds partitions that change owner.
//! Both walk Go maps at many steps: which member's claim of a partition is
//! read first, the order of each member's kept partitions, which unclaimed
//! partition is dealt next, which of several moved partitions moves back.
//! Go starts every walk of a map at a random place, so two runs over the
//! same group differ; each run here draws its walks from a seed:
//!
//! - a map that stayed in one group of eight slots is walked in a rotation
//!   of the order its keys went in (minus those deleted), where that order
//!   is known (the leader's members map is filled in the coordinator's
//!   order);
//! - a larger map spreads its keys by a per-map hash seed: any order. A map
//!   of eight keys written once more (an update of a key counts) has grown
//!   into one (Go's `PutSlot` grows a full small map before it looks for
//!   the key);
//! - where the keys went in in an order that was itself a walk, any
//!   rotation of a drawn order is taken, which covers it.
//!
//! A flaw kept: when balancing ends less balanced than it began, Sarama
//! means to restore the earlier assignment but assigns a local variable, so
//! the reassigned state stays and the members that could not take part
//! (`fixedAssignments`) lose their partitions for that round.

use super::franz_sticky::go_map_walk;
use super::rng::Rng;
use super::{AssignError, Assignment, Group, Tp};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// Go's small-map size: a map that never held more keys, nor was written
/// again once it held this many, is walked in a rotation.
const GO_SMALL_MAP: usize = 8;

/// Whether a map of `keys` keys stays small: `updated` when the code writes
/// its keys again after filling it (a full small map grows on any write).
fn stays_small(keys: usize, updated: bool) -> bool {
    if updated {
        keys < GO_SMALL_MAP
    } else {
        keys <= GO_SMALL_MAP
    }
}

/// Reassignment steps after which a balancing that has not ended is
/// reported instead of looping on (the real strategy would spin).
const MAX_STEPS: usize = 5_000_000;

type M = usize;

/// `list` as one walk of a Go map whose keys went in in `list`'s order:
/// `small` when the map never held more than eight keys (a rotation),
/// otherwise any order.
fn walk<T>(list: &mut [T], small: bool, rng: &mut Rng) {
    if list.len() <= 1 {
        return;
    }
    if small {
        let start = rng.below(list.len());
        list.rotate_left(start);
    } else {
        for i in (1..list.len()).rev() {
            list.swap(i, rng.below(i + 1));
        }
    }
}

/// `partitionMovements`.
#[derive(Default)]
struct Movements {
    moves: HashMap<Tp, (M, M)>,
    by_topic: HashMap<u32, BTreeMap<(M, M), BTreeSet<Tp>>>,
}

impl Movements {
    fn remove_record(&mut self, p: Tp) -> (M, M) {
        let pair = self.moves.remove(&p).expect("a recorded movement");
        if let Some(topic) = self.by_topic.get_mut(&p.topic) {
            if let Some(set) = topic.get_mut(&pair) {
                set.remove(&p);
                if set.is_empty() {
                    topic.remove(&pair);
                }
            }
            if topic.is_empty() {
                self.by_topic.remove(&p.topic);
            }
        }
        pair
    }

    fn add_record(&mut self, p: Tp, pair: (M, M)) {
        self.moves.insert(p, pair);
        self.by_topic
            .entry(p.topic)
            .or_default()
            .entry(pair)
            .or_default()
            .insert(p);
    }

    fn move_partition(&mut self, p: Tp, old: M, new: M) {
        if self.moves.contains_key(&p) {
            let existing = self.remove_record(p);
            if existing.0 != new {
                self.add_record(p, (existing.0, new));
            }
        } else {
            self.add_record(p, (old, new));
        }
    }

    /// `getTheActualPartitionToBeMoved`: `p`, or, when a partition of its
    /// topic moved the other way before, one of those (the last of a map
    /// walk: any of them).
    fn actual_to_move(&self, p: Tp, mut old: M, new: M, rng: &mut Rng) -> Tp {
        let Some(topic) = self.by_topic.get(&p.topic) else {
            return p;
        };
        if let Some(&(src, _)) = self.moves.get(&p) {
            old = src;
        }
        match topic.get(&(new, old)) {
            Some(set) if !set.is_empty() => *set.iter().nth(rng.below(set.len())).unwrap(),
            _ => p,
        }
    }
}

/// The strategy's state while it plans (`currentAssignment` and the maps
/// around it); a member absent from `current` is a key Go's map lacks.
struct Planner<'g> {
    group: &'g Group,
    current: Vec<Option<Vec<Tp>>>,
    /// `consumer2AllPotentialPartitions`.
    c2p: Vec<Vec<Tp>>,
    /// `partition2AllPotentialConsumers`.
    p2c: HashMap<Tp, Vec<M>>,
    /// `currentPartitionConsumer`.
    cpc: HashMap<Tp, M>,
    /// `prevAssignment`: the owner before the current one.
    prev: HashMap<Tp, M>,
    movements: Movements,
    rng: Rng,
    steps: usize,
    spec: &'static str,
}

fn len_of(current: &[Option<Vec<Tp>>], m: Option<M>) -> usize {
    m.and_then(|m| current[m].as_ref()).map_or(0, Vec::len)
}

impl Planner<'_> {
    fn len(&self, m: M) -> usize {
        len_of(&self.current, Some(m))
    }

    /// `sortMemberIDsByPartitionAssignments`: the members present, fewest
    /// partitions first, then by id (bytes).
    fn sorted_members(&self) -> Vec<M> {
        let mut v: Vec<M> = (0..self.current.len())
            .filter(|&m| self.current[m].is_some())
            .collect();
        let g = self.group;
        v.sort_by(|&a, &b| {
            self.len(a)
                .cmp(&self.len(b))
                .then_with(|| g.members[a].id.as_bytes().cmp(g.members[b].id.as_bytes()))
        });
        v
    }

    /// `getBalanceScore`: the sum over pairs of members of their
    /// difference in partition count.
    fn score(current: &[Option<Vec<Tp>>]) -> usize {
        let sizes: Vec<usize> = current.iter().flatten().map(Vec::len).collect();
        let mut s = 0;
        for i in 0..sizes.len() {
            for j in i + 1..sizes.len() {
                s += sizes[i].abs_diff(sizes[j]);
            }
        }
        s
    }

    fn is_balanced(&self) -> bool {
        let sorted = self.sorted_members();
        let (Some(&first), Some(&last)) = (sorted.first(), sorted.last()) else {
            return true;
        };
        if self.len(first) + 1 >= self.len(last) {
            return true;
        }
        let mut all: HashMap<Tp, M> = HashMap::new();
        for &m in &sorted {
            for tp in self.current[m].iter().flatten() {
                all.insert(*tp, m);
            }
        }
        for &m in &sorted {
            let mine = self.current[m].as_deref().unwrap_or(&[]);
            let count = mine.len();
            if count == self.c2p[m].len() {
                continue;
            }
            for tp in &self.c2p[m] {
                if !mine.contains(tp) {
                    let other = len_of(&self.current, all.get(tp).copied());
                    if count < other {
                        return false;
                    }
                }
            }
        }
        true
    }

    fn assign_partition(&mut self, tp: Tp, sorted: &[M]) -> Vec<M> {
        for &m in sorted {
            if self.c2p[m].contains(&tp) {
                self.current[m].get_or_insert_with(Vec::new).push(tp);
                self.cpc.insert(tp, m);
                break;
            }
        }
        self.sorted_members()
    }

    fn process_movement(&mut self, tp: Tp, new: M, sorted: Vec<M>) -> Vec<M> {
        // Every partition that moves has an owner: it was dealt or kept.
        let Some(&old) = self.cpc.get(&tp) else {
            return sorted;
        };
        self.movements.move_partition(tp, old, new);
        let list = self.current[old].get_or_insert_with(Vec::new);
        if let Some(i) = list.iter().position(|x| *x == tp) {
            list.remove(i);
        }
        self.current[new].get_or_insert_with(Vec::new).push(tp);
        self.cpc.insert(tp, new);
        self.sorted_members()
    }

    fn reassign_partition(&mut self, tp: Tp, new: M, sorted: Vec<M>) -> Vec<M> {
        let Some(&consumer) = self.cpc.get(&tp) else {
            return sorted;
        };
        let moved = self
            .movements
            .actual_to_move(tp, consumer, new, &mut self.rng);
        self.process_movement(moved, new, sorted)
    }

    fn reassign_to_new_consumer(&mut self, tp: Tp, sorted: Vec<M>) -> Vec<M> {
        if let Some(&m) = sorted.iter().find(|&&m| self.c2p[m].contains(&tp)) {
            return self.reassign_partition(tp, m, sorted);
        }
        sorted
    }

    fn perform_reassignments(
        &mut self,
        reassignable: &[Tp],
        mut sorted: Vec<M>,
    ) -> Result<bool, AssignError> {
        let mut performed = false;
        loop {
            let mut modified = false;
            for &tp in reassignable {
                self.steps += 1;
                if self.steps > MAX_STEPS {
                    return Err(AssignError::Unsupported {
                        assignor: self.spec,
                        reason: format!(
                            "Sarama's sticky balancing had not ended after {MAX_STEPS} steps \
                             (the real strategy would keep the leader busy)"
                        ),
                    });
                }
                if self.is_balanced() {
                    break;
                }
                let consumer = self.cpc.get(&tp).copied();
                let have = len_of(&self.current, consumer);
                if let Some(&before) = self.prev.get(&tp) {
                    if have > self.len(before) + 1 {
                        sorted = self.reassign_partition(tp, before, sorted);
                        performed = true;
                        modified = true;
                        continue;
                    }
                }
                let better = self.p2c[&tp].iter().any(|&o| have > self.len(o) + 1);
                if better {
                    sorted = self.reassign_to_new_consumer(tp, sorted);
                    performed = true;
                    modified = true;
                }
            }
            if !modified {
                return Ok(performed);
            }
        }
    }
}

/// A member's claims in the order its data lists them: its topics in one
/// walk of a map of them (a rotation of the order given), each topic's
/// partitions as given.
fn claims_in_order(owned: &[Tp], rng: &mut Rng) -> Vec<Tp> {
    let mut topics: Vec<u32> = Vec::new();
    for tp in owned {
        if !topics.contains(&tp.topic) {
            topics.push(tp.topic);
        }
    }
    go_map_walk(&mut topics, rng);
    let mut out = Vec::with_capacity(owned.len());
    for t in topics {
        out.extend(owned.iter().filter(|tp| tp.topic == t));
    }
    out
}

/// One run of Sarama's sticky strategy over `group` (`cooperative`: the
/// cooperative-sticky one), its Go map walks drawn from `seed`.
pub fn plan(group: &Group, cooperative: bool, seed: u64) -> Result<Assignment, AssignError> {
    let mut rng = Rng::new(seed);
    let n = group.members.len();
    // Filled once by JoinGroupResponse.GetMembers.
    let members_small = stays_small(n, false);
    let index: HashMap<&str, u32> = group
        .topics
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.as_str(), i as u32))
        .collect();
    // Each member's subscription (its metadata's Topics), the topics that exist.
    let subs: Vec<Vec<u32>> = group
        .members
        .iter()
        .map(|m| {
            m.topics
                .iter()
                .filter_map(|t| index.get(t.as_str()).copied())
                .collect()
        })
        .collect();
    let members_walk = |rng: &mut Rng| {
        let mut v: Vec<M> = (0..n).collect();
        walk(&mut v, members_small, rng);
        v
    };

    // The leader's map of topics (consumerGroup.balance): a walk of the
    // members, each one's subscription in order.
    let mut topic_order: Vec<u32> = Vec::new();
    for m in members_walk(&mut rng) {
        for &t in &subs[m] {
            if !topic_order.contains(&t) {
                topic_order.push(t);
            }
        }
    }

    // prepopulateCurrentAssignments.
    let mut spc: HashMap<Tp, BTreeMap<i32, M>> = HashMap::new();
    let mut spc_order: Vec<Tp> = Vec::new();
    for m in members_walk(&mut rng) {
        let member = &group.members[m];
        let has_generation = cooperative || member.generation.is_some();
        let generation = if has_generation {
            member.generation.unwrap_or(-1)
        } else {
            -1
        };
        for tp in claims_in_order(&member.owned, &mut rng) {
            match spc.get_mut(&tp) {
                Some(consumers) => {
                    if has_generation {
                        if consumers.contains_key(&generation) {
                            continue;
                        }
                        consumers.insert(generation, m);
                    } else {
                        consumers.insert(-1, m);
                    }
                }
                None => {
                    spc.insert(tp, BTreeMap::from([(generation, m)]));
                    spc_order.push(tp);
                }
            }
        }
    }
    let mut current: Vec<Option<Vec<Tp>>> = vec![None; n];
    let mut ca_order: Vec<M> = Vec::new();
    let mut prev: HashMap<Tp, M> = HashMap::new();
    // Only its values (maps of their own) are written again.
    let small = stays_small(spc_order.len(), false);
    walk(&mut spc_order, small, &mut rng);
    for tp in &spc_order {
        let consumers = &spc[tp];
        let mut gens = consumers.iter().rev();
        let (_, &owner) = gens.next().expect("a claim");
        current[owner]
            .get_or_insert_with(|| {
                ca_order.push(owner);
                Vec::new()
            })
            .push(*tp);
        if let Some((_, &before)) = gens.next() {
            prev.insert(*tp, before);
        }
    }
    let fresh = ca_order.is_empty();

    // partition2AllPotentialConsumers over a walk of the topics (the
    // leader writes every topic's partitions into its map after filling it).
    let topics_small = stays_small(topic_order.len(), true);
    walk(&mut topic_order, topics_small, &mut rng);
    let mut p2c_order: Vec<Tp> = Vec::new();
    for &t in &topic_order {
        for partition in 0..group.topics[t as usize].partitions {
            p2c_order.push(Tp {
                topic: t,
                partition,
            });
        }
    }
    // Each partition's consumers are appended after its key went in.
    let p2c_small = stays_small(p2c_order.len(), true);
    // The maps of unvisited and of unassigned partitions are made with
    // room for every partition and filled once, in a walk of that map.
    let sets_small = stays_small(p2c_order.len(), false);
    let mut p2c: HashMap<Tp, Vec<M>> = p2c_order.iter().map(|tp| (*tp, Vec::new())).collect();
    let mut c2p: Vec<Vec<Tp>> = vec![Vec::new(); n];
    let c2p_order = members_walk(&mut rng);
    for &m in &c2p_order {
        for &t in &subs[m] {
            if !topic_order.contains(&t) {
                continue;
            }
            for partition in 0..group.topics[t as usize].partitions {
                let tp = Tp {
                    topic: t,
                    partition,
                };
                c2p[m].push(tp);
                p2c.get_mut(&tp).unwrap().push(m);
            }
        }
        if current[m].is_none() {
            current[m] = Some(Vec::new());
            ca_order.push(m);
        }
    }

    // Keep the claims that still exist and are still subscribed.
    let mut cpc: HashMap<Tp, M> = HashMap::new();
    let mut p2c_walk = p2c_order.clone();
    walk(&mut p2c_walk, p2c_small, &mut rng);
    let mut unvisited: HashSet<Tp> = p2c_walk.iter().copied().collect();
    let mut unassigned: Vec<Tp> = Vec::new();
    // Every member's list is written again while claims are read.
    let ca_small = stays_small(ca_order.len(), true);
    let mut ca_walk = ca_order.clone();
    walk(&mut ca_walk, ca_small, &mut rng);
    for m in ca_walk {
        let parts = current[m].take().unwrap_or_default();
        let mut keep = Vec::new();
        for tp in parts {
            if !p2c.contains_key(&tp) {
                continue;
            }
            unvisited.remove(&tp);
            cpc.insert(tp, m);
            if !subs[m].contains(&tp.topic) {
                unassigned.push(tp);
                continue;
            }
            keep.push(tp);
        }
        current[m] = Some(keep);
    }
    let mut rest: Vec<Tp> = p2c_walk
        .iter()
        .copied()
        .filter(|tp| unvisited.contains(tp))
        .collect();
    walk(&mut rest, sets_small, &mut rng);
    unassigned.extend(rest);

    let mut p = Planner {
        group,
        current,
        c2p,
        p2c,
        cpc,
        prev,
        movements: Movements::default(),
        rng,
        steps: 0,
        spec: if cooperative {
            "sarama:cooperative-sticky"
        } else {
            "sarama:sticky"
        },
    };

    // sortPartitions.
    let identical = !fresh && p.subscriptions_identical(&p2c_order, &c2p_order, p2c_small);
    let mut sorted_partitions: Vec<Tp> = if identical {
        let mut lists: Vec<(M, Vec<Tp>)> = (0..n)
            .filter_map(|m| p.current[m].clone().map(|l| (m, l)))
            .collect();
        let mut left: HashSet<Tp> = p2c_order.iter().copied().collect();
        let mut out = Vec::new();
        loop {
            // The heap's top: most partitions, then the greatest id.
            let top = lists.iter().enumerate().max_by(|(_, a), (_, b)| {
                a.1.len().cmp(&b.1.len()).then_with(|| {
                    group.members[a.0]
                        .id
                        .as_bytes()
                        .cmp(group.members[b.0].id.as_bytes())
                })
            });
            let Some((i, _)) = top else { break };
            let list = &mut lists[i].1;
            if list.is_empty() {
                lists.swap_remove(i);
                continue;
            }
            let at = list
                .iter()
                .position(|tp| p.prev.contains_key(tp))
                .unwrap_or(0);
            let tp = list.remove(at);
            left.remove(&tp);
            out.push(tp);
        }
        let mut walk_order = p2c_order.clone();
        walk(&mut walk_order, p2c_small, &mut p.rng);
        let mut rest: Vec<Tp> = walk_order
            .into_iter()
            .filter(|tp| left.contains(tp))
            .collect();
        walk(&mut rest, sets_small, &mut p.rng);
        out.extend(rest);
        out
    } else {
        let mut all = p2c_order.clone();
        all.sort_by(|a, b| {
            p.p2c[a].len().cmp(&p.p2c[b].len()).then_with(|| {
                group.topics[a.topic as usize]
                    .name
                    .as_bytes()
                    .cmp(group.topics[b.topic as usize].name.as_bytes())
                    .then(a.partition.cmp(&b.partition))
            })
        });
        all
    };

    // balance.
    let mut sorted = p.sorted_members();
    let initializing = sorted.first().is_none_or(|&m| p.len(m) == 0);
    for tp in unassigned {
        if p.p2c[&tp].is_empty() {
            continue;
        }
        sorted = p.assign_partition(tp, &sorted);
    }
    sorted_partitions.retain(|tp| p.p2c[tp].len() >= 2);
    let mut fixed: Vec<(M, Vec<Tp>)> = Vec::new();
    for &m in &c2p_order {
        if !p.can_participate(m) {
            fixed.push((m, p.current[m].take().unwrap_or_default()));
            sorted = p.sorted_members();
        }
    }
    let pre = p.current.clone();
    let performed = p.perform_reassignments(&sorted_partitions, sorted)?;
    let worse = !initializing && performed && Planner::score(&p.current) >= Planner::score(&pre);
    if !worse {
        for (m, list) in fixed {
            p.current[m] = Some(list);
        }
    }
    // When `worse`, Sarama's revert reaches only its local copy: the
    // reassigned state stays, and the fixed members get nothing.

    let out: Vec<Vec<Tp>> = p
        .current
        .iter()
        .map(|l| l.clone().unwrap_or_default())
        .collect();
    let mut order: Vec<M> = (0..n).collect();
    order.sort_by(|&a, &b| {
        group.members[a]
            .id
            .as_bytes()
            .cmp(group.members[b].id.as_bytes())
    });
    let mut a = Assignment::new(group, order, out);
    if cooperative {
        adjust_cooperative(group, &mut a);
    }
    Ok(a)
}

impl Planner<'_> {
    /// `canConsumerParticipateInReassignment`.
    fn can_participate(&self, m: M) -> bool {
        let mine = self.current[m].as_deref().unwrap_or(&[]);
        if mine.len() < self.c2p[m].len() {
            return true;
        }
        mine.iter()
            .any(|tp| self.p2c.get(tp).is_some_and(|c| c.len() >= 2))
    }

    /// `areSubscriptionsIdentical`, over walks of both maps (the answer
    /// depends on the order only when a member can take nothing).
    fn subscriptions_identical(
        &mut self,
        p2c_order: &[Tp],
        c2p_order: &[M],
        p2c_small: bool,
    ) -> bool {
        let mut parts = p2c_order.to_vec();
        walk(&mut parts, p2c_small, &mut self.rng);
        let lists: Vec<Vec<M>> = parts.iter().map(|tp| self.p2c[tp].clone()).collect();
        if !same_multisets(&lists) {
            return false;
        }
        let mut members = c2p_order.to_vec();
        // Every member's list is appended to after its key went in.
        let small = stays_small(members.len(), true);
        walk(&mut members, small, &mut self.rng);
        let lists: Vec<Vec<Tp>> = members.iter().map(|&m| self.c2p[m].clone()).collect();
        same_multisets(&lists)
    }
}

/// Sarama's comparison: the first non-empty list counted as a map, every
/// later list of as many elements as the map has keys, each key as often.
fn same_multisets<T: Eq + std::hash::Hash + Copy>(lists: &[Vec<T>]) -> bool {
    let mut first: HashMap<T, usize> = HashMap::new();
    for list in lists {
        if first.is_empty() {
            for x in list {
                *first.entry(*x).or_default() += 1;
            }
            continue;
        }
        if first.len() != list.len() {
            return false;
        }
        let mut counts: HashMap<T, usize> = HashMap::new();
        for x in list {
            *counts.entry(*x).or_default() += 1;
        }
        if first.iter().any(|(k, v)| counts.get(k) != Some(v)) {
            return false;
        }
    }
    true
}

/// `adjustCooperativeAssignment`: a partition planned for a member that did
/// not own it, and owned by one that loses it, is withheld this round.
fn adjust_cooperative(group: &Group, a: &mut Assignment) {
    let mut added: HashMap<Tp, M> = HashMap::new();
    let mut revoked: HashSet<Tp> = HashSet::new();
    for (m, member) in group.members.iter().enumerate() {
        let planned = &a.partitions[m];
        for tp in planned {
            if !member.owned.contains(tp) {
                added.insert(*tp, m);
            }
        }
        for tp in &member.owned {
            if !planned.contains(tp) {
                revoked.insert(*tp);
            }
        }
    }
    super::withhold(group, a, &added, &revoked);
}
