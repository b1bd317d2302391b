//! Java's `StickyAssignor` and `CooperativeStickyAssignor` for groups whose
//! members subscribe to different topics: `AbstractStickyAssignor`'s
//! `GeneralAssignmentBuilder`, without racks.
//!
//! Where the real code's result depends on iteration order:
//!
//! * members are visited in `HashMap<String, Subscription>` order (emulated by
//!   [`java_hashmap_order`], `Group::members` being the insertion order). It
//!   decides which claimant keeps a partition claimed twice and, when two
//!   members of one older generation both claimed a partition, which of them
//!   counts as its previous owner;
//! * `getTheActualPartitionToBeMoved` takes the first element of a
//!   `HashSet<TopicPartition>`; [`JavaSet`] reproduces that order from
//!   `TopicPartition.hashCode` and the set's insertion history. A bucket that
//!   Java turns into a tree (9 or more colliding partitions of one topic moved
//!   between one pair of members, in a table of 64 or more buckets) is taken
//!   in insertion order, which the real tree iteration need not follow;
//! * everything else is sorted (topics by subscriber count then name,
//!   members by assignment size then id) or does not reach the result.
//!
//! `maxGeneration` is a field of the real assignor object that is never reset
//! between calls; this takes the maximum over the members given, which is what
//! a fresh assignor (one per rebalance on the leader in practice) computes.

use super::order::{java_cmp, java_hash, java_hashmap_order};
use super::{AssignError, Assignment, Group, Tp};
use std::collections::{BTreeSet, HashMap};

const DEFAULT_GENERATION: i32 = -1;

/// A `java.util.HashSet<TopicPartition>` of partitions of one topic, reduced
/// to what decides its first element: table size and insertion order.
#[derive(Clone, Default)]
struct JavaSet {
    cap: usize,
    next_seq: u64,
    items: Vec<(usize, i32, u64)>,
}

impl JavaSet {
    fn bucket(hash: i32, cap: usize) -> usize {
        let h = hash as u32;
        ((h ^ (h >> 16)) as usize) & (cap - 1)
    }

    fn insert(&mut self, p: usize, hash: i32) {
        if self.cap == 0 {
            self.cap = 16;
        }
        if self.items.iter().any(|&(x, _, _)| x == p) {
            return;
        }
        let b = Self::bucket(hash, self.cap);
        let chain = self
            .items
            .iter()
            .filter(|&&(_, h, _)| Self::bucket(h, self.cap) == b)
            .count();
        self.items.push((p, hash, self.next_seq));
        self.next_seq += 1;
        // HashMap.putVal: a chain of 8 grown by one is treeified, which in a
        // small table resizes instead.
        if chain >= 8 && self.cap < 64 {
            self.cap *= 2;
        }
        if self.items.len() > self.cap / 4 * 3 {
            self.cap *= 2;
        }
    }

    fn remove(&mut self, p: usize) {
        self.items.retain(|&(x, _, _)| x != p);
    }

    fn first(&self) -> Option<usize> {
        self.items
            .iter()
            .min_by_key(|&&(_, h, seq)| (Self::bucket(h, self.cap), seq))
            .map(|&(p, _, _)| p)
    }
}

type Pair = (usize, usize);

/// `PartitionMovements`.
#[derive(Default)]
struct Movements {
    of: HashMap<usize, Pair>,
    by_topic: HashMap<u32, HashMap<Pair, JavaSet>>,
}

impl Movements {
    fn remove(&mut self, topic: u32, p: usize) -> Pair {
        let pair = self.of.remove(&p).expect("a recorded movement");
        let per_topic = self.by_topic.get_mut(&topic).expect("a topic record");
        let set = per_topic.get_mut(&pair).expect("a pair record");
        set.remove(p);
        if set.items.is_empty() {
            per_topic.remove(&pair);
        }
        if per_topic.is_empty() {
            self.by_topic.remove(&topic);
        }
        pair
    }

    fn add(&mut self, topic: u32, p: usize, hash: i32, pair: Pair) {
        self.of.insert(p, pair);
        self.by_topic
            .entry(topic)
            .or_default()
            .entry(pair)
            .or_default()
            .insert(p, hash);
    }

    fn record(&mut self, topic: u32, p: usize, hash: i32, old: usize, new: usize) {
        if self.of.contains_key(&p) {
            let (src, _) = self.remove(topic, p);
            if src != new {
                self.add(topic, p, hash, (src, new));
            }
        } else {
            self.add(topic, p, hash, (old, new));
        }
    }

