//! Co-partitioned units and the leader's assignment.
//!
//! This module owns two pure computations: which units a set of partitions
//! makes whole (a unit is partition `p` of every subscribed topic with the
//! same partition count, so a local join of those topics holds both sides of
//! a key), and the leader's assignment of a generation, computed with
//! partwise's [`partwise::assign`] module from the members' subscriptions.

use crate::error::{Error, Result};
use crate::protocol::Subscription;
use partwise::assign::{Assignor, Group, Member, Topic, Tp};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A co-partitioned unit: partition `partition` of each of `topics`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Unit {
    /// The partition index.
    pub partition: i32,
    /// The topics of its co-partition group (equal partition counts), sorted.
    pub topics: Vec<String>,
}

/// The co-partition groups of `counts` (topic to partition count): topics
/// with equal counts, each group sorted, groups ordered by their first topic.
pub fn unit_groups(counts: &BTreeMap<String, i32>) -> Vec<Vec<String>> {
    let mut by_count: BTreeMap<i32, Vec<String>> = BTreeMap::new();
    for (t, n) in counts {
        by_count.entry(*n).or_default().push(t.clone());
    }
    let mut groups: Vec<Vec<String>> = by_count.into_values().collect();
    groups.sort();
    groups
}

/// The units that `assigned` holds whole: for each co-partition group of
/// `counts`, each index `p` whose partition is assigned in every topic of the
/// group. Partitions of topics not in `counts` are ignored.
pub fn complete_units(assigned: &[(String, i32)], counts: &BTreeMap<String, i32>) -> Vec<Unit> {
    let have: BTreeSet<(&str, i32)> = assigned.iter().map(|(t, p)| (t.as_str(), *p)).collect();
    let mut out = Vec::new();
    for group in unit_groups(counts) {
        let n = counts[&group[0]];
        for p in 0..n {
            if group.iter().all(|t| have.contains(&(t.as_str(), p))) {
                out.push(Unit {
                    partition: p,
                    topics: group.clone(),
                });
            }
        }
    }
    out.sort();
    out
}

/// One member as the leader sees it in the JoinGroup response.
#[derive(Clone, Debug)]
pub struct JoinedMember {
    /// Broker-given member id.
    pub member_id: String,
    /// `group.instance.id` of a static member.
    pub instance_id: Option<String>,
    /// Its decoded subscription.
    pub subscription: Subscription,
}

