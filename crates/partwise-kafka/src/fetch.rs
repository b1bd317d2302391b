//! Reading partitions in batches without a consumer group: librdkafka's
//! simple (legacy) consumer, the one kcat uses without `-G`, behind a safe
//! interface.
//!
//! rust-rdkafka's `poll` hands out one message per call, each wrapped in its
//! own event with a reference count and a clock read, and its consumers need
//! a `group.id` to be assigned partitions (closing one then waits on the
//! group machinery). Here each partition is started on one private queue and
//! the queue is drained up to [`BATCH`] messages per call
//! (`rd_kafka_consume_batch_queue`), and no group exists at all.

use crate::connect::Connection;
use crate::error::{Error, Result};
use rdkafka::bindings as rd;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::types::RDKafkaErrorCode;
use std::ffi::CString;
use std::ptr::NonNull;
use std::time::Duration;

/// Most messages one [`PartitionReader::next_batch`] returns.
pub const BATCH: usize = 4096;

/// What a batch holds, message by message.
#[derive(Debug, PartialEq)]
pub enum Event<'a> {
    /// A record.
    Record {
        /// Its partition.
        partition: i32,
        /// Its offset.
        offset: i64,
        /// Its key (`None`: a null key), valid as long as the batch.
        key: Option<&'a [u8]>,
        /// Its value (`None`: a null value, a tombstone), valid as long as
        /// the batch.
        value: Option<&'a [u8]>,
    },
    /// The partition has no more records for now (needs the consumer
    /// property `enable.partition.eof=true`).
    End {
        /// The partition.
        partition: i32,
    },
    /// librdkafka reports a problem with the partition (it retries by itself).
    Error {
        /// The partition (-1 when not about one partition).
        partition: i32,
        /// The error.
        error: KafkaError,
    },
}

/// Reads partitions of one topic from given offsets into one queue, without
/// a group: nothing is committed, no group is joined or even looked up.
///
/// Meant for a consumer created without `group.id`; it borrows the consumer,
/// which must outlive it.
pub struct PartitionReader<'c> {
    // Kept for the borrow: librdkafka's handle must outlive the topic and
    // queue handles below.
    _consumer: &'c BaseConsumer,
    topic: NonNull<rd::rd_kafka_topic_t>,
    queue: NonNull<rd::rd_kafka_queue_t>,
    started: Vec<i32>,
    messages: Vec<*mut rd::rd_kafka_message_t>,
}

impl<'c> PartitionReader<'c> {
    /// A reader of `topic` on the client of `consumer`; no partition started yet.
    pub fn new(consumer: &'c BaseConsumer, topic: &str) -> Result<Self, KafkaError> {
        let name = CString::new(topic)
            .map_err(|_| KafkaError::ClientCreation(format!("topic name {topic:?} has a NUL")))?;
        let rk = consumer.client().native_ptr();
        // SAFETY: `rk` is the live handle of `consumer`, borrowed for 'c; a
        // null topic config means the defaults. The handle is destroyed in Drop.
        let topic_ptr = unsafe { rd::rd_kafka_topic_new(rk, name.as_ptr(), std::ptr::null_mut()) };
        let topic_h = NonNull::new(topic_ptr).ok_or_else(last_error)?;
        // SAFETY: as above; the queue is destroyed in Drop.
        let queue = match NonNull::new(unsafe { rd::rd_kafka_queue_new(rk) }) {
            Some(q) => q,
            None => {
                // SAFETY: created just above, not shared.
                unsafe { rd::rd_kafka_topic_destroy(topic_h.as_ptr()) };
                return Err(KafkaError::ClientCreation("no consumer queue".into()));
            }
        };
        Ok(PartitionReader {
            _consumer: consumer,
            topic: topic_h,
            queue,
            started: Vec::new(),
            messages: Vec::with_capacity(BATCH),
        })
    }

    /// Starts reading `partition` at `offset` into this reader's queue.
    pub fn start(&mut self, partition: i32, offset: i64) -> Result<(), KafkaError> {
        if self.started.contains(&partition) {
            return Ok(());
        }
        // SAFETY: topic and queue handles are live (owned by self).
        let rc = unsafe {
            rd::rd_kafka_consume_start_queue(
                self.topic.as_ptr(),
                partition,
                offset,
                self.queue.as_ptr(),
            )
        };
        if rc == -1 {
            return Err(last_error());
        }
        self.started.push(partition);
        Ok(())
    }

