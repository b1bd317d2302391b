//! franz-go's own sticky balancer (`kgo.StickyBalancer`,
//! `kgo.CooperativeStickyBalancer`, package `kgo/internal/sticky`), as
//! franz-go 1.22.3 computes it: not Java's algorithm. Partitions are
//! numbered topic by topic in the order the leader's Go map of partition
//! counts yields them; unclaimed partitions go, in that numbering, to the
//! least loaded member of a heap, and balancing moves partitions from the
//! most to the least loaded. Go starts every walk of a map at a random
//! place, so two runs over the same group can differ: each run here takes
//! its map orders from a seed. Known answers: `tests/vectors/regen/go-groups`.
//!
//! The orders a map of at most eight keys can yield are the rotations of
//! the order its keys went in (they sit in one group of slots, in insertion
//! order, and a walk starts at a random slot): the leader fills its map of
//! counts by walking the balancer's map of topics, itself filled member by
//! member (sorted) from each member's sorted subscription, and a rotation of
//! a rotation is a rotation. A larger map spreads its keys by hash, which is
//! seeded per map: any order is taken as possible there.

use super::go::franzgo_member_order;
use super::rng::Rng;
use super::{AssignError, Assignment, Group, Tp};
use std::collections::BTreeMap;

/// Go's small-map size: a map of at most this many keys is walked in a
/// rotation of its insertion order.
const GO_SMALL_MAP: usize = 8;

/// `list` in the order one walk of a Go map filled in `list`'s order
/// yields, for the walk `rng` draws.
fn go_map_walk<T>(list: &mut [T], rng: &mut Rng) {
    if list.len() <= 1 {
        return;
    }
    if list.len() <= GO_SMALL_MAP {
        let start = rng.below(list.len());
        list.rotate_left(start);
    } else {
        for i in (1..list.len()).rev() {
            list.swap(i, rng.below(i + 1));
        }
    }
}

/// The topics franz-go's leader balances, in the order its map of topics
/// was filled: the members in the leader's order, each member's
/// subscription sorted, topics that exist, each at its first appearance.
fn topic_insertion_order(group: &Group, members: &[usize]) -> Vec<usize> {
    let mut seen = vec![false; group.topics.len()];
    let mut out = Vec::new();
    for &m in members {
        let mut subs = group.members[m].topics.clone();
        subs.sort();
        for name in &subs {
            if let Some(t) = group.topic_index(name) {
                if !seen[t as usize] {
                    seen[t as usize] = true;
                    out.push(t as usize);
                }
            }
        }
    }
    out
}

const UNASSIGNED: u16 = u16::MAX - 1;
const HIGH_BIT: u32 = 1 << 31;

struct Balancer<'g> {
    group: &'g Group,
    /// memberNum => index into group.members (the leader's sorted order).
    members: Vec<usize>,
    /// topicNum => index into group.topics.
    topic_of: Vec<usize>,
    /// topicNum => first partNum.
    base: Vec<i32>,
    /// partNum => topicNum.
    part_owner: Vec<u32>,
    /// memberNum => sorted topic names (its subscription).
    subs: Vec<Vec<String>>,
    stales: Vec<(i32, u16)>,
    plan: Vec<Vec<i32>>,
    levels: BTreeMap<usize, Vec<u16>>,
    complex: bool,
}

