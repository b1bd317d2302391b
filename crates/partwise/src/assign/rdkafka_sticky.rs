//! librdkafka's `cooperative-sticky` assignor (`rdkafka_sticky_assignor.c`,
//! a port of an older Java `AbstractStickyAssignor`: one general algorithm for
//! equal and unequal subscriptions alike) followed by the leader's
//! cooperative adjustment (`rd_kafka_cooperative_protocol_adjust_assignment`
//! in `rdkafka_cgrp.c`), without racks.
//!
//! What makes the result depend on more than the member ids:
//!
//! * librdkafka's `rd_map` iterates in reverse insertion order. The one place
//!   where that order reaches the result is the list of partitions nobody owns
//!   when some partitions are owned and all subscriptions are equal: they are
//!   dealt out from the last topic (by name) and highest partition down.
//! * `isFreshAssignment` is never true (the current-assignment map always has
//!   an entry per member), so a fresh group takes the "existing assignment"
//!   path, which with nothing owned sorts partitions by topic and partition.
//! * Each member's owned partitions and generation come from its own
//!   subscription metadata; [`Member::owned`](super::Member) and
//!   [`Member::generation`](super::Member) stand in for them.
//!
//! Where the C code would read a freed movement record (a partition moved away
//! and back within one run) this keeps Java's semantics of dropping the record.

use super::{Assignment, Group, Tp};
use std::collections::HashMap;

const DEFAULT_GENERATION: i32 = -1;

/// Flat partition ids: `base[t] + p` for every topic of the group.
struct Ids {
    base: Vec<usize>,
    tps: Vec<Tp>,
}

impl Ids {
    fn new(group: &Group) -> Ids {
        let mut base = Vec::with_capacity(group.topics.len());
        let mut tps = Vec::new();
        for (t, topic) in group.topics.iter().enumerate() {
            base.push(tps.len());
            tps.extend((0..topic.partitions).map(|partition| Tp {
                topic: t as u32,
                partition,
            }));
        }
        Ids { base, tps }
    }

    fn id(&self, group: &Group, tp: Tp) -> Option<usize> {
        let t = tp.topic as usize;
        (t < group.topics.len() && tp.partition < group.topics[t].partitions)
            .then(|| self.base[t] + tp.partition as usize)
    }
}

/// A source and destination member of a partition's net movement.
type Pair = (usize, usize);

/// `PartitionMovements_t`: each moved partition's net movement, and per
/// topic the partitions moved between each pair, in the order they moved.
#[derive(Default)]
struct Movements {
    of: HashMap<usize, Pair>,
    by_topic: HashMap<u32, HashMap<Pair, Vec<usize>>>,
}

impl Movements {
    fn remove(&mut self, topic: u32, p: usize) -> Pair {
        let pair = self.of.remove(&p).expect("a recorded movement");
        let per_topic = self.by_topic.get_mut(&topic).expect("a topic record");
        let list = per_topic.get_mut(&pair).expect("a pair record");
        if let Some(i) = list.iter().position(|&x| x == p) {
            list.remove(i);
        }
        if list.is_empty() {
            per_topic.remove(&pair);
        }
        if per_topic.is_empty() {
            self.by_topic.remove(&topic);
        }
        pair
    }

    fn add(&mut self, topic: u32, p: usize, pair: Pair) {
        self.of.insert(p, pair);
        self.by_topic
            .entry(topic)
            .or_default()
            .entry(pair)
            .or_default()
            .push(p);
    }

    fn record(&mut self, topic: u32, p: usize, old: usize, new: usize) {
        if self.of.contains_key(&p) {
            let (src, _) = self.remove(topic, p);
            if src != new {
                self.add(topic, p, (src, new));
            }
        } else {
            self.add(topic, p, (old, new));
        }
    }

