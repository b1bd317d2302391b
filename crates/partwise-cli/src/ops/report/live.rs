//! The live state `report` shows beside the declared one, gathered by the
//! live commands' own library calls: with `-b`, `kafka audit` of each
//! co-partition group's topics (several groups at once, `audit_each`) and
//! `kafka group`'s analysis of each declared consumer group (with the
//! declared assignor's prediction for the live members); every group of the
//! cluster with its type, and the streams groups among them that read the
//! file's topics, declared or not; with `-c`, `redis check` of each family
//! over the sample keys and each primary's load as `redis check` shows it.
//! Everything here only reads.

use crate::exit::{CliError, Result};
use partwise::assign::{Assignor, BrokerModel};
use partwise::group::described::Analysis;
use partwise::inference::candidates;
use partwise::topology::Topology;
use partwise::Partitioner;
use partwise_kafka::audit::{audit, audit_each, AuditOptions, AuditReport, TopicAudit, Window};
use partwise_kafka::cluster::GroupListing;
use partwise_kafka::group::{analyses, GroupDescription};
use partwise_kafka::Connection;
use partwise_redis::{CheckReport, Family, NodeAddr, SlotMap};
use serde::Serialize;
use std::time::Duration;

/// Records `report -b` samples from the start of each partition: the
/// default of `kafka audit`.
pub const SAMPLE: u64 = 1000;

/// The topics of `t` no co-partition group's audit in `lk` read (a topic
/// in no group, or of a group whose audit failed), audited over `window`
/// for `--counts live:...`.
pub fn other_topics(
    conn: &Connection,
    t: &Topology,
    lk: &LiveKafka,
    window: Window,
) -> Result<Vec<TopicAudit>> {
    let read = window_audits(lk, &[]);
    let mut topics: Vec<String> = t
        .topics
        .iter()
        .map(|x| x.name.clone())
        .filter(|n| !read.iter().any(|a| &a.name == n))
        .collect();
    topics.dedup();
    if topics.is_empty() {
        return Ok(Vec::new());
    }
    let all: Vec<Partitioner> = Partitioner::all().collect();
    let opts = AuditOptions {
        topics,
        sample: crate::ops::weights::live_sample(window),
        candidates: candidates(&all, &[]),
        window,
    };
    Ok(audit(conn, &opts, &mut |_| {})
        .map_err(CliError::lib)?
        .topics)
}

/// Every topic audit of `lk` and `rest`, each topic once (a topic in two
/// groups is read twice but weighed once).
pub fn window_audits<'a>(lk: &'a LiveKafka, rest: &'a [TopicAudit]) -> Vec<&'a TopicAudit> {
    let mut out: Vec<&TopicAudit> = Vec::new();
    let groups = lk.audits.iter().filter_map(|(_, r)| r.as_ref().ok());
    for a in groups.flat_map(|r| &r.topics).chain(rest) {
        if !out.iter().any(|b| b.name == a.name) {
            out.push(a);
        }
    }
    out
}

/// A live consumer group: its description and analysis, or why it could not be had.
pub type LiveGroup = std::result::Result<(GroupDescription, Analysis), String>;

/// What the Kafka cluster holds.
pub struct LiveKafka {
    /// One audit per co-partition group (its name), or why it failed.
    pub audits: Vec<(String, std::result::Result<AuditReport, String>)>,
    /// One analysis per declared consumer group (its name), or why it failed.
    pub groups: Vec<(String, LiveGroup)>,
    /// One per entry of `groups`: for a group declared with a KIP-848 server
    /// assignor and no release (`kip848:uniform`, `kip848:range`), the model
    /// the broker's release runs (from its API versions, as `kafka group`
    /// reads it), which the prediction then used when it is decided.
    pub server_models: Vec<Option<BrokerModel>>,
    /// The Kafka Streams groups of the streams protocol, as `kafka group`
    /// judges them: the declared consumer groups that are streams groups (no
    /// classic or consumer group of that id, and the coordinator describes a
    /// streams group), then the undeclared streams groups of the listing
    /// that read a topic of the file.
    pub streams: Vec<partwise::streams::group::StreamsReport>,
    /// The groups of `streams` the file does not declare (found by the listing).
    pub undeclared_streams: Vec<String>,
    /// Every group of the cluster with its type (`live.kafka.cluster_groups`
    /// of the JSON), or why they could not be listed.
    pub listing: Listing,
}

