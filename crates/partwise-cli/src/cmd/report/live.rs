//! The live state `report` shows beside the declared one, gathered by the
//! live commands' own library calls: with `-b`, `kafka audit` of each
//! co-partition group's topics and `kafka group`'s analysis of each declared
//! consumer group (with the declared assignor's prediction for the live
//! members); with `-c`, `redis check` of each family over the sample keys.
//! Everything here only reads.

use crate::cmd::conn::kerr;
use crate::cmd::kafka::group::described;
use crate::exit::{CliError, Result};
use partwise::described::{analyze, Analysis, ClusterTopic};
use partwise::routing::candidates;
use partwise::topology::Topology;
use partwise::Partitioner;
use partwise_kafka::audit::{audit, AuditOptions, AuditReport};
use partwise_kafka::group::{describe_group, GroupDescription};
use partwise_kafka::Connection;
use partwise_redis::{CheckReport, Family, NodeAddr, SlotMap};
use std::time::Duration;

/// Records `report -b` samples from the start of each partition: the
/// default of `kafka audit`.
pub const SAMPLE: u64 = 1000;

/// A live consumer group: its description and analysis, or why it could not be had.
pub type LiveGroup = std::result::Result<(GroupDescription, Analysis), String>;

/// What the Kafka cluster holds.
pub struct LiveKafka {
    /// One audit per co-partition group (its name), or why it failed.
    pub audits: Vec<(String, std::result::Result<AuditReport, String>)>,
    /// One analysis per declared consumer group (its name), or why it failed.
    pub groups: Vec<(String, LiveGroup)>,
}

/// What the Redis Cluster says of each family.
pub struct LiveRedis {
    /// The seed node asked.
    pub seed: String,
    /// One check per family, in file order.
    pub families: Vec<CheckReport>,
}

/// The cluster's view of `t`. A cluster that cannot be reached at all is an
/// error (exit 2, as `kafka audit` has it); a topic or group that fails
/// alone is shown as such.
pub fn kafka(conn: &Connection, t: &Topology) -> Result<LiveKafka> {
    let topics: Vec<ClusterTopic> = partwise_kafka::cluster::list_topics(conn)
        .map_err(kerr)?
        .into_iter()
        .map(|x| ClusterTopic {
            partitions: x.partitions.len() as u32,
            healthy: x.error.is_none(),
            name: x.name,
        })
        .collect();
    let all: Vec<Partitioner> = Partitioner::all().collect();
    let audits = t
        .copartition_groups
        .iter()
        .map(|g| {
            let opts = AuditOptions {
                topics: g.topics.clone(),
                sample: SAMPLE,
                candidates: candidates(&all, &[]),
            };
            let r = audit(conn, &opts, &mut |_| {}).map_err(|e| kerr(e).report());
            (g.name.clone(), r)
        })
        .collect();
    let groups = t
        .consumer_groups
        .iter()
        .map(|cg| {
            let r = describe_group(conn, &cg.name)
                .map_err(|e| kerr(e).report())
                .and_then(|d| {
                    // An empty group has nothing to predict for: it is shown as empty.
                    let prediction = cg.assignor.parse().ok().filter(|_| !d.members.is_empty());
                    analyze(
                        &described(&d),
                        &topics,
                        prediction.map(|a| (a, cg.subscriptions.as_slice())),
                    )
                    .map(|a| (d, a))
                    .map_err(|e| e.to_string())
                });
            (cg.name.clone(), r)
        })
        .collect();
    Ok(LiveKafka { audits, groups })
}

/// The Redis Cluster's placement of every family of `t` over `samples`. No
/// slot map is an error (exit 2, as `redis check`); a node failing alone
/// leaves its keys unverified, with the failure listed.
pub fn redis(
    seeds: &[NodeAddr],
    timeout: Duration,
    t: &Topology,
    samples: &[Vec<u8>],
) -> Result<LiveRedis> {
    let map = SlotMap::fetch(seeds, timeout).map_err(CliError::lib)?;
    let mut families = Vec::new();
    for f in &t.redis_families {
        let family = Family::new(&f.patterns)
            .map_err(|e| CliError::context(format!("redis_family '{}'", f.name), e))?;
        families.push(partwise_redis::check(&map, &family, samples, timeout));
    }
    Ok(LiveRedis {
        seed: map.seed.to_string(),
        families,
    })
}
