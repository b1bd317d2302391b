//! Kafka Streams groups under the streams rebalance protocol
//! (`group.protocol=streams`): StreamsGroupDescribe through partwise-client,
//! put in the core's terms and judged against the cluster's partition counts
//! ([`partwise::streams::group::analyze`]); and Kafka Streams groups under
//! the classic protocol (assignor `stream`), whose members' Streams user
//! data is decoded ([`partwise_wire::streams_info`]) and judged
//! ([`partwise::streams::group::analyze_classic`]).

use crate::cluster::cluster_topics;
use crate::connect::Connection;
use crate::error::{Error, Result};
use crate::group::{AssignmentData, GroupDescription, MemberDescription};
use partwise::streams::group::{
    analyze, analyze_classic, ClassicStreamsMember, ClassicStreamsReport, StreamsGroup,
    StreamsMember, StreamsReport, SubTopology, Task, TaskHolding, Tasks,
};
use partwise_wire::streams as wire;
use partwise_wire::streams_info::{AssignmentInfo, SubscriptionInfo, TaskId};
use std::collections::BTreeMap;

/// GROUP_ID_NOT_FOUND: the coordinator has no streams group of that id
/// (it may have a classic or consumer group of it).
const GROUP_ID_NOT_FOUND: i16 = 69;

/// Streams group `group` described and judged (with `joins`, the source
/// topics Streams co-partitions, as [`analyze`] takes them), or `None` when
/// the coordinator has no streams group of that id or does not offer
/// StreamsGroupDescribe (a broker from before streams groups).
pub fn streams_analysis(
    conn: &Connection,
    group: &str,
    joins: &[Vec<String>],
) -> Result<Option<StreamsReport>> {
    streams_analyses(conn, &[group.to_string()], joins)?
        .pop()
        .map_or(Ok(None), |(_, r)| r)
}

/// Each of `groups` described and judged as [`streams_analysis`] does, in
/// one StreamsGroupDescribe per coordinator and one reading of the
/// cluster's partition counts: per group (in the order given) its report,
/// `None` when its coordinator has no streams group of that id, or the
/// coordinator's error for it. The error of the whole call is a cluster
/// that cannot be asked.
#[allow(clippy::type_complexity)]
pub fn streams_analyses(
    conn: &Connection,
    groups: &[String],
    joins: &[Vec<String>],
) -> Result<Vec<(String, Result<Option<StreamsReport>>)>> {
    if groups.is_empty() {
        return Ok(Vec::new());
    }
    let target = conn.client_target()?;
    let Some(resp) =
        partwise_client::blocking::streams_groups_describe(&target, groups).map_err(|e| {
            conn.client_error(
                format!("describing streams groups {}", groups.join(", ")),
                e,
            )
        })?
    else {
        return Ok(groups.iter().map(|g| (g.clone(), Ok(None))).collect());
    };
    let mut counts: Option<BTreeMap<String, u32>> = None;
    let mut by_id: BTreeMap<String, wire::DescribedGroup> = resp
        .groups
        .into_iter()
        .map(|g| (g.group_id.clone(), g))
        .collect();
    let mut out = Vec::new();
    for group in groups {
        let r = match by_id.remove(group) {
            None => Err(Error::Decode(format!(
                "StreamsGroupDescribe answered without group {group}"
            ))),
            Some(g) if g.error_code == GROUP_ID_NOT_FOUND => Ok(None),
            Some(g) if g.error_code != 0 => Err(Error::kafka(
                format!("describing streams group {group}"),
                format!(
                    "error code {}{}",
                    g.error_code,
                    g.error_message
                        .as_deref()
                        .map(|m| format!(": {m}"))
                        .unwrap_or_default()
                ),
            )),
            Some(g) => {
                let counts = match &counts {
                    Some(c) => c,
                    None => counts.insert(
                        cluster_topics(conn)?
                            .into_iter()
                            .map(|t| (t.name, t.partitions))
                            .collect(),
                    ),
                };
                Ok(Some(analyze(described(g), counts, joins)))
            }
        };
        out.push((group.clone(), r));
    }
    Ok(out)
}

/// Whether the bootstrap broker offers StreamsGroupDescribe: Apache Kafka
/// advertises it from 4.2, where streams groups are generally available
/// (4.0 has no streams groups; in 4.1 the API is unstable and not
/// advertised by default).
pub fn streams_groups_offered(conn: &Connection) -> Result<bool> {
    let target = conn.client_target()?;
    let apis = partwise_client::blocking::api_versions(&target)
        .map_err(|e| conn.client_error("reading the broker's API versions", e))?;
    Ok(apis.iter().any(|&(key, _)| key == wire::API_KEY))
}

/// What a "not found" says when the brokers have no streams groups.
pub const NO_STREAMS_GROUPS: &str = "these brokers do not offer StreamsGroupDescribe: streams groups \
    (group.protocol=streams) are generally available from Apache Kafka 4.2, so a Kafka Streams \
    application cannot have a streams group here (under the classic protocol its group is a consumer group)";

