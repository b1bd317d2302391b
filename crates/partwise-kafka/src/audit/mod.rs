//! The live audit of topics: per-partition record counts from watermarks with
//! their skew statistics, a read-only sample of each partition's first
//! records, the partitioner that explains them ([`partwise::inference`]), and a
//! co-partitioning verdict over the topics together, in the core's findings
//! ([`partwise::findings::Reason`]) so that it reads as `partwise check` does.
//!
//! Reading is read-only by construction: one consumer without a group (not
//! even a throwaway `group.id`; one given with `-X` is dropped) reads the
//! partitions with librdkafka's simple consumer ([`crate::fetch`]), so
//! nothing is joined or committed. A topic that cannot be read is named in its
//! entry and the others are still audited; so is a partition (no leader, no
//! watermarks), which is then left out of the counts and skew, the topic
//! marked partial. A cluster that stops answering ends the audit within the
//! timeout, marked partial.

use crate::cluster::{groupless_consumer, topic_info, PartitionInfo, TopicInfo};
use crate::connect::Connection;
use crate::error::{Error, Result};
use crate::fetch::{Event, PartitionReader};

mod verdict;

pub use verdict::{summarize, verdict, Verdict};

use partwise::inference::{Analyzer, Candidate, RecordRef, Routing};
use partwise::traffic::hitters::{HeavyHitters, KeyTally};
use partwise::traffic::skew::SkewStats;
use partwise::PartitionCount;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
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
    /// Which records of each partition to sample: its oldest, or its newest.
    pub window: Window,
}

/// Which records of each partition the audit samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Window {
    /// The oldest: from the low watermark.
    #[default]
    Oldest,
    /// The records written in the last this long (found by ListOffsets by
    /// timestamp), the newest `sample` of them per partition when there are more.
    Since(Duration),
    /// The newest this many records of each partition (and at most `sample`).
    FromEnd(u64),
}

impl Window {
    /// Whether the window is of the newest records.
    pub fn is_recent(self) -> bool {
        self != Window::Oldest
    }

    /// The window in words, as a report says what its numbers are of.
    pub fn describe(self) -> String {
        match self {
            Window::Oldest => "the oldest records of each partition".into(),
            Window::Since(d) => format!(
                "the records of the last {} (by timestamp)",
                partwise::duration::label(d)
            ),
            Window::FromEnd(n) => format!("the newest {n} records of each partition"),
        }
    }
}

/// The keys that carry a window's records, with the window they are of.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowTraffic {
    /// The window asked.
    pub window: Window,
    /// When the window starts (ms since the epoch), for [`Window::Since`].
    pub since_ms: Option<i64>,
    /// The heaviest keys, per partition and overall.
    pub hitters: HeavyHitters,
    /// Every key of the window with its records, most first: the window's
    /// `KEY,COUNT` weights.
    pub counts: Vec<(Vec<u8>, u64)>,
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
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
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
    /// The offset sampling started at: the low watermark, or the start of
    /// a window of the newest records.
    pub start: i64,
    /// Why it could not be read, if it could not (`no leader`, `watermarks:
    /// ...`); such a partition is left out of the topic's skew.
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
    /// Skew of the record counts of the partitions that could be read
    /// (hot and idle ones named by partition id); `None` when none could.
    pub skew: Option<SkewStats>,
    /// What the sample says about routing.
    pub routing: Option<Routing>,
    /// The keys that carry the sampled records (the oldest, or with a
    /// window of the newest records that window, whose records per
    /// partition the skew is then of).
    pub traffic: Option<WindowTraffic>,
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
            traffic: None,
            partial: None,
        }
    }

    /// Partition count, when the topic was found.
    pub fn partition_count(&self) -> Option<u32> {
        (self.error.is_none()).then_some(self.partitions.len() as u32)
    }
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