    /// `getTheActualPartitionToBeMoved`: when some partition of the topic
    /// already moved the opposite way, that one moves back instead, so no
    /// pair of members swaps partitions of one topic.
    fn actual(&self, topic: u32, p: usize, old: usize, new: usize) -> usize {
        let Some(per_topic) = self.by_topic.get(&topic) else {
            return p;
        };
        let old = self.of.get(&p).map_or(old, |&(src, _)| src);
        per_topic
            .get(&(new, old))
            .and_then(JavaSet::first)
            .unwrap_or(p)
    }
}

struct Builder<'a> {
    group: &'a Group,
    tps: Vec<Tp>,
    base: Vec<usize>,
    /// `TopicPartition.hashCode` of each flat partition.
    hash: Vec<i32>,
    /// `subscribed[m][t]` for topics that some member subscribes to.
    subscribed: Vec<Vec<bool>>,
    /// Subscribers per topic (`topic2AllPotentialConsumers` sizes).
    subscribers: Vec<usize>,
    /// Partitions each member could hold (`getMaxAssignmentSize`).
    potential: Vec<usize>,
    id_rank: Vec<usize>,
    by_rank: Vec<usize>,
    /// `currentAssignment`; `None` once a member is set aside as fixed.
    current: Vec<Option<Vec<usize>>>,
    /// `currentPartitionConsumer`.
    owner: Vec<Option<usize>>,
    /// `sortedCurrentSubscriptions`: (assignment size, id rank).
    sorted: BTreeSet<(usize, usize)>,
    moves: Movements,
}