/// One run of franz-go's sticky balancer over `group`, the Go map orders
/// drawn from `seed`; `cooperative` adds `AdjustCooperative` (partitions
/// that change owner are withheld this round).
pub fn balance(group: &Group, cooperative: bool, seed: u64) -> Result<Assignment, AssignError> {
    let spec = if cooperative {
        "franz-go:cooperative-sticky"
    } else {
        "franz-go:sticky"
    };
    let mut rng = Rng::new(seed);
    let members = franzgo_member_order(&group.members);
    let mut topic_of = topic_insertion_order(group, &members);
    go_map_walk(&mut topic_of, &mut rng);
    let mut base = Vec::with_capacity(topic_of.len());
    let mut part_owner = Vec::new();
    for (num, &t) in topic_of.iter().enumerate() {
        base.push(part_owner.len() as i32);
        for _ in 0..group.topics[t].partitions {
            part_owner.push(num as u32);
        }
    }
    let subs = members
        .iter()
        .map(|&m| {
            let mut s = group.members[m].topics.clone();
            s.sort();
            s
        })
        .collect();
    let mut b = Balancer {
        group,
        plan: vec![Vec::new(); members.len()],
        members,
        topic_of,
        base,
        part_owner,
        subs,
        stales: Vec::new(),
        levels: BTreeMap::new(),
        complex: false,
    };
    if !b.part_owner.is_empty() {
        b.parse_member_metadata();
        b.assign_unassigned(&mut rng)?;
        b.init_levels();
        if b.complex {
            return Err(AssignError::Unsupported {
                assignor: spec,
                reason: "members with unequal subscriptions (franz-go's steal graph \
                         and repair are not simulated)"
                    .into(),
            });
        }
        b.balance();
    }
    let mut out = vec![Vec::new(); group.members.len()];
    for (num, parts) in b.plan.iter().enumerate() {
        let m = b.members[num];
        for &p in parts {
            let t = b.part_owner[p as usize];
            out[m].push(Tp {
                topic: b.topic_of[t as usize] as u32,
                partition: (p - b.base[t as usize]) as u32,
            });
        }
    }
    let order = b.members.clone();
    let mut a = Assignment::new(group, order, out);
    if cooperative {
        adjust_cooperative(group, &mut a);
    }
    Ok(a)
}

