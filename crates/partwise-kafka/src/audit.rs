//! The live audit of topics: per-partition record counts from watermarks with
//! their skew statistics, a read-only sample of each partition's first
//! records, the partitioner that explains them ([`crate::routing`]), and a
//! co-partitioning verdict over the topics together.
//!
//! Reading is read-only by construction: one consumer per topic, assigned
//! (never subscribed), without `group.id`, committing nothing. A topic that
//! cannot be read is named in its entry and the others are still audited; a
//! cluster that stops answering ends the audit within the timeout, marked
//! partial.

use crate::cluster::{read_only_consumer, topic_info, unreachable};
use crate::connect::Connection;
use crate::error::{Error, Result};
use crate::keys::KeyEncoding;
use crate::routing::{analyze, Candidate, Routing, SampledRecord};
use partwise::skew::SkewStats;
use partwise::PartitionCount;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// What to audit.
#[derive(Clone, Debug)]
pub struct AuditOptions {
    /// Topics, in the order to report them.
    pub topics: Vec<String>,
    /// Records to read per partition, from its start (0: counts only).
    pub sample: u64,
    /// Hypotheses to test against the sample.
    pub candidates: Vec<Candidate>,
}

/// Progress reports while sampling, for a progress bar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress<'a> {
    /// Sampling of `topic` starts; at most `target` records will be read.
    Start {
        /// The topic.
        topic: &'a str,
        /// Upper bound on the records to read.
        target: u64,
    },
    /// `read` records of the current topic have been read so far.
    Read {
        /// Records read so far in this topic.
        read: u64,
    },
}

/// One partition's numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct PartitionAudit {
    /// Partition id.
    pub partition: u32,
    /// Leader broker; `None` when it has none.
    pub leader: Option<i32>,
    /// Low watermark (first offset kept).
    pub low: i64,
    /// High watermark (next offset to be written), as the broker reports it.
    pub high: i64,
    /// Records in the partition: `high - low`, or more when the sample read
    /// records at or beyond the reported high watermark (some brokers, tansu
    /// among them, report it low).
    pub records: u64,
    /// Records sampled from it.
    pub sampled: u64,
    /// Why it could not be read, if it could not.
    pub error: Option<String>,
}

/// One topic's audit.
#[derive(Clone, Debug, PartialEq)]
pub struct TopicAudit {
    /// Topic name.
    pub name: String,
    /// Why the topic could not be audited (missing, no answer); then the
    /// other fields are empty.
    pub error: Option<String>,
    /// Per partition.
    pub partitions: Vec<PartitionAudit>,
    /// Skew of the record counts.
    pub skew: Option<SkewStats>,
    /// What the sample says about routing.
    pub routing: Option<Routing>,
    /// Why the numbers are incomplete, when they are.
    pub partial: Option<String>,
}

impl TopicAudit {
    fn failed(name: &str, error: String) -> TopicAudit {
        TopicAudit {
            name: name.to_string(),
            error: Some(error),
            partitions: Vec::new(),
            skew: None,
            routing: None,
            partial: None,
        }
    }

    /// Partition count, when the topic was found.
    pub fn partition_count(&self) -> Option<u32> {
        (self.error.is_none()).then_some(self.partitions.len() as u32)
    }
}

/// Whether the audited topics are co-partitioned.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// True when every check passed.
    pub copartitioned: bool,
    /// Every reason they are not (or cannot be shown to be).
    pub reasons: Vec<String>,
    /// The hypotheses that explain every topic's sample.
    pub common: Vec<Candidate>,
}

/// The whole audit.
#[derive(Clone, Debug, PartialEq)]
pub struct AuditReport {
    /// Per topic, in the order asked.
    pub topics: Vec<TopicAudit>,
    /// Over the topics together, when there are two or more.
    pub verdict: Option<Verdict>,
}

impl AuditReport {
    /// Whether any topic's numbers are incomplete.
    pub fn partial(&self) -> bool {
        self.topics.iter().any(|t| t.partial.is_some())
    }
}