impl Builder<'_> {
    fn len(&self, m: usize) -> usize {
        self.current[m].as_ref().map_or(0, Vec::len)
    }

    fn topic_of(&self, p: usize) -> usize {
        self.tps[p].topic as usize
    }

    fn first_taker(&self, p: usize) -> Option<usize> {
        let t = self.topic_of(p);
        self.sorted
            .iter()
            .map(|&(_, r)| self.by_rank[r])
            .find(|&m| self.subscribed[m][t])
    }

    fn take(&mut self, m: usize, p: usize) {
        self.sorted.remove(&(self.len(m), self.id_rank[m]));
        if let Some(l) = self.current[m].as_mut() {
            l.push(p);
        }
        self.owner[p] = Some(m);
        self.sorted.insert((self.len(m), self.id_rank[m]));
    }

    /// `processPartitionMovement`.
    fn process_move(&mut self, p: usize, new: usize) {
        let old = self.owner[p].expect("a moved partition has an owner");
        self.sorted.remove(&(self.len(old), self.id_rank[old]));
        self.sorted.remove(&(self.len(new), self.id_rank[new]));
        self.moves
            .record(self.tps[p].topic, p, self.hash[p], old, new);
        if let Some(l) = self.current[old].as_mut() {
            if let Some(i) = l.iter().position(|&x| x == p) {
                l.remove(i);
            }
        }
        if let Some(l) = self.current[new].as_mut() {
            l.push(p);
        }
        self.owner[p] = Some(new);
        self.sorted.insert((self.len(new), self.id_rank[new]));
        self.sorted.insert((self.len(old), self.id_rank[old]));
    }

    fn reassign_to(&mut self, p: usize, new: usize) {
        let old = self.owner[p].expect("a reassigned partition has an owner");
        let actual = self.moves.actual(self.tps[p].topic, p, old, new);
        self.process_move(actual, new);
    }

    /// `isBalanced`.
    fn balanced(&self) -> bool {
        let (Some(&(min, _)), Some(&(max, _))) = (self.sorted.first(), self.sorted.last()) else {
            return true;
        };
        if min + 1 >= max {
            return true;
        }
        for &(mine, r) in &self.sorted {
            let m = self.by_rank[r];
            if mine == self.potential[m] {
                continue;
            }
            for (t, &sub) in self.subscribed[m].iter().enumerate() {
                if !sub {
                    continue;
                }
                let base = self.base[t];
                for p in base..base + self.group.topics[t].partitions as usize {
                    match self.owner[p] {
                        Some(o) if o != m && mine + 1 < self.len(o) => return false,
                        _ => {}
                    }
                }
            }
        }
        true
    }

    /// `performReassignments`.
    fn perform(
        &mut self,
        reassignable: &[usize],
        previous: &[Option<usize>],
    ) -> Result<bool, &'static str> {
        let mut performed = false;
        loop {
            let mut modified = false;
            for &p in reassignable {
                if self.balanced() {
                    break;
                }
                let consumer = self.owner[p].expect("every reassignable partition is assigned");
                let cur = self.len(consumer);
                if let Some(prev) = previous[p] {
                    if self.current[prev].is_none() {
                        return Err("a previous owner without reassignable partitions (the real assignor throws NullPointerException)");
                    }
                    if cur > self.len(prev) + 1 {
                        self.reassign_to(p, prev);
                        performed = true;
                        modified = true;
                        continue;
                    }
                }
                let t = self.topic_of(p);
                let better = (0..self.group.members.len())
                    .any(|o| self.subscribed[o][t] && cur > self.len(o) + 1);
                if better {
                    let new = self
                        .first_taker(p)
                        .expect("a member that could take the partition");
                    self.reassign_to(p, new);
                    performed = true;
                    modified = true;
                }
            }
            if !modified {
                return Ok(performed);
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

/// Whether Java's `allSubscriptionsEqual` holds: every member's subscribed
/// topic names form the same set, topics that do not exist included.
pub fn subscriptions_equal(group: &Group) -> bool {
    fn set(m: &super::Member) -> Vec<&str> {
        let mut v: Vec<&str> = m.topics.iter().map(String::as_str).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
    let first = group.members.first().map(set);
    group.members.iter().all(|m| Some(set(m)) == first)
}

pub fn general(group: &Group, cooperative: bool) -> Result<Assignment, AssignError> {
    let spec = if cooperative {
        "java:cooperative-sticky"
    } else {
        "java:sticky"
    };
    let n = group.members.len();
    let nt = group.topics.len();
    let raw = group.subscriptions();
    // partitionsPerTopic holds only topics that someone subscribes to.
    let exists: Vec<bool> = (0..nt).map(|t| raw.iter().any(|s| s[t])).collect();
    let mut base = Vec::with_capacity(nt);
    let mut tps = Vec::new();
    let mut hash = Vec::new();
    for (t, topic) in group.topics.iter().enumerate() {
        base.push(tps.len());
        let th = java_hash(&topic.name);
        for partition in 0..topic.partitions {
            tps.push(Tp {
                topic: t as u32,
                partition,
            });
            hash.push(
                31i32
                    .wrapping_mul(31i32.wrapping_add(partition as i32))
                    .wrapping_add(th),
            );
        }
    }
    // Claims past a topic's count, which Java keeps (it filters claims by
    // topic only): partitions of their own after the real ones, never in
    // sortedAllPartitions, held by their claimants like any other.
    let mut stale: HashMap<(u32, u32), usize> = HashMap::new();
    for m in &group.members {
        for tp in &m.owned {
            let t = tp.topic as usize;
            if t < nt
                && exists[t]
                && tp.partition >= group.topics[t].partitions
                && !stale.contains_key(&(tp.topic, tp.partition))
            {
                stale.insert((tp.topic, tp.partition), tps.len());
                tps.push(*tp);
                let th = java_hash(&group.topics[t].name);
                hash.push(
                    31i32
                        .wrapping_mul(31i32.wrapping_add(tp.partition as i32))
                        .wrapping_add(th),
                );
            }
        }
    }
    let parts = tps.len();
    let id = |tp: Tp| -> Option<usize> {
        let t = tp.topic as usize;
        if t >= nt || !exists[t] {
            return None;
        }
        if tp.partition < group.topics[t].partitions {
            Some(base[t] + tp.partition as usize)
        } else {
            stale.get(&(tp.topic, tp.partition)).copied()
        }
    };
    let ids: Vec<&str> = group.members.iter().map(|m| m.id.as_str()).collect();
    let iter_order = java_hashmap_order(&ids);
    let generation = |m: usize| group.members[m].generation.unwrap_or(DEFAULT_GENERATION);

    // allSubscriptionsEqual's bookkeeping: owned partitions, a partition
    // claimed twice going to the newer generation (to nobody on a tie).
    let mut owned: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut claimed_by: HashMap<usize, usize> = HashMap::new();
    let mut max_generation = DEFAULT_GENERATION;
    for &m in &iter_order {
        max_generation = max_generation.max(generation(m));
        for p in group.members[m].owned.iter().filter_map(|&tp| id(tp)) {
            match claimed_by.get(&p).copied() {
                None => {
                    owned[m].push(p);
                    claimed_by.insert(p, m);
                }
                Some(other) if generation(m) == generation(other) => {
                    owned[other].retain(|&x| x != p);
                    claimed_by.insert(p, m);
                }
                Some(other) if generation(m) > generation(other) => {
                    owned[m].push(p);
                    owned[other].retain(|&x| x != p);
                    claimed_by.insert(p, m);
                }
                Some(_) => {}
            }
        }
    }

    // prepopulateCurrentAssignments: the newest older-generation claim of
    // each partition, the first member in map order winning a tie.
    let mut previous: Vec<Option<usize>> = vec![None; parts];
    let mut previous_gen: Vec<i32> = vec![i32::MIN; parts];
    for &m in &iter_order {
        let g = generation(m);
        if g >= max_generation {
            continue;
        }
        for p in group.members[m].owned.iter().filter_map(|&tp| id(tp)) {
            if previous[p].is_none() || g > previous_gen[p] {
                previous[p] = Some(m);
                previous_gen[p] = g;
            }
        }
    }

    let subscribed: Vec<Vec<bool>> = raw
        .iter()
        .map(|s| (0..nt).map(|t| s[t] && exists[t]).collect())
        .collect();
    let subscribers: Vec<usize> = (0..nt)
        .map(|t| subscribed.iter().filter(|s| s[t]).count())
        .collect();
    let potential: Vec<usize> = subscribed
        .iter()
        .map(|s| {
            (0..nt)
                .filter(|&t| s[t])
                .map(|t| group.topics[t].partitions as usize)
                .sum()
        })
        .collect();
    let mut by_rank: Vec<usize> = (0..n).collect();
    by_rank.sort_by(|&a, &b| java_cmp(ids[a], ids[b]));
    let mut id_rank = vec![0; n];
    for (r, &m) in by_rank.iter().enumerate() {
        id_rank[m] = r;
    }

    let mut owner: Vec<Option<usize>> = vec![None; parts];
    for (m, list) in owned.iter().enumerate() {
        for &p in list {
            owner[p] = Some(m);
        }
    }

    // sortedAllPartitions: topics by subscriber count, then name.
    let mut sorted_topics: Vec<usize> = (0..nt).filter(|&t| exists[t]).collect();
    sorted_topics.sort_by(|&a, &b| {
        subscribers[a]
            .cmp(&subscribers[b])
            .then_with(|| java_cmp(&group.topics[a].name, &group.topics[b].name))
    });
    let mut sorted_all: Vec<usize> = sorted_topics
        .iter()
        .flat_map(|&t| base[t]..base[t] + group.topics[t].partitions as usize)
        .collect();

    // assignOwnedPartitions: a partition of a topic the member dropped is
    // revoked, though `currentPartitionConsumer` still names the member.
    let mut revocation_required = false;
    let mut assigned = vec![false; parts];
    let mut current: Vec<Option<Vec<usize>>> = Vec::with_capacity(n);
    for (m, list) in owned.into_iter().enumerate() {
        let mut kept = Vec::with_capacity(list.len());
        for p in list {
            if subscribed[m][tps[p].topic as usize] {
                assigned[p] = true;
                kept.push(p);
            } else {
                revocation_required = true;
            }
        }
        current.push(Some(kept));
    }
    // getUnassignedPartitions: sortedAllPartitions less the kept ones, found
    // by walking both sorted lists side by side. A kept claim past its
    // topic's count is never met, and from there on every partition counts
    // as unassigned, even one a member keeps (it can then be given twice).
    let mut kept: Vec<usize> = (0..parts).filter(|&p| assigned[p]).collect();
    kept.sort_by(|&a, &b| {
        let (ta, tb) = (tps[a].topic as usize, tps[b].topic as usize);
        subscribers[ta]
            .cmp(&subscribers[tb])
            .then_with(|| java_cmp(&group.topics[ta].name, &group.topics[tb].name))
            .then(tps[a].partition.cmp(&tps[b].partition))
    });
    let mut unassigned: Vec<usize> = Vec::with_capacity(sorted_all.len());
    let mut next = kept.iter();
    let mut pending = next.next();
    for &p in &sorted_all {
        if pending == Some(&p) {
            pending = next.next();
        } else {
            unassigned.push(p);
        }
    }

    let mut b = Builder {
        group,
        tps,
        base,
        hash,
        subscribed,
        subscribers,
        potential,
        id_rank,
        by_rank,
        current,
        owner,
        sorted: BTreeSet::new(),
        moves: Movements::default(),
    };
    for m in 0..n {
        b.sorted.insert((b.len(m), b.id_rank[m]));
    }

    // balance
    let initializing = b.sorted.last().is_none_or(|&(len, _)| len == 0);
    for &p in &unassigned {
        if let Some(m) = b.first_taker(p) {
            b.take(m, p);
        }
    }
    let movable = |b: &Builder<'_>, p: usize| b.subscribers[b.topic_of(p)] >= 2;
    sorted_all.retain(|&p| movable(&b, p));
    unassigned.retain(|&p| movable(&b, p));

    let fixed: Vec<Option<Vec<usize>>> = (0..n)
        .map(|m| {
            let list = b.current[m].as_ref().expect("nothing fixed yet");
            let can = list.len() < b.potential[m] || list.iter().any(|&p| movable(&b, p));
            if can {
                return None;
            }
            b.sorted.remove(&(list.len(), b.id_rank[m]));
            b.current[m].take()
        })
        .collect();

    let pre_current = b.current.clone();
    let pre_owner = b.owner.clone();
    let unsupported = |reason: &str| AssignError::Unsupported {
        assignor: spec,
        reason: reason.into(),
    };
    if !revocation_required {
        b.perform(&unassigned, &previous).map_err(unsupported)?;
    }
    let performed = b.perform(&sorted_all, &previous).map_err(unsupported)?;
    if !initializing && performed && Builder::score(&b.current) >= Builder::score(&pre_current) {
        b.current = pre_current;
        b.owner = pre_owner;
    }
    for (m, f) in fixed.into_iter().enumerate() {
        if f.is_some() {
            b.current[m] = f;
        }
    }

    let mut out: Vec<Vec<Tp>> = b
        .current
        .iter()
        .map(|l| l.iter().flatten().map(|&p| b.tps[p]).collect())
        .collect();
    let mut withheld = Vec::new();
    if cooperative {
        // computePartitionsTransferringOwnership: a partition someone gains
        // (it does not claim it) that someone else claims and loses, mapped
        // to the last gainer in the assignment map's order; adjustAssignment
        // then removes one copy from that gainer. A partition handed out
        // twice (claims past a count) keeps its other copy, as in Java.
        let order = java_hashmap_order(&ids);
        let mut added: HashMap<Tp, usize> = HashMap::new();
        let mut revoked: std::collections::HashSet<Tp> = Default::default();
        for &m in &order {
            let claims = &group.members[m].owned;
            for tp in &out[m] {
                if !claims.contains(tp) {
                    added.insert(*tp, m);
                }
            }
            for tp in claims {
                if !out[m].contains(tp) {
                    revoked.insert(*tp);
                }
            }
        }
        for (tp, m) in added {
            if revoked.contains(&tp) {
                if let Some(i) = out[m].iter().position(|x| *x == tp) {
                    out[m].remove(i);
                    withheld.push(tp);
                }
            }
        }
    }
    let mut result = Assignment::new(group, b.by_rank.clone(), out);
    let rank = super::topic_name_rank(group);
    withheld.sort_by_key(|tp| (rank[tp.topic as usize], tp.partition));
    result.withheld = withheld;
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp_hash(topic: &str, p: i32) -> i32 {
        31i32
            .wrapping_mul(31i32.wrapping_add(p))
            .wrapping_add(java_hash(topic))
    }

    /// First elements printed by OpenJDK 17's `java.util.HashSet` after each
    /// step, for elements hashed like `TopicPartition` (`+p` adds, `-p`
    /// removes). The second script piles 9 partitions into one bucket, which
    /// makes the 16-bucket table double instead of treeifying.
    #[test]
    fn java_set_first_matches_the_jdk() {
        let scripts: [(&str, &[i32], &[i32]); 2] = [
            (
                "topic",
                &[5, 21, 3, 37, -5, 5, 100, 16, 0],
                &[5, 5, 3, 3, 3, 3, 100, 16, 16],
            ),
            (
                "t2",
                &[1, 17, 33, 49, 65, 81, 97, 113, 129, 145, -1, 2],
                &[1, 1, 1, 1, 1, 1, 1, 1, 17, 17, 17, 17],
            ),
        ];
        for (topic, ops, firsts) in scripts {
            let mut set = JavaSet::default();
            for (&op, &want) in ops.iter().zip(firsts) {
                // -0 does not occur; 0 is an insert.
                if op < 0 {
                    set.remove((-op) as usize);
                } else {
                    set.insert(op as usize, tp_hash(topic, op));
                }
                assert_eq!(set.first(), Some(want as usize), "{topic} after {op}");
            }
        }
    }
}