impl Balancer<'_> {
    fn topic_num(&self, t: u32) -> Option<usize> {
        self.topic_of.iter().position(|&x| x == t as usize)
    }

    /// `parseMemberMetadata`: each member's claims with its generation (a
    /// generation below 0 counts as 0); of two claims of one partition the
    /// newer generation keeps it and the older is remembered as stale; a
    /// third claim displaces the older only with a newer generation.
    fn parse_member_metadata(&mut self) {
        let n = self.part_owner.len();
        // (memberNew, memberOld, genNew, genOld)
        let mut pcs = vec![(0u16, 0u16, 0u32, 0u32); n];
        for (num, &m) in self.members.iter().enumerate() {
            let member = &self.group.members[m];
            let gen = (member.generation.unwrap_or(-1).max(0) as u32) | HIGH_BIT;
            for tp in &member.owned {
                let Some(tn) = self.topic_num(tp.topic) else {
                    continue;
                };
                if tp.partition >= self.group.topics[tp.topic as usize].partitions {
                    continue;
                }
                let part = (self.base[tn] + tp.partition as i32) as usize;
                let c = &mut pcs[part];
                if gen > c.2 {
                    c.1 = c.0;
                    c.3 = c.2;
                    c.0 = num as u16;
                    c.2 = gen;
                } else if gen > c.3 {
                    c.1 = num as u16;
                    c.3 = gen;
                }
            }
        }
        for (part, c) in pcs.iter().enumerate() {
            if c.2 & HIGH_BIT != 0 {
                self.plan[c.0 as usize].push(part as i32);
                if c.3 & HIGH_BIT != 0 {
                    self.stales.push((part as i32, c.1));
                }
            }
        }
    }

    /// `topicPotentials`: per topicNum, the members subscribing to it, in
    /// member order.
    fn potentials(&self) -> Vec<Vec<u16>> {
        let mut out = vec![Vec::new(); self.topic_of.len()];
        for (num, subs) in self.subs.iter().enumerate() {
            let mut seen = vec![false; self.topic_of.len()];
            for name in subs {
                let Some(t) = self.group.topic_index(name) else {
                    continue;
                };
                let Some(tn) = self.topic_num(t) else {
                    continue;
                };
                if !seen[tn] {
                    seen[tn] = true;
                    out[tn].push(num as u16);
                }
            }
        }
        out
    }

    fn assign_unassigned(&mut self, rng: &mut Rng) -> Result<(), AssignError> {
        let potentials = self.potentials();
        self.complex = potentials.iter().any(|p| p.len() != self.members.len());
        // dropUnwantedPartitions: claims of topics the member no longer reads.
        let mut consumer = vec![UNASSIGNED; self.part_owner.len()];
        for num in 0..self.plan.len() {
            let keep: Vec<i32> = self.plan[num]
                .iter()
                .copied()
                .filter(|&p| potentials[self.part_owner[p as usize] as usize].contains(&(num as u16)))
                .collect();
            for &p in &keep {
                consumer[p as usize] = num as u16;
            }
            self.plan[num] = keep;
        }
        // tryRestickyStales walks a Go map filled in partNum order.
        let mut stales = std::mem::take(&mut self.stales);
        go_map_walk(&mut stales, rng);
        for &(part, last) in &stales {
            if !potentials[self.part_owner[part as usize] as usize].contains(&last) {
                continue;
            }
            let cur = consumer[part as usize];
            if cur == UNASSIGNED {
                self.plan[last as usize].push(part);
                consumer[part as usize] = last;
                continue;
            }
            if self.plan[last as usize].len() + 1 < self.plan[cur as usize].len() {
                swap_remove(&mut self.plan[cur as usize], part);
                self.plan[last as usize].push(part);
                consumer[part as usize] = last;
            }
        }
        if self.complex {
            return Ok(());
        }
        // One heap of every member by load; each unassigned partition, in
        // partNum order, to the top.
        let mut heap: Vec<u16> = potentials[0].clone();
        let n = heap.len();
        for i in (0..n / 2).rev() {
            self.down(&mut heap, i, n);
        }
        for (part, owner) in consumer.iter_mut().enumerate() {
            if *owner != UNASSIGNED {
                continue;
            }
            let m = heap[0];
            self.plan[m as usize].push(part as i32);
            self.down(&mut heap, 0, n);
            *owner = m;
        }
        Ok(())
    }

    /// `membersByPartitions.down`: a min-heap by load; the right child is
    /// taken only when strictly lighter than the left.
    fn down(&self, h: &mut [u16], i0: usize, n: usize) {
        let load = |m: u16| self.plan[m as usize].len();
        let mut node = i0;
        loop {
            let left = 2 * node + 1;
            if left >= n {
                break;
            }
            let mut swap = left;
            let mut swap_len = load(h[left]);
            let right = left + 1;
            if right < n && load(h[right]) < swap_len {
                swap_len = load(h[right]);
                swap = right;
            }
            if load(h[node]) <= swap_len {
                break;
            }
            h.swap(node, swap);
            node = swap;
        }
    }

    fn init_levels(&mut self) {
        for (num, parts) in self.plan.iter().enumerate() {
            self.levels.entry(parts.len()).or_default().push(num as u16);
        }
    }

    /// `balance` for equal subscriptions: while the most loaded members hold
    /// two more than the least, the first of the least loaded takes the last
    /// partition of the first of the most loaded, pair by pair; the movers'
    /// partitions sorted by partition, then topic name, first.
    fn balance(&mut self) {
        let (mut min, mut max) = self.min_max();
        if max <= min + 1 {
            return;
        }
        for num in 0..self.plan.len() {
            if self.plan[num].len() > min + 1 {
                self.sort_literal(num);
            }
        }
        while max > min + 1 {
            let mins = self.levels[&min].clone();
            let maxs = self.levels[&max].clone();
            let pairs = mins.len().min(maxs.len());
            for i in 0..pairs {
                let (dst, src) = (mins[i] as usize, maxs[i] as usize);
                let p = self.plan[src].pop().expect("a most loaded member holds partitions");
                self.plan[dst].push(p);
            }
            self.levels.entry(min + 1).or_default().extend(&mins[..pairs]);
            self.levels.entry(max - 1).or_default().extend(&maxs[..pairs]);
            let rest_min = mins[pairs..].to_vec();
            let rest_max = maxs[pairs..].to_vec();
            if rest_min.is_empty() {
                self.levels.remove(&min);
            } else {
                self.levels.insert(min, rest_min);
            }
            if rest_max.is_empty() {
                self.levels.remove(&max);
            } else {
                self.levels.insert(max, rest_max);
            }
            (min, max) = self.min_max();
        }
    }

    fn min_max(&self) -> (usize, usize) {
        let min = *self.levels.keys().next().expect("levels");
        let max = *self.levels.keys().next_back().expect("levels");
        (min, max)
    }

    fn sort_literal(&mut self, num: usize) {
        let key = |p: i32| {
            let t = self.part_owner[p as usize] as usize;
            (p - self.base[t], self.group.topics[self.topic_of[t]].name.clone())
        };
        let mut parts = std::mem::take(&mut self.plan[num]);
        parts.sort_by_cached_key(|&p| {
            let (pp, name) = key(p);
            (pp, name.into_bytes())
        });
        self.plan[num] = parts;
    }
}

