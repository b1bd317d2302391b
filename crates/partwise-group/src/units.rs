//! Co-partitioned units as the runtime hands them out, and the leader's
//! assignment.
//!
//! What a unit is (partition `p` of every topic of one co-partition group:
//! equal partition count and equal subscribers) is decided in the core,
//! [`partwise::assign::units`], for the runtime and the simulated
//! `copartitioned` assignor alike. This module adapts it to the group
//! protocol: the leader, which alone sees every member's subscription,
//! computes the assignment and the groups and sends the groups in each
//! member's assignment user data; a member that gets no such groups (a
//! leader that is not partwise) decides from its own subscription.

use crate::error::{Error, Result};
use bytes::Bytes;
use partwise::assign::units::{own_unit_groups, whole_units};
use partwise::assign::Assignor;
use partwise_wire::leader::core_counts;
use std::collections::{BTreeMap, HashMap};

/// A co-partitioned unit: partition `partition` of each of `topics`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Unit {
    /// The partition index.
    pub partition: i32,
    /// The topics of its co-partition group, sorted.
    pub topics: Vec<String>,
}

/// The co-partition groups one member tells from its own subscription
/// (`counts`: topic to partition count): topics with equal counts, each
/// group sorted, groups ordered by their first topic.
pub fn unit_groups_of_counts(counts: &BTreeMap<String, i32>) -> Vec<Vec<String>> {
    own_unit_groups(&core_counts(counts))
}

/// The units that `assigned` holds whole under `groups` (the leader's, or
/// [`unit_groups_of_counts`]): each index `p` whose partition is assigned in
/// every topic of a group. Partitions of topics not in `counts` are ignored.
pub fn units_in(
    assigned: &[(String, i32)],
    groups: &[Vec<String>],
    counts: &BTreeMap<String, i32>,
) -> Vec<Unit> {
    let assigned: Vec<(String, u32)> = assigned
        .iter()
        .filter_map(|(t, p)| Some((t.clone(), u32::try_from(*p).ok()?)))
        .collect();
    whole_units(groups, &core_counts(counts), &assigned)
        .into_iter()
        .map(|(p, topics)| Unit {
            partition: p as i32,
            topics,
        })
        .collect()
}

/// The units that `assigned` holds whole when the member knows only its own
/// subscription: [`units_in`] with [`unit_groups_of_counts`].
pub fn complete_units(assigned: &[(String, i32)], counts: &BTreeMap<String, i32>) -> Vec<Unit> {
    units_in(assigned, &unit_groups_of_counts(counts), counts)
}

pub use partwise_wire::leader::{
    client_id_of, leader_unit_groups, read_members, JoinedMember, UnreadableMember,
};

/// The core's assignor behind a classic protocol name this runtime offers.
fn assignor_of(protocol: &str) -> Result<Assignor> {
    match protocol {
        "copartitioned" => Ok(Assignor::Copartitioned),
        "range" => Ok(Assignor::JavaRange),
        other => Err(Error::group_protocol(
            "",
            format!("no assignor for protocol '{other}'"),
        )),
    }
}

/// The assignor's refusal as the runtime reports it, naming the protocol.
fn refused(protocol: &str, e: partwise::Error) -> Error {
    Error::GroupProtocol {
        group: String::new(),
        reason: format!("assignor {protocol}: {e}"),
        source: Some(Box::new(e)),
    }
}

/// A leader's error: the assignor's refusal named by protocol, anything
/// else (bytes that do not encode) as the wire's error.
fn leader_error(protocol: &str, e: partwise_wire::Error) -> Error {
    match e {
        partwise_wire::Error::Assignor(e) => refused(protocol, e),
        e => e.into(),
    }
}

/// The leader's assignment for `protocol` (`copartitioned` or `range`) of
/// `members` over the topics in `counts`: member id to (topic, partition).
pub fn leader_assignment(
    protocol: &str,
    members: &[JoinedMember],
    counts: &BTreeMap<String, i32>,
) -> Result<HashMap<String, Vec<(String, i32)>>> {
    partwise_wire::leader::leader_assignment(assignor_of(protocol)?, members, counts)
        .map_err(|e| refused(protocol, e))
}

/// What the leader sends in SyncGroup under `protocol`: each member's
/// encoded assignment, with the co-partition groups in its user data, in
/// the order of `members` (a member with nothing gets an empty assignment,
/// so it still learns the groups). Every partwise leader, in this runtime or
/// in a binding, writes these bytes ([`partwise_wire::leader`]).
pub fn leader_sync_assignments(
    protocol: &str,
    members: &[JoinedMember],
    counts: &BTreeMap<String, i32>,
) -> Result<Vec<(String, Bytes)>> {
    partwise_wire::leader::leader_sync_assignments(assignor_of(protocol)?, members, counts)
        .map_err(|e| leader_error(protocol, e))
}

