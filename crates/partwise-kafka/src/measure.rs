//! Measuring throughput on a temporary topic: one partition's produce rate
//! and one consumer's read rate, the per-partition figures that
//! [`partwise::strategy::sizing::plan`] needs. The topic is created for the
//! measurement and deleted after it, also when the measurement fails.

use crate::connect::Connection;
use crate::error::{Error, Result};
use futures_executor::block_on;
use rdkafka::admin::{NewTopic, TopicReplication};
use rdkafka::consumer::Consumer;
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::producer::{BaseRecord, Producer};
use rdkafka::{Offset, TopicPartitionList};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What to measure with.
#[derive(Clone, Debug)]
pub struct MeasureOptions {
    /// Records to produce and read back.
    pub records: u64,
    /// Value size of each record, bytes.
    pub record_bytes: usize,
    /// Replication factor of the temporary topic (`None`: the broker's default).
    pub replication: Option<i32>,
    /// Set (by a signal handler, say) to stop early: the measurement ends
    /// with [`Error::Interrupted`] and the topic is still deleted.
    pub stop: Option<&'static AtomicBool>,
}

/// The figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    /// The temporary topic's name.
    pub topic: String,
    /// Records produced (and read back).
    pub records: u64,
    /// Payload bytes produced.
    pub bytes: u64,
    /// Seconds from the first send to the last delivery report.
    pub produce_secs: f64,
    /// Seconds to read them all back.
    pub consume_secs: f64,
    /// Records read back (fewer than `records` when the read timed out).
    pub consumed: u64,
    /// Whether the temporary topic was deleted.
    pub deleted: bool,
}

impl Measurement {
    /// Produce throughput into one partition, MB/s (10^6 bytes).
    pub fn produce_mbps(&self) -> f64 {
        self.bytes as f64 / 1e6 / self.produce_secs.max(1e-9)
    }

    /// Read throughput of one consumer from one partition, MB/s.
    pub fn consume_mbps(&self) -> f64 {
        let bytes = self.bytes as f64 * self.consumed as f64 / self.records.max(1) as f64;
        bytes / 1e6 / self.consume_secs.max(1e-9)
    }
}

/// Creates a one-partition topic, measures, deletes the topic.
pub fn measure(conn: &Connection, opts: &MeasureOptions) -> Result<Measurement> {
    if opts.records == 0 {
        return Err(Error::Invalid("at least 1 record must be measured".into()));
    }
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let topic = format!("partwise-measure-{}-{nanos}", std::process::id());
    let admin = crate::admin::client(conn)?;
    let new = NewTopic::new(
        &topic,
        1,
        TopicReplication::Fixed(opts.replication.unwrap_or(-1)),
    );
    let created = block_on(admin.create_topics([&new], &crate::admin::options(conn)))
        .map_err(|e| crate::cluster::unreachable(conn, e))?;
    for r in created {
        r.map_err(|(t, e)| conn.error_code(format!("creating temporary topic {t}"), e))?;
    }
    let result = run(conn, &topic, opts);
    let deleted = crate::admin::delete_topics(conn, &[&topic]).is_ok();
    // A failure says whether the topic it made is gone, and how to remove
    // it when it is not: a write the user allowed must not leave litter
    // behind unannounced.
    let mut m = result.map_err(|e| Error::Measure {
        topic: topic.clone(),
        brokers: conn.brokers().to_string(),
        deleted,
        cause: Box::new(e),
    })?;
    m.deleted = deleted;
    Ok(m)
}

fn run(conn: &Connection, topic: &str, opts: &MeasureOptions) -> Result<Measurement> {
    let stopped = || {
        if opts.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            Err(Error::Interrupted)
        } else {
            Ok(())
        }
    };
    let producer = crate::produce::producer(conn)?;
    // Wait for the new topic's leader: the first sends would otherwise
    // measure metadata propagation.
    let meta = crate::cluster::read_only_consumer(conn)?;
    let ready_by = Instant::now() + conn.timeout();
    loop {
        let ok = crate::cluster::topic_info(&meta, conn, topic)
            .is_ok_and(|t| t.error.is_none() && t.partitions.iter().any(|p| p.leader.is_some()));
        if ok {
            break;
        }
        stopped()?;
        if Instant::now() > ready_by {
            return Err(Error::kafka(
                format!("temporary topic {topic}"),
                "has no leader",
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let value: Vec<u8> = (0..opts.record_bytes)
        .map(|i| (i * 31 % 251) as u8)
        .collect();
    let start = Instant::now();
    for i in 0..opts.records {
        if i % 1024 == 0 {
            stopped()?;
        }
        let key = i.to_be_bytes();
        loop {
            let rec: BaseRecord<'_, [u8], [u8], usize> =
                BaseRecord::with_opaque_to(topic, i as usize)
                    .key(&key[..])
                    .payload(&value[..])
                    .partition(0);
            match producer.send(rec) {
                Ok(()) => break,
                Err((
                    KafkaError::MessageProduction(rdkafka::types::RDKafkaErrorCode::QueueFull),
                    _,
                )) => {
                    producer.poll(Duration::from_millis(10));
                }
                Err((e, _)) => return Err(conn.error(format!("producing to {topic}"), e)),
            }
        }
        producer.poll(Duration::ZERO);
    }
    producer
        .flush(conn.timeout().max(Duration::from_secs(30)))
        .map_err(|e| conn.error("waiting for deliveries", e))?;
    let produce_secs = start.elapsed().as_secs_f64();
    let failed = producer
        .context()
        .take()
        .into_iter()
        .filter(|d| d.error.is_some())
        .count();
    if failed > 0 {
        return Err(Error::kafka(
            format!("producing to {topic}"),
            format!("{failed} records failed"),
        ));
    }

    let c = crate::cluster::read_only_consumer(conn)?;
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, 0, Offset::Offset(0))
        .map_err(|e| conn.error("assigning the temporary topic", e))?;
    c.assign(&tpl)
        .map_err(|e| conn.error("assigning the temporary topic", e))?;
    let start = Instant::now();
    let mut consumed = 0u64;
    let mut last = Instant::now();
    while consumed < opts.records && last.elapsed() < conn.timeout() {
        stopped()?;
        // Errors (transport hiccups) are retried by librdkafka; the idle
        // limit ends the loop.
        if let Some(Ok(m)) = c.poll(Duration::from_millis(100)) {
            consumed += 1;
            last = Instant::now();
            std::hint::black_box(m.payload());
        }
    }
    Ok(Measurement {
        topic: topic.to_string(),
        records: opts.records,
        bytes: opts.records * opts.record_bytes as u64,
        produce_secs,
        consume_secs: start.elapsed().as_secs_f64(),
        consumed,
        deleted: false,
    })
}