    /// `getTheActualPartitionToBeMoved`: moving `p` from `old` to `new` when
    /// some partition of its topic already moved from `new` to `old` moves that
    /// one back instead, which keeps more partitions where they were.
    fn actual(&self, topic: u32, p: usize, old: usize, new: usize) -> usize {
        let Some(per_topic) = self.by_topic.get(&topic) else {
            return p;
        };
        let old = self.of.get(&p).map_or(old, |&(src, _)| src);
        per_topic.get(&(new, old)).map_or(p, |list| list[0])
    }
}

struct State<'a> {
    group: &'a Group,
    ids: Ids,
    /// Byte-order rank of each member id (`strcmp`).
    id_rank: Vec<usize>,
    /// Byte-order rank of each topic name.
    name_rank: Vec<usize>,
    /// `subscribed[m][t]`: member `m` may get partitions of topic `t`.
    subscribed: Vec<Vec<bool>>,
    /// `consumer2AllPotentialPartitions` sizes.
    potential: Vec<usize>,
    /// `partition2AllPotentialConsumers` sizes, per flat partition id (0: not eligible).
    consumers_of: Vec<usize>,
    /// `currentAssignment`; `None` for members moved to the fixed assignments.
    current: Vec<Option<Vec<usize>>>,
    /// `currentPartitionConsumer`.
    owner: Vec<Option<usize>>,
    /// `sortedCurrentSubscriptions`.
    sorted: Vec<usize>,
    moves: Movements,
}