/// [`leader_sync_assignments`] of the `readable` members, and for each of
/// the `unreadable` ones an assignment of nothing (with the co-partition
/// groups, as every member gets them): the others get exactly what they
/// would get were it not in the group.
pub fn leader_sync_assignments_around(
    protocol: &str,
    readable: &[JoinedMember],
    unreadable: &[UnreadableMember],
    counts: &BTreeMap<String, i32>,
) -> Result<Vec<(String, Bytes)>> {
    partwise_wire::leader::leader_sync_assignments_around(
        assignor_of(protocol)?,
        readable,
        unreadable,
        counts,
    )
    .map_err(|e| leader_error(protocol, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Assignment, Subscription};
    use partwise::assign::Member;
    use std::collections::BTreeSet;

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
                user_data: None,
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

    /// Where the two rules used to differ: `a` and `b` have 4 partitions
    /// each, m0 subscribes to both, m1 to `a` only. The core (and so the
    /// `copartitioned` assignor, as `partwise assign -a copartitioned` runs
    /// it) makes `a` and `b` separate units, since their subscribers
    /// differ; counting partitions only, m0 held `b` without `a` and so no
    /// whole unit at all, and never processed `b`. With the leader's groups
    /// in the assignment's user data, every member processes exactly the
    /// units the assignor handed out.
    #[test]
    fn the_runtime_agrees_with_the_copartitioned_assignor_on_unequal_subscriptions() {
        use crate::protocol::Assignment;
        use partwise::assign::units::{named_group, unit_groups, whole_units};
        let c = counts(&[("a", 4), ("b", 4)]);
        let sub = |topics: &[&str]| Subscription {
            topics: topics.iter().map(|t| t.to_string()).collect(),
            generation: -1,
            ..Subscription::default()
        };
        let members = vec![
            JoinedMember {
                member_id: "m0".into(),
                instance_id: None,
                subscription: sub(&["a", "b"]),
            },
            JoinedMember {
                member_id: "m1".into(),
                instance_id: None,
                subscription: sub(&["a"]),
            },
        ];
        // The core's view: the assignor over the same group.
        let core_counts: BTreeMap<String, u32> =
            c.iter().map(|(t, n)| (t.clone(), *n as u32)).collect();
        let group = named_group(
            [
                (Member::new("m0", ["a", "b"]), vec![]),
                (Member::new("m1", ["a"]), vec![]),
            ],
            &core_counts,
        );
        let core = Assignor::Copartitioned.assign(&group).unwrap();
        let core_groups = unit_groups(&group);
        assert_eq!(
            core_groups,
            vec![vec!["a".to_string()], vec!["b".to_string()]]
        );

        let plan = leader_assignment("copartitioned", &members, &c).unwrap();
        let groups = leader_unit_groups(&members, &c);
        assert_eq!(groups, core_groups);
        let mut differed = false;
        for (i, m) in members.iter().enumerate() {
            // The runtime's path: the leader's bytes, decoded by the member.
            let bytes = Assignment {
                partitions: plan[&m.member_id].clone(),
                user_data: Some(partwise_wire::consumer::encode_unit_groups(&groups)),
            }
            .encode()
            .unwrap();
            let got = Assignment::decode(bytes).unwrap();
            let told = partwise_wire::consumer::decode_unit_groups(
                got.user_data.as_deref().unwrap_or_default(),
            )
            .unwrap();
            let own: BTreeMap<String, i32> = m
                .subscription
                .topics
                .iter()
                .map(|t| (t.clone(), c[t]))
                .collect();
            let runtime = units_in(&got.partitions, &told, &own);
            let named: Vec<(String, u32)> = core.partitions[i]
                .iter()
                .map(|tp| (group.topics[tp.topic as usize].name.clone(), tp.partition))
                .collect();
            let expected: Vec<Unit> = whole_units(&core_groups, &core_counts, &named)
                .into_iter()
                .map(|(p, topics)| Unit {
                    partition: p as i32,
                    topics,
                })
                .collect();
            assert_eq!(runtime, expected, "{}", m.member_id);
            let covered: usize = runtime.iter().map(|u| u.topics.len()).sum();
            assert_eq!(
                covered,
                got.partitions.len(),
                "{}: a partition left out",
                m.member_id
            );
            differed |= complete_units(&got.partitions, &own) != runtime;
        }
        assert!(
            differed,
            "the count-only rule agreed here: not the case that used to differ"
        );
    }

    /// A Java member's owned partitions in its user data keep it sticky
    /// exactly as the standard field does.
    #[test]
    fn owned_partitions_in_user_data_count_as_owned() {
        let c = counts(&[("a", 6), ("b", 6)]);
        let members: Vec<JoinedMember> = (0..3).map(|i| member(&format!("m{i}"), &[])).collect();
        let first = leader_assignment("copartitioned", &members, &c).unwrap();
        let via = |in_field: bool| -> Vec<JoinedMember> {
            // m0 leaves, m3 joins: m1 and m2 keep what they had only if it is read.
            (1..4)
                .map(|i| {
                    let id = format!("m{i}");
                    let mut m = member(&id, &[]);
                    let owned = first.get(&id).cloned().unwrap_or_default();
                    if in_field {
                        m.subscription.owned = owned;
                    } else {
                        m.subscription.user_data =
                            Some(partwise_wire::consumer::encode_owned(&owned, 1));
                    }
                    m
                })
                .collect()
        };
        let field = leader_assignment("copartitioned", &via(true), &c).unwrap();
        let data = leader_assignment("copartitioned", &via(false), &c).unwrap();
        assert_eq!(field, data);
        let mut forgotten = via(false);
        for m in &mut forgotten {
            m.subscription.user_data = None;
        }
        let fresh = leader_assignment("copartitioned", &forgotten, &c).unwrap();
        assert_ne!(field, fresh, "stickiness made no difference here");
        for id in ["m1", "m2"] {
            for tp in &first[id] {
                assert!(data[id].contains(tp), "{tp:?} moved off {id}");
            }
        }
    }

    /// A member whose subscription holds a topic name that is not UTF-8
    /// (which Apache Kafka relays as it got it) is left out with its reason;
    /// the leader still assigns, the others get what they would without it,
    /// and the unreadable member gets an empty assignment.
    #[test]
    fn an_unreadable_member_is_assigned_around() {
        use bytes::BufMut;
        let c = counts(&[("a", 6), ("b", 6)]);
        let good = |id: &str| {
            (
                id.to_string(),
                None,
                member(id, &[]).subscription.encode().unwrap(),
            )
        };
        // v0: topics ["a", ff], no user data.
        let mut bad = bytes::BytesMut::new();
        bad.put_i16(0);
        bad.put_i32(2);
        bad.put_i16(1);
        bad.put_slice(b"a");
        bad.put_i16(1);
        bad.put_u8(0xff);
        bad.put_i32(-1);
        let hostile_id = "rogue-client-0d9c7f5e-3a1b-4c2d-8e9f-0123456789ab".to_string();
        let raw = vec![
            good("m0"),
            (hostile_id.clone(), Some("rogue".into()), bad.freeze()),
            good("m2"),
        ];
        let (readable, unreadable) = read_members(raw.clone());
        assert_eq!(
            readable
                .iter()
                .map(|m| m.member_id.as_str())
                .collect::<Vec<_>>(),
            ["m0", "m2"]
        );
        assert_eq!(unreadable.len(), 1);
        let u = &unreadable[0];
        assert_eq!(
            (
                u.member_id.as_str(),
                u.client_id.as_str(),
                u.instance_id.as_deref()
            ),
            (hostile_id.as_str(), "rogue-client", Some("rogue"))
        );
        assert_eq!(
            u.reason,
            "its subscription could not be decoded: subscription v0: subscribed topic name 1 \
             is not UTF-8 (bytes ff)"
        );
        let around =
            leader_sync_assignments_around("copartitioned", &readable, &unreadable, &c).unwrap();
        // Without the member at all.
        let (without, none) = read_members([raw[0].clone(), raw[2].clone()]);
        assert!(none.is_empty());
        let alone = leader_sync_assignments("copartitioned", &without, &c).unwrap();
        assert_eq!(around[..2], alone[..]);
        assert_eq!(around[2].0, hostile_id);
        let got = Assignment::decode(around[2].1.clone()).unwrap();
        assert!(got.partitions.is_empty());
        assert_eq!(
            got.user_data
                .as_deref()
                .and_then(partwise_wire::consumer::decode_unit_groups),
            Some(vec![vec!["a".to_string(), "b".to_string()]])
        );
        let held: usize = alone
            .iter()
            .map(|(_, b)| Assignment::decode(b.clone()).unwrap().partitions.len())
            .sum();
        assert_eq!(held, 12, "every partition goes to a readable member");
    }

    #[test]
    fn client_ids_from_member_ids() {
        assert_eq!(
            client_id_of("partwise-0d9c7f5e-3a1b-4c2d-8e9f-0123456789ab"),
            "partwise"
        );
        assert_eq!(client_id_of("m0"), "");
        assert_eq!(client_id_of("-0d9c7f5e-3a1b-4c2d-8e9f-0123456789ab"), "");
        assert_eq!(
            client_id_of("\u{e9}0d9c7f5e-3a1b-4c2d-8e9f-0123456789abcd"),
            ""
        );
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