/// The cluster's groups, or why they could not be listed.
#[derive(Serialize)]
#[serde(untagged)]
pub enum Listing {
    /// Listed.
    Listed(ClusterGroups),
    /// ListGroups failed.
    Failed {
        /// Why.
        error: String,
    },
}

/// Every group of the cluster, as ListGroups lists it.
#[derive(Serialize)]
pub struct ClusterGroups {
    /// The groups, by name.
    pub groups: Vec<ClusterGroup>,
    /// Why some types are unknown (brokers that answer ListGroups below
    /// v5), when some are.
    pub types_unknown: Option<String>,
}

/// One group of the cluster.
#[derive(Serialize)]
pub struct ClusterGroup {
    /// The group id.
    pub group: String,
    /// `classic`, `consumer`, `streams`, `share`, or `unknown` (its
    /// coordinator does not say).
    #[serde(rename = "type")]
    pub group_type: String,
    /// Its state in its coordinator's words, when it says.
    pub state: Option<String>,
    /// The protocol type (`consumer` for consumer groups of either protocol).
    pub protocol_type: String,
    /// Whether the file declares it.
    pub declared: bool,
    /// Whether the report describes it (a declared group, or a streams
    /// group that reads a topic of the file).
    pub described: bool,
    /// Why a streams group could not be described.
    pub error: Option<String>,
}

impl ClusterGroups {
    fn of(
        l: GroupListing,
        declared: &dyn Fn(&str) -> bool,
        described: &[String],
        errors: &[(String, String)],
    ) -> ClusterGroups {
        ClusterGroups {
            types_unknown: l.unknown_types(),
            groups: l
                .groups
                .into_iter()
                .map(|g| ClusterGroup {
                    declared: declared(&g.name),
                    described: declared(&g.name) || described.contains(&g.name),
                    error: errors
                        .iter()
                        .find(|(n, _)| *n == g.name)
                        .map(|(_, e)| e.clone()),
                    group_type: g.group_type.to_string(),
                    group: g.name,
                    state: g.state,
                    protocol_type: g.protocol_type,
                })
                .collect(),
        }
    }
}

/// The KIP-848 server assignor a declared `assignor` names without a
/// release (`uniform`, `range`), for which the broker's release decides.
fn unversioned_server_assignor(assignor: &str) -> Option<&'static str> {
    match assignor.trim() {
        "kip848:uniform" => Some("uniform"),
        "kip848:range" => Some("range"),
        _ => None,
    }
}

/// What the Redis Cluster says of each family.
pub struct LiveRedis {
    /// The seed node asked.
    pub seed: String,
    /// One check per family, in file order.
    pub families: Vec<CheckReport>,
    /// Each primary's load, by the measure `redis hot` takes (CPU from
    /// the slot statistics, key counts where a server lacks them).
    pub load: partwise_redis::ClusterLoad,
    /// One per family: the hot tags among the keys of its first pattern,
    /// by that measure, and the primaries whose keys could not be sampled.
    pub hot: Vec<(Vec<partwise_redis::HotTag>, Vec<String>)>,
}

/// Keys sampled per primary for a family's hot tags: `redis hot`'s default.
const HOT_SAMPLE: usize = 10_000;

