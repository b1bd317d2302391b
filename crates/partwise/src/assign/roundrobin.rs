//! Round-robin assignors: Java's `RoundRobinAssignor`, librdkafka's
//! `roundrobin` (the same idea, but it steps its cursor differently when a
//! member does not subscribe to a topic) and KafkaJS's `RoundRobinAssigner`
//! (which ignores subscriptions and walks the leader's topics as given).

use super::order::{java_cmp, java_member_order, librdkafka_member_order};
use super::{Assignment, Group, Tp};

/// Topics some member subscribes to, sorted by name with `cmp`.
fn subscribed_topics(
    group: &Group,
    subs: &[Vec<bool>],
    cmp: impl Fn(&str, &str) -> std::cmp::Ordering,
) -> Vec<usize> {
    let mut topics: Vec<usize> = (0..group.topics.len())
        .filter(|&t| subs.iter().any(|s| s[t]))
        .collect();
    topics.sort_by(|&a, &b| cmp(&group.topics[a].name, &group.topics[b].name));
    topics
}

/// Java: a circular iterator over the sorted members; for each partition
/// (topics by name, partitions ascending) skip members not subscribed to its
/// topic, assign, advance past the assignee.
pub fn java(group: &Group) -> Assignment {
    let order = java_member_order(&group.members);
    let subs = group.subscriptions();
    let mut out = vec![Vec::new(); group.members.len()];
    let mut cur = 0usize;
    for t in subscribed_topics(group, &subs, java_cmp) {
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

/// librdkafka (`rd_kafka_roundrobin_assignor_assign_cb`): a cursor over the
/// sorted members; when the member under the cursor does not subscribe to the
/// topic, the partition goes to the first subscriber that sorts at or after
/// it (wrapping to the first subscriber), and the cursor advances by one from
/// where it was, not from the assignee.
pub fn librdkafka(group: &Group) -> Assignment {
    let order = librdkafka_member_order(&group.members);
    let subs = group.subscriptions();
    let mut out = vec![Vec::new(); group.members.len()];
    let mut next = 0usize;
    for t in subscribed_topics(group, &subs, |a, b| a.as_bytes().cmp(b.as_bytes())) {
        // Positions (in `order`) of the topic's subscribers, ascending.
        let eligible: Vec<usize> = (0..order.len()).filter(|&i| subs[order[i]][t]).collect();
        for partition in 0..group.topics[t].partitions {
            let pos = if subs[order[next]][t] {
                next
            } else {
                eligible
                    .iter()
                    .copied()
                    .find(|&i| i >= next)
                    .unwrap_or(eligible[0])
            };
            out[order[pos]].push(Tp {
                topic: t as u32,
                partition,
            });
            next = (next + 1) % order.len();
        }
    }
    Assignment::new(group, order, out)
}

/// KafkaJS: members sorted as JavaScript's default `Array.prototype.sort`
/// does (UTF-16 code units), every partition of the topics in the order
/// given (the leader's subscription) dealt in turn. Subscriptions are not
/// read: members may get topics they did not subscribe to.
pub fn kafkajs(group: &Group) -> Assignment {
    let ordered: Vec<(usize, Vec<u32>)> = group
        .topics
        .iter()
        .enumerate()
        .map(|(t, topic)| (t, (0..topic.partitions).collect()))
        .collect();
    kafkajs_with(group, &ordered)
}

fn kafkajs_with(group: &Group, topics: &[(usize, Vec<u32>)]) -> Assignment {
    let mut order: Vec<usize> = (0..group.members.len()).collect();
    order.sort_by(|&a, &b| java_cmp(&group.members[a].id, &group.members[b].id));
    let mut out = vec![Vec::new(); group.members.len()];
    let mut i = 0usize;
    for (t, partitions) in topics {
        for &partition in partitions {
            out[order[i % order.len()]].push(Tp {
                topic: *t as u32,
                partition,
            });
            i += 1;
        }
    }
    Assignment::new(group, order, out)
}

/// KafkaJS's `RoundRobinAssigner` with each topic's partitions in the order
/// the broker's metadata listed them (`partition_order[t]`, a permutation of
/// `0..partitions` of topic `t`), which is the order KafkaJS deals them in.
/// Returns `None` when an order is not such a permutation or the group has no members.
pub fn kafkajs_roundrobin_ordered(
    group: &Group,
    partition_order: &[Vec<u32>],
) -> Option<Assignment> {
    if group.members.is_empty() || partition_order.len() != group.topics.len() {
        return None;
    }
    let mut topics = Vec::new();
    for (t, ord) in partition_order.iter().enumerate() {
        let mut sorted = ord.clone();
        sorted.sort_unstable();
        if sorted != (0..group.topics[t].partitions).collect::<Vec<_>>() {
            return None;
        }
        topics.push((t, ord.clone()));
    }
    Some(kafkajs_with(group, &topics))
}
