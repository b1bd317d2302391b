//! Range: per topic, the sorted subscribers take contiguous runs of
//! partitions, the first `N % S` of them one more. Java's `RangeAssignor`
//! (`assignRanges`, no racks), the KIP-848 server-side `range` and
//! librdkafka's `range` all compute this; they differ only in how members
//! are sorted, which the caller passes in.

use super::{Assignment, Group, Tp};

/// Range over `group` with members in `order` (indices into `group.members`).
pub fn range(group: &Group, order: Vec<usize>) -> Assignment {
    let subs = group.subscriptions();
    let mut out = vec![Vec::new(); group.members.len()];
    for (t, topic) in group.topics.iter().enumerate() {
        let subscribers: Vec<usize> = order.iter().copied().filter(|&m| subs[m][t]).collect();
        if subscribers.is_empty() {
            continue;
        }
        let s = subscribers.len() as u32;
        let (quota, extra) = (topic.partitions / s, topic.partitions % s);
        let mut next = 0u32;
        for (i, &m) in subscribers.iter().enumerate() {
            let take = quota + u32::from((i as u32) < extra);
            out[m].extend((next..next + take).map(|partition| Tp {
                topic: t as u32,
                partition,
            }));
            next += take;
        }
    }
    Assignment::new(group, order, out)
}
