//! KIP-848's server-side `uniform` assignor for groups whose members subscribe
//! to different topics (`UniformHeterogeneousAssignmentBuilder`, the version
//! with `MemberAssignmentBalancer` and at most 16 balancing rounds).
//!
//! Its two orders come from the coordinator: members are numbered in
//! `groupSpec.memberIds()` order, a `HashMap<String, _>` key set (emulated by
//! [`super::order::java_hashmap_order`]), and topics that tie on partitions
//! per subscriber and on subscriber count are ordered by their random topic
//! ids, which partwise cannot know; the topics' order in [`Group::topics`]
//! stands in for the id order. Results that depend on that tie are exact only
//! for the id order the caller's topic order assumes.

use super::order::java_hashmap_order;
use super::{Assignment, Group, Tp};
use std::cmp::Ordering;
use std::collections::HashMap;

const MAX_ITERATION_COUNT: usize = 16;

/// `MemberAssignmentBalancer`: a least-loaded range growing upwards and a
/// most-loaded range growing downwards over one topic's subscribers.
#[derive(Default)]
struct Balancer {
    sorted: Vec<usize>,
    least_end: usize,
    least_count: i64,
    next_least: usize,
    most_start: usize,
    most_end: usize,
    most_count: i64,
    next_most: isize,
}

impl Balancer {
    fn initialize(&mut self, members: &[usize], sizes: &[i64]) -> i64 {
        self.sorted.clear();
        self.sorted.extend_from_slice(members);
        self.sorted.sort_by_key(|&m| (sizes[m], m));
        let (first, last) = (
            sizes[self.sorted[0]],
            sizes[*self.sorted.last().expect("subscribers")],
        );
        self.least_end = 0;
        self.least_count = first - 1;
        self.next_least = 0;
        self.most_start = self.sorted.len();
        self.most_end = self.sorted.len();
        self.most_count = last + 1;
        self.next_most = self.sorted.len() as isize - 1;
        last - first
    }

    fn next_least_loaded(&mut self, sizes: &[i64]) -> usize {
        if self.next_least >= self.least_end {
            self.least_count += 1;
            while self.least_end < self.sorted.len()
                && sizes[self.sorted[self.least_end]] == self.least_count
            {
                self.least_end += 1;
            }
            self.next_least = 0;
        }
        let m = self.sorted[self.next_least];
        self.next_least += 1;
        m
    }

    fn next_most_loaded(&mut self, sizes: &[i64]) -> Option<usize> {
        if self.next_most < self.most_start as isize {
            if self.most_end <= self.most_start && self.most_start > 0 {
                // The range was emptied by exclusions: restart it one level down.
                self.most_count = sizes[self.sorted[self.most_start - 1]];
            } else {
                self.most_count -= 1;
            }
            while self.most_start > 0 && sizes[self.sorted[self.most_start - 1]] == self.most_count
            {
                self.most_start -= 1;
            }
            self.next_most = self.most_end as isize - 1;
        }
        if self.next_most < 0 {
            return None;
        }
        let m = self.sorted[self.next_most as usize];
        self.next_most -= 1;
        Some(m)
    }

    fn exclude_most_loaded(&mut self) {
        let i = (self.next_most + 1) as usize;
        self.sorted.swap(i, self.most_end - 1);
        self.most_end -= 1;
    }

    fn balanced(&self) -> bool {
        self.most_count - self.least_count <= 1
    }
}

struct Builder {
    /// `owners[t][p]`: member index (position in `groupSpec.memberIds()`).
    owners: Vec<Vec<Option<usize>>>,
    sizes: Vec<i64>,
}

impl Builder {
    fn assign(&mut self, t: usize, p: usize, m: usize) {
        if let Some(old) = self.owners[t][p] {
            self.sizes[old] -= 1;
        }
        self.owners[t][p] = Some(m);
        self.sizes[m] += 1;
    }

