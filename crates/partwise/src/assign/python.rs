//! The range and round-robin assignors of the Python clients, kafka-python
//! and aiokafka, each as its own code computes it. Python compares strings
//! by code point, which for Rust's UTF-8 strings is byte order, so every
//! sort here is by bytes. Known answers: `tests/vectors/regen/python-groups`.
//!
//! kafka-python's leader hands its assignor the JoinGroup members in the
//! coordinator's order and sorts them itself: static members (by instance
//! id, then member id) before dynamic ones (by member id), each kind taken
//! from `itertools.groupby` over that order into a dict. `groupby` groups
//! consecutive members only, so when static and dynamic members alternate
//! in the coordinator's order, each kind keeps its last run alone: the
//! members of the earlier runs are dropped and get nothing of that topic
//! (range) or of anything (round-robin). aiokafka's assignors see a dict of
//! member ids and sort the ids alone.

use super::{AssignError, Assignment, Group, Member, Tp};
use std::cmp::Ordering;
use std::collections::HashMap;

/// The kafka-python release these models reproduce.
pub const KAFKA_PYTHON: &str = "kafka-python 3.0.12";
/// The aiokafka release these models reproduce.
pub const AIOKAFKA: &str = "aiokafka 0.14.0";

/// Python's `sorted()` of `(group_instance_id, member_id)` tuples of one
/// kind: instance ids (when static), then member ids, by code point.
fn tuple_cmp(l: &Member, r: &Member) -> Ordering {
    let a = l.instance_id.as_deref().map(str::as_bytes);
    let b = r.instance_id.as_deref().map(str::as_bytes);
    a.cmp(&b).then_with(|| l.id.as_bytes().cmp(r.id.as_bytes()))
}

/// kafka-python's member order over `listed` (indices, in the order the
/// leader met them): `groupby` on "is static" into a dict (each kind's last
/// run of consecutive members wins), sorted statics, then sorted dynamics.
fn kafka_python_order(members: &[Member], listed: &[usize]) -> Vec<usize> {
    let mut runs: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
    let mut prev: Option<bool> = None;
    for &m in listed {
        let is_static = members[m].instance_id.is_some();
        let slot = &mut runs[usize::from(is_static)];
        if prev != Some(is_static) {
            // A new run of this kind replaces the kind's earlier one.
            slot.clear();
        }
        slot.push(m);
        prev = Some(is_static);
    }
    let [mut dynamic, mut stat] = runs;
    stat.sort_by(|&a, &b| tuple_cmp(&members[a], &members[b]));
    dynamic.sort_by(|&a, &b| tuple_cmp(&members[a], &members[b]));
    stat.extend(dynamic);
    stat
}

fn by_id(members: &[Member], listed: &mut [usize]) {
    listed.sort_by(|&a, &b| members[a].id.as_bytes().cmp(members[b].id.as_bytes()));
}

/// Each topic of the group (that exists) with the members listing it, in
/// the order the leader met them: members in the given order, each
/// member's subscription as listed (a topic listed twice counts twice).
fn subscribers(group: &Group) -> Vec<Vec<usize>> {
    let index: HashMap<&str, usize> = group
        .topics
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.as_str(), i))
        .collect();
    let mut out = vec![Vec::new(); group.topics.len()];
    for (m, member) in group.members.iter().enumerate() {
        for name in &member.topics {
            if let Some(&t) = index.get(name.as_str()) {
                out[t].push(m);
            }
        }
    }
    out
}

/// Range over one topic's ordered subscribers: the first `N % S` take one
/// more. A member listed twice takes two slices and keeps the later one
/// (`assignment[member_id][topic] = ...`).
fn deal_ranges(out: &mut [Vec<Tp>], t: usize, partitions: u32, consumers: &[usize]) {
    let s = consumers.len() as u32;
    if s == 0 {
        return;
    }
    let (quota, extra) = (partitions / s, partitions % s);
    let mut slices: HashMap<usize, (u32, u32)> = HashMap::new();
    for (i, &m) in consumers.iter().enumerate() {
        let i = i as u32;
        let start = quota * i + i.min(extra);
        let len = quota + u32::from(i < extra);
        slices.insert(m, (start, len));
    }
    for (m, (start, len)) in slices {
        out[m].extend((start..start + len).map(|partition| Tp {
            topic: t as u32,
            partition,
        }));
    }
}

