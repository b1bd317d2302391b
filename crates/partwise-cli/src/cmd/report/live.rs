//! The live state `report` shows beside the declared one, gathered by the
//! live commands' own library calls: with `-b`, `kafka audit` of each
//! co-partition group's topics and `kafka group`'s analysis of each declared
//! consumer group (with the declared assignor's prediction for the live
//! members); with `-c`, `redis check` of each family over the sample keys
//! and each primary's load as `redis check` shows it.
//! Everything here only reads.

use crate::cmd::conn::kerr;
use crate::exit::{CliError, Result};
use partwise::assign::{Assignor, BrokerModel};
use partwise::group::described::Analysis;
use partwise::inference::candidates;
use partwise::topology::Topology;
use partwise::Partitioner;
use partwise_kafka::audit::{audit, AuditOptions, AuditReport, TopicAudit, Window};
use partwise_kafka::group::{analyses, GroupDescription};
use partwise_kafka::Connection;
use partwise_redis::{CheckReport, Family, NodeAddr, SlotMap};
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
        sample: crate::cmd::live_sample(window),
        candidates: candidates(&all, &[]),
        window,
    };
    Ok(audit(conn, &opts, &mut |_| {}).map_err(kerr)?.topics)
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
    /// The declared consumer groups that are Kafka Streams groups of the
    /// streams protocol (no classic or consumer group of that id, and the
    /// coordinator describes a streams group), as `kafka group` judges them.
    pub streams: Vec<partwise::streams::group::StreamsReport>,
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
    let reports = analyses(conn, &declared).map_err(kerr)?;
    let all: Vec<Partitioner> = Partitioner::all().collect();
    let audits = t
        .copartition_groups
        .iter()
        .map(|g| {
            let opts = AuditOptions {
                topics: g.topics.clone(),
                sample: window.map_or(SAMPLE, crate::cmd::live_sample),
                candidates: candidates(&all, &[]),
                window: window.unwrap_or_default(),
            };
            let r = audit(conn, &opts, &mut |_| {}).map_err(|e| kerr(e).report());
            (g.name.clone(), r)
        })
        .collect();
    // A declared group no classic or consumer group answers for may be a
    // streams group (the application id of a Kafka Streams application).
    let mut streams = Vec::new();
    for (&(name, _), r) in declared.iter().zip(&reports) {
        if let Ok(g) = r {
            if g.description.not_found() {
                if let Ok(Some(s)) = partwise_kafka::streams::streams_analysis(conn, name, joins) {
                    streams.push(s);
                }
            }
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
            let r = r.map_err(|e| kerr(e).report()).and_then(|g| {
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