    /// `balanceTopic`: moves the topic's partitions from its most to its least
    /// loaded subscribers, each giver's highest partition first.
    fn balance_topic(&mut self, t: usize, subscribers: &[usize], b: &mut Balancer) -> usize {
        let mut moved = 0;
        if b.initialize(subscribers, &self.sizes) <= 1 {
            return moved;
        }
        let owners = &self.owners[t];
        let mut partitions: Vec<usize> = (0..owners.len()).collect();
        // An unowned partition sorts first (index -1 in Java).
        partitions.sort_by_key(|&p| (owners[p].map_or(-1, |o| o as i64), p));
        let mut start: HashMap<usize, usize> = HashMap::new();
        let mut end: HashMap<usize, usize> = HashMap::new();
        for (i, &p) in partitions.iter().enumerate() {
            if let Some(o) = owners[p] {
                start.entry(o).or_insert(i);
                end.insert(o, i + 1);
            }
        }
        while !b.balanced() {
            let giver = loop {
                let Some(m) = b.next_most_loaded(&self.sizes) else {
                    break None;
                };
                match (start.get(&m), end.get(&m)) {
                    (Some(&s), Some(&e)) if e > s => break Some(m),
                    _ => b.exclude_most_loaded(),
                }
            };
            let Some(giver) = giver else {
                break;
            };
            let e = end[&giver] - 1;
            end.insert(giver, e);
            let p = partitions[e];
            let taker = b.next_least_loaded(&self.sizes);
            if b.balanced() {
                break;
            }
            self.assign(t, p, taker);
            moved += 1;
        }
        moved
    }
}

pub fn heterogeneous(group: &Group) -> Assignment {
    let n = group.members.len();
    let nt = group.topics.len();
    let subs = group.subscriptions();
    let ids: Vec<&str> = group.members.iter().map(|m| m.id.as_str()).collect();
    let order = java_hashmap_order(&ids);
    // Member index i is group member order[i].
    let subscribers: Vec<Vec<usize>> = (0..nt)
        .map(|t| (0..n).filter(|&i| subs[order[i]][t]).collect())
        .collect();
    let topics: Vec<usize> = (0..nt).filter(|&t| !subscribers[t].is_empty()).collect();
    let count = |t: usize| group.topics[t].partitions as usize;

    let mut b = Builder {
        owners: (0..nt).map(|t| vec![None; count(t)]).collect(),
        sizes: vec![0; n],
    };
    // maybeRevokePartitions: keep owned partitions of subscribed topics. The
    // coordinator never lets two members own one partition; keep the first claim.
    for (i, &m) in order.iter().enumerate() {
        for tp in &group.members[m].owned {
            let (t, p) = (tp.topic as usize, tp.partition as usize);
            if t < nt && subs[m][t] && p < count(t) && b.owners[t][p].is_none() {
                b.owners[t][p] = Some(i);
                b.sizes[i] += 1;
            }
        }
    }

    let topic_cmp = |&a: &usize, &c: &usize| -> Ordering {
        let (sa, sc) = (subscribers[a].len(), subscribers[c].len());
        let (ra, rc) = (count(a) as f64 / sa as f64, count(c) as f64 / sc as f64);
        rc.partial_cmp(&ra)
            .unwrap_or(Ordering::Equal)
            .then(sa.cmp(&sc))
            .then(a.cmp(&c))
    };

    // assignRemainingPartitions
    let mut with_unassigned: Vec<usize> = topics
        .iter()
        .copied()
        .filter(|&t| b.owners[t].iter().any(Option::is_none))
        .collect();
    with_unassigned.sort_by(topic_cmp);
    let mut balancer = Balancer::default();
    for &t in &with_unassigned {
        balancer.initialize(&subscribers[t], &b.sizes);
        for p in 0..count(t) {
            if b.owners[t][p].is_none() {
                let m = balancer.next_least_loaded(&b.sizes);
                b.assign(t, p, m);
            }
        }
    }

    // balance / balanceTopics
    let mut movable: Vec<usize> = topics
        .iter()
        .copied()
        .filter(|&t| subscribers[t].len() >= 2)
        .collect();
    movable.sort_by(topic_cmp);
    let mut last: Option<usize> = None;
    'rounds: for _ in 0..MAX_ITERATION_COUNT {
        for (k, &t) in movable.iter().enumerate() {
            if last == Some(k) {
                break 'rounds;
            }
            let moved = b.balance_topic(t, &subscribers[t], &mut balancer);
            if moved > 0 || last.is_none() {
                last = Some(k);
            }
        }
    }

    let mut out: Vec<Vec<Tp>> = vec![Vec::new(); n];
    for (t, owners) in b.owners.iter().enumerate() {
        for (p, o) in owners.iter().enumerate() {
            if let Some(i) = o {
                out[order[*i]].push(Tp {
                    topic: t as u32,
                    partition: p as u32,
                });
            }
        }
    }
    Assignment::new(group, order, out)
}