fn tasks(a: wire::Assignment) -> Tasks {
    let flat = |ts: Vec<wire::TaskIds>| -> Vec<Task> {
        let mut v: Vec<Task> = ts
            .into_iter()
            .flat_map(|t| {
                let s = t.subtopology;
                t.partitions.into_iter().map(move |p| Task {
                    subtopology: s.clone(),
                    partition: p,
                })
            })
            .collect();
        v.sort();
        v
    };
    Tasks {
        active: flat(a.active),
        standby: flat(a.standby),
        warmup: flat(a.warmup),
    }
}

/// The coordinator's description in the core's terms.
fn described(g: wire::DescribedGroup) -> StreamsGroup {
    let (topology_epoch, subtopologies) = match g.topology {
        None => (None, None),
        Some(t) => (
            Some(t.epoch),
            t.subtopologies.map(|subs| {
                subs.into_iter()
                    .map(|s| SubTopology {
                        id: s.id,
                        source_topics: s.source_topics,
                        repartition_source_topics: s
                            .repartition_source_topics
                            .into_iter()
                            .map(|t| (t.name, t.partitions))
                            .collect(),
                        repartition_sink_topics: s.repartition_sink_topics,
                        changelog_topics: s
                            .state_changelog_topics
                            .into_iter()
                            .map(|t| t.name)
                            .collect(),
                    })
                    .collect()
            }),
        ),
    };
    StreamsGroup {
        group: g.group_id,
        state: g.group_state,
        group_epoch: g.group_epoch,
        target_assignment_epoch: g.assignment_epoch,
        topology_epoch,
        subtopologies,
        error_message: g.error_message,
        members: g
            .members
            .into_iter()
            .map(|m| StreamsMember {
                member_id: m.member_id,
                process_id: m.process_id,
                client_id: m.client_id,
                client_host: m.client_host,
                instance_id: m.instance_id,
                member_epoch: m.member_epoch,
                assignment: tasks(m.assignment),
                target_assignment: tasks(m.target_assignment),
            })
            .collect(),
    }
}

/// The protocol (assignor) name of Kafka Streams' `StreamsPartitionAssignor`,
/// which a classic-protocol Streams group's members join with.
pub const CLASSIC_STREAMS_PROTOCOL: &str = "stream";

/// A classic-protocol group whose protocol is Kafka Streams'
/// ([`CLASSIC_STREAMS_PROTOCOL`]), its members' Streams user data decoded and
/// judged with `joins` ([`analyze_classic`]); `None` for any other group.
pub fn classic_streams_analysis(
    d: &GroupDescription,
    joins: &[Vec<String>],
) -> Option<ClassicStreamsReport> {
    if d.group_protocol != "classic" || d.protocol != CLASSIC_STREAMS_PROTOCOL {
        return None;
    }
    let members = d.members.iter().map(classic_member).collect();
    Some(analyze_classic(&d.name, members, joins))
}

fn task(t: &TaskId) -> Task {
    Task {
        subtopology: match &t.topology {
            Some(name) => format!("{name}_{}", t.subtopology),
            None => t.subtopology.to_string(),
        },
        partition: t.partition,
    }
}

/// One member as its Streams user data says; unknown (with why) as soon
/// as any part of it does not decode.
fn classic_member(m: &MemberDescription) -> ClassicStreamsMember {
    let mut out = ClassicStreamsMember {
        member_id: m.id.clone(),
        client_id: m.client_id.clone(),
        ..Default::default()
    };
    let known = (|| -> std::result::Result<(), String> {
        if let Some(why) = &m.undecodable {
            return Err(why.clone());
        }
        let sub = m
            .subscription_user_data
            .as_deref()
            .ok_or("the broker returned no Kafka Streams subscription info for it")?;
        let sub = SubscriptionInfo::decode(sub).map_err(|e| e.to_string())?;
        out.process_id = Some(sub.process());
        let AssignmentData::Assigned(parts) = &m.assignment else {
            return Err(
                "the broker returned no assignment for it (the group is rebalancing)".into(),
            );
        };
        let parts: Vec<(String, i32)> = parts
            .iter()
            .flat_map(|(t, ps)| ps.iter().map(move |&p| (t.clone(), p as i32)))
            .collect();
        let info = match m.assignment_user_data.as_deref() {
            Some(b) => AssignmentInfo::decode(b).map_err(|e| e.to_string())?,
            // Nothing assigned yet: no partitions and no user data.
            None if parts.is_empty() => return Ok(()),
            None => return Err("its assignment carries no Kafka Streams assignment info".into()),
        };
        out.assignment_error = info.error_code;
        out.active = info
            .active_tasks(&parts)
            .map_err(|e| e.to_string())?
            .iter()
            .map(|(t, tps)| TaskHolding {
                task: task(t),
                partitions: tps.clone(),
            })
            .collect();
        out.standby = info
            .standby
            .iter()
            .map(|(t, tps)| TaskHolding {
                task: task(t),
                partitions: tps.clone(),
            })
            .collect();
        Ok(())
    })();
    if let Err(why) = known {
        out.unknown = Some(why);
        out.active.clear();
        out.standby.clear();
    }
    out
}