    /// Stops fetching `partition`. Records of it already queued may still
    /// come in the next batches.
    pub fn stop(&mut self, partition: i32) {
        if let Some(i) = self.started.iter().position(|&p| p == partition) {
            self.started.swap_remove(i);
            // SAFETY: the partition was started on this live topic handle. A
            // failure leaves it fetching until Drop, which only costs bandwidth.
            unsafe { rd::rd_kafka_consume_stop(self.topic.as_ptr(), partition) };
        }
    }

    /// Waits up to `timeout` for the first message, then returns what is
    /// queued, at most [`BATCH`] messages (none when the wait ran out).
    pub fn next_batch(&mut self, timeout: Duration) -> Batch<'_> {
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        self.messages.clear();
        // SAFETY: the queue is live; librdkafka writes at most BATCH message
        // pointers into the spare capacity (BATCH, reserved in new and never
        // shrunk) and returns how many, or -1 on error.
        let got = unsafe {
            rd::rd_kafka_consume_batch_queue(
                self.queue.as_ptr(),
                ms,
                self.messages.spare_capacity_mut().as_mut_ptr().cast(),
                BATCH,
            )
        };
        if got > 0 {
            // SAFETY: librdkafka initialised the first `got` (<= BATCH) slots.
            unsafe { self.messages.set_len(got as usize) };
        }
        Batch {
            messages: &mut self.messages,
        }
    }
}

impl Drop for PartitionReader<'_> {
    fn drop(&mut self) {
        for &p in &self.started {
            // SAFETY: started on this live topic handle; stopping before the
            // queue is destroyed, as librdkafka requires.
            unsafe { rd::rd_kafka_consume_stop(self.topic.as_ptr(), p) };
        }
        // SAFETY: no batch is alive (a batch borrows self mutably), so no
        // message refers to these handles any more; each is destroyed once.
        unsafe {
            rd::rd_kafka_queue_destroy(self.queue.as_ptr());
            rd::rd_kafka_topic_destroy(self.topic.as_ptr());
        }
    }
}

/// The messages of one [`PartitionReader::next_batch`]; they are given back
/// to librdkafka when the batch is dropped.
pub struct Batch<'r> {
    messages: &'r mut Vec<*mut rd::rd_kafka_message_t>,
}

impl Batch<'_> {
    /// Messages in the batch.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Whether the wait ran out with nothing queued.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// The messages, in queue order.
    pub fn events(&self) -> impl Iterator<Item = Event<'_>> + '_ {
        self.messages.iter().map(|&m| {
            // SAFETY: librdkafka returned this message and it is destroyed only
            // when the batch drops, which the borrow of `self` outlives.
            let m = unsafe { &*m };
            if m.err == rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR__PARTITION_EOF {
                Event::End {
                    partition: m.partition,
                }
            } else if m.err != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
                Event::Error {
                    partition: m.partition,
                    error: KafkaError::MessageConsumption(RDKafkaErrorCode::from(m.err)),
                }
            } else {
                // As rust-rdkafka reads it: a null pointer is a null key.
                let key = (!m.key.is_null()).then(|| {
                    // SAFETY: librdkafka's key buffer of key_len bytes, owned
                    // by the message.
                    unsafe { std::slice::from_raw_parts(m.key as *const u8, m.key_len) }
                });
                // SAFETY: as for the key: the payload buffer of len bytes.
                let value = (!m.payload.is_null())
                    .then(|| unsafe { std::slice::from_raw_parts(m.payload as *const u8, m.len) });
                Event::Record {
                    partition: m.partition,
                    offset: m.offset,
                    key,
                    value,
                }
            }
        })
    }
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        for m in self.messages.drain(..) {
            // SAFETY: each message was returned by consume_batch_queue and is
            // destroyed exactly once (drained).
            unsafe { rd::rd_kafka_message_destroy(m) };
        }
    }
}

/// One record read whole, copied out of librdkafka's buffers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnedRecord {
    /// Its partition.
    pub partition: i32,
    /// Its offset.
    pub offset: i64,
    /// Its key (`None`: a null key).
    pub key: Option<Vec<u8>>,
    /// Its value (`None`: a null value).
    pub value: Option<Vec<u8>>,
}