/// The cluster's view of `t`. A cluster that cannot be reached at all is an
/// error (exit 2, as `kafka audit` has it); a topic or group that fails
/// alone is shown as such.
/// With `window` (`--counts live:...`) every audit samples that window of
/// the newest records instead of the oldest. `joins` are the source topics
/// the `--streams` applications join, which a streams group's split tasks
/// are judged against.
pub fn kafka(
    conn: &Connection,
    t: &Topology,
    window: Option<Window>,
    joins: &[Vec<String>],
) -> Result<LiveKafka> {
    let mut server_models = Vec::new();
    let declared: Vec<_> = t
        .consumer_groups
        .iter()
        .map(|cg| {
            let model = unversioned_server_assignor(&cg.assignor).map(|name| {
                partwise_kafka::group::server_assignor_model(conn, name).unwrap_or_else(|e| {
                    BrokerModel {
                        line: None,
                        assignor: None,
                        evidence: format!("the broker's API versions could not be read: {e}"),
                    }
                })
            });
            let chosen: Option<Assignor> = model.as_ref().and_then(|m| m.assignor);
            server_models.push(model);
            let prediction = chosen.or_else(|| cg.assignor.parse().ok());
            (
                cg.name.as_str(),
                prediction.map(|a| (a, cg.subscriptions.as_slice())),
            )
        })
        .collect();
    let reports = analyses(conn, &declared).map_err(CliError::lib)?;
    let all: Vec<Partitioner> = Partitioner::all().collect();
    let each: Vec<AuditOptions> = t
        .copartition_groups
        .iter()
        .map(|g| AuditOptions {
            topics: g.topics.clone(),
            sample: window.map_or(SAMPLE, crate::ops::weights::live_sample),
            candidates: candidates(&all, &[]),
            window: window.unwrap_or_default(),
        })
        .collect();
    let audits = t
        .copartition_groups
        .iter()
        .zip(audit_each(conn, &each))
        .map(|(g, r)| (g.name.clone(), r.map_err(|e| CliError::lib(e).report())))
        .collect();
    // Every group of the cluster with its type: the streams groups among
    // them are described beside the declared ones when they read the file's
    // topics, declared or not.
    let listing = partwise_kafka::cluster::groups(conn).map_err(|e| CliError::lib(e).report());
    // A declared group no classic or consumer group answers for may be a
    // streams group (the application id of a Kafka Streams application),
    // whatever the listing says (it may have failed).
    let maybe_streams: Vec<String> = declared
        .iter()
        .zip(&reports)
        .filter(|(_, r)| r.as_ref().is_ok_and(|g| g.description.not_found()))
        .map(|(&(name, _), _)| name.to_string())
        .collect();
    let is_declared = |name: &str| declared.iter().any(|&(d, _)| d == name);
    let listed: Vec<String> = listing.as_ref().map_or(Vec::new(), |l| {
        l.streams_groups()
            .into_iter()
            .filter(|g| !is_declared(g))
            .collect()
    });
    let mut streams = Vec::new();
    let mut undeclared_streams = Vec::new();
    let mut streams_errors = Vec::new();
    // Asked apart, so that a listed group whose coordinator fails does not
    // hide the declared ones. A declared group's failure here is left to its
    // consumer-group description to tell; a listed group has only this.
    for (names, are_declared) in [(maybe_streams, true), (listed, false)] {
        match partwise_kafka::streams::streams_analyses(conn, &names, joins) {
            Ok(found) => {
                for (name, r) in found {
                    match r {
                        Ok(Some(s)) if are_declared => streams.push(s),
                        Ok(Some(s)) if reads_any(&s.group, t) => {
                            undeclared_streams.push(name);
                            streams.push(s);
                        }
                        Ok(_) => {}
                        Err(e) if !are_declared => {
                            streams_errors.push((name, CliError::lib(e).report()))
                        }
                        Err(_) => {}
                    }
                }
            }
            Err(e) if !are_declared => {
                let why = CliError::lib(e).report();
                streams_errors.extend(names.into_iter().map(|n| (n, why.clone())));
            }
            Err(_) => {}
        }
    }
    let consumer = |name: &str| !streams.iter().any(|s| s.group.group == name);
    let server_models = server_models
        .into_iter()
        .zip(&declared)
        .filter(|(_, &(name, _))| consumer(name))
        .map(|(m, _)| m)
        .collect();
    let groups = declared
        .iter()
        .zip(reports)
        .filter(|(&(name, _), _)| consumer(name))
        .map(|(&(name, _), r)| {
            let r = r.map_err(|e| CliError::lib(e).report()).and_then(|g| {
                g.analysis
                    .map(|a| (g.description, a))
                    .map_err(|e| e.to_string())
            });
            (name.to_string(), r)
        })
        .collect();
    Ok(LiveKafka {
        audits,
        groups,
        server_models,
        streams,
        listing: match listing {
            Ok(l) => Listing::Listed(ClusterGroups::of(
                l,
                &is_declared,
                &undeclared_streams,
                &streams_errors,
            )),
            Err(error) => Listing::Failed { error },
        },
        undeclared_streams,
    })
}

