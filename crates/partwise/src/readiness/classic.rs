//! A classic group's move to the consumer protocol: what the coordinator's
//! online upgrade does with it, what server `range` would do with its
//! members, which accepted `group.remote.assignor` keeps its units whole, and
//! the path of a Kafka Streams application.

use super::*;

/// What a member's assignment user data is, for the message.
fn user_data_kind(data: &[u8]) -> String {
    if data.starts_with(b"pwu\x00") {
        "partwise co-partition groups".to_string()
    } else {
        format!("{} bytes of assignor data", data.len())
    }
}

/// The coordinator's decision, in its order of checks.
fn upgrade(g: &ClassicGroup, cfg: &BrokerConfig) -> Upgrade {
    let refuse = |reason, why: &str, detail: String| Upgrade::Refused {
        reason,
        error: "GROUP_ID_NOT_FOUND",
        message: format!(
            "Cannot upgrade classic group {} to consumer group because {why}.",
            g.name
        ),
        detail,
    };
    if g.state.is_empty() || g.state == "Dead" {
        return Upgrade::Allowed {
            how: "the group does not exist: the first member creates a consumer group".into(),
        };
    }
    if g.state == "Empty" {
        return Upgrade::Allowed {
            how: "the classic group is empty: the broker deletes it and creates a consumer group (committed offsets stay)".into(),
        };
    }
    let policy = cfg.policy();
    if policy != "upgrade" && policy != "bidirectional" {
        return refuse(
            Refusal::Policy,
            "online upgrade is disabled",
            format!("group.consumer.migration.policy is {policy}"),
        );
    }
    if g.protocol_type != "consumer" {
        return refuse(
            Refusal::ProtocolType,
            "the group does not use the consumer embedded protocol",
            format!("its protocol type is '{}'", g.protocol_type),
        );
    }
    let n = g.members.len() as u64;
    if n > cfg.max_size() {
        return refuse(
            Refusal::TooLarge,
            "the group size exceeds the consumer group maximum size",
            format!("{n} members, group.consumer.max.size is {}", cfg.max_size()),
        );
    }
    let custom: Vec<String> = g
        .members
        .iter()
        .zip(&g.assignment_user_data)
        .filter_map(|(m, d)| {
            d.as_ref()
                .filter(|d| !d.is_empty())
                .map(|d| format!("{} ({})", m.id, user_data_kind(d)))
        })
        .collect();
    // The coordinator converts member by member, reading the assignment's
    // user data and then the subscription with ConsumerProtocol, which
    // refuses a body shorter than its declared version: the conversion
    // fails with "the embedded consumer protocol is malformed".
    let malformed: Vec<String> = g
        .members
        .iter()
        .zip(&g.clients)
        .filter_map(|(m, c)| {
            let (v, b) = (c.metadata_version?, c.body_version?);
            Some(format!("{} (subscription v{v} with a v{b} body)", m.id))
        })
        .collect();
    if custom.is_empty() && !malformed.is_empty() {
        return refuse(
            Refusal::Malformed,
            "the embedded consumer protocol is malformed",
            format!(
                "the broker's ConsumerProtocol cannot read the subscription of {}",
                malformed.join(", ")
            ),
        );
    }
    if !custom.is_empty() {
        // A large group would make the detail a member list: three name it.
        let more = match custom.len() {
            n if n > 3 => format!(" and {} more", n - 3),
            _ => String::new(),
        };
        return refuse(
            Refusal::CustomAssignor,
            "an unsupported custom assignor is in use. Please refer to the documentation or switch to a default \
             assignor before re-attempting the upgrade",
            format!(
                "assignor {}: the assignment user data of {}{more} would be lost",
                g.protocol,
                custom[..custom.len().min(3)].join(", ")
            ),
        );
    }
    let missing: Vec<&str> = g
        .members
        .iter()
        .filter(|m| m.assignment.is_none())
        .map(|m| m.id.as_str())
        .collect();
    if !missing.is_empty() {
        return Upgrade::Unknown {
            why: format!(
                "the group is in state {} and the broker returned no assignment for {}: \
                 whether their assignor writes user data cannot be told",
                g.state,
                missing.join(", ")
            ),
        };
    }
    if n >= cfg.max_size() {
        // The conversion passes, then the joining member finds the group full
        // and the heartbeat fails, so nothing is written: still classic.
        return Upgrade::Refused {
            reason: Refusal::Full,
            error: "GROUP_MAX_SIZE_REACHED",
            message: format!(
                "The consumer group has reached its maximum capacity of {} members.",
                cfg.max_size()
            ),
            detail: format!(
                "{n} members, group.consumer.max.size is {}: the joining member makes one too many",
                cfg.max_size()
            ),
        };
    }
    Upgrade::Allowed {
        how: format!(
            "the group is converted to a consumer group at the first consumer-protocol heartbeat; \
             its {n} classic members stay until each rejoins with the consumer protocol"
        ),
    }
}

