//! Kafka Streams groups under the streams rebalance protocol
//! (`group.protocol=streams`): StreamsGroupDescribe through partwise-client,
//! put in the core's terms and judged against the cluster's partition counts
//! ([`partwise::streams_group::analyze`]).

use crate::cluster::cluster_topics;
use crate::connect::Connection;
use crate::error::{Error, Result};
use partwise::streams_group::{
    analyze, StreamsGroup, StreamsMember, StreamsReport, SubTopology, Task, Tasks,
};
use partwise_wire::streams as wire;
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
    let target = conn.client_target()?;
    let Some(resp) = partwise_client::blocking::streams_group_describe(&target, group)
        .map_err(|e| conn.client_error(format!("describing streams group {group}"), e))?
    else {
        return Ok(None);
    };
    let Some(g) = resp.groups.into_iter().find(|g| g.group_id == group) else {
        return Err(Error::Decode(format!(
            "StreamsGroupDescribe answered without group {group}"
        )));
    };
    match g.error_code {
        0 => {}
        GROUP_ID_NOT_FOUND => return Ok(None),
        code => {
            return Err(Error::kafka(
                format!("describing streams group {group}"),
                format!(
                    "error code {code}{}",
                    g.error_message
                        .as_deref()
                        .map(|m| format!(": {m}"))
                        .unwrap_or_default()
                ),
            ))
        }
    }
    let counts: BTreeMap<String, u32> = cluster_topics(conn)?
        .into_iter()
        .map(|t| (t.name, t.partitions))
        .collect();
    Ok(Some(analyze(described(g), &counts, joins)))
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
