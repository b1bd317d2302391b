//! Co-partitioned units by topic name: which topics' partition `p` travel
//! together, and which units a member's partitions hold whole.
//!
//! A unit is partition `p` of every topic of one co-partition group, the
//! groups being [`copartition_groups`]'s (equal partition count and equal
//! subscribers). The `copartitioned` assignor hands units out by that rule,
//! and partwise-group's runtime decides from it which units a member may
//! process, so the two never disagree on what a unit is.

use super::{copartition_groups, Group, Member, Topic, Tp};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A group over the topics of `counts` (name to partition count, in name
/// order) whose members' previously owned partitions are given by name.
/// Owned partitions of topics that vanished or shrank are not claims, so
/// they are dropped.
pub fn named_group<O: AsRef<[(String, i32)]>>(
    members: impl IntoIterator<Item = (Member, O)>,
    counts: &BTreeMap<String, u32>,
) -> Group {
    let index: HashMap<&str, u32> = counts
        .keys()
        .enumerate()
        .map(|(i, t)| (t.as_str(), i as u32))
        .collect();
    let members = members
        .into_iter()
        .map(|(mut m, owned)| {
            m.owned = owned
                .as_ref()
                .iter()
                .filter_map(|(t, p)| {
                    let topic = *index.get(t.as_str())?;
                    let p = u32::try_from(*p).ok()?;
                    (p < counts[t]).then_some(Tp {
                        topic,
                        partition: p,
                    })
                })
                .collect();
            m
        })
        .collect();
    let topics = counts
        .iter()
        .map(|(t, n)| Topic::new(t.clone(), *n))
        .collect();
    Group::new(members, topics)
}

/// The co-partition groups of `group` by topic name: [`copartition_groups`]
/// with names for indices.
pub fn unit_groups(group: &Group) -> Vec<Vec<String>> {
    copartition_groups(group)
        .into_iter()
        .map(|g| {
            g.into_iter()
                .map(|t| group.topics[t as usize].name.clone())
                .collect()
        })
        .collect()
}

/// The unit groups one member can tell alone, from its own subscription
/// (`counts`: its topics and their partition counts): with one subscriber,
/// topics group by partition count only. A member falls back to this when
/// the leader did not say what the groups are.
pub fn own_unit_groups(counts: &BTreeMap<String, u32>) -> Vec<Vec<String>> {
    let me = Member::new("self", counts.keys().cloned().collect::<Vec<_>>());
    unit_groups(&named_group([(me, Vec::new())], counts))
}

/// The units that `assigned` (topic, partition) holds whole: for each of
/// `groups`, each index `p` assigned in every topic of the group, as
/// (partition, the group's topics), sorted. `counts` are the partition
/// counts the member sees: a topic it does not see is left out of its
/// group, and a group whose topics it sees with different counts (one grew
/// since the leader looked) is split by count, as a member alone would.
pub fn whole_units(
    groups: &[Vec<String>],
    counts: &BTreeMap<String, u32>,
    assigned: &[(String, u32)],
) -> Vec<(u32, Vec<String>)> {
    let have: BTreeSet<(&str, u32)> = assigned.iter().map(|(t, p)| (t.as_str(), *p)).collect();
    let mut out = Vec::new();
    for group in groups {
        let mut by_count: BTreeMap<u32, Vec<String>> = BTreeMap::new();
        for t in group {
            if let Some(n) = counts.get(t) {
                by_count.entry(*n).or_default().push(t.clone());
            }
        }
        for (n, topics) in by_count {
            for p in 0..n {
                if topics.iter().all(|t| have.contains(&(t.as_str(), p))) {
                    out.push((p, topics.clone()));
                }
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assign::Assignor;

    fn counts(list: &[(&str, u32)]) -> BTreeMap<String, u32> {
        list.iter().map(|(t, n)| (t.to_string(), *n)).collect()
    }

    #[test]
    fn groups_split_by_count_and_by_subscribers() {
        let c = counts(&[("a", 4), ("b", 4), ("c", 2), ("d", 4)]);
        let g = named_group(
            [
                (Member::new("m0", ["a", "b", "c", "d"]), vec![]),
                (Member::new("m1", ["a", "b"]), vec![]),
            ],
            &c,
        );
        assert_eq!(
            unit_groups(&g),
            vec![
                vec!["a".to_string(), "b".to_string()],
                vec!["c".to_string()],
                vec!["d".to_string()]
            ]
        );
        // Alone, a member only sees counts.
        assert_eq!(
            own_unit_groups(&c),
            vec![
                vec!["a".to_string(), "b".to_string(), "d".to_string()],
                vec!["c".to_string()]
            ]
        );
    }

    #[test]
    fn owned_partitions_of_vanished_or_shrunk_topics_are_dropped() {
        let c = counts(&[("a", 2)]);
        let g = named_group(
            [(
                Member::new("m0", ["a"]),
                vec![
                    ("a".into(), 1),
                    ("a".into(), 2),
                    ("gone".into(), 0),
                    ("a".into(), -1),
                ],
            )],
            &c,
        );
        assert_eq!(
            g.members[0].owned,
            vec![Tp {
                topic: 0,
                partition: 1
            }]
        );
    }

    #[test]
    fn a_group_seen_with_other_counts_splits_by_count() {
        let groups = vec![vec!["a".to_string(), "b".to_string(), "gone".to_string()]];
        let c = counts(&[("a", 2), ("b", 3)]);
        let assigned: Vec<(String, u32)> = vec![("a".into(), 0), ("b".into(), 0), ("b".into(), 2)];
        assert_eq!(
            whole_units(&groups, &c, &assigned),
            vec![
                (0, vec!["a".to_string()]),
                (0, vec!["b".to_string()]),
                (2, vec!["b".to_string()])
            ]
        );
    }

    /// Every unit the assignor hands out is whole for the member that gets
    /// it, with unequal subscriptions too.
    #[test]
    fn the_assignors_units_are_whole_units() {
        let c = counts(&[("a", 4), ("b", 4), ("c", 4)]);
        let g = named_group(
            [
                (Member::new("m0", ["a", "b", "c"]), vec![]),
                (Member::new("m1", ["a"]), vec![]),
                (Member::new("m2", ["a", "b", "c"]), vec![]),
            ],
            &c,
        );
        let groups = unit_groups(&g);
        let a = Assignor::Copartitioned.assign(&g).unwrap();
        let mut total = 0;
        for parts in &a.partitions {
            let named: Vec<(String, u32)> = parts
                .iter()
                .map(|tp| (g.topics[tp.topic as usize].name.clone(), tp.partition))
                .collect();
            let units = whole_units(&groups, &c, &named);
            let covered: usize = units.iter().map(|(_, ts)| ts.len()).sum();
            assert_eq!(
                covered,
                named.len(),
                "a partition outside a whole unit: {named:?}"
            );
            total += covered;
        }
        assert_eq!(total, 12);
    }
}
