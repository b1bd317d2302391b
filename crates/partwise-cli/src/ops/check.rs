//! `check`'s call: a topology file and Kafka Streams applications read,
//! with `-b` their source topics' counts and producers read from the
//! cluster, then every co-partition group, Redis family and consumer group
//! checked by the core ([`partwise::check::check`]).

use crate::exit::{CliError, Result};
use crate::load::{load_samples, load_streams};
use crate::ops::weights::{live_sample, CountsFrom, LiveWeights, Weights};
use crate::ops::Sources;
use partwise::check::Report;
use partwise::PartitionCount;
use partwise_kafka::audit::TopicAudit;
use std::path::PathBuf;

/// The check, as every format prints it.
pub struct Checked {
    /// The file the check is of (the topology file, or the first
    /// application's), for the JSON's `file`.
    pub file: PathBuf,
    /// The core's report, with the source topics' audits among its reasons.
    pub report: Report,
    /// Per co-partition group of `report`, with `--counts`: the records on
    /// one partition number everywhere, and all of them.
    pub records: Vec<Option<(u64, u64)>>,
    /// With `--counts live:...`, the window weighed by.
    pub live_weights: Option<LiveWeights>,
}

/// Records sampled from the start of each partition of a Streams source
/// topic: the default of `kafka audit`.
const SAMPLE: u64 = 1000;

/// Reads what `req` names and checks it; notes and warnings on the way
/// (counts the cluster corrects, topic patterns) go to stderr.
pub fn check(req: &Sources) -> Result<Checked> {
    let mut topology = req.topology()?;
    let mut apps = Vec::new();
    for path in &req.streams {
        apps.push((path, load_streams(path)?));
    }
    let live = req.counts.as_ref().and_then(CountsFrom::live);
    if let (Some(w), None) = (live, &req.conn) {
        return Err(CliError::msg(format!(
            "--counts {}: live weights are read from the cluster: give --streams with -b (or a KEY,COUNT file)",
            crate::render::audit::window_flag(w)
        )));
    }
    if req.conn.is_some() && req.streams.is_empty() {
        return Err(CliError::msg(
            "-b/-X/-F read a Kafka Streams application's source topics: give --streams (report -b checks a topology file's topics)",
        ));
    }
    // The audit of each external source topic, by name.
    let mut audited: Vec<TopicAudit> = Vec::new();
    if let Some(conn) = &req.conn {
        let mut topics: Vec<String> = Vec::new();
        for (_, app) in &apps {
            for g in app.copartition_groups() {
                if g.external.len() + g.internal.len() >= 2 {
                    topics.extend(g.external);
                }
            }
        }
        topics.sort();
        topics.dedup();
        if !topics.is_empty() {
            let all: Vec<partwise::Partitioner> = partwise::Partitioner::all().collect();
            let opts = partwise_kafka::audit::AuditOptions {
                topics,
                sample: live.map_or(SAMPLE, live_sample),
                candidates: partwise::inference::candidates(&all, &[]),
                window: live.unwrap_or_default(),
            };
            audited = partwise_kafka::audit::audit(conn, &opts, &mut |_| {})
                .map_err(CliError::lib)?
                .topics;
        }
        for t in &audited {
            let Some(n) = t
                .partition_count()
                .and_then(|n| PartitionCount::new(n).ok())
            else {
                continue;
            };
            let seen = partwise::streams::Observed::new(&t.name, n, t.routing.as_ref());
            if let Some(before) = partwise::streams::observe(&mut topology, &seen) {
                say!(
                    "partwise: note: {} has {} partitions on the cluster, not the {} the topology file declares: the cluster's count is checked",
                    t.name,
                    n.get(),
                    before.get()
                );
            }
        }
    }
    for (path, app) in &apps {
        for p in app.patterns() {
            say!(
                "partwise: warning: {} reads topics by the pattern {p}: which topics those are is not in the description, so their joins are not checked",
                path.display()
            );
        }
        if let Some(t) = app
            .copartition_groups()
            .iter()
            .flat_map(|g| &g.external)
            .find(|t| topology.topic(t).is_none() && !req.topics.iter().any(|(c, _)| c == *t))
            .and_then(|t| audited.iter().find(|a| &a.name == t))
        {
            return Err(CliError::msg(format!(
                "--streams {}: the cluster has no readable topic '{}' ({}), which the application reads: Kafka Streams will not start without it (give -t {}:N to check the join as planned)",
                path.display(),
                t.name,
                t.error.as_deref().unwrap_or("no partitions"),
                t.name
            )));
        }
        crate::ops::streams::declare(&mut topology, path, app, &req.topics)?;
    }
    req.bounded(&topology)?;
    let mut live_weights = None;
    let weights = match &req.counts {
        None => None,
        Some(CountsFrom::File(f)) => Some(Weights::read(f)?),
        Some(CountsFrom::Live(w)) => {
            let refs: Vec<&TopicAudit> = audited.iter().collect();
            let (weights, info) = Weights::live(*w, &refs)?;
            live_weights = Some(info);
            Some(weights)
        }
    };
    let (samples, counts) = match weights {
        Some(w) => {
            let (samples, counts) = w.into_samples();
            (samples, Some(counts))
        }
        None => (load_samples(req.input.clone())?, None),
    };
    let refs: Vec<&[u8]> = samples.iter().map(Vec::as_slice).collect();
    let mut report = partwise::check::check(&topology, &refs);
    if !audited.is_empty() {
        with_audits(&mut report, &audited);
    }
    let records = match &counts {
        Some(counts) => partwise::topology::group_records(&topology, &refs, counts),
        None => vec![None; report.groups.len()],
    };
    Ok(Checked {
        file: req.file(),
        report,
        records,
        live_weights,
    })
}

/// What the audit of each source topic found that its observed producer
/// cannot say (unreadable, no keyed records, records no known partitioner
/// explains, several partitioners, mixed key encodings) joins its group's
/// reasons, in place of `no-producers`: who writes the topic was looked at.
fn with_audits(report: &mut Report, audited: &[TopicAudit]) {
    use partwise::findings::Reason;
    for g in &mut report.groups {
        let mine: Vec<&TopicAudit> = audited
            .iter()
            .filter(|a| g.topics.contains(&a.name))
            .collect();
        g.reasons
            .retain(|r| !matches!(r, Reason::NoProducers { topic } if mine.iter().any(|a| &a.name == topic)));
        for a in mine {
            let v = partwise_kafka::audit::verdict(std::slice::from_ref(a));
            g.reasons.extend(v.findings);
        }
    }
}