/// Server `range` on the described subscriptions; `None` (with a finding)
/// when a subscription or topic is unknown.
pub(super) fn range_check(
    members: &[DescribedMember],
    topics: &[ClusterTopic],
    model: Assignor,
    assignor: &str,
    findings: &mut Vec<Finding>,
) -> Option<RangeCheck> {
    let r = match analyze(members, topics, Some((model, &[]))) {
        Ok(r) => r,
        Err(e) => {
            let why = match &e {
                PredictError::NoSubscription { member } => format!(
                    "the broker returned no subscription for member {member} (the group is rebalancing)"
                ),
                other => other.to_string(),
            };
            findings.push(finding(
                "range-unknown",
                format!("what server range would do cannot be told: {why}"),
                "run again when the group is Stable",
            ));
            return None;
        }
    };
    let (_, view) = r.predicted?;
    let mut subscriptions: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
    // A member whose subscription could not be read is its own finding, not
    // a member of another subscription.
    for m in members.iter().filter(|m| m.undecodable.is_none()) {
        let mut s = m.subscription.clone().unwrap_or_default();
        s.sort();
        s.dedup();
        subscriptions.entry(s).or_default().push(m.id.clone());
    }
    if subscriptions.len() < 2 {
        subscriptions.clear();
    }
    let names: BTreeSet<&String> = members
        .iter()
        .flat_map(|m| m.subscription.iter().flatten())
        .collect();
    let mut counts: Vec<(String, u32)> = names
        .into_iter()
        .filter_map(|t| {
            topics
                .iter()
                .find(|c| &c.name == t)
                .map(|c| (t.clone(), c.partitions))
        })
        .collect();
    if counts.iter().map(|c| c.1).collect::<BTreeSet<_>>().len() < 2 {
        counts.clear();
    } else {
        counts.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    }
    let split_count = view.split_count();
    if split_count > 0 {
        let sets: Vec<String> = view
            .sets
            .iter()
            .filter(|s| s.colocation.split_count() > 0)
            .map(|s| {
                format!(
                    "{} of {} indices of {}",
                    s.colocation.split_count(),
                    s.colocation.owners.len(),
                    s.topics.join(", ")
                )
            })
            .collect();
        let cause = if subscriptions.is_empty() {
            String::new()
        } else {
            format!(
                ": the members do not subscribe to the same topics ({})",
                subscriptions
                    .iter()
                    .map(|(s, ms)| format!("{} -> {}", ms.join(","), s.join(",")))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        };
        findings.push(finding(
            "range-splits",
            format!("server range would split {}{cause}", sets.join("; ")),
            format!(
                "give every member the same subscription before the move (server range co-partitions only then, \
                 and only topics of equal partition counts), or use {assignor}"
            ),
        ));
    }
    Some(RangeCheck {
        model,
        view,
        split_count,
        subscriptions,
        counts,
    })
}

pub(super) fn remote_assignors(
    configs: &[BrokerConfig],
    range_whole: Option<bool>,
    findings: &mut Vec<Finding>,
) -> Vec<RemoteAssignor> {
    let Some(first) = configs.first() else {
        return Vec::new();
    };
    let copartitioned = copartitioned_brokers(configs);
    let off: Vec<String> = configs
        .iter()
        .filter(|c| {
            c.rebalance_protocols
                .as_ref()
                .is_some_and(|p| !p.iter().any(|p| p.trim().eq_ignore_ascii_case("consumer")))
        })
        .map(|c| c.broker.to_string())
        .collect();
    if !off.is_empty() {
        findings.push(finding(
            "consumer-protocol-disabled",
            format!(
                "broker(s) {} do not list consumer in group.coordinator.rebalance.protocols: \
                 a group.protocol=consumer member cannot join at all",
                off.join(", ")
            ),
            "add consumer to group.coordinator.rebalance.protocols on every broker (and check that the \
             cluster's group.version feature is 1 or more)",
        ));
    }
    for c in &configs[1..] {
        if c.assignor_entries() != first.assignor_entries()
            || c.policy() != first.policy()
            || c.max_size() != first.max_size()
            || c.rebalance_protocols != first.rebalance_protocols
        {
            findings.push(finding(
                "broker-configs-differ",
                format!(
                    "brokers {} and {} differ in group.consumer.assignors, group.consumer.migration.policy \
                     or group.consumer.max.size: the group's coordinator decides, and it moves on failover",
                    first.broker, c.broker
                ),
                match (&copartitioned.accepting[..], &copartitioned.lacking[..]) {
                    ([_, ..], [_, ..]) => format!(
                        "give every broker the same group.consumer.* settings; for partwise's broker assignor, set {}",
                        copartitioned_advice(configs)
                    ),
                    _ => "give every broker the same group.consumer.* settings".into(),
                },
            ));
        }
    }
    let list: Vec<RemoteAssignor> = first
        .assignor_entries()
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let name = assignor_name(e);
            let keeps_units = match name {
                Some("copartitioned") => KeepsUnits::Yes,
                Some("range") => match range_whole {
                    Some(true) => KeepsUnits::Holds,
                    Some(false) => KeepsUnits::No,
                    None => KeepsUnits::Unknown,
                },
                Some(_) => KeepsUnits::No,
                None => KeepsUnits::Unknown,
            };
            RemoteAssignor {
                entry: e.trim().to_string(),
                name: name.map(str::to_string),
                keeps_units,
                default: i == 0,
            }
        })
        .collect();
    if !list
        .iter()
        .any(|a| matches!(a.keeps_units, KeepsUnits::Yes | KeepsUnits::Holds))
    {
        findings.push(finding(
            "no-remote-assignor-keeps-units",
            if list.is_empty() {
                "the brokers accept no assignor (group.consumer.assignors is empty), so none keeps this group's co-partitioned indices together".to_string()
            } else {
                format!(
                    "no assignor the brokers accept ({}) keeps this group's co-partitioned indices together",
                    list.iter()
                        .map(|a| a.name.clone().unwrap_or_else(|| a.entry.clone()))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            },
            format!("set {}", copartitioned_advice(configs)),
        ));
    }
    list
}

