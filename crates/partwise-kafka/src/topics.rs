//! `kafka topics`' report: the cluster's topics grouped by partition count
//! (only topics of one group can be co-partitioned), and the partitions
//! that have no leader.

use crate::cluster::list_topics;
use crate::connect::Connection;
use crate::error::Result;
use serde::Serialize;
use std::collections::BTreeMap;

/// The topics that share a partition count.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CountGroup {
    /// The count.
    pub partitions: usize,
    /// The topics with it, in the cluster's order.
    pub topics: Vec<String>,
}

/// The cluster's topics by partition count.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TopicsReport {
    /// One group per count, fewest partitions first.
    pub groups: Vec<CountGroup>,
    /// `topic/partition` of each partition without a leader.
    pub leaderless_partitions: Vec<String>,
}

/// The topics of the cluster grouped by count; internal topics (`__...`)
/// only with `internal`. A topic the metadata names with an error is left out.
pub fn topics_by_count(conn: &Connection, internal: bool) -> Result<TopicsReport> {
    let mut by_count: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    let mut leaderless = Vec::new();
    for t in list_topics(conn)? {
        if t.error.is_some() || (!internal && t.name.starts_with("__")) {
            continue;
        }
        for p in &t.partitions {
            if p.leader.is_none() {
                leaderless.push(format!("{}/{}", t.name, p.id));
            }
        }
        by_count.entry(t.partitions.len()).or_default().push(t.name);
    }
    Ok(TopicsReport {
        groups: by_count
            .into_iter()
            .map(|(partitions, topics)| CountGroup { partitions, topics })
            .collect(),
        leaderless_partitions: leaderless,
    })
}
