//! A group already on the consumer protocol: its current and target
//! assignments, as the coordinator describes them, judged.

use super::classic::{range_check, remote_assignors};
use super::*;

/// A consumer-protocol group's two assignments: what the broker's assignor
/// decided (target) and what the members own now (current).
#[derive(Clone, Debug, PartialEq)]
pub struct ConsumerGroupCheck {
    /// The group's assignor (`group.remote.assignor` in use).
    pub assignor: String,
    /// The target assignment's view (`None`: not returned).
    pub target: Option<View>,
    /// The current assignment's view.
    pub current: Option<View>,
    /// Whether the members own their targets (reconciliation done).
    pub reconciled: bool,
    /// Server `range` on the members' subscriptions (`None`: not known).
    pub range: Option<RangeCheck>,
    /// The accepted assignors.
    pub assignors: Vec<RemoteAssignor>,
    /// The clients the members run, as their client ids tell them (empty
    /// when the caller gave none).
    pub clients: Vec<ClientMembers>,
    /// Everything to fix; empty when every unit is whole in both and every
    /// member's client is known.
    pub findings: Vec<Finding>,
}

/// A consumer-protocol group: `current` holds the members' owned
/// partitions, `target` the same members with the broker's target
/// assignment; server `range` as [`Assignor::Kip848Range`] computes it.
pub fn consumer(
    assignor: &str,
    current: &[DescribedMember],
    target: &[DescribedMember],
    configs: &[BrokerConfig],
    topics: &[ClusterTopic],
) -> ConsumerGroupCheck {
    consumer_with(
        assignor,
        current,
        target,
        configs,
        topics,
        Assignor::Kip848Range,
        false,
        &[],
    )
}

/// [`consumer`], with server `range` as `range_model` computes it;
/// `assigning`: the group is in state Assigning (its group epoch is ahead of
/// its target's: a member joined, left or changed its subscription, and the
/// coordinator has not computed the new target yet; since Kafka 4.1 it does
/// that a moment later, and meanwhile a joiner's target is empty);
/// `clients`: per member of `current` (same order), what the description
/// shows of its client (ConsumerGroupDescribe: its client id). A member
/// whose client its client id does not tell is unknown: a finding naming
/// it, so the group is never called ready while it is there. An empty
/// `clients` identifies no one (a caller without client ids).
#[allow(clippy::too_many_arguments)]
pub fn consumer_with(
    assignor: &str,
    current: &[DescribedMember],
    target: &[DescribedMember],
    configs: &[BrokerConfig],
    topics: &[ClusterTopic],
    range_model: Assignor,
    assigning: bool,
    clients: &[ClientSeen],
) -> ConsumerGroupCheck {
    let mut findings = crate::group::described::undecodable_findings(current);
    let mut members_of: Vec<ClientMembers> = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    for (m, seen) in current.iter().zip(clients) {
        let who = crate::group::clients::identify_consumer_member(&seen.client_id);
        if who.client == Client::Unknown {
            unknown.push(format!(
                "{} ({})",
                m.id,
                crate::group::clients::shown_client_id(&seen.client_id)
            ));
        }
        match members_of.iter_mut().find(|c| c.client == who.client) {
            Some(c) => c.members.push(m.id.clone()),
            None => members_of.push(ClientMembers {
                client: who.client,
                members: vec![m.id.clone()],
                evidence: who.evidence,
            }),
        }
    }
    members_of.sort_by_key(|c| c.client);
    if !unknown.is_empty() {
        findings.push(finding(
            "client-unknown",
            format!(
                "member(s) {} run a client partwise cannot identify: a consumer-protocol member \
                 shows only its client id, and none of these is a client's default; what the \
                 client does with its assignment (and whether it keeps a unit's partitions \
                 together while it reconciles) is unknown, so the group is not called ready",
                unknown.join(", ")
            ),
            format!(
                "check which client library and release each of {} runs (its host is in the \
                 member table); leave client.id (client_id, clientId) at the library's default \
                 to let partwise tell it, then run again",
                unknown.join(", ")
            ),
        ));
    }
    let view = |ms: &[DescribedMember]| analyze(ms, topics, None).ok().and_then(|r| r.live);
    let (cur, tgt) = (view(current), view(target));
    let reconciled = !assigning
        && match (&cur, &tgt) {
            (Some(c), Some(t)) => c.owned_by() == t.owned_by(),
            _ => false,
        };
    if assigning {
        findings.push(finding(
            "target-pending",
            "the coordinator is computing a new target assignment (group state Assigning: \
             the membership or a subscription changed moments ago); the target shown is \
             the previous one"
                .into(),
            "run again in a few seconds",
        ));
    }
    let sets = |v: &View| {
        v.sets
            .iter()
            .filter(|s| s.colocation.split_count() > 0)
            .map(|s| format!("{} of {}", s.colocation.split_count(), s.topics.join(", ")))
            .collect::<Vec<_>>()
            .join("; ")
    };
    match &tgt {
        Some(t) if t.split_count() > 0 => findings.push(finding(
            "target-splits",
            format!(
                "the broker's assignor {assignor} splits {} indices in its target assignment ({})",
                t.split_count(),
                sets(t)
            ),
            format!(
                "use {}, or, for range, the same subscription on every member and equal partition counts",
                copartitioned_advice(configs)
            ),
        )),
        Some(_) => {}
        None => findings.push(finding(
            "target-unknown",
            "the broker returned no target assignment".into(),
            "run again",
        )),
    }
    if let Some(c) = &cur {
        if c.split_count() > 0 && tgt.as_ref().is_some_and(|t| t.split_count() == 0) {
            findings.push(finding(
                "reconciling-split",
                format!(
                    "members still reconcile to the target: {} indices are split right now ({})",
                    c.split_count(),
                    sets(c)
                ),
                "a partwise runtime hands a unit out only when all its partitions are owned; \
                 other members process split indices until reconciliation ends: run again",
            ));
        }
    }
    // Whether range would do: its own verdict on these subscriptions, not the
    // target of whichever assignor the group uses now. Its findings would
    // repeat target-splits for a range group and are noise for the others.
    let range = range_check(target, topics, range_model, "", &mut Vec::new());
    let whole = range.as_ref().map(|r| r.split_count == 0);
    let assignors = remote_assignors(configs, whole, &mut Vec::new());
    ConsumerGroupCheck {
        assignor: assignor.to_string(),
        target: tgt,
        current: cur,
        reconciled,
        range,
        assignors,
        clients: members_of,
        findings,
    }
}