/// kafka-python `RangePartitionAssignor`.
pub fn kafka_python_range(group: &Group) -> Assignment {
    let mut out = vec![Vec::new(); group.members.len()];
    for (t, listed) in subscribers(group).iter().enumerate() {
        let order = kafka_python_order(&group.members, listed);
        deal_ranges(&mut out, t, group.topics[t].partitions, &order);
    }
    let all: Vec<usize> = (0..group.members.len()).collect();
    Assignment::new(group, kafka_python_order(&group.members, &all), out)
}

/// aiokafka `RangePartitionAssignor`: per topic its subscribers sorted by
/// member id.
pub fn aiokafka_range(group: &Group) -> Assignment {
    let mut out = vec![Vec::new(); group.members.len()];
    for (t, listed) in subscribers(group).iter().enumerate() {
        let mut order = listed.clone();
        by_id(&group.members, &mut order);
        deal_ranges(&mut out, t, group.topics[t].partitions, &order);
    }
    let mut all: Vec<usize> = (0..group.members.len()).collect();
    by_id(&group.members, &mut all);
    Assignment::new(group, all, out)
}

/// Every partition of a subscribed topic that exists, sorted as Python
/// sorts `TopicPartition` tuples: topic name by code point, then partition.
fn all_partitions(group: &Group, subscribed: &[Vec<usize>]) -> Vec<Tp> {
    let mut topics: Vec<usize> = (0..group.topics.len())
        .filter(|&t| !subscribed[t].is_empty())
        .collect();
    topics.sort_by(|&a, &b| {
        group.topics[a]
            .name
            .as_bytes()
            .cmp(group.topics[b].name.as_bytes())
    });
    topics
        .into_iter()
        .flat_map(|t| {
            (0..group.topics[t].partitions).map(move |partition| Tp {
                topic: t as u32,
                partition,
            })
        })
        .collect()
}

fn python_str(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// kafka-python `RoundRobinPartitionAssignor`. Its loop takes the next
/// member of the cycle as a `(group_instance_id, member_id)` tuple when the
/// first one it tries does not subscribe to the partition's topic, and then
/// looks that tuple up as a member id: the leader raises `KeyError` as soon
/// as a partition's turn falls on a member without its topic (unequal
/// subscriptions), so the rebalance fails.
pub fn kafka_python_roundrobin(group: &Group) -> Result<Assignment, AssignError> {
    let subscribed = subscribers(group);
    let all: Vec<usize> = (0..group.members.len()).collect();
    let order = kafka_python_order(&group.members, &all);
    let subs = group.subscriptions();
    let mut out = vec![Vec::new(); group.members.len()];
    let mut cur = 0usize;
    for tp in all_partitions(group, &subscribed) {
        let m = order[cur % order.len()];
        cur += 1;
        if !subs[m][tp.topic as usize] {
            let next = &group.members[order[cur % order.len()]];
            return Err(AssignError::LeaderThrows {
                assignor: "kafka-python:roundrobin",
                exception: "KeyError",
                message: format!(
                    "({}, {})",
                    next.instance_id
                        .as_deref()
                        .map_or_else(|| "None".to_string(), python_str),
                    python_str(&next.id)
                ),
            });
        }
        out[m].push(tp);
    }
    Ok(Assignment::new(group, order, out))
}

/// aiokafka `RoundRobinPartitionAssignor`: every partition of a subscribed
/// topic (topics by name) dealt over the member ids, sorted, with one
/// cursor that passes over members without the partition's topic.
pub fn aiokafka_roundrobin(group: &Group) -> Assignment {
    let subscribed = subscribers(group);
    let mut order: Vec<usize> = (0..group.members.len()).collect();
    by_id(&group.members, &mut order);
    let subs = group.subscriptions();
    let mut out = vec![Vec::new(); group.members.len()];
    let mut cur = 0usize;
    for tp in all_partitions(group, &subscribed) {
        let mut m = order[cur % order.len()];
        cur += 1;
        while !subs[m][tp.topic as usize] {
            m = order[cur % order.len()];
            cur += 1;
        }
        out[m].push(tp);
    }
    Assignment::new(group, order, out)
}
