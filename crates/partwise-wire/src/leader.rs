//! The classic-protocol leader's computation, bytes in and bytes out: the
//! members of a JoinGroup response (their subscription bytes) and the
//! partition counts of their topics in, each member's SyncGroup assignment
//! (the core's assignor, with the co-partition groups in its user data) out.
//!
//! It is here, beside the consumer protocol's bytes and with no I/O, so that
//! every partwise leader runs this one code: the Rust runtime
//! (`partwise-group`, which fetches the counts and sends the bytes) and the
//! KafkaJS binding (the same code compiled to WebAssembly), and the
//! consistency vectors the Java port replays are written from it.

use crate::consumer::{
    decode_owned, encode_assignment_by_topic, encode_unit_groups, Assignment, Subscription,
};
use crate::error::{Error, Result};
use bytes::Bytes;
use partwise::assign::units::{named_group, unit_groups};
use partwise::assign::{Assignor, Group, Member};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

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

/// A member whose subscription the leader cannot read (a topic name that is
/// not UTF-8, truncated bytes, another protocol's metadata): the leader gives
/// it nothing rather than fail the whole group, and says so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnreadableMember {
    /// Broker-given member id.
    pub member_id: String,
    /// Its `client.id`, as the classic member id starts with it (empty when
    /// the id is not of that form).
    pub client_id: String,
    /// `group.instance.id` of a static member.
    pub instance_id: Option<String>,
    /// Why its subscription could not be decoded.
    pub reason: String,
}

/// The `client.id` a classic member id starts with: the coordinator names a
/// member `<client.id>-<uuid>`; empty for an id not of that form.
pub fn client_id_of(member_id: &str) -> String {
    const UUID: usize = 36;
    let n = member_id.len();
    if n > UUID
        && member_id.as_bytes()[n - UUID - 1] == b'-'
        && member_id.is_char_boundary(n - UUID)
    {
        let uuid = &member_id[n - UUID..];
        if uuid.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
            return member_id[..n - UUID - 1].to_string();
        }
    }
    String::new()
}

/// The members of a JoinGroup response, each (member id, instance id,
/// subscription bytes), split into those whose subscription decodes and
/// those it does not, in their order. One member's bytes never stop the
/// leader from assigning the others.
pub fn read_members(
    raw: impl IntoIterator<Item = (String, Option<String>, Bytes)>,
) -> (Vec<JoinedMember>, Vec<UnreadableMember>) {
    let mut readable = Vec::new();
    let mut unreadable = Vec::new();
    for (member_id, instance_id, bytes) in raw {
        match Subscription::decode(bytes) {
            Ok(subscription) => readable.push(JoinedMember {
                member_id,
                instance_id,
                subscription,
            }),
            Err(e) => unreadable.push(UnreadableMember {
                client_id: client_id_of(&member_id),
                member_id,
                instance_id,
                reason: format!("its subscription could not be decoded: {e}"),
            }),
        }
    }
    (readable, unreadable)
}

/// Partition counts as the core takes them; a negative count (never sent by
/// a broker) is no partitions.
pub fn core_counts(counts: &BTreeMap<String, i32>) -> BTreeMap<String, u32> {
    counts
        .iter()
        .map(|(t, n)| (t.clone(), u32::try_from(*n).unwrap_or(0)))
        .collect()
}

/// What a member owned: the standard field, or when that is empty (an eager
/// Java member revokes before it joins) what it wrote in its user data, as
/// Java's `CopartitionedAssignor` leader reads it too.
fn owned_of(s: &Subscription) -> Cow<'_, [(String, i32)]> {
    if !s.owned.is_empty() {
        return Cow::Borrowed(&s.owned);
    }
    Cow::Owned(
        s.user_data
            .as_deref()
            .and_then(decode_owned)
            .map(|(owned, _)| owned)
            .unwrap_or_default(),
    )
}

/// The members over the topics of `counts`, as the core's assignors take them.
fn group_of(members: &[JoinedMember], counts: &BTreeMap<String, i32>) -> Group {
    named_group(
        members.iter().map(|m| {
            let mut member = Member::new(m.member_id.clone(), m.subscription.topics.clone());
            member.instance_id = m.instance_id.clone();
            member.generation =
                (m.subscription.generation >= 0).then_some(m.subscription.generation);
            (member, owned_of(&m.subscription))
        }),
        &core_counts(counts),
    )
}