/// Audits `opts.topics` on the cluster, calling `progress` while sampling.
///
/// Fails only when the cluster cannot be reached at all; a topic that cannot
/// be read is reported in its [`TopicAudit::error`].
pub fn audit(
    conn: &Connection,
    opts: &AuditOptions,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<AuditReport> {
    if opts.topics.is_empty() {
        return Err(Error::Invalid("no topic to audit".into()));
    }
    let probe = read_only_consumer(conn)?;
    // One metadata round trip up front: an unreachable cluster is an error,
    // not a report of N failed topics.
    probe
        .fetch_metadata(None, conn.timeout())
        .map_err(|e| unreachable(conn, e))?;
    let mut topics = Vec::new();
    let mut cluster_down: Option<String> = None;
    for name in &opts.topics {
        if let Some(why) = &cluster_down {
            let mut t = TopicAudit::failed(name, format!("not audited: {why}"));
            t.partial = Some(why.clone());
            topics.push(t);
            continue;
        }
        let t = audit_topic(conn, name, opts, progress);
        if let Some(p) = &t.partial {
            if p.contains("stopped answering") {
                cluster_down = Some(p.clone());
            }
        }
        topics.push(t);
    }
    let verdict = (topics.len() >= 2).then(|| verdict(&topics));
    Ok(AuditReport { topics, verdict })
}

const STOPPED: &str = "the cluster stopped answering";

fn audit_topic(
    conn: &Connection,
    name: &str,
    opts: &AuditOptions,
    progress: &mut dyn FnMut(Progress<'_>),
) -> TopicAudit {
    let c = match read_only_consumer(conn) {
        Ok(c) => c,
        Err(e) => return TopicAudit::failed(name, e.to_string()),
    };
    let info = match topic_info(&c, conn, name) {
        Ok(i) => i,
        Err(e) => {
            let mut t = TopicAudit::failed(name, e.to_string());
            t.partial = Some(STOPPED.into());
            return t;
        }
    };
    if let Some(e) = &info.error {
        let why = if info.missing {
            "topic does not exist".to_string()
        } else {
            format!("broker error: {e}")
        };
        return TopicAudit::failed(name, why);
    }
    if info.partitions.is_empty() {
        return TopicAudit::failed(name, "topic has no partitions".into());
    }
    let mut t = TopicAudit {
        name: name.to_string(),
        error: None,
        partitions: Vec::new(),
        skew: None,
        routing: None,
        partial: None,
    };
    // Watermarks are two ListOffsets round trips per partition; asked one
    // partition after another they dominate a short audit, so ask them all
    // at once (librdkafka handles are thread-safe).
    let mut marks: Vec<Option<Result<(i64, i64), KafkaError>>> = Vec::new();
    for chunk in info.partitions.chunks(32) {
        std::thread::scope(|s| {
            let handles: Vec<_> = chunk
                .iter()
                .map(|p| {
                    let c = &c;
                    (p.leader.is_some()).then(|| {
                        s.spawn(move || c.fetch_watermarks(name, p.id as i32, conn.timeout()))
                    })
                })
                .collect();
            marks.extend(
                handles
                    .into_iter()
                    .map(|h| h.map(|h| h.join().expect("watermark thread panicked"))),
            );
        });
    }
    for (p, mark) in info.partitions.iter().zip(marks) {
        let mut pa = PartitionAudit {
            partition: p.id,
            leader: p.leader,
            low: 0,
            high: 0,
            records: 0,
            sampled: 0,
            error: None,
        };
        match mark {
            None => pa.error = Some("no leader".into()),
            Some(_) if t.partial.is_some() => pa.error = Some(format!("not read: {STOPPED}")),
            Some(Ok((lo, hi))) => {
                pa.low = lo;
                pa.high = hi;
                pa.records = (hi - lo).max(0) as u64;
            }
            Some(Err(e)) => {
                pa.error = Some(conn.scrub(&e.to_string()));
                if is_transport(&e) {
                    t.partial = Some(STOPPED.into());
                }
            }
        }
        t.partitions.push(pa);
    }
    if opts.sample > 0 && t.partial.is_none() {
        sample(conn, &c, &mut t, opts, progress);
    }
    let loads: Vec<u64> = t.partitions.iter().map(|p| p.records).collect();
    t.skew = Some(SkewStats::of(&loads));
    t
}

fn is_transport(e: &KafkaError) -> bool {
    use rdkafka::types::RDKafkaErrorCode as C;
    matches!(
        e.rdkafka_error_code(),
        Some(C::OperationTimedOut | C::BrokerTransportFailure | C::AllBrokersDown)
    )
}

fn sample(
    conn: &Connection,
    c: &BaseConsumer,
    t: &mut TopicAudit,
    opts: &AuditOptions,
    progress: &mut dyn FnMut(Progress<'_>),
) {
    let mut tpl = TopicPartitionList::new();
    // Partitions still to read. Empty ones (by their watermarks) are
    // still read: a broker that reports the high watermark low would
    // otherwise hide their records.
    let mut open: BTreeSet<u32> = BTreeSet::new();
    for p in &t.partitions {
        if p.error.is_none() {
            // Seek by offset, not Offset::Beginning: no ListOffsets round trip.
            if tpl
                .add_partition_offset(&t.name, p.partition as i32, Offset::Offset(p.low))
                .is_ok()
            {
                open.insert(p.partition);
            }
        }
    }
    let target: u64 = open.len() as u64 * opts.sample;
    progress(Progress::Start {
        topic: &t.name,
        target,
    });
    if let Err(e) = c.assign(&tpl) {
        t.partial = Some(format!(
            "could not assign partitions: {}",
            conn.scrub(&e.to_string())
        ));
        return;
    }
    let mut records: Vec<SampledRecord> = Vec::new();
    let mut read = vec![0u64; t.partitions.len()];
    let mut max_offset = vec![-1i64; t.partitions.len()];
    let idle_limit = conn.timeout();
    let mut last_progress = Instant::now();
    let mut last_report = 0u64;
    // Records since `last_progress` was refreshed: reading the clock for every
    // record costs more than decoding it, so the clock is read every 1024
    // records, and when a poll comes back empty.
    let mut since_clock = 0u32;
    while !open.is_empty() {
        if since_clock == 0 && last_progress.elapsed() >= idle_limit {
            t.partial = Some(format!(
                "sampling stopped: {STOPPED} (nothing read for {:.1}s from partitions {})",
                idle_limit.as_secs_f64(),
                open.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            ));
            break;
        }
        match c.poll(Duration::from_millis(100)) {
            None => {
                if since_clock > 0 {
                    last_progress = Instant::now();
                }
                since_clock = 0;
            }
            Some(Ok(m)) => {
                let p = m.partition().max(0) as u32;
                let i = p as usize;
                if !open.contains(&p) || i >= read.len() {
                    continue;
                }
                since_clock += 1;
                if since_clock >= 1024 {
                    last_progress = Instant::now();
                    since_clock = 1;
                }
                read[i] += 1;
                max_offset[i] = max_offset[i].max(m.offset());
                records.push(SampledRecord {
                    partition: p,
                    offset: m.offset(),
                    key: m.key().map(<[u8]>::to_vec),
                });
                if read[i] >= opts.sample {
                    close(c, &t.name, p, &mut open);
                }
                let total = records.len() as u64;
                if total - last_report >= 64 || open.is_empty() {
                    last_report = total;
                    progress(Progress::Read { read: total });
                }
            }
            Some(Err(KafkaError::PartitionEOF(p))) => {
                last_progress = Instant::now();
                close(c, &t.name, p.max(0) as u32, &mut open);
            }
            // Transport errors are retried by librdkafka; the idle limit
            // decides when to give up.
            Some(Err(_)) => {}
        }
    }
    progress(Progress::Read {
        read: records.len() as u64,
    });
    let _ = c.unassign();
    for (pa, (&n, &mx)) in t.partitions.iter_mut().zip(read.iter().zip(&max_offset)) {
        pa.sampled = n;
        if mx >= pa.high && mx >= 0 {
            pa.records = (mx + 1 - pa.low).max(0) as u64;
        }
    }
    if let Ok(n) = PartitionCount::new(t.partitions.len() as u32) {
        t.routing = Some(analyze(n, &records, &opts.candidates));
    }
}

fn close(c: &BaseConsumer, topic: &str, p: u32, open: &mut BTreeSet<u32>) {
    if open.remove(&p) {
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition(topic, p as i32);
        // Stop fetching what we no longer need; a failure only costs bandwidth.
        let _ = c.pause(&tpl);
    }
}

/// The co-partitioning verdict over audited topics: counts, partitioners,
/// key encodings.
pub fn verdict(topics: &[TopicAudit]) -> Verdict {
    let mut reasons = Vec::new();
    for t in topics {
        if let Some(e) = &t.error {
            reasons.push(format!("{}: cannot be checked ({e})", t.name));
        }
    }
    let found: Vec<&TopicAudit> = topics.iter().filter(|t| t.error.is_none()).collect();
    let counts: BTreeSet<u32> = found.iter().filter_map(|t| t.partition_count()).collect();
    if counts.len() > 1 {
        reasons.push(format!(
            "partition counts differ: {}",
            found
                .iter()
                .map(|t| format!("{} has {}", t.name, t.partitions.len()))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut common: Option<Vec<Candidate>> = None;
    let mut explained = true;
    for t in &found {
        match &t.routing {
            Some(r) if r.keyed > 0 && !r.inferred.is_empty() => {
                common = Some(match common {
                    None => r.inferred.clone(),
                    Some(c) => c.into_iter().filter(|x| r.inferred.contains(x)).collect(),
                });
            }
            Some(r) if r.keyed > 0 => {
                explained = false;
                reasons.push(format!(
                    "{}: no candidate partitioner explains every keyed record ({} misplaced under the best, {})",
                    t.name,
                    r.misrouted_total,
                    r.rates.first().map_or("none".into(), |m| m.candidate.to_string())
                ));
            }
            _ => {
                explained = false;
                reasons.push(format!(
                    "{}: no keyed records sampled, so its partitioner is unknown",
                    t.name
                ));
            }
        }
    }
    let common = common.unwrap_or_default();
    if explained && found.len() >= 2 && common.is_empty() {
        reasons.push(format!(
            "partitioners differ: {}",
            found
                .iter()
                .map(|t| {
                    let r = t.routing.as_ref().expect("explained topics have routing");
                    format!("{} is written by {}", t.name, summarize(&r.inferred))
                })
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    let encodings: BTreeSet<String> = found
        .iter()
        .filter_map(|t| t.routing.as_ref()?.encoding)
        .map(|e| e.to_string())
        .collect();
    let mixed = found
        .iter()
        .any(|t| t.routing.as_ref().and_then(|r| r.encoding) == Some(KeyEncoding::Mixed));
    if encodings.len() > 1 || mixed {
        reasons.push(format!(
            "key encodings differ: {}",
            found
                .iter()
                .filter_map(|t| Some(format!(
                    "{} keys are {}",
                    t.name,
                    t.routing.as_ref()?.encoding?
                )))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Verdict {
        copartitioned: reasons.is_empty(),
        reasons,
        common,
    }
}

/// The partitioners of a list of candidates, for messages: the first few specs.
pub fn summarize(c: &[Candidate]) -> String {
    let names: Vec<String> = c.iter().map(Candidate::to_string).collect();
    if names.len() <= 3 {
        names.join(" / ")
    } else {
        format!(
            "{} / ... ({} equivalent)",
            names[..3].join(" / "),
            names.len()
        )
    }
}