impl State<'_> {
    fn len(&self, m: usize) -> usize {
        self.current[m].as_ref().map_or(0, Vec::len)
    }

    fn resort(&mut self) {
        let (current, id_rank) = (&self.current, &self.id_rank);
        self.sorted
            .sort_by_key(|&m| (current[m].as_ref().map_or(0, Vec::len), id_rank[m]));
    }

    fn can_take(&self, m: usize, p: usize) -> bool {
        self.subscribed[m][self.ids.tps[p].topic as usize]
    }

    fn tp_key(&self, p: usize) -> (usize, u32) {
        let tp = self.ids.tps[p];
        (self.name_rank[tp.topic as usize], tp.partition)
    }

    /// `processPartitionMovement`.
    fn process_move(&mut self, p: usize, new: usize) {
        let old = self.owner[p].expect("a moved partition has an owner");
        let topic = self.ids.tps[p].topic;
        self.moves.record(topic, p, old, new);
        if let Some(list) = self.current[new].as_mut() {
            list.push(p);
        }
        if let Some(list) = self.current[old].as_mut() {
            if let Some(i) = list.iter().position(|&x| x == p) {
                list.remove(i);
            }
        }
        self.owner[p] = Some(new);
        self.resort();
    }

    /// `reassignPartitionToConsumer`.
    fn reassign_to(&mut self, p: usize, new: usize) {
        let old = self.owner[p].expect("a reassigned partition has an owner");
        let topic = self.ids.tps[p].topic;
        let actual = self.moves.actual(topic, p, old, new);
        self.process_move(actual, new);
    }

    /// `reassignPartition`: to the least-loaded member that may take it.
    fn reassign(&mut self, p: usize) {
        let new = self
            .sorted
            .iter()
            .copied()
            .find(|&m| self.can_take(m, p))
            .expect("a partition with two potential consumers has a taker");
        self.reassign_to(p, new);
    }

    /// `isBalanced`.
    fn balanced(&self) -> bool {
        let (Some(&first), Some(&last)) = (self.sorted.first(), self.sorted.last()) else {
            return true;
        };
        let (min, max) = (self.len(first), self.len(last));
        if min + 1 >= max {
            return true;
        }
        let mut holder: Vec<Option<usize>> = vec![None; self.ids.tps.len()];
        for (m, list) in self.current.iter().enumerate() {
            for &p in list.iter().flatten() {
                holder[p] = Some(m);
            }
        }
        for &m in &self.sorted {
            let mine = self.len(m);
            if mine == self.potential[m] {
                continue;
            }
            for (t, &sub) in self.subscribed[m].iter().enumerate() {
                if !sub {
                    continue;
                }
                let base = self.ids.base[t];
                let end = base + self.group.topics[t].partitions as usize;
                for h in holder[base..end].iter().flatten() {
                    if *h != m && mine < self.len(*h) {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// `performReassignments`.
    fn perform(&mut self, reassignable: &[usize], previous: &[Option<usize>]) -> bool {
        let mut performed = false;
        loop {
            let mut modified = false;
            for &p in reassignable {
                if self.balanced() {
                    break;
                }
                let consumer = self.owner[p].expect("every partition has an owner here");
                let cur = self.len(consumer);
                if let Some(prev) = previous[p] {
                    if self.current[prev].is_some() && cur > self.len(prev) + 1 {
                        self.reassign_to(p, prev);
                        performed = true;
                        modified = true;
                        continue;
                    }
                }
                let better = (0..self.group.members.len()).any(|other| {
                    other != consumer
                        && self.can_take(other, p)
                        && self.current[other].is_some()
                        && cur > self.len(other) + 1
                });
                if better {
                    self.reassign(p);
                    performed = true;
                    modified = true;
                }
            }
            if !modified {
                return performed;
            }
        }
    }

    /// `getBalanceScore`: the sum of size differences over all member pairs.
    fn score(current: &[Option<Vec<usize>>]) -> u64 {
        let mut sizes: Vec<u64> = current.iter().flatten().map(|l| l.len() as u64).collect();
        sizes.sort_unstable();
        let mut score = 0u64;
        let mut prefix = 0u64;
        for (i, &s) in sizes.iter().enumerate() {
            score += s * i as u64 - prefix;
            prefix += s;
        }
        score
    }
}

/// The assignor's result before the cooperative adjustment, per member (flat ids).
fn sticky(st: &mut State<'_>) {
    let group = st.group;
    let n = group.members.len();
    let parts = st.ids.tps.len();

    // prepopulateCurrentAssignments
    let mut claims: Vec<Vec<(usize, i32)>> = vec![Vec::new(); parts];
    for (m, member) in group.members.iter().enumerate() {
        for &tp in &member.owned {
            if let Some(p) = st.ids.id(group, tp) {
                claims[p].push((m, member.generation.unwrap_or(DEFAULT_GENERATION)));
                st.owner[p] = Some(m);
            }
        }
    }
    let mut previous: Vec<Option<usize>> = vec![None; parts];
    for (p, list) in claims.iter_mut().enumerate() {
        if list.is_empty() {
            continue;
        }
        list.sort_by_key(|&(_, g)| g);
        if list.windows(2).any(|w| w[0].1 == w[1].1) {
            // Claimed twice in one generation: nobody keeps it.
            st.owner[p] = None;
            continue;
        }
        let (current, _) = list[list.len() - 1];
        if let Some(l) = st.current[current].as_mut() {
            l.push(p);
        }
        if list.len() >= 2 {
            previous[p] = Some(list[list.len() - 2].0);
        }
    }

    // populatePotentialMaps, over eligible topics by name.
    let mut eligible: Vec<usize> = (0..group.topics.len())
        .filter(|&t| (0..n).any(|m| st.subscribed[m][t]))
        .collect();
    eligible.sort_by_key(|&t| st.name_rank[t]);
    for &t in &eligible {
        let subscribers = (0..n).filter(|&m| st.subscribed[m][t]).count();
        let base = st.ids.base[t];
        for p in base..base + group.topics[t].partitions as usize {
            st.consumers_of[p] = subscribers;
        }
        for m in 0..n {
            if st.subscribed[m][t] {
                st.potential[m] += group.topics[t].partitions as usize;
            }
        }
    }
    // rd_map insertion order of partition2AllPotentialConsumers; iteration runs backwards.
    let inserted: Vec<usize> = eligible
        .iter()
        .flat_map(|&t| {
            let base = st.ids.base[t];
            base..base + group.topics[t].partitions as usize
        })
        .collect();

    // sortPartitions
    let identical = st.subscribed.windows(2).all(|w| w[0] == w[1]);
    let mut sorted_partitions: Vec<usize>;
    if !identical {
        sorted_partitions = inserted.clone();
        sorted_partitions.sort_by_key(|&p| (st.consumers_of[p], st.tp_key(p)));
    } else {
        sorted_partitions = Vec::with_capacity(parts);
        let mut remaining: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut consumers: Vec<usize> = Vec::new();
        for (m, slot) in remaining.iter_mut().enumerate() {
            if let Some(list) = st.current[m].as_mut() {
                let name_rank = &st.name_rank;
                let tps = &st.ids.tps;
                list.sort_by_key(|&p| (name_rank[tps[p].topic as usize], tps[p].partition));
                *slot = list
                    .iter()
                    .copied()
                    .filter(|&p| st.consumers_of[p] > 0)
                    .collect();
                if !slot.is_empty() {
                    consumers.push(m);
                }
            }
        }
        let by_count = |c: &mut Vec<usize>, r: &Vec<Vec<usize>>| {
            c.sort_by_key(|&m| (r[m].len(), st.id_rank[m]))
        };
        by_count(&mut consumers, &remaining);
        while let Some(&m) = consumers.last() {
            if let Some(i) = remaining[m].iter().position(|&p| previous[p].is_some()) {
                sorted_partitions.push(remaining[m].remove(i));
            } else if !remaining[m].is_empty() {
                sorted_partitions.push(remaining[m].remove(0));
            } else {
                consumers.pop();
                continue;
            }
            by_count(&mut consumers, &remaining);
        }
        let was_empty = sorted_partitions.is_empty();
        let mut listed = vec![false; parts];
        for &p in &sorted_partitions {
            listed[p] = true;
        }
        for &p in inserted.iter().rev() {
            if !listed[p] {
                listed[p] = true;
                sorted_partitions.push(p);
            }
        }
        if was_empty {
            sorted_partitions.sort_by_key(|&p| st.tp_key(p));
        }
    }

    // Keep what members still may own; the rest is unassigned.
    let mut unassigned_flag = vec![false; parts];
    for &p in &sorted_partitions {
        unassigned_flag[p] = true;
    }
    let mut revocation_required = false;
    for m in 0..n {
        let Some(list) = st.current[m].take() else {
            continue;
        };
        let mut kept = Vec::with_capacity(list.len());
        for p in list {
            if st.consumers_of[p] == 0 {
                st.owner[p] = None;
            } else if !st.subscribed[m][st.ids.tps[p].topic as usize] {
                revocation_required = true;
            } else {
                unassigned_flag[p] = false;
                kept.push(p);
            }
        }
        st.current[m] = Some(kept);
    }
    let mut unassigned: Vec<usize> = sorted_partitions
        .iter()
        .copied()
        .filter(|&p| unassigned_flag[p])
        .collect();

    st.sorted = (0..n).collect();
    st.resort();

    // balance
    let initializing = st.sorted.last().is_none_or(|&m| st.len(m) == 0);
    for &p in &unassigned {
        if st.consumers_of[p] == 0 {
            continue;
        }
        if let Some(&m) = st.sorted.iter().find(|&&m| st.can_take(m, p)) {
            if let Some(l) = st.current[m].as_mut() {
                l.push(p);
            }
            st.owner[p] = Some(m);
            st.resort();
        }
    }
    sorted_partitions.retain(|&p| st.consumers_of[p] >= 2);
    unassigned.retain(|&p| st.consumers_of[p] >= 2);

    let mut fixed: Vec<Option<Vec<usize>>> = vec![None; n];
    let sorted_now = st.sorted.clone();
    for m in sorted_now {
        let list = st.current[m].as_ref().expect("not yet fixed");
        let can = list.len() < st.potential[m] || list.iter().any(|&p| st.consumers_of[p] >= 2);
        if !can {
            fixed[m] = st.current[m].take();
            st.sorted.retain(|&x| x != m);
        }
    }

    let pre_current = st.current.clone();
    let pre_owner = st.owner.clone();
    if !revocation_required && !unassigned.is_empty() {
        st.perform(&unassigned, &previous);
    }
    let performed = st.perform(&sorted_partitions, &previous);
    if !initializing && performed && State::score(&st.current) >= State::score(&pre_current) {
        st.current = pre_current;
        st.owner = pre_owner;
    }
    for (m, f) in fixed.into_iter().enumerate() {
        if f.is_some() {
            st.current[m] = f;
        }
    }
}

/// The sticky assignor's own result, before the leader's cooperative
/// adjustment: what librdkafka's unit tests of the assignor check.
pub fn unadjusted(group: &Group) -> Assignment {
    let (st, order) = run(group);
    let out = st
        .current
        .iter()
        .map(|l| l.iter().flatten().map(|&p| st.ids.tps[p]).collect())
        .collect();
    Assignment::new(group, order, out)
}

fn run(group: &Group) -> (State<'_>, Vec<usize>) {
    let n = group.members.len();
    let ids = Ids::new(group);
    let mut id_order: Vec<usize> = (0..n).collect();
    id_order.sort_by(|&a, &b| {
        group.members[a]
            .id
            .as_bytes()
            .cmp(group.members[b].id.as_bytes())
    });
    let mut id_rank = vec![0; n];
    for (r, &m) in id_order.iter().enumerate() {
        id_rank[m] = r;
    }
    let mut names: Vec<usize> = (0..group.topics.len()).collect();
    names.sort_by(|&a, &b| {
        group.topics[a]
            .name
            .as_bytes()
            .cmp(group.topics[b].name.as_bytes())
    });
    let mut name_rank = vec![0; names.len()];
    for (r, &t) in names.iter().enumerate() {
        name_rank[t] = r;
    }
    let parts = ids.tps.len();
    let mut st = State {
        group,
        ids,
        id_rank,
        name_rank,
        subscribed: group
            .subscriptions()
            .into_iter()
            .map(|s| {
                s.into_iter()
                    .zip(&group.topics)
                    .map(|(sub, t)| sub && t.partitions > 0)
                    .collect()
            })
            .collect(),
        potential: vec![0; n],
        consumers_of: vec![0; parts],
        current: vec![Some(Vec::new()); n],
        owner: vec![None; parts],
        sorted: Vec::new(),
        moves: Movements::default(),
    };
    sticky(&mut st);
    (st, id_order)
}

pub fn cooperative(group: &Group) -> Assignment {
    let n = group.members.len();
    let (st, id_order) = run(group);
    let parts = st.ids.tps.len();

    // The leader's cooperative adjustment: a partition whose owner changes is
    // withheld this round; one nobody assigned goes back to whoever owned it.
    let mut prior: Vec<Option<usize>> = vec![None; parts];
    for (m, member) in group.members.iter().enumerate() {
        for &tp in &member.owned {
            if let Some(p) = st.ids.id(group, tp) {
                prior[p] = Some(m);
            }
        }
    }
    let mut out: Vec<Vec<Tp>> = vec![Vec::new(); n];
    let mut assigned = vec![false; parts];
    let mut withheld = Vec::new();
    for (m, list) in st.current.iter().enumerate() {
        for &p in list.iter().flatten() {
            assigned[p] = true;
            match prior[p] {
                Some(o) if o != m => withheld.push(st.ids.tps[p]),
                _ => out[m].push(st.ids.tps[p]),
            }
        }
    }
    for (p, o) in prior.iter().enumerate() {
        if let (Some(o), false) = (o, assigned[p]) {
            out[*o].push(st.ids.tps[p]);
        }
    }
    let mut result = Assignment::new(group, id_order, out);
    let rank = super::topic_name_rank(group);
    withheld.sort_by_key(|tp| (rank[tp.topic as usize], tp.partition));
    result.withheld = withheld;
    result
}
