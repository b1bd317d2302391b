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
pub(super) fn go_map_walk<T>(list: &mut [T], rng: &mut Rng) {
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
/// Topic name => index into the group's topics.
fn topic_indices(group: &Group) -> std::collections::HashMap<&str, u32> {
    group
        .topics
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.as_str(), i as u32))
        .collect()
}

fn topic_insertion_order(group: &Group, members: &[usize]) -> Vec<usize> {
    let index = topic_indices(group);
    let mut seen = vec![false; group.topics.len()];
    let mut out = Vec::new();
    for &m in members {
        let mut subs = group.members[m].topics.clone();
        subs.sort();
        for name in &subs {
            if let Some(&t) = index.get(name.as_str()) {
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
/// The most members franz-go's sticky balancer numbers (`unassignedPart`
/// and one spare slot are reserved).
const MAX_MEMBERS: usize = 65_533;
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
    /// Per topicNum, its subscribers in member order (`topicPotentials`).
    potentials: Vec<Vec<u16>>,
    /// Per partNum, who held it before this balance (`origOwner`).
    orig: Vec<u16>,
    /// Per partNum, its owner while balancing (`partitionConsumers`).
    consumer: Vec<u16>,
    /// Group topic index => its topicNum, for the topics balanced.
    num_of: Vec<Option<usize>>,
    /// memberNum => the topicNums it subscribes to, ascending.
    member_topics: Vec<Vec<u32>>,
}

/// One run of franz-go's sticky balancer over `group`, the Go map orders
/// drawn from `seed`; `cooperative` adds `AdjustCooperative` (partitions
/// that change owner are withheld this round).
pub fn balance(group: &Group, cooperative: bool, seed: u64) -> Result<Assignment, AssignError> {
    if group.members.len() > MAX_MEMBERS {
        return Err(AssignError::Unsupported {
            assignor: if cooperative {
                "franz-go:cooperative-sticky"
            } else {
                "franz-go:sticky"
            },
            reason: format!(
                "{} members: franz-go's sticky balancer numbers members in 16 bits and \
                 supports at most {MAX_MEMBERS}",
                group.members.len()
            ),
        });
    }
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
        potentials: Vec::new(),
        orig: Vec::new(),
        consumer: Vec::new(),
        num_of: vec![None; group.topics.len()],
        member_topics: Vec::new(),
    };
    for (num, &t) in b.topic_of.iter().enumerate() {
        b.num_of[t] = Some(num);
    }
    if !b.part_owner.is_empty() {
        b.parse_member_metadata();
        b.assign_unassigned(&mut rng);
        b.init_levels();
        if b.complex {
            let mut g = Graph::new(&b);
            b.balance_complex(&mut g);
            b.repair();
        } else {
            b.balance();
        }
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
        self.num_of.get(t as usize).copied().flatten()
    }

    /// Whether member `num` subscribes to topicNum `t` (`memberSubs`).
    fn reads(&self, num: u16, t: u32) -> bool {
        self.member_topics[num as usize].binary_search(&t).is_ok()
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
        let index = topic_indices(self.group);
        let mut out = vec![Vec::new(); self.topic_of.len()];
        for (num, subs) in self.subs.iter().enumerate() {
            for name in subs {
                let Some(&t) = index.get(name.as_str()) else {
                    continue;
                };
                let Some(tn) = self.topic_num(t) else {
                    continue;
                };
                // A topic listed twice counts once.
                if out[tn].last() != Some(&(num as u16)) {
                    out[tn].push(num as u16);
                }
            }
        }
        out
    }

    fn assign_unassigned(&mut self, rng: &mut Rng) {
        let potentials = self.potentials();
        self.complex = potentials.iter().any(|p| p.len() != self.members.len());
        self.member_topics = vec![Vec::new(); self.members.len()];
        for (t, ms) in potentials.iter().enumerate() {
            for &m in ms {
                self.member_topics[m as usize].push(t as u32);
            }
        }
        // dropUnwantedPartitions: claims of topics the member no longer reads.
        let mut consumer = vec![UNASSIGNED; self.part_owner.len()];
        for num in 0..self.plan.len() {
            let keep: Vec<i32> = self.plan[num]
                .iter()
                .copied()
                .filter(|&p| self.reads(num as u16, self.part_owner[p as usize]))
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
            if !self.reads(last, self.part_owner[part as usize]) {
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
        self.orig = consumer.clone();
        if self.complex {
            // assignUnassignedComplex: per topic a heap of its subscribers.
            let mut heap_topic = u32::MAX;
            let mut heap: Vec<u16> = Vec::new();
            for (part, owner) in consumer.iter_mut().enumerate() {
                if *owner != UNASSIGNED {
                    continue;
                }
                let t = self.part_owner[part];
                if potentials[t as usize].is_empty() {
                    continue;
                }
                if t != heap_topic {
                    heap_topic = t;
                    heap = potentials[t as usize].clone();
                    let n = heap.len();
                    for i in (0..n / 2).rev() {
                        self.down(&mut heap, i, n);
                    }
                }
                let m = heap[0];
                self.plan[m as usize].push(part as i32);
                let n = heap.len();
                self.down(&mut heap, 0, n);
                *owner = m;
            }
            self.consumer = consumer;
            self.potentials = potentials;
            return;
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
                let p = self.plan[src]
                    .pop()
                    .expect("a most loaded member holds partitions");
                self.plan[dst].push(p);
            }
            self.levels
                .entry(min + 1)
                .or_default()
                .extend(&mins[..pairs]);
            self.levels
                .entry(max - 1)
                .or_default()
                .extend(&maxs[..pairs]);
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
            (
                p - self.base[t],
                self.group.topics[self.topic_of[t]].name.clone(),
            )
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
            let oparts: Vec<Tp> = member
                .owned
                .iter()
                .copied()
                .filter(|tp| tp.topic == t)
                .collect();
            if pparts.is_empty() {
                revoked.extend(oparts);
                continue;
            }
            for tp in &pparts {
                let held = oparts.iter().any(|o| o == tp && gen(m) >= max_claim[o]);
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
    super::withhold(group, a, &added, &revoked);
}

/// The steal graph of unequal subscriptions (`graph`): per topic, the
/// members holding its partitions, each with its partitions in the order
/// franz-go keeps them (appended, swap-removed).
struct Graph {
    /// memberNum => the topicNums it subscribes to, ascending.
    out: Vec<Vec<u32>>,
    /// topicNum => (member, its partitions), entries in order of creation.
    owners: Vec<Vec<(u16, Vec<i32>)>>,
    /// partNum => its index in its owner's list.
    pos: Vec<usize>,
    scores: Vec<Score>,
}

#[derive(Clone, Copy)]
struct Score {
    distance: i32,
    src_edge: i32,
    level: i32,
    parent: Option<u16>,
}

const INFINITY: i32 = i32::MAX;

impl Graph {
    fn new(b: &Balancer) -> Graph {
        let mut out = vec![Vec::new(); b.members.len()];
        for (t, ms) in b.potentials.iter().enumerate() {
            for &m in ms {
                out[m as usize].push(t as u32);
            }
        }
        let mut g = Graph {
            out,
            owners: vec![Vec::new(); b.topic_of.len()],
            pos: vec![0; b.part_owner.len()],
            scores: vec![
                Score {
                    distance: INFINITY,
                    src_edge: 0,
                    level: 0,
                    parent: None,
                };
                b.members.len()
            ],
        };
        for (edge, &m) in b.consumer.iter().enumerate() {
            if m != UNASSIGNED {
                g.add_edge(b, edge as i32, m);
            }
        }
        g
    }

    fn owner_of(&mut self, t: u32, m: u16) -> usize {
        let list = &mut self.owners[t as usize];
        match list.iter().position(|(x, _)| *x == m) {
            Some(i) => i,
            None => {
                list.push((m, Vec::new()));
                list.len() - 1
            }
        }
    }

    fn add_edge(&mut self, b: &Balancer, edge: i32, m: u16) {
        let t = b.part_owner[edge as usize];
        let o = self.owner_of(t, m);
        let parts = &mut self.owners[t as usize][o].1;
        self.pos[edge as usize] = parts.len();
        parts.push(edge);
    }

    fn remove_edge(&mut self, b: &Balancer, edge: i32, m: u16) {
        let t = b.part_owner[edge as usize];
        let o = self.owner_of(t, m);
        let parts = &mut self.owners[t as usize][o].1;
        let (i, last) = (self.pos[edge as usize], parts.len() - 1);
        parts[i] = parts[last];
        self.pos[parts[i] as usize] = i;
        parts.pop();
    }

    /// `findSteal`: a Dijkstra search from `from` over "could take a
    /// partition of a topic it reads from", the heap ordered by the most
    /// loaded, then the nearest, then the lowest member; the first member
    /// popped holding two more than `from` ends the path. Returns the
    /// moves, (src, dst, partNum), from that member back to `from`.
    fn find_steal(&mut self, b: &Balancer, from: u16) -> Option<Vec<(u16, u16, i32)>> {
        for s in &mut self.scores {
            s.distance = INFINITY;
        }
        self.touch(b, from);
        self.scores[from as usize].distance = 0;
        let first_level = self.scores[from as usize].level;
        let mut heap: Vec<u16> = vec![from];
        while !heap.is_empty() {
            let current = self.pop(&mut heap);
            let cs = self.scores[current as usize];
            if cs.level > first_level + 1 {
                let mut path = Vec::new();
                let mut node = current;
                while let Some(parent) = self.scores[node as usize].parent {
                    path.push((node, parent, self.scores[node as usize].src_edge));
                    node = parent;
                }
                return Some(path);
            }
            for ti in 0..self.out[current as usize].len() {
                let t = self.out[current as usize][ti] as usize;
                for oi in 0..self.owners[t].len() {
                    let (member, ref parts) = self.owners[t][oi];
                    if parts.is_empty() {
                        continue;
                    }
                    let edge = parts[0];
                    if !self.touch(b, member) {
                        continue;
                    }
                    let s = &mut self.scores[member as usize];
                    s.parent = Some(current);
                    s.src_edge = edge;
                    s.distance = cs.distance + 1;
                    self.push(&mut heap, member);
                }
            }
        }
        None
    }

    /// `getScore`: whether `m` is new to this search (and starts it).
    fn touch(&mut self, b: &Balancer, m: u16) -> bool {
        let s = &mut self.scores[m as usize];
        if s.distance != INFINITY {
            return false;
        }
        *s = Score {
            distance: INFINITY,
            src_edge: 0,
            level: b.plan[m as usize].len() as i32,
            parent: None,
        };
        true
    }

    fn less(&self, h: &[u16], i: usize, j: usize) -> bool {
        let (l, r) = (&self.scores[h[i] as usize], &self.scores[h[j] as usize]);
        l.level > r.level
            || l.level == r.level
                && (l.distance < r.distance || l.distance == r.distance && h[i] < h[j])
    }

    /// Go's `container/heap` Push.
    fn push(&self, h: &mut Vec<u16>, x: u16) {
        h.push(x);
        let mut j = h.len() - 1;
        while j > 0 {
            let i = (j - 1) / 2;
            if !self.less(h, j, i) {
                break;
            }
            h.swap(i, j);
            j = i;
        }
    }

    /// Go's `container/heap` Pop.
    fn pop(&self, h: &mut Vec<u16>) -> u16 {
        let n = h.len() - 1;
        h.swap(0, n);
        let mut i = 0;
        loop {
            let j1 = 2 * i + 1;
            if j1 >= n {
                break;
            }
            let mut j = j1;
            if j1 + 1 < n && self.less(h, j1 + 1, j1) {
                j = j1 + 1;
            }
            if !self.less(h, j, i) {
                break;
            }
            h.swap(i, j);
            i = j;
        }
        h.pop().expect("a non-empty heap")
    }
}

impl Balancer<'_> {
    /// `balanceComplex`: each member of the lowest level, first first,
    /// steals along the shortest path from a member two levels up; a member
    /// that finds none leaves the levels.
    fn balance_complex(&mut self, g: &mut Graph) {
        while self.levels.len() > 1 {
            let (level, max) = self.min_max();
            if max <= level + 1 {
                return;
            }
            while let Some(&member) = self.levels.get(&level).and_then(|l| l.first()) {
                if let Some(path) = g.find_steal(self, member) {
                    for (src, dst, part) in path {
                        self.reassign(g, src, dst, part);
                    }
                    if self.levels.get(&max).is_none_or(Vec::is_empty) {
                        break;
                    }
                    continue;
                }
                self.remove_leveling(level, member);
            }
        }
    }

    /// `removeMember` (swap with the last), dropping an emptied level.
    fn remove_leveling(&mut self, level: usize, member: u16) {
        if let Some(list) = self.levels.get_mut(&level) {
            if let Some(i) = list.iter().position(|&m| m == member) {
                let last = list.len() - 1;
                list[i] = list[last];
                list.pop();
            }
            if list.is_empty() {
                self.levels.remove(&level);
            }
        }
    }

    fn reassign(&mut self, g: &mut Graph, src: u16, dst: u16, part: i32) {
        let (old_src, old_dst) = (self.plan[src as usize].len(), self.plan[dst as usize].len());
        swap_remove(&mut self.plan[src as usize], part);
        self.plan[dst as usize].push(part);
        self.remove_leveling(old_src, src);
        self.levels
            .entry(self.plan[src as usize].len())
            .or_default()
            .push(src);
        self.remove_leveling(old_dst, dst);
        self.levels
            .entry(self.plan[dst as usize].len())
            .or_default()
            .push(dst);
        let cur = self.consumer[part as usize];
        g.remove_edge(self, part, cur);
        self.consumer[part as usize] = dst;
        g.add_edge(self, part, dst);
    }

    /// `repairAssignment` without racks: the plan as a table of rows (topics
    /// with the same subscribers) by members, each cell how many of the row
    /// the member holds and how many it arrived with; rotations that lower
    /// the number of moves (Bellman-Ford on the residual graph, cycles
    /// cancelled until none is left), then the plan rewritten from the
    /// table, every member first taking back what it arrived with.
    fn repair(&mut self) {
        let nmembers = self.members.len();
        // topicClasses: topics with the same subscribers, numbered by first
        // appearance.
        let mut class_of = vec![0i32; self.topic_of.len()];
        let mut reps: Vec<usize> = Vec::new();
        for (t, class) in class_of.iter_mut().enumerate() {
            match reps
                .iter()
                .position(|&r| self.potentials[r] == self.potentials[t])
            {
                Some(c) => *class = c as i32,
                None => {
                    *class = reps.len() as i32;
                    reps.push(t);
                }
            }
        }
        let nrows = reps.len();
        let mut member_classes: Vec<Vec<i32>> = vec![Vec::new(); nmembers];
        for (t, ms) in self.potentials.iter().enumerate() {
            for &m in ms {
                member_classes[m as usize].push(class_of[t]);
            }
        }
        for c in &mut member_classes {
            c.sort_unstable();
            c.dedup();
        }
        let mut class_start = vec![0usize; nmembers + 1];
        for m in 0..nmembers {
            class_start[m + 1] = class_start[m] + member_classes[m].len();
        }
        let slot_of = |p: i32, m: u16| -> Option<usize> {
            let class = class_of[self.part_owner[p as usize] as usize];
            member_classes[m as usize]
                .binary_search(&class)
                .ok()
                .map(|i| class_start[m as usize] + i)
        };
        // (row, member, x, held)
        let mut slots: Vec<Cell> = Vec::new();
        for (m, classes) in member_classes.iter().enumerate() {
            for &c in classes {
                slots.push(Cell {
                    row: c as usize,
                    member: m as u16,
                    x: 0,
                    held: 0,
                    add: 0,
                    drop: 0,
                });
            }
        }
        let mut crossed = false;
        for (m, parts) in self.plan.iter().enumerate() {
            for &p in parts {
                let orig = self.orig[p as usize];
                if orig != UNASSIGNED && orig != m as u16 {
                    crossed = true;
                }
                if let Some(s) = slot_of(p, m as u16) {
                    slots[s].x += 1;
                }
            }
        }
        for (p, &orig) in self.orig.iter().enumerate() {
            if orig == UNASSIGNED {
                continue;
            }
            if let Some(s) = slot_of(p as i32, orig) {
                slots[s].held += 1;
            }
        }
        let mut row_total = vec![0i32; nrows];
        for c in &slots {
            row_total[c.row] += c.x;
        }
        let mut cell_at = vec![None; slots.len()];
        let mut cells: Vec<Cell> = Vec::new();
        for (i, c) in slots.iter().enumerate() {
            if row_total[c.row] > 0 {
                cell_at[i] = Some(cells.len());
                let mut c = *c;
                c.reprice();
                cells.push(c);
            }
        }
        if cells.is_empty() {
            return;
        }
        let mut loads = vec![0i32; nmembers];
        for c in &cells {
            loads[c.member as usize] += c.x;
        }
        let mut moved = false;
        loop {
            let cycles = find_cycles(&cells, &loads, nrows, nmembers);
            if cycles.is_empty() {
                break;
            }
            moved = true;
            for (steps, shifts) in cycles {
                let mut n = 1;
                if !shifts {
                    n = i32::MAX;
                    for &(cell, delta) in &steps {
                        n = n.min(cells[cell].room(delta));
                    }
                }
                for &(cell, delta) in &steps {
                    let c = &mut cells[cell];
                    c.x += delta * n;
                    c.reprice();
                    loads[c.member as usize] += delta * n;
                }
            }
        }
        if !moved && !crossed {
            return;
        }
        // realizeAssignment.
        let mut need: Vec<i32> = cells.iter().map(|c| c.x).collect();
        let mut piles: Vec<Vec<i32>> = vec![Vec::new(); nrows];
        let all: Vec<i32> = self.plan.iter().flatten().copied().collect();
        for list in &mut self.plan {
            list.clear();
        }
        for p in all {
            let orig = self.orig[p as usize];
            if orig != UNASSIGNED {
                if let Some(at) = slot_of(p, orig).and_then(|s| cell_at[s]) {
                    if need[at] > 0 {
                        need[at] -= 1;
                        self.plan[orig as usize].push(p);
                        continue;
                    }
                }
            }
            let row = class_of[self.part_owner[p as usize] as usize] as usize;
            piles[row].push(p);
        }
        for (i, c) in cells.iter().enumerate() {
            let take = need[i] as usize;
            let rest = piles[c.row].split_off(take);
            let taken = std::mem::replace(&mut piles[c.row], rest);
            self.plan[c.member as usize].extend(taken);
        }
    }
}

/// One cell of the repair's table (`stickyCell`, no racks).
#[derive(Clone, Copy)]
struct Cell {
    row: usize,
    member: u16,
    x: i32,
    held: i32,
    add: i64,
    drop: i64,
}

const NO_DROP: i64 = 1 << 62;
const UNSET: i32 = -1;

impl Cell {
    fn reprice(&mut self) {
        self.add = i64::from(self.x >= self.held);
        self.drop = if self.x > self.held { -1 } else { 0 };
        if self.x == 0 {
            self.drop = NO_DROP;
        }
    }

    fn room(&self, delta: i32) -> i32 {
        if delta > 0 {
            if self.x < self.held {
                self.held - self.x
            } else {
                i32::MAX
            }
        } else if self.x > self.held {
            self.x - self.held
        } else {
            self.x
        }
    }
}

/// `stickyFinder.find`: rotations that lower the price and share no node,
/// each as its steps (cell, +1 or -1) and whether it shifts load.
fn find_cycles(
    cells: &[Cell],
    loads: &[i32],
    nrows: usize,
    nmembers: usize,
) -> Vec<(Vec<(usize, i32)>, bool)> {
    let top = loads.iter().copied().max().unwrap_or(0).max(0) as usize;
    let mut level_at = vec![UNSET; top + 2];
    let mut nodes = nrows + nmembers;
    for &load in loads {
        if load > 0 && level_at[load as usize] == UNSET {
            level_at[load as usize] = nodes as i32;
            nodes += 1;
        }
    }
    let member_node = |m: u16| nrows + m as usize;
    let mut dist = vec![0i64; nodes];
    let mut via_cell = vec![UNSET; nodes];
    let mut via_from = vec![UNSET; nodes];
    for _ in 0..nodes {
        let mut moved = false;
        for (i, c) in cells.iter().enumerate() {
            let (r, m) = (c.row, member_node(c.member));
            if dist[r] + c.add < dist[m] {
                dist[m] = dist[r] + c.add;
                via_cell[m] = i as i32;
                via_from[m] = r as i32;
                moved = true;
            }
            if dist[m] + c.drop < dist[r] {
                dist[r] = dist[m] + c.drop;
                via_cell[r] = i as i32;
                via_from[r] = m as i32;
                moved = true;
            }
        }
        for (m, &load) in loads.iter().enumerate().take(nmembers) {
            let node = member_node(m as u16);
            let take = level_at[load as usize + 1];
            if take != UNSET && dist[node] < dist[take as usize] {
                dist[take as usize] = dist[node];
                via_cell[take as usize] = UNSET;
                via_from[take as usize] = node as i32;
                moved = true;
            }
            if load > 0 {
                let shed = level_at[load as usize] as usize;
                if dist[shed] < dist[node] {
                    dist[node] = dist[shed];
                    via_cell[node] = UNSET;
                    via_from[node] = shed as i32;
                    moved = true;
                }
            }
        }
        if !moved {
            return Vec::new();
        }
        // onCycles: one node of every cycle of the predecessor chains.
        let mut seen = vec![UNSET; nodes];
        let mut roots = Vec::new();
        for start in 0..nodes {
            if seen[start] != UNSET {
                continue;
            }
            let mut node = start as i32;
            while node != UNSET && seen[node as usize] == UNSET {
                seen[node as usize] = start as i32;
                node = via_from[node as usize];
            }
            if node != UNSET && seen[node as usize] == start as i32 {
                roots.push(node as usize);
            }
        }
        if !roots.is_empty() {
            return roots
                .into_iter()
                .map(|at| {
                    let mut steps = Vec::new();
                    let mut shifts = false;
                    let mut node = at;
                    loop {
                        if node >= nrows + nmembers {
                            shifts = true;
                        } else if via_cell[node] == UNSET {
                        } else if node >= nrows {
                            steps.push((via_cell[node] as usize, 1));
                        } else {
                            steps.push((via_cell[node] as usize, -1));
                        }
                        node = via_from[node] as usize;
                        if node == at {
                            break;
                        }
                    }
                    (steps, shifts)
                })
                .collect();
        }
    }
    Vec::new()
}