/// Topics in one audit from which it reads the whole cluster's metadata
/// once rather than each topic's.
const LIST_ALL_FROM: usize = 8;

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
    // One client for every topic: one connection set-up, and the metadata
    // of the first topic doubles as the reachability check.
    let c = groupless_consumer(conn)?;
    // Many topics: one Metadata request for the whole cluster instead of
    // one per topic. Each answer costs librdkafka work over every topic it
    // already knows, so asking topic by topic grew with the square of the
    // topic count (3.3 s of CPU for 400 topics of 50 partitions). A few
    // topics (a co-partition group's, as `report -b` audits group by
    // group) are asked alone: the whole listing of a large cluster costs
    // more than they do. A topic the listing lacks is still asked alone,
    // for the broker's own error.
    let listed: std::collections::HashMap<String, TopicInfo> = if opts.topics.len() > LIST_ALL_FROM
    {
        crate::cluster::all_topics(&c, conn)?
            .into_iter()
            .map(|t| (t.name.clone(), t))
            .collect()
    } else {
        Default::default()
    };
    let mut topics = Vec::new();
    let mut cluster_down: Option<String> = None;
    for (i, name) in opts.topics.iter().enumerate() {
        if let Some(why) = &cluster_down {
            let mut t = TopicAudit::failed(name, format!("not audited: {why}"));
            t.partial = Some(why.clone());
            topics.push(t);
            continue;
        }
        let info = match listed.get(name) {
            Some(t) => Ok(t.clone()),
            None => topic_info(&c, conn, name),
        };
        let t = match info {
            Ok(info) => audit_topic(conn, &c, info, opts, progress),
            // An unreachable cluster is an error, not a report of N failed topics.
            Err(e) if i == 0 => return Err(e),
            Err(e) => {
                let mut t = TopicAudit::failed(name, e.to_string());
                t.partial = Some(STOPPED.into());
                t
            }
        };
        if let Some(p) = &t.partial {
            if p.contains(STOPPED) {
                cluster_down = Some(STOPPED.into());
            }
        }
        topics.push(t);
    }
    let verdict = (topics.len() >= 2).then(|| verdict(&topics));
    Ok(AuditReport { topics, verdict })
}

/// Audits [`audit_each`] runs at once. An audit mostly waits on the
/// brokers (a topic's sample ends when each of its partitions has reported
/// its end, a fetch round trip or a 100 ms poll at a time), so several
/// clients side by side finish a long list in a fraction of the time one
/// takes, with no more work per audit.
pub const AUDITS_AT_ONCE: usize = 8;

/// [`audit`] of each of `each` (without progress), up to [`AUDITS_AT_ONCE`]
/// at a time, each with a client of its own; the results in the order of
/// `each`, each exactly what [`audit`] gives alone.
pub fn audit_each(conn: &Connection, each: &[AuditOptions]) -> Vec<Result<AuditReport>> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let threads = AUDITS_AT_ONCE.min(each.len());
    let done: Vec<Vec<(usize, Result<AuditReport>)>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(opts) = each.get(i) else {
                            return mine;
                        };
                        mine.push((i, audit(conn, opts, &mut |_| {})));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    let mut out: Vec<Option<Result<AuditReport>>> = each.iter().map(|_| None).collect();
    for (i, r) in done.into_iter().flatten() {
        out[i] = Some(r);
    }
    // Every index below each.len() was taken by exactly one worker.
    out.into_iter().flatten().collect()
}

const STOPPED: &str = "the cluster stopped answering";

