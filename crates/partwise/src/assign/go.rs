//! The range and round-robin balancers of the Go clients: franz-go (`kgo`),
//! Sarama and kafka-go, each as its own code computes it. Go compares
//! strings byte by byte, so every sort here is by bytes (Java compares
//! UTF-16 units). Known answers: `tests/vectors/regen/go-groups`.

use super::{range, Assignment, Group, Member, Tp};
use std::cmp::Ordering;

/// franz-go's leader sorts the JoinGroup members before balancing
/// (`sortJoinMembers`): static members first by instance id, then the
/// dynamic ones by member id.
pub fn franzgo_member_order(members: &[Member]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..members.len()).collect();
    idx.sort_by(|&a, &b| franzgo_member_cmp(&members[a], &members[b]));
    idx
}

fn franzgo_member_cmp(l: &Member, r: &Member) -> Ordering {
    match (&l.instance_id, &r.instance_id) {
        (Some(a), Some(b)) => a.as_bytes().cmp(b.as_bytes()),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => l.id.as_bytes().cmp(r.id.as_bytes()),
    }
}

/// Members sorted by member id alone: Sarama's and kafka-go's balancers see
/// no instance ids.
fn by_id(members: &[Member]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..members.len()).collect();
    idx.sort_by(|&a, &b| members[a].id.as_bytes().cmp(members[b].id.as_bytes()));
    idx
}

/// franz-go `RangeBalancer` without racks: per topic its subscribers in the
/// leader's sorted order take contiguous runs, the first `N % S` one more.
pub fn franzgo_range(group: &Group) -> Assignment {
    range::range(group, franzgo_member_order(&group.members))
}

/// Sarama `NewBalanceStrategyRange`: per topic its subscribers sorted by
/// member id take contiguous runs, the first `N % S` one more.
pub fn sarama_range(group: &Group) -> Assignment {
    range::range(group, by_id(&group.members))
}

/// franz-go `RoundRobinBalancer`: every subscribed topic's partitions
/// (topics by name, partitions ascending) dealt over the sorted members with
/// one cursor; a member that does not subscribe to the topic is passed over
/// and the cursor moves past the assignee.
pub fn franzgo_roundrobin(group: &Group) -> Assignment {
    let order = franzgo_member_order(&group.members);
    let subs = group.subscriptions();
    let mut out = vec![Vec::new(); group.members.len()];
    let mut cur = 0usize;
    for t in subscribed_by_name(group, &subs) {
        for partition in 0..group.topics[t].partitions {
            while !subs[order[cur]][t] {
                cur = (cur + 1) % order.len();
            }
            out[order[cur]].push(Tp {
                topic: t as u32,
                partition,
            });
            cur = (cur + 1) % order.len();
        }
    }
    Assignment::new(group, order, out)
}

fn subscribed_by_name(group: &Group, subs: &[Vec<bool>]) -> Vec<usize> {
    let mut topics: Vec<usize> = (0..group.topics.len())
        .filter(|&t| subs.iter().any(|s| s[t]))
        .collect();
    topics.sort_by(|&a, &b| {
        group.topics[a]
            .name
            .as_bytes()
            .cmp(group.topics[b].name.as_bytes())
    });
    topics
}

/// Sarama `NewBalanceStrategyRoundRobin`: every subscribed partition sorted
/// by the string `"{topic}-{partition}"` (so `t-10` comes before `t-2`),
/// dealt over the members sorted by id with one cursor that passes over
/// members not subscribed to the partition's topic.
pub fn sarama_roundrobin(group: &Group) -> Assignment {
    let order = by_id(&group.members);
    let subs = group.subscriptions();
    let mut parts: Vec<(String, Tp)> = Vec::new();
    for t in subscribed_by_name(group, &subs) {
        for partition in 0..group.topics[t].partitions {
            let key = format!("{}-{partition}", group.topics[t].name);
            parts.push((
                key,
                Tp {
                    topic: t as u32,
                    partition,
                },
            ));
        }
    }
    // A stable sort, as Sarama's sort.SliceStable.
    parts.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let n = order.len();
    let mut out = vec![Vec::new(); group.members.len()];
    let mut i = 0usize;
    for (_, tp) in parts {
        let t = tp.topic as usize;
        for _ in 0..n {
            if subs[order[i % n]][t] {
                break;
            }
            i += 1;
        }
        if !subs[order[i % n]][t] {
            continue;
        }
        out[order[i % n]].push(tp);
        i += 1;
    }
    Assignment::new(group, order, out)
}

/// kafka-go's subscribers of each topic, sorted by id: a member listing a
/// topic twice is counted twice, as `findMembersByTopic` does.
fn kafkago_members_by_topic(group: &Group) -> Vec<Vec<usize>> {
    let index: std::collections::HashMap<&str, usize> = group
        .topics
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.as_str(), i))
        .collect();
    let mut by_topic: Vec<Vec<usize>> = vec![Vec::new(); group.topics.len()];
    for (m, member) in group.members.iter().enumerate() {
        for name in &member.topics {
            if let Some(&t) = index.get(name.as_str()) {
                by_topic[t].push(m);
            }
        }
    }
    for list in &mut by_topic {
        list.sort_by(|&a, &b| {
            group.members[a]
                .id
                .as_bytes()
                .cmp(group.members[b].id.as_bytes())
        });
    }
    by_topic
}

/// kafka-go `RangeGroupBalancer`: per topic, subscriber `i` of `M` (sorted
/// by id) takes the partitions at positions `i*N/M` up to `(i+1)*N/M`, so
/// the spare partitions go to the later members, not the first ones as in
/// Java's range.
pub fn kafkago_range(group: &Group) -> Assignment {
    let mut out = vec![Vec::new(); group.members.len()];
    for (t, members) in kafkago_members_by_topic(group).iter().enumerate() {
        let n = group.topics[t].partitions as u64;
        let m = members.len() as u64;
        for (i, &member) in members.iter().enumerate() {
            let (lo, hi) = (i as u64 * n / m, (i as u64 + 1) * n / m);
            for p in lo..hi {
                out[member].push(Tp {
                    topic: t as u32,
                    partition: p as u32,
                });
            }
        }
    }
    Assignment::new(group, by_id(&group.members), out)
}

/// kafka-go `RoundRobinGroupBalancer`: per topic, partition `p` goes to
/// subscriber `p % M` (sorted by id); every topic starts again at the first
/// subscriber.
pub fn kafkago_roundrobin(group: &Group) -> Assignment {
    let mut out = vec![Vec::new(); group.members.len()];
    for (t, members) in kafkago_members_by_topic(group).iter().enumerate() {
        if members.is_empty() {
            continue;
        }
        for p in 0..group.topics[t].partitions {
            out[members[p as usize % members.len()]].push(Tp {
                topic: t as u32,
                partition: p,
            });
        }
    }
    Assignment::new(group, by_id(&group.members), out)
}