/// Whether streams group `g` reads a topic of `t`: a source of one of its
/// sub-topologies, or, while the coordinator holds no configured topology
/// (`NOT_READY` on missing or unequal sources), a topic its error message
/// names.
fn reads_any(g: &partwise::streams::group::StreamsGroup, t: &Topology) -> bool {
    let ours = |name: &str| t.topics.iter().any(|x| x.name == name);
    if g.subtopologies
        .iter()
        .flatten()
        .flat_map(|s| s.sources())
        .any(ours)
    {
        return true;
    }
    g.error_message.as_deref().is_some_and(|m| {
        m.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
            .any(ours)
    })
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
    let load = partwise_redis::cluster_load(&map, timeout);
    let mut families = Vec::new();
    let mut hot = Vec::new();
    for f in &t.redis_families {
        let family = Family::new(&f.patterns)
            .map_err(|e| CliError::context(format!("redis_family '{}'", f.name), e))?;
        families.push(partwise_redis::check(&map, &family, samples, timeout));
        let (tags, errors) = match family.patterns().first() {
            Some(p) => partwise_redis::family_hot_tags(
                &map,
                p.as_str(),
                &load,
                HOT_SAMPLE,
                partwise_redis::HotRule::default(),
                timeout,
            ),
            None => (Vec::new(), Vec::new()),
        };
        hot.push((tags, errors.iter().map(ToString::to_string).collect()));
    }
    Ok(LiveRedis {
        seed: map.seed.to_string(),
        families,
        load,
        hot,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use partwise::streams::group::{StreamsGroup, SubTopology};

    fn file(topics: &[&str]) -> Topology {
        Topology {
            topics: topics
                .iter()
                .map(|t| partwise::topology::Topic {
                    name: t.to_string(),
                    partitions: partwise::PartitionCount::new(6).unwrap(),
                    key: None,
                    producers: Vec::new(),
                })
                .collect(),
            copartition_groups: Vec::new(),
            consumer_groups: Vec::new(),
            redis_families: Vec::new(),
        }
    }

    #[test]
    fn a_streams_group_reads_the_file_by_its_sources_or_its_not_ready_reason() {
        let t = file(&["market-updates", "notifications"]);
        let mut g = StreamsGroup {
            subtopologies: Some(vec![SubTopology {
                id: "0".into(),
                source_topics: vec!["notifications".into(), "other".into()],
                ..Default::default()
            }]),
            ..Default::default()
        };
        assert!(reads_any(&g, &t));
        g.subtopologies.as_mut().unwrap()[0].source_topics = vec!["other".into()];
        assert!(!reads_any(&g, &t));
        // NOT_READY: no configured topology; the reason names the topics.
        g.subtopologies = None;
        g.error_message = Some(
            "Following topics do not have the same number of partitions: \
             [{market-updates=6, notifications=8}]"
                .into(),
        );
        assert!(reads_any(&g, &t));
        // A name inside another is not the topic.
        g.error_message = Some("Source topics market-updates-v2 are missing.".into());
        assert!(!reads_any(&g, &t));
    }
}