fn audit_topic(
    conn: &Connection,
    c: &BaseConsumer,
    info: TopicInfo,
    opts: &AuditOptions,
    progress: &mut dyn FnMut(Progress<'_>),
) -> TopicAudit {
    let name = info.name.as_str();
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
    let marks = watermarks(c, name, &info.partitions, conn.timeout());
    let (partitions, partial) = partition_audits(&info.partitions, marks, |e| {
        (conn.scrub(&e.to_string()), is_transport(e))
    });
    let mut t = TopicAudit {
        name: name.to_string(),
        error: None,
        partitions,
        skew: None,
        routing: None,
        traffic: None,
        partial,
    };
    let down = t.partial.as_deref().is_some_and(|p| p.contains(STOPPED));
    if opts.sample > 0 && !down {
        sample(conn, c, &mut t, opts, progress);
    }
    t.skew = if opts.window.is_recent() && t.traffic.as_ref().is_some_and(|w| w.hitters.records > 0)
    {
        window_skew(&t.partitions)
    } else {
        topic_skew(&t.partitions)
    };
    t
}

/// Skew of the window's records per partition (those sampled), over the
/// partitions that could be read; `None` when none could or the window
/// holds no record.
fn window_skew(parts: &[PartitionAudit]) -> Option<SkewStats> {
    let readable: Vec<&PartitionAudit> = parts.iter().filter(|p| p.error.is_none()).collect();
    if readable.iter().all(|p| p.sampled == 0) {
        return None;
    }
    let loads: Vec<u64> = readable.iter().map(|p| p.sampled).collect();
    let mut s = SkewStats::of(&loads);
    for i in s
        .hot_partitions
        .iter_mut()
        .chain(s.idle_partitions.iter_mut())
    {
        *i = readable[*i as usize].partition;
    }
    Some(s)
}

/// Where each partition's window starts, from its watermarks and, for
/// [`Window::Since`], the first offset at or after `since_ms` (`found`,
/// `-1`: no record that recent): never before the low watermark, and never
/// more than `sample` records before the high one.
fn window_start(window: Window, sample: u64, low: i64, high: i64, found: Option<i64>) -> i64 {
    let cap = high.saturating_sub(i64::try_from(sample).unwrap_or(i64::MAX));
    let start = match window {
        Window::Oldest => return low,
        Window::FromEnd(n) => high.saturating_sub(i64::try_from(n).unwrap_or(i64::MAX)),
        Window::Since(_) => match found {
            Some(o) if o >= 0 => o,
            _ => high,
        },
    };
    start.max(cap).max(low).min(high.max(low))
}

/// The low and high watermarks of a topic's partitions that have a leader
/// (`None` for one without), in metadata order: two ListOffsets calls for the
/// whole topic (earliest, then latest), which librdkafka sends as one
/// request per leader, where asking partition by partition cost two round
/// trips each and, on a cluster of 20,000 partitions, most of an audit's
/// time. The offsets are what librdkafka's watermark query returns (the same
/// ListOffsets, under the consumer's isolation level); a partition's own
/// error is its alone, a failed call every asked partition's.
fn watermarks(
    c: &BaseConsumer,
    topic: &str,
    parts: &[PartitionInfo],
    timeout: Duration,
) -> Vec<Option<std::result::Result<(i64, i64), KafkaError>>> {
    use rdkafka::{Offset, TopicPartitionList};
    let ask = |at: Offset| {
        let mut tpl = TopicPartitionList::with_capacity(parts.len());
        for p in parts.iter().filter(|p| p.leader.is_some()) {
            tpl.add_partition_offset(topic, p.id as i32, at)
                .expect("Beginning and End are valid offsets");
        }
        c.offsets_for_times(tpl, timeout)
    };
    let (low, high) = (ask(Offset::Beginning), ask(Offset::End));
    // The offset librdkafka found for a partition, or why not.
    let found = |answer: &rdkafka::error::KafkaResult<TopicPartitionList>,
                 id: u32|
     -> std::result::Result<i64, KafkaError> {
        let tpl = answer.as_ref().map_err(Clone::clone)?;
        let e = tpl
            .find_partition(topic, id as i32)
            .ok_or(KafkaError::MetadataFetch(
                rdkafka::types::RDKafkaErrorCode::UnknownPartition,
            ))?;
        e.error().map_err(|e| {
            KafkaError::MetadataFetch(
                e.rdkafka_error_code()
                    .unwrap_or(rdkafka::types::RDKafkaErrorCode::Fail),
            )
        })?;
        match e.offset() {
            Offset::Offset(o) => Ok(o),
            // No offset found: librdkafka's watermark query would fail too.
            _ => Err(KafkaError::MetadataFetch(
                rdkafka::types::RDKafkaErrorCode::OffsetOutOfRange,
            )),
        }
    };
    parts
        .iter()
        .map(|p| {
            p.leader
                .is_some()
                .then(|| Ok((found(&low, p.id)?, found(&high, p.id)?)))
        })
        .collect()
}

/// The rows of a topic's partitions from its metadata and the watermarks
/// asked for them (`None`: not asked, the partition has no leader), and why
/// the topic's numbers are partial, if they are. `describe` gives an error's
/// text and whether it is a transport failure.
///
/// A partition without a leader or without watermarks is named with its
/// error and the others are still audited. Only when every partition asked
/// failed in transport is the cluster taken to have stopped answering.
fn partition_audits(
    parts: &[PartitionInfo],
    marks: Vec<Option<Result<(i64, i64), KafkaError>>>,
    describe: impl Fn(&KafkaError) -> (String, bool),
) -> (Vec<PartitionAudit>, Option<String>) {
    let mut asked = 0usize;
    let mut transport = 0usize;
    let rows: Vec<PartitionAudit> = parts
        .iter()
        .zip(marks)
        .map(|(p, mark)| {
            let mut pa = PartitionAudit {
                partition: p.id,
                leader: p.leader,
                low: 0,
                high: 0,
                records: 0,
                sampled: 0,
                start: 0,
                error: None,
            };
            match mark {
                None => pa.error = Some("no leader".into()),
                Some(Ok((lo, hi))) => {
                    asked += 1;
                    pa.low = lo;
                    pa.high = hi;
                    pa.records = (hi - lo).max(0) as u64;
                }
                Some(Err(e)) => {
                    asked += 1;
                    let (text, is_transport) = describe(&e);
                    transport += usize::from(is_transport);
                    pa.error = Some(format!("watermarks: {text}"));
                }
            }
            pa
        })
        .collect();
    let failed: Vec<&PartitionAudit> = rows.iter().filter(|p| p.error.is_some()).collect();
    let partial = if asked > 0 && transport == asked {
        Some(STOPPED.to_string())
    } else if failed.is_empty() {
        None
    } else {
        Some(format!(
            "{} of {} partitions not read ({}); counts and skew are over the others",
            failed.len(),
            rows.len(),
            failed
                .iter()
                .map(|p| format!("{}: {}", p.partition, p.error.as_deref().unwrap_or("")))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    };
    (rows, partial)
}

/// Skew over the partitions that could be read, hot and idle ones named by
/// partition id; `None` when none could.
fn topic_skew(parts: &[PartitionAudit]) -> Option<SkewStats> {
    let readable: Vec<&PartitionAudit> = parts.iter().filter(|p| p.error.is_none()).collect();
    if readable.is_empty() {
        return None;
    }
    let loads: Vec<u64> = readable.iter().map(|p| p.records).collect();
    let mut s = SkewStats::of(&loads);
    for i in s
        .hot_partitions
        .iter_mut()
        .chain(s.idle_partitions.iter_mut())
    {
        *i = readable[*i as usize].partition;
    }
    Some(s)
}

fn add_partial(t: &mut TopicAudit, why: String) {
    t.partial = Some(match t.partial.take() {
        None => why,
        Some(p) => format!("{p}; {why}"),
    });
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
    let n = t.partitions.len();
    let mut reader = match PartitionReader::new(c, &t.name) {
        Ok(r) => r,
        Err(e) => {
            add_partial(
                t,
                format!("could not read the topic: {}", conn.scrub(&e.to_string())),
            );
            return;
        }
    };
    // Partitions still to read. Empty ones (by their watermarks) are
    // still read: a broker that reports the high watermark low would
    // otherwise hide their records.
    let mut open = vec![false; n];
    let mut n_open = 0usize;
    let since_ms = match opts.window {
        Window::Since(d) => {
            Some(now_ms().saturating_sub(i64::try_from(d.as_millis()).unwrap_or(i64::MAX)))
        }
        _ => None,
    };
    let found = match since_ms {
        Some(ms) => match offsets_at(conn, t, ms) {
            Ok(f) => Some(f),
            Err(e) => {
                add_partial(t, format!("could not find where the window starts: {e}"));
                return;
            }
        },
        None => None,
    };
    let recent = opts.window.is_recent();
    let mut ends = vec![i64::MAX; n];
    for (i, p) in t.partitions.iter_mut().enumerate() {
        if p.error.is_some() {
            continue;
        }
        let at = found
            .as_ref()
            .and_then(|f| f.get(&(p.partition as i32)).copied());
        p.start = window_start(opts.window, opts.sample, p.low, p.high, at);
        if recent {
            // The window ends where the audit found the log's end: records
            // written while it reads are not in it.
            ends[i] = p.high;
            if p.start >= p.high {
                continue;
            }
        }
        // From an offset, not Offset::Beginning: no ListOffsets round trip.
        match reader.start(p.partition as i32, p.start) {
            Ok(()) => {
                open[i] = true;
                n_open += 1;
            }
            Err(e) => p.error = Some(format!("not read: {}", conn.scrub(&e.to_string()))),
        }
    }
    let unstarted: Vec<String> = t
        .partitions
        .iter()
        .filter(|p| {
            p.error
                .as_deref()
                .is_some_and(|e| e.starts_with("not read"))
        })
        .map(|p| p.partition.to_string())
        .collect();
    if !unstarted.is_empty() {
        add_partial(t, format!("partitions {} not read", unstarted.join(",")));
    }
    progress(Progress::Start {
        topic: &t.name,
        target: n_open as u64 * opts.sample,
    });
    // Partition ids are 0..n in metadata order; the search is for a broker
    // that says otherwise.
    let ids: Vec<u32> = t.partitions.iter().map(|p| p.partition).collect();
    let slot = |p: i32| -> Option<usize> {
        let p = u32::try_from(p).ok()?;
        match ids.get(p as usize) {
            Some(&x) if x == p => Some(p as usize),
            _ => ids.binary_search(&p).ok(),
        }
    };
    let mut analyzer = PartitionCount::new(n as u32)
        .ok()
        .map(|count| Analyzer::new(count, &opts.candidates));
    let mut tally = Some(KeyTally::new());
    let mut read = vec![0u64; n];
    let mut max_offset = vec![-1i64; n];
    let mut total = 0u64;
    let idle_limit = conn.timeout();
    let mut last_progress = Instant::now();
    let mut to_stop: Vec<i32> = Vec::new();
    while n_open > 0 {
        let batch = reader.next_batch(Duration::from_millis(100));
        if batch.is_empty() {
            if last_progress.elapsed() >= idle_limit {
                let still: Vec<String> = (0..n)
                    .filter(|&i| open[i])
                    .map(|i| ids[i].to_string())
                    .collect();
                drop(batch);
                add_partial(
                    t,
                    format!(
                        "sampling stopped: {STOPPED} (nothing read for {:.1}s from partitions {})",
                        idle_limit.as_secs_f64(),
                        still.join(",")
                    ),
                );
                break;
            }
            continue;
        }
        // One clock read per batch, not per record.
        last_progress = Instant::now();
        let mut records: Vec<RecordRef<'_>> = Vec::with_capacity(batch.len());
        for ev in batch.events() {
            match ev {
                Event::Record {
                    partition,
                    offset,
                    key,
                    value,
                } => {
                    let Some(i) = slot(partition).filter(|&i| open[i]) else {
                        continue;
                    };
                    if offset >= ends[i] {
                        open[i] = false;
                        n_open -= 1;
                        to_stop.push(partition);
                        continue;
                    }
                    if let Some(k) = tally.as_mut() {
                        k.add(ids[i], key, value.map_or(0, <[u8]>::len));
                    }
                    read[i] += 1;
                    max_offset[i] = max_offset[i].max(offset);
                    records.push(RecordRef {
                        partition: ids[i],
                        offset,
                        key,
                    });
                    if read[i] >= opts.sample || offset + 1 >= ends[i] {
                        open[i] = false;
                        n_open -= 1;
                        to_stop.push(partition);
                    }
                }
                Event::End { partition } => {
                    if let Some(i) = slot(partition).filter(|&i| open[i]) {
                        open[i] = false;
                        n_open -= 1;
                        to_stop.push(partition);
                    }
                }
                // Transport errors are retried by librdkafka; the idle limit
                // decides when to give up.
                Event::Error { .. } => {}
            }
        }
        total += records.len() as u64;
        // While the broker fills the next batch.
        if let Some(a) = analyzer.as_mut() {
            a.add_batch(&records);
        }
        drop(records);
        drop(batch);
        // Stop fetching what is no longer needed.
        for p in to_stop.drain(..) {
            reader.stop(p);
        }
        progress(Progress::Read { read: total });
    }
    drop(reader);
    progress(Progress::Read { read: total });
    for (pa, (&n, &mx)) in t.partitions.iter_mut().zip(read.iter().zip(&max_offset)) {
        pa.sampled = n;
        if mx >= pa.high && mx >= 0 {
            pa.records = (mx + 1 - pa.low).max(0) as u64;
        }
    }
    t.routing = analyzer.map(Analyzer::finish);
    t.traffic = tally.map(|k| WindowTraffic {
        window: opts.window,
        since_ms,
        hitters: k.finish(HITTERS),
        counts: k.counts(),
    });
}

/// The window's keys over every topic of `topics` with the records each
/// carries (a key in two topics counted in both), most records first, ties
/// by key: the `KEY,COUNT` weights of `kafka audit --counts-out` and of
/// `--counts live:...`. Topics without a window add nothing.
pub fn window_counts<'a>(topics: impl IntoIterator<Item = &'a TopicAudit>) -> Vec<(Vec<u8>, u64)> {
    let mut sum: std::collections::HashMap<&[u8], u64> = std::collections::HashMap::new();
    for t in topics {
        for (k, c) in t.traffic.iter().flat_map(|w| &w.counts) {
            let e = sum.entry(k.as_slice()).or_default();
            *e = e.saturating_add(*c);
        }
    }
    let mut keys: Vec<(Vec<u8>, u64)> = sum.into_iter().map(|(k, c)| (k.to_vec(), c)).collect();
    keys.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    keys
}

/// Keys each heavy-hitter ranking names.
pub const HITTERS: usize = 10;

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The first offset at or after `ms` of each readable partition of `t`, by
/// ListOffsets through partwise's own client.
fn offsets_at(
    conn: &Connection,
    t: &TopicAudit,
    ms: i64,
) -> Result<std::collections::HashMap<i32, i64>> {
    let target = conn.client_target()?;
    let parts: Vec<i32> = t
        .partitions
        .iter()
        .filter(|p| p.error.is_none())
        .map(|p| p.partition as i32)
        .collect();
    partwise_client::blocking::offsets_for_time(&target, &t.name, &parts, ms)
        .map_err(|e| Error::Invalid(conn.scrub(&e.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use partwise::findings::Reason;
    use rdkafka::types::RDKafkaErrorCode as C;

    fn info(leaders: &[Option<i32>]) -> Vec<PartitionInfo> {
        leaders
            .iter()
            .enumerate()
            .map(|(i, &leader)| PartitionInfo {
                id: i as u32,
                leader,
                error: None,
            })
            .collect()
    }

    fn describe(e: &KafkaError) -> (String, bool) {
        (e.to_string(), is_transport(e))
    }

    fn err(code: C) -> Option<Result<(i64, i64), KafkaError>> {
        Some(Err(KafkaError::MetadataFetch(code)))
    }

    #[test]
    fn a_partition_without_a_leader_is_named_and_left_out_of_the_skew() {
        let parts = info(&[Some(1), None, Some(1), Some(1)]);
        let marks = vec![Some(Ok((0, 10))), None, Some(Ok((5, 5))), Some(Ok((0, 40)))];
        let (rows, partial) = partition_audits(&parts, marks, describe);
        assert_eq!(rows[1].error.as_deref(), Some("no leader"));
        assert_eq!(rows[1].leader, None);
        assert!(rows
            .iter()
            .filter(|p| p.partition != 1)
            .all(|p| p.error.is_none()));
        assert_eq!(
            (rows[0].records, rows[2].records, rows[3].records),
            (10, 0, 40)
        );
        let why = partial.expect("a partition missing makes the numbers partial");
        assert!(
            why.contains("1 of 4 partitions") && why.contains("1: no leader"),
            "{why}"
        );
        assert!(!why.contains(STOPPED), "{why}");
        let s = topic_skew(&rows).unwrap();
        assert_eq!(s.total, 50);
        // Three partitions, not four: the one without a leader is not idle.
        assert!((s.mean - 50.0 / 3.0).abs() < 1e-9, "{}", s.mean);
        // Named by partition id, not by position among the readable ones.
        assert_eq!(s.idle_partitions, vec![2]);
        assert_eq!(s.hot_partitions, vec![3]);
    }

    #[test]
    fn a_failed_watermark_is_per_partition_unless_every_partition_failed() {
        let parts = info(&[Some(1), Some(2), Some(1)]);
        // One broker times out, the other answers: partition 1 is named.
        let marks = vec![
            Some(Ok((0, 7))),
            err(C::OperationTimedOut),
            Some(Ok((0, 9))),
        ];
        let (rows, partial) = partition_audits(&parts, marks, describe);
        let e = rows[1].error.as_deref().unwrap();
        assert!(e.starts_with("watermarks: "), "{e}");
        let why = partial.unwrap();
        assert!(why.contains("1 of 3") && !why.contains(STOPPED), "{why}");
        assert_eq!(topic_skew(&rows).unwrap().total, 16);
        // Every partition asked failed in transport: the cluster is down.
        let marks = vec![
            err(C::OperationTimedOut),
            err(C::AllBrokersDown),
            err(C::BrokerTransportFailure),
        ];
        let (rows, partial) = partition_audits(&parts, marks, describe);
        assert_eq!(partial.as_deref(), Some(STOPPED));
        assert!(rows.iter().all(|p| p.error.is_some()));
        assert_eq!(topic_skew(&rows), None);
        // A broker error (not transport) on every partition is not "down".
        let marks = vec![
            err(C::NotLeaderForPartition),
            err(C::NotLeaderForPartition),
            Some(Ok((0, 1))),
        ];
        let (_, partial) = partition_audits(&parts, marks, describe);
        assert!(partial.unwrap().contains("2 of 3"));
        // Every partition readable: nothing partial.
        let marks = vec![Some(Ok((0, 1))), Some(Ok((0, 1))), Some(Ok((0, 1)))];
        assert_eq!(partition_audits(&parts, marks, describe).1, None);
        // No partition has a leader: nothing asked, all named, not "down".
        let parts = info(&[None, None]);
        let (rows, partial) = partition_audits(&parts, vec![None, None], describe);
        assert!(rows.iter().all(|p| p.error.as_deref() == Some("no leader")));
        assert!(partial.unwrap().contains("2 of 2"));
        assert_eq!(topic_skew(&rows), None);
    }

    /// A topic of `n` partitions whose sampled records were placed by `spec`
    /// with each key written by `format`, analysed as the audit does.
    fn observed(name: &str, n: u32, spec: &str, format: partwise::KeyFormat) -> TopicAudit {
        use partwise::inference::{analyze, candidates, SampledRecord};
        use partwise::{PartitionCount, Partitioner};
        let count = PartitionCount::new(n).unwrap();
        let p: Partitioner = spec.parse().unwrap();
        let records: Vec<SampledRecord> = (0..200)
            .map(|i| {
                let key = format.encode(i.to_string().as_bytes()).unwrap();
                SampledRecord {
                    partition: p.place(Some(&key), count).partition().unwrap(),
                    offset: i,
                    key: Some(key),
                }
            })
            .collect();
        let parts: Vec<Partitioner> = Partitioner::all().collect();
        let mut t = TopicAudit::failed(name, String::new());
        t.error = None;
        t.partitions = (0..n)
            .map(|id| PartitionAudit {
                partition: id,
                leader: Some(1),
                low: 0,
                high: 0,
                records: 0,
                sampled: 0,
                start: 0,
                error: None,
            })
            .collect();
        t.routing = Some(analyze(count, &records, &candidates(&parts, &[])));
        t
    }

    fn declared(counts: (u32, u32), parts: (&str, &str), formats: (&str, &str)) -> Vec<Reason> {
        let text = format!(
            "[[topic]]\nname = \"a\"\npartitions = {}\nproducer = [{{ partitioner = \"{}\", key_format = \"{}\" }}]\n\
             [[topic]]\nname = \"b\"\npartitions = {}\nproducer = [{{ partitioner = \"{}\", key_format = \"{}\" }}]\n\
             [[copartition]]\nname = \"g\"\ntopics = [\"a\", \"b\"]\n",
            counts.0, parts.0, formats.0, counts.1, parts.1, formats.1
        );
        let t: partwise::topology::Topology = text.parse().unwrap();
        partwise::check::check(&t, &[]).groups.remove(0).reasons
    }

    fn kinds(r: &[Reason]) -> Vec<&'static str> {
        r.iter().map(Reason::kind).collect()
    }

    #[test]
    fn counts_that_differ_are_the_same_finding_as_checks() {
        use partwise::KeyFormat::String as S;
        let v = verdict(&[observed("a", 6, "java", S), observed("b", 8, "java", S)]);
        let from_check = declared((6, 8), ("java", "java"), ("string", "string"));
        assert_eq!(kinds(&from_check), ["partition-counts-differ"]);
        // The same value: kind, words and fix all come from the core.
        assert_eq!(v.findings[0], from_check[0]);
        assert_eq!(v.findings[0].to_string(), from_check[0].to_string());
        assert_eq!(v.findings[0].fix(), from_check[0].fix());
        assert!(!v.copartitioned);
    }

    #[test]
    fn partitioners_and_encodings_that_disagree_have_checks_ids() {
        use partwise::KeyFormat::{Int32, String as S};
        let v = verdict(&[
            observed("a", 6, "java", S),
            observed("b", 6, "librdkafka:consistent_random", S),
        ]);
        let from_check = declared((6, 6), ("java", "librdkafka"), ("string", "string"));
        assert_eq!(kinds(&v.findings), kinds(&from_check));
        assert_eq!(kinds(&v.findings), ["partitioners-disagree"]);
        let text = v.findings[0].to_string();
        assert!(
            text.starts_with("partitioners disagree: a is written by java"),
            "{text}"
        );
        // The fix is in the client at fault's terms, as check's is.
        assert!(
            v.findings[0].fix().contains("partitioner=murmur2_random"),
            "{}",
            v.findings[0].fix()
        );
        assert!(from_check[0].fix().contains("partitioner=murmur2_random"));

        let v = verdict(&[observed("a", 6, "java", S), observed("b", 6, "java", Int32)]);
        let from_check = declared((6, 6), ("java", "java"), ("string", "int32"));
        assert!(
            kinds(&v.findings).contains(&"key-encodings-differ"),
            "{:?}",
            v.findings
        );
        assert_eq!(kinds(&from_check), ["key-encodings-differ"]);
        let e = v
            .findings
            .iter()
            .find(|f| f.kind() == "key-encodings-differ")
            .unwrap();
        assert_eq!(
            e.to_string(),
            "key encodings differ: a writes string, b writes int32, so the key bytes differ"
        );

        let v = verdict(&[observed("a", 6, "java", S), observed("b", 6, "kafkajs", S)]);
        assert!(v.copartitioned && v.findings.is_empty(), "{:?}", v.findings);
    }

    #[test]
    fn the_fix_for_disagreeing_topics_names_the_sarama_setting_whatever_the_topic_order() {
        use partwise::KeyFormat::String as S;
        let ab = verdict(&[observed("a", 6, "java", S), observed("b", 6, "sarama", S)]);
        let ba = verdict(&[observed("b", 6, "sarama", S), observed("a", 6, "java", S)]);
        assert_eq!(kinds(&ab.findings), ["partitioners-disagree"]);
        let fix = ab.findings[0].fix();
        assert_eq!(fix, ba.findings[0].fix());
        assert!(!fix.contains("librdkafka producers"), "{fix}");
        let murmur2: partwise::Partitioner = "sarama:murmur2".parse().unwrap();
        assert!(
            fix.contains(&format!(
                "set b's sarama producers to {}",
                murmur2.setting()
            )),
            "{fix}"
        );
    }

    /// A topic written by @platformatic/kafka's default producer is told
    /// apart from every Java-compatible one (its murmur2 is reduced
    /// unsigned), and the fix names compatibilityPartitioner in the
    /// client's words with the release that has it.
    #[test]
    fn a_platformatic_topic_is_identified_and_told_compatibility_partitioner() {
        use partwise::KeyFormat::String as S;
        let t = observed("orders", 6, "platformatic", S);
        let r = t.routing.as_ref().unwrap();
        let specs: Vec<&str> = r.inferred.iter().map(|c| c.partitioner.spec()).collect();
        assert_eq!(specs, ["platformatic"], "{specs:?}");
        let v = verdict(&[observed("a", 6, "kafkajs", S), t]);
        assert_eq!(kinds(&v.findings), ["partitioners-disagree"]);
        let fix = v.findings[0].fix();
        assert!(
            fix.contains("partitioner: compatibilityPartitioner (import { compatibilityPartitioner } from '@platformatic/kafka') (@platformatic/kafka 1.32.0 or later)"),
            "{fix}"
        );
    }

    #[test]
    fn a_topic_two_producers_wrote_is_a_mixed_partitioners_finding() {
        use partwise::inference::{analyze, candidates, SampledRecord};
        use partwise::{KeyFormat::String as S, PartitionCount, Partitioner};
        let mut mixed = observed("m", 6, "java", S);
        let count = PartitionCount::new(6).unwrap();
        let records: Vec<SampledRecord> = (0..400)
            .map(|i| {
                let spec = if (i / 20) % 2 == 0 {
                    "kafkajs"
                } else {
                    "sarama"
                };
                let p: Partitioner = spec.parse().unwrap();
                let key = format!("sym{}", i % 20).into_bytes();
                SampledRecord {
                    partition: p.place(Some(&key), count).partition().unwrap(),
                    offset: i,
                    key: Some(key),
                }
            })
            .collect();
        let parts: Vec<Partitioner> = Partitioner::all().collect();
        mixed.routing = Some(analyze(count, &records, &candidates(&parts, &[])));
        let v = verdict(&[mixed, observed("a", 6, "kafkajs", S)]);
        assert_eq!(kinds(&v.findings), ["mixed-partitioners"]);
        let text = v.findings[0].to_string();
        assert!(text.contains("so the join breaks for these keys"), "{text}");
        assert!(!v.copartitioned);
    }

    #[test]
    fn topics_that_cannot_be_judged_are_findings_with_ids() {
        use partwise::KeyFormat::String as S;
        let mut quiet = observed("q", 6, "java", S);
        quiet.routing = None;
        let v = verdict(&[
            TopicAudit::failed("gone", "topic does not exist".into()),
            quiet,
            observed("a", 6, "java", S),
        ]);
        assert_eq!(kinds(&v.findings), ["topic-unreadable", "no-keyed-records"]);
        assert_eq!(
            v.findings[0].to_string(),
            "gone: cannot be checked (topic does not exist)"
        );
        assert!(v.findings[1].fix().contains("--sample N"));
    }

    #[test]
    fn a_window_starts_at_the_newest_records_within_the_sample() {
        let since = Window::Since(Duration::from_secs(600));
        // The oldest records: from the low watermark, whatever the sample.
        assert_eq!(window_start(Window::Oldest, 10, 5, 100, None), 5);
        // The last 30 of each partition, or the last `sample` when fewer.
        assert_eq!(window_start(Window::FromEnd(30), 1000, 5, 100, None), 70);
        assert_eq!(window_start(Window::FromEnd(30), 10, 5, 100, None), 90);
        assert_eq!(window_start(Window::FromEnd(500), 1000, 5, 100, None), 5);
        // Since a time: where ListOffsets found it, bounded by the sample.
        assert_eq!(window_start(since, 1000, 0, 100, Some(60)), 60);
        assert_eq!(window_start(since, 10, 0, 100, Some(60)), 90);
        // No record that recent (-1): the window is empty.
        assert_eq!(window_start(since, 1000, 0, 100, Some(-1)), 100);
        // Before the low watermark (deleted records): from the low one.
        assert_eq!(window_start(since, 1000, 50, 100, Some(10)), 50);
        // An empty partition.
        assert_eq!(window_start(since, 1000, 7, 7, Some(-1)), 7);
    }

    #[test]
    fn a_window_skew_is_of_the_sampled_records() {
        let mut parts: Vec<PartitionAudit> = (0..3)
            .map(|id| PartitionAudit {
                partition: id,
                leader: Some(1),
                low: 0,
                high: 1000,
                records: 1000,
                sampled: 10,
                start: 990,
                error: None,
            })
            .collect();
        parts[1].sampled = 80;
        let s = window_skew(&parts).unwrap();
        assert_eq!(s.total, 100);
        assert_eq!(s.hot_partitions, vec![1]);
        assert_eq!(
            topic_skew(&parts).unwrap().hot_partitions,
            Vec::<u32>::new()
        );
        for p in &mut parts {
            p.sampled = 0;
        }
        assert_eq!(window_skew(&parts), None);
    }

    #[test]
    fn partial_reasons_accumulate() {
        let mut t = TopicAudit::failed("t", "x".into());
        add_partial(&mut t, "one".into());
        add_partial(&mut t, "two".into());
        assert_eq!(t.partial.as_deref(), Some("one; two"));
    }
}