/// Whether the classic group `g` is ready to move, with the brokers'
/// settings `configs` (at least one; the first is shown) and the cluster's
/// partition counts; server `range` as [`Assignor::Kip848Range`] computes it.
pub fn classic(g: &ClassicGroup, configs: &[BrokerConfig], topics: &[ClusterTopic]) -> Readiness {
    classic_with(g, configs, topics, Assignor::Kip848Range)
}

/// [`classic`], with server `range` as `range_model` computes it (the model
/// of the brokers' release, [`crate::assign::kip848_model_for_broker`]).
pub fn classic_with(
    g: &ClassicGroup,
    configs: &[BrokerConfig],
    topics: &[ClusterTopic],
    range_model: Assignor,
) -> Readiness {
    let default = BrokerConfig::default();
    let cfg = configs.first().unwrap_or(&default);
    let clients = member_clients(g);
    let client_id = |i: usize| {
        crate::group::clients::shown_client_id(
            g.clients.get(i).map_or("", |c| c.client_id.as_str()),
        )
    };
    // A member whose bytes partwise cannot read subscribes to what it cannot
    // tell: no prediction is made for the group as if it subscribed to nothing.
    let mut findings: Vec<Finding> = g
        .members
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            let why = m.undecodable.as_ref()?;
            Some(finding(
                crate::group::described::UNDECODABLE,
                format!(
                    "member {} ({}): {why}; what it subscribes to is unknown, so partwise predicts \
                     no server assignor's target for this group and cannot call it ready",
                    m.id,
                    client_id(i)
                ),
                format!(
                    "check which client and version member {} runs ({}; its host is in the member \
                     table): it writes bytes that are not the consumer protocol's; fix or stop it, then run again",
                    m.id,
                    client_id(i)
                ),
            ))
        })
        .collect();
    let undecodable = g
        .members
        .iter()
        .any(|m| m.undecodable.is_some() && m.subscription.is_none());
    let advice = copartitioned_advice(configs);
    // The group's present state comes first: a group that splits units now
    // is not ready, whatever a move would do.
    let live = analyze(&g.members, topics, None).ok().and_then(|a| a.live);
    if let Some(v) = live.as_ref().filter(|v| v.split_count() > 0) {
        let sets: Vec<String> = v
            .sets
            .iter()
            .filter(|s| s.colocation.split_count() > 0)
            .map(|s| {
                format!(
                    "{} of {} indices of {}",
                    s.colocation.split_count(),
                    s.colocation.owners.len(),
                    s.topics.join(", ")
                )
            })
            .collect();
        let keep: Vec<String> = clients
            .iter()
            .map(|c| format!("{}: {}", c.client.facts().name, c.client.facts().keep_units))
            .collect();
        findings.push(finding(
            "splits-now",
            format!(
                "the group splits co-partitioned indices right now, under its assignor {}: {}",
                g.protocol,
                sets.join("; ")
            ),
            format!(
                "keep each index's partitions on one member before (or instead of) any move: {}",
                keep.join("; ")
            ),
        ));
    }
    let streams = clients.iter().any(|c| c.client == Client::KafkaStreams);
    // A member whose client has no consumer protocol cannot join with it, so
    // the group cannot move while it is in the group, whatever the
    // coordinator would allow: each such client is a finding of its own,
    // with what its members can do instead. A member partwise cannot
    // identify may be one of them: unknown, never ready.
    for c in &clients {
        let f = c.client.facts();
        let members = c.members.join(", ");
        match (c.client, f.without) {
            (Client::Unknown, _) => {
                let ids: Vec<String> = g
                    .members
                    .iter()
                    .enumerate()
                    .filter(|(_, m)| c.members.contains(&m.id))
                    .map(|(i, m)| format!("{} ({})", m.id, client_id(i)))
                    .collect();
                findings.push(finding(
                    "client-unknown",
                    format!(
                        "member(s) {} run a client partwise cannot identify ({}): whether they can join with \
                         the consumer protocol, and from which release, is unknown",
                        ids.join(", "),
                        c.evidence
                    ),
                    f.alternative,
                ))
            }
            (Client::KafkaStreams, Some(without)) => findings.push(finding(
                "streams-group",
                format!("member(s) {members} run Kafka Streams ({}): {without}", c.evidence),
                streams_path(configs),
            )),
            (_, Some(without)) => findings.push(finding(
                "client-without-consumer-protocol",
                format!(
                    "member(s) {members} run {} ({}): {without}, so they cannot join with the consumer protocol and \
                     the group cannot move to it while they are in it",
                    f.name, c.evidence
                ),
                f.alternative,
            )),
            _ => {}
        }
    }
    let upgrade = upgrade(g, cfg);
    match &upgrade {
        // Kafka Streams never joins with group.protocol=consumer: the
        // coordinator's upgrade rules do not apply to its move.
        _ if streams => {}
        Upgrade::Refused {
            reason,
            error,
            message,
            detail,
        } => findings.push(finding(
            reason.kind(),
            format!("an online upgrade would be refused ({detail}): the joining member gets {error}: {message}"),
            reason.fix(&advice),
        )),
        Upgrade::Unknown { why } => findings.push(finding(
            "upgrade-unknown",
            format!("whether an online upgrade would be refused cannot be told: {why}"),
            "run again when the group is Stable",
        )),
        Upgrade::Allowed { .. } => {}
    }
    // Server range is what a consumer-protocol member would get: not asked
    // for a Streams group, nor when a member's subscription is unknown.
    let range = if g.members.is_empty() || streams || undecodable {
        None
    } else {
        range_check(&g.members, topics, range_model, &advice, &mut findings)
    };
    let mut assignor_findings = Vec::new();
    let assignors = remote_assignors(
        configs,
        range.as_ref().map(|r| r.split_count == 0),
        &mut assignor_findings,
    );
    if !streams {
        findings.extend(assignor_findings);
    }
    Readiness {
        upgrade,
        live,
        range,
        assignors,
        copartitioned: copartitioned_brokers(configs),
        clients,
        findings,
    }
}

