//! `report`'s call: the topology file and Kafka Streams applications read,
//! the core's analyses of them ([`partwise::report::topology`]) beside what
//! `-b` and `-c` read of the live clusters ([`live`]), in one [`Model`].

pub mod live;
pub mod model;

use crate::exit::{CliError, Result};
use crate::load::{load_samples, load_streams};
use crate::ops::weights::{CountsFrom, Weights};
use crate::ops::Sources;
use model::Model;
use partwise::topology::Topology;
use partwise::PartitionCount;
use std::time::Duration;

/// What to report on, as the flags give it.
pub struct Request {
    /// The files, values and Kafka cluster `check` reads too.
    pub sources: Sources,
    /// Redis Cluster nodes (`-c`).
    pub redis: Vec<partwise_redis::NodeAddr>,
    /// How long a Redis node may take to answer.
    pub timeout: Duration,
}

/// Reads what `req` names and builds the report's model; only reads, from
/// files and clusters alike.
pub fn report(r: &Request) -> Result<Model> {
    let req = &r.sources;
    let mut topology = req.topology()?;
    let file_weights = match &req.counts {
        Some(CountsFrom::File(f)) => Some(Weights::read(f)?),
        _ => None,
    };
    let window = req.counts.as_ref().and_then(CountsFrom::live);
    if let (Some(w), None) = (window, &req.conn) {
        return Err(CliError::msg(format!(
            "--counts {}: live weights are read from the cluster: give -b (or a KEY,COUNT file)",
            crate::render::audit::window_flag(w)
        )));
    }
    // The source topics the --streams applications join: a streams group's
    // split tasks are judged against them.
    let joins = if req.streams.is_empty() {
        Vec::new()
    } else {
        declare_streams(req, &mut topology)?
    };
    req.bounded(&topology)?;
    let live_kafka = req
        .conn
        .as_ref()
        .map(|c| live::kafka(c, &topology, window, &joins))
        .transpose()?;
    let mut live_weights = None;
    let weights = match (window, &req.conn, &live_kafka) {
        (Some(w), Some(c), Some(lk)) => {
            let rest = live::other_topics(c, &topology, lk, w)?;
            let (weights, info) = Weights::live(w, &live::window_audits(lk, &rest))?;
            live_weights = Some(info);
            Some(weights)
        }
        _ => file_weights,
    };
    let (samples, weights) = match weights {
        Some(w) => {
            let (samples, counts) = w.into_samples();
            (samples, Some(counts))
        }
        None => (load_samples(req.input.clone())?, None),
    };
    let live_redis = (!r.redis.is_empty())
        .then(|| live::redis(&r.redis, r.timeout, &topology, &samples))
        .transpose()?;
    let mut m = Model::build(
        req.file().display().to_string(),
        &topology,
        samples,
        weights,
        live_kafka,
        live_redis,
    );
    m.live_weights = live_weights;
    Ok(m)
}

/// Adds each `--streams` application's co-partition groups to `topology`
/// as `check --streams` does ([`partwise::streams::declare`]): the counts of
/// topics the file does not declare from `-t`, then, with `-b`, from the
/// cluster. Returns the source topics of each join, read from the same
/// parse of each file.
fn declare_streams(req: &Sources, topology: &mut Topology) -> Result<Vec<Vec<String>>> {
    let mut counts = req.topics.clone();
    if let Some(conn) = &req.conn {
        let live = partwise_kafka::cluster::cluster_topics(conn).map_err(CliError::lib)?;
        for t in live {
            if let Ok(n) = PartitionCount::new(t.partitions) {
                if !counts.iter().any(|(c, _)| *c == t.name) {
                    counts.push((t.name, n));
                }
            }
        }
    }
    let mut joins = Vec::new();
    for path in &req.streams {
        let app = load_streams(path)?;
        joins.extend(app.copartition_groups().into_iter().map(|g| g.external));
        for p in app.patterns() {
            say!(
                "partwise: warning: {} reads topics by the pattern {p}: which topics those are is not in the description, so their joins are not in the report",
                path.display()
            );
        }
        crate::ops::streams::declare(topology, path, &app, &counts)?;
    }
    Ok(joins)
}
