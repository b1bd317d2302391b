//! `partwise kafka group --readiness`: the group's description, the
//! brokers' group-coordinator settings (DescribeConfigs on every broker)
//! and the topics' partition counts, handed to [`partwise::readiness`],
//! which decides. Reads only.

use crate::connect::Connection;
use crate::error::{Error, Result};
use crate::group::{describe_group, GroupDescription};
use futures_executor::block_on;
use partwise::assign::{Assignor, BrokerModel};
use partwise::group::described::View;
use partwise::readiness::{
    self, BrokerConfig, ClassicGroup, ClientSeen, ConsumerGroupCheck, Readiness,
};
use rdkafka::admin::ResourceSpecifier;
use rdkafka::consumer::Consumer;

/// The settings the coordinator's upgrade and assignor decisions read.
const MIGRATION_POLICY: &str = "group.consumer.migration.policy";
const MAX_SIZE: &str = "group.consumer.max.size";
const ASSIGNORS: &str = "group.consumer.assignors";
const PROTOCOLS: &str = "group.coordinator.rebalance.protocols";

/// What the readiness check found.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// A classic group: the upgrade, server range and the accepted assignors.
    Classic(Box<Readiness>),
    /// A consumer-protocol group: its target and current co-location.
    Consumer(Box<ConsumerGroupCheck>),
}

/// The report of [`readiness()`].
#[derive(Clone, Debug, PartialEq)]
pub struct ReadinessReport {
    /// The group as its coordinator describes it.
    pub description: GroupDescription,
    /// Every broker's group-coordinator settings, by broker id.
    pub configs: Vec<BrokerConfig>,
    /// The decision.
    pub verdict: Verdict,
    /// The KIP-848 server assignors' models the brokers' release runs, read
    /// from the bootstrap broker's API versions as `kafka group` does.
    pub models: ServerModels,
    /// For a classic group: the target server `uniform` would give its
    /// members (the brokers' default assignor, what a member that sets no
    /// `group.remote.assignor` gets while `uniform` is first in
    /// `group.consumer.assignors`), computed with the broker's `uniform`
    /// model; `None` when that model is undecided, the group is empty, or a
    /// subscription is unknown.
    pub uniform: Option<View>,
}

/// The models of the two built-in server assignors on this cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerModels {
    /// `uniform`'s (undecided on Kafka 4.0, whose API versions do not tell
    /// 4.0.0 from 4.0.1).
    pub uniform: BrokerModel,
    /// `range`'s.
    pub range: BrokerModel,
}

/// The models of `uniform` and `range` the cluster runs; a broker whose API
/// versions cannot be read leaves both undecided, with the reason as the
/// evidence.
pub fn server_models(conn: &Connection) -> ServerModels {
    let model = |name: &str| {
        crate::group::server_assignor_model(conn, name).unwrap_or_else(|e| BrokerModel {
            line: None,
            assignor: None,
            evidence: format!("the broker's API versions could not be read: {e}"),
        })
    };
    ServerModels {
        uniform: model("uniform"),
        range: model("range"),
    }
}

/// The group-coordinator settings of every broker in the metadata.
pub fn broker_configs(conn: &Connection) -> Result<Vec<BrokerConfig>> {
    let c = crate::cluster::read_only_consumer(conn)?;
    let md = c
        .fetch_metadata(None, conn.timeout())
        .map_err(|e| crate::cluster::unreachable_via(&c, conn, e))?;
    let mut ids: Vec<i32> = md.brokers().iter().map(|b| b.id()).collect();
    ids.sort_unstable();
    let specs: Vec<ResourceSpecifier> = ids
        .iter()
        .map(|&id| ResourceSpecifier::Broker(id))
        .collect();
    let admin = crate::admin::client(conn)?;
    let results = block_on(admin.describe_configs(&specs, &crate::admin::options(conn)))
        .map_err(|e| crate::cluster::unreachable(conn, e))?;
    ids.iter()
        .zip(results)
        .map(|(&broker, r)| {
            let r = r.map_err(|code| {
                conn.error_code(format!("describing the configs of broker {broker}"), code)
            })?;
            let value = |name: &str| r.get(name).and_then(|e| e.value.clone());
            let max = match value(MAX_SIZE) {
                Some(v) => Some(v.trim().parse::<u64>().map_err(|_| {
                    Error::kafka(
                        format!("broker {broker}'s {MAX_SIZE}"),
                        format!("not a count: {v}"),
                    )
                })?),
                None => None,
            };
            let list = |name: &str| {
                value(name).map(|v| {
                    v.split(',')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect()
                })
            };
            Ok(BrokerConfig {
                broker,
                migration_policy: value(MIGRATION_POLICY),
                consumer_max_size: max,
                assignors: list(ASSIGNORS),
                rebalance_protocols: list(PROTOCOLS),
            })
        })
        .collect()
}

/// Whether group `group` is ready for the consumer protocol (a classic
/// group), or how its units sit (a consumer-protocol group).
pub fn readiness(conn: &Connection, group: &str) -> Result<ReadinessReport> {
    let d = describe_group(conn, group)?;
    let configs = broker_configs(conn)?;
    let topics = crate::cluster::cluster_topics(conn)?;
    let models = server_models(conn);
    let range_model = models.range.assignor.unwrap_or(Assignor::Kip848Range);
    let verdict = if d.group_protocol == "consumer" {
        Verdict::Consumer(Box::new(readiness::consumer_with(
            &d.protocol,
            &d.described(false),
            &d.described(true),
            &configs,
            &topics,
            range_model,
            d.state == "Assigning",
            &d.members
                .iter()
                .map(|m| ClientSeen {
                    client_id: m.client_id.clone(),
                    metadata_version: None,
                    body_version: None,
                })
                .collect::<Vec<_>>(),
        )))
    } else {
        let g = ClassicGroup {
            name: d.name.clone(),
            state: d.state.clone(),
            protocol_type: d.protocol_type.clone(),
            protocol: d.protocol.clone(),
            members: d.described(false),
            assignment_user_data: d
                .members
                .iter()
                .map(|m| m.assignment_user_data.clone())
                .collect(),
            clients: d
                .members
                .iter()
                .map(|m| ClientSeen {
                    client_id: m.client_id.clone(),
                    metadata_version: m.metadata_version,
                    body_version: m.subscription_body_version,
                })
                .collect(),
        };
        Verdict::Classic(Box::new(readiness::classic_with(
            &g,
            &configs,
            &topics,
            range_model,
        )))
    };
    let uniform = match &verdict {
        Verdict::Classic(_) => {
            readiness::server_uniform(&d.described(false), &topics, models.uniform.assignor)
        }
        Verdict::Consumer(_) => None,
    };
    Ok(ReadinessReport {
        description: d,
        configs,
        verdict,
        models,
        uniform,
    })
}