/// The leader's assignment for `protocol` (`copartitioned` or `range`) of
/// `members` over the topics in `counts`: member id to (topic, partition).
pub fn leader_assignment(
    protocol: &str,
    members: &[JoinedMember],
    counts: &BTreeMap<String, i32>,
) -> Result<HashMap<String, Vec<(String, i32)>>> {
    let assignor = match protocol {
        "copartitioned" => Assignor::Copartitioned,
        "range" => Assignor::JavaRange,
        other => {
            return Err(Error::GroupProtocol {
                group: String::new(),
                reason: format!("no assignor for protocol '{other}'"),
            })
        }
    };
    let topics: Vec<Topic> = counts
        .iter()
        .map(|(t, n)| Topic::new(t.clone(), *n as u32))
        .collect();
    let index: HashMap<&str, u32> = counts
        .iter()
        .enumerate()
        .map(|(i, (t, _))| (t.as_str(), i as u32))
        .collect();
    let group_members: Vec<Member> = members
        .iter()
        .map(|m| {
            let mut member = Member::new(m.member_id.clone(), m.subscription.topics.clone());
            member.instance_id = m.instance_id.clone();
            // Owned partitions of topics that vanished or shrank are not claims.
            member.owned = m
                .subscription
                .owned
                .iter()
                .filter_map(|(t, p)| {
                    let ti = *index.get(t.as_str())?;
                    (*p >= 0 && *p < counts[t]).then_some(Tp {
                        topic: ti,
                        partition: *p as u32,
                    })
                })
                .collect();
            member.generation =
                (m.subscription.generation >= 0).then_some(m.subscription.generation);
            member
        })
        .collect();
    let group = Group::new(group_members, topics);
    let assignment = assignor.assign(&group).map_err(|e| Error::GroupProtocol {
        group: String::new(),
        reason: format!("assignor {protocol}: {e}"),
    })?;
    let mut out = HashMap::new();
    for (m, parts) in assignment.partitions.iter().enumerate() {
        out.insert(
            group.members[m].id.clone(),
            parts
                .iter()
                .map(|tp| {
                    (
                        group.topics[tp.topic as usize].name.clone(),
                        tp.partition as i32,
                    )
                })
                .collect(),
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(list: &[(&str, i32)]) -> BTreeMap<String, i32> {
        list.iter().map(|(t, n)| (t.to_string(), *n)).collect()
    }

    fn member(id: &str, owned: &[(&str, i32)]) -> JoinedMember {
        JoinedMember {
            member_id: id.into(),
            instance_id: None,
            subscription: Subscription {
                topics: vec!["a".into(), "b".into()],
                owned: owned.iter().map(|(t, p)| (t.to_string(), *p)).collect(),
                generation: if owned.is_empty() { -1 } else { 1 },
            },
        }
    }

    #[test]
    fn a_unit_is_complete_only_with_every_topic() {
        let c = counts(&[("a", 4), ("b", 4), ("c", 2)]);
        let assigned = vec![
            ("a".to_string(), 0),
            ("b".to_string(), 0),
            ("a".to_string(), 1),
            ("c".to_string(), 1),
        ];
        let units = complete_units(&assigned, &c);
        assert_eq!(
            units,
            vec![
                Unit {
                    partition: 0,
                    topics: vec!["a".into(), "b".into()]
                },
                Unit {
                    partition: 1,
                    topics: vec!["c".into()]
                },
            ]
        );
    }

    #[test]
    fn copartitioned_leader_assignment_keeps_units_whole() {
        let c = counts(&[("a", 6), ("b", 6)]);
        let members: Vec<JoinedMember> = (0..4).map(|i| member(&format!("m{i}"), &[])).collect();
        let a = leader_assignment("copartitioned", &members, &c).unwrap();
        let mut seen = BTreeSet::new();
        for parts in a.values() {
            let units = complete_units(parts, &c);
            assert_eq!(units.len() * 2, parts.len(), "split unit in {parts:?}");
            for tp in parts {
                assert!(seen.insert(tp.clone()), "{tp:?} assigned twice");
            }
        }
        assert_eq!(seen.len(), 12);
    }

    #[test]
    fn copartitioned_leader_assignment_is_sticky_when_a_member_leaves() {
        let c = counts(&[("a", 6), ("b", 6)]);
        let members: Vec<JoinedMember> = (0..5).map(|i| member(&format!("m{i}"), &[])).collect();
        let first = leader_assignment("copartitioned", &members, &c).unwrap();
        let rest: Vec<JoinedMember> = (0..4)
            .map(|i| {
                let id = format!("m{i}");
                let owned: Vec<(&str, i32)> =
                    first[&id].iter().map(|(t, p)| (t.as_str(), *p)).collect();
                member(&id, &owned)
            })
            .collect();
        let second = leader_assignment("copartitioned", &rest, &c).unwrap();
        for m in &rest {
            for tp in &first[&m.member_id] {
                assert!(
                    second[&m.member_id].contains(tp),
                    "{tp:?} moved off {}",
                    m.member_id
                );
            }
        }
    }

    #[test]
    fn range_fallback_and_unknown_protocols() {
        let c = counts(&[("a", 6), ("b", 6)]);
        let members: Vec<JoinedMember> = (0..3).map(|i| member(&format!("m{i}"), &[])).collect();
        let a = leader_assignment("range", &members, &c).unwrap();
        assert_eq!(
            a["m0"],
            vec![
                ("a".to_string(), 0),
                ("a".to_string(), 1),
                ("b".to_string(), 0),
                ("b".to_string(), 1)
            ]
        );
        assert!(leader_assignment("roundrobin", &members, &c).is_err());
    }
}