/// The co-partition groups of `members` over the topics in `counts`, by
/// partition count and subscribers: what the leader sends every member.
pub fn leader_unit_groups(
    members: &[JoinedMember],
    counts: &BTreeMap<String, i32>,
) -> Vec<Vec<String>> {
    unit_groups(&group_of(members, counts))
}

/// The leader's assignment under `assignor` of `members` over the topics in
/// `counts`: member id to (topic, partition).
pub fn leader_assignment(
    assignor: Assignor,
    members: &[JoinedMember],
    counts: &BTreeMap<String, i32>,
) -> std::result::Result<HashMap<String, Vec<(String, i32)>>, partwise::Error> {
    plan(assignor, &group_of(members, counts))
}

/// `assignor`'s assignment of `group`, by member id and topic name.
fn plan(
    assignor: Assignor,
    group: &Group,
) -> std::result::Result<HashMap<String, Vec<(String, i32)>>, partwise::Error> {
    let assignment = assignor.assign(group)?;
    let mut out = HashMap::with_capacity(group.members.len());
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

/// What the leader sends in SyncGroup under `assignor`: each member's
/// encoded assignment, with the co-partition groups in its user data, in
/// the order of `members` (a member with nothing gets an empty assignment,
/// so it still learns the groups). Every partwise leader, in the runtime or
/// in a binding, writes these bytes.
pub fn leader_sync_assignments(
    assignor: Assignor,
    members: &[JoinedMember],
    counts: &BTreeMap<String, i32>,
) -> Result<Vec<(String, Bytes)>> {
    // One group for both the assignment and the co-partition groups: its
    // owned partitions are the members' claims, thousands at scale.
    let group = group_of(members, counts);
    let assignment = assignor.assign(&group).map_err(Error::Assignor)?;
    let groups = encode_unit_groups(&unit_groups(&group));
    // A member id given twice gets the assignment of its last entry, as a
    // map by id would give it.
    let last: HashMap<&str, usize> = group
        .members
        .iter()
        .enumerate()
        .map(|(i, m)| (m.id.as_str(), i))
        .collect();
    // Topic indices are in name order (the counts' order), so grouping by
    // index lists the topics as the protocol does, without a name per
    // partition.
    let mut by_topic: Vec<Vec<i32>> = vec![Vec::new(); group.topics.len()];
    members
        .iter()
        .map(|m| {
            for list in &mut by_topic {
                list.clear();
            }
            for tp in &assignment.partitions[last[m.member_id.as_str()]] {
                by_topic[tp.topic as usize].push(tp.partition as i32);
            }
            let lists = by_topic
                .iter_mut()
                .enumerate()
                .filter(|(_, ps)| !ps.is_empty())
                .map(|(t, ps)| {
                    ps.sort_unstable();
                    ps.dedup();
                    (group.topics[t].name.as_str(), ps.clone())
                });
            let bytes = encode_assignment_by_topic(lists, Some(groups.clone()))?;
            Ok((m.member_id.clone(), bytes))
        })
        .collect()
}

/// [`leader_sync_assignments`] of the `readable` members, and for each of
/// the `unreadable` ones an assignment of nothing (with the co-partition
/// groups, as every member gets them): the others get exactly what they
/// would get were it not in the group.
pub fn leader_sync_assignments_around(
    assignor: Assignor,
    readable: &[JoinedMember],
    unreadable: &[UnreadableMember],
    counts: &BTreeMap<String, i32>,
) -> Result<Vec<(String, Bytes)>> {
    let mut out = leader_sync_assignments(assignor, readable, counts)?;
    let nothing = Assignment {
        partitions: Vec::new(),
        user_data: Some(encode_unit_groups(&leader_unit_groups(readable, counts))),
    }
    .encode()?;
    out.extend(
        unreadable
            .iter()
            .map(|m| (m.member_id.clone(), nothing.clone())),
    );
    Ok(out)
}