/// A classic Kafka Streams group's way off the classic protocol: the
/// streams rebalance protocol, in Kafka Streams' and the broker's own
/// settings, with the brokers that leave `streams` out of
/// `group.coordinator.rebalance.protocols` named, the offline move the
/// coordinator requires (no online migration between the classic and the
/// streams protocol) and what the streams protocol does not support yet
/// (Apache Kafka's "Streams Rebalance Protocol" guide; the sources are in
/// `docs/reference/kafka-streams.md`).
pub fn streams_path(configs: &[BrokerConfig]) -> String {
    let mut s = String::from(
        "set group.protocol=streams in the application's StreamsConfig (Kafka Streams 4.2 or later), with every broker on Apache Kafka 4.2 or later and streams groups enabled: \
         the feature streams.version=1 (set on a cluster formatted by 4.2 or later; on an upgraded one \
         kafka-features.sh upgrade --feature streams.version=1) and streams in \
         group.coordinator.rebalance.protocols",
    );
    let lacking: Vec<String> = configs
        .iter()
        .filter(|c| {
            c.rebalance_protocols
                .as_ref()
                .is_some_and(|p| !p.iter().any(|x| x == "streams"))
        })
        .map(|c| c.broker.to_string())
        .collect();
    if !lacking.is_empty() {
        s.push_str(&format!(
            " (broker(s) {} leave streams out of group.coordinator.rebalance.protocols: add it)",
            lacking.join(", ")
        ));
    }
    s.push_str(
        "; the move is offline: stop every instance, wait for session.timeout.ms (or have them leave the \
         group), then start them all with group.protocol=streams (committed offsets are kept); not supported \
         yet under the streams protocol: static membership (a group.instance.id is rejected), source topics \
         by regular expression, warm-up tasks (the broker's sticky assignor only), and topology changes that \
         add source topics or sub-topologies (they need a new application.id)",
    );
    s
}

/// The target server `uniform` would give the members of a group that
/// moves with none of them carrying partitions over (a fresh consumer
/// group), as `model` computes it: the model of the brokers' release
/// ([`crate::assign::kip848_model_for_broker`]). `None` when the model is
/// undecided, there are no members, or a subscription is unknown.
pub fn server_uniform(
    members: &[DescribedMember],
    topics: &[ClusterTopic],
    model: Option<Assignor>,
) -> Option<View> {
    let model = model?;
    if members.is_empty()
        || members
            .iter()
            .any(|m| m.undecodable.is_some() && m.subscription.is_none())
    {
        return None;
    }
    analyze(members, topics, Some((model, &[])))
        .ok()
        .and_then(|a| a.predicted)
        .map(|(_, view)| view)
}