/// Every record of `topic`, each partition from its low to its high
/// watermark as they are when this is called (records written meanwhile are
/// not waited for), in offset order per partition. No group is joined or
/// looked up and nothing is committed. A topic the cluster does not have is
/// [`Error::UnknownTopic`]; a read that has not reached every end after
/// `limit` is an error, as is any error librdkafka reports about a partition.
pub fn read_topic(conn: &Connection, topic: &str, limit: Duration) -> Result<Vec<OwnedRecord>> {
    let c = crate::cluster::groupless_consumer(conn)?;
    let info = crate::cluster::topic_info(&c, conn, topic)?;
    if info.missing {
        return Err(Error::UnknownTopic(topic.to_string()));
    }
    if let Some(e) = info.error {
        return Err(Error::kafka(format!("topic {topic}"), e));
    }
    // The end of each partition to read to; partitions with nothing in
    // them are not started at all.
    let mut ends: Vec<(i32, i64)> = Vec::new();
    let mut reader =
        PartitionReader::new(&c, topic).map_err(|e| conn.error(format!("reading {topic}"), e))?;
    for p in &info.partitions {
        let id = p.id as i32;
        let (lo, hi) = c
            .fetch_watermarks(topic, id, conn.timeout())
            .map_err(|e| conn.error(format!("watermarks of {topic}/{id}"), e))?;
        if hi > lo {
            reader
                .start(id, lo)
                .map_err(|e| conn.error(format!("reading {topic}/{id}"), e))?;
            ends.push((id, hi));
        }
    }
    let mut out = Vec::new();
    let deadline = std::time::Instant::now() + limit;
    while !ends.is_empty() {
        if std::time::Instant::now() > deadline {
            return Err(Error::kafka(
                format!("reading {topic}"),
                format!(
                    "not at the end of every partition after {:.1}s",
                    limit.as_secs_f64()
                ),
            ));
        }
        let batch = reader.next_batch(Duration::from_millis(500));
        let mut done = Vec::new();
        for ev in batch.events() {
            match ev {
                Event::Record {
                    partition,
                    offset,
                    key,
                    value,
                } => {
                    let Some(&(_, end)) = ends.iter().find(|(p, _)| *p == partition) else {
                        continue;
                    };
                    if offset < end {
                        out.push(OwnedRecord {
                            partition,
                            offset,
                            key: key.map(<[u8]>::to_vec),
                            value: value.map(<[u8]>::to_vec),
                        });
                    }
                    // Offsets may skip (compaction, transaction markers):
                    // the end is reached at the first record at or past it.
                    if offset + 1 >= end {
                        done.push(partition);
                    }
                }
                // At the partition's end now, so past the end it had when
                // the read began: records that are all transaction markers
                // end a partition this way, with no record at its end.
                Event::End { partition } => done.push(partition),
                Event::Error { partition, error } => {
                    return Err(conn.error(format!("reading {topic}/{partition}"), error));
                }
            }
        }
        drop(batch);
        for p in done {
            ends.retain(|(q, _)| *q != p);
            reader.stop(p);
        }
    }
    Ok(out)
}

/// librdkafka's error for the failed call just made on this thread.
fn last_error() -> KafkaError {
    // SAFETY: reads librdkafka's thread-local last error; no pointers.
    let code = unsafe { rd::rd_kafka_last_error() };
    KafkaError::MessageConsumption(RDKafkaErrorCode::from(code))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rdkafka::config::ClientConfig;

    fn consumer() -> BaseConsumer {
        // Nothing listens on port 9: no broker is needed to exercise the
        // handles' life cycle.
        ClientConfig::new()
            .set("bootstrap.servers", "127.0.0.1:9")
            .set("enable.partition.eof", "true")
            .create()
            .unwrap()
    }

    #[test]
    fn a_reader_without_a_broker_returns_empty_batches_and_cleans_up() {
        let c = consumer();
        let mut r = PartitionReader::new(&c, "t").unwrap();
        r.start(0, 0).unwrap();
        r.start(0, 0).unwrap();
        r.start(1, 5).unwrap();
        assert_eq!(r.started.len(), 2);
        let t0 = std::time::Instant::now();
        let b = r.next_batch(Duration::from_millis(50));
        assert!(b.is_empty());
        assert_eq!(b.len(), 0);
        assert_eq!(b.events().count(), 0);
        drop(b);
        assert!(t0.elapsed() >= Duration::from_millis(40));
        r.stop(1);
        r.stop(7);
        assert_eq!(r.started, vec![0]);
        drop(r);
        // A second reader of the same topic on the same client.
        let r = PartitionReader::new(&c, "t").unwrap();
        drop(r);
    }

    #[test]
    fn a_topic_name_with_nul_is_an_error_not_a_panic() {
        let c = consumer();
        assert!(PartitionReader::new(&c, "a\0b").is_err());
    }
}