fn swap_remove(list: &mut Vec<i32>, needle: i32) {
    let d = list.iter().position(|&x| x == needle).unwrap_or(0);
    let last = list.len() - 1;
    list[d] = list[last];
    list.pop();
}

/// `BalancePlan.AdjustCooperative`: a partition the plan moves from one
/// member to another is withheld from the new owner this round; a claim
/// from a generation older than the partition's newest claim does not count
/// as holding it.
fn adjust_cooperative(group: &Group, a: &mut Assignment) {
    use std::collections::{HashMap, HashSet};
    let gen = |m: usize| group.members[m].generation.unwrap_or(-1);
    let mut max_claim: HashMap<Tp, i32> = HashMap::new();
    for (m, member) in group.members.iter().enumerate() {
        for tp in &member.owned {
            let e = max_claim.entry(*tp).or_insert(gen(m));
            if gen(m) > *e {
                *e = gen(m);
            }
        }
    }
    let mut added: HashMap<Tp, usize> = HashMap::new();
    let mut revoked: HashSet<Tp> = HashSet::new();
    for (m, member) in group.members.iter().enumerate() {
        let planned = &a.partitions[m];
        let owned_topics: HashSet<u32> = member.owned.iter().map(|tp| tp.topic).collect();
        for &t in &owned_topics {
            let pparts: Vec<Tp> = planned.iter().copied().filter(|tp| tp.topic == t).collect();
            let oparts: Vec<Tp> = member.owned.iter().copied().filter(|tp| tp.topic == t).collect();
            if pparts.is_empty() {
                revoked.extend(oparts);
                continue;
            }
            for tp in &pparts {
                let held = oparts
                    .iter()
                    .any(|o| o == tp && gen(m) >= max_claim[o]);
                if !held {
                    added.insert(*tp, m);
                }
            }
            for o in &oparts {
                if !pparts.contains(o) {
                    revoked.insert(*o);
                }
            }
        }
        for tp in planned {
            if !owned_topics.contains(&tp.topic) {
                added.insert(*tp, m);
            }
        }
    }
    let mut withheld = Vec::new();
    for (m, list) in a.partitions.iter_mut().enumerate() {
        list.retain(|tp| {
            let drop = revoked.contains(tp) && added.get(tp) == Some(&m);
            if drop {
                withheld.push(*tp);
            }
            !drop
        });
    }
    let rank = super::topic_name_rank(group);
    withheld.sort_by_key(|tp| (rank[tp.topic as usize], tp.partition));
    a.withheld = withheld;
}
