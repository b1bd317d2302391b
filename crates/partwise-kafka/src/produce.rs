//! Producing with partwise routing: the partition is computed by a partwise
//! [`Partitioner`] (any client's, priority isolation, or the caller's own
//! choice) and set explicitly on each record. librdkafka's custom-partitioner
//! callback is not used: rdkafka 0.39 crashes registering it unless a
//! topic-level property is set, and ignores it in `FutureProducer`.

use crate::cluster::topic_info;
use crate::connect::Connection;
use crate::error::{Error, Result};
use partwise::{PartitionCount, Partitioner, Placement};
use rdkafka::client::ClientContext;
use rdkafka::consumer::BaseConsumer;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{Header, Message, OwnedHeaders};
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Where one record landed, from its delivery report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// The caller's id of the record (its index in the input, say).
    pub id: usize,
    /// Partition it was written to (`-1` when it failed before one was chosen).
    pub partition: i32,
    /// Its offset (`-1` when it failed).
    pub offset: i64,
    /// Why it failed, if it did.
    pub error: Option<String>,
}

/// Collects delivery reports from librdkafka's threads.
#[derive(Default)]
pub(crate) struct Collector {
    out: Mutex<Vec<Delivery>>,
}

impl ClientContext for Collector {}

impl ProducerContext for Collector {
    type DeliveryOpaque = usize;

    fn delivery(&self, r: &DeliveryResult<'_>, id: usize) {
        let d = match r {
            Ok(m) => Delivery {
                id,
                partition: m.partition(),
                offset: m.offset(),
                error: None,
            },
            Err((e, m)) => Delivery {
                id,
                partition: m.partition(),
                offset: -1,
                error: Some(e.to_string()),
            },
        };
        // A poisoned lock means a panic elsewhere already; keep the report anyway.
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        out.push(d);
    }
}

impl Collector {
    pub(crate) fn take(&self) -> Vec<Delivery> {
        std::mem::take(&mut *self.out.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// Properties of every partwise producer: topics are never created as a
/// side effect of producing.
const PRODUCER: &[(&str, &str)] = &[("allow.auto.create.topics", "false")];

pub(crate) fn producer(conn: &Connection) -> Result<BaseProducer<Collector>> {
    let mut cfg = conn.client_config(PRODUCER);
    // Consumer-only settings from a shared -F file would only draw warnings.
    cfg.remove("group.id");
    cfg.create_with_context(Collector::default())
        .map_err(|e| conn.error("configuring the Kafka producer", e))
}

/// A producer that routes every record with a partwise partitioner.
pub struct RoutedProducer {
    conn: Connection,
    producer: BaseProducer<Collector>,
    meta: BaseConsumer,
    partitioner: Partitioner,
    counts: HashMap<String, PartitionCount>,
}

impl RoutedProducer {
    /// A producer for the cluster of `conn` routing with `partitioner`.
    pub fn new(conn: &Connection, partitioner: Partitioner) -> Result<RoutedProducer> {
        Ok(RoutedProducer {
            conn: conn.clone(),
            producer: producer(conn)?,
            meta: crate::cluster::read_only_consumer(conn)?,
            partitioner,
            counts: HashMap::new(),
        })
    }

    /// The partition count of `topic`, from the cluster's metadata (cached).
    /// A topic that does not exist is an error: producing never creates one.
    pub fn partition_count(&mut self, topic: &str) -> Result<PartitionCount> {
        if let Some(&n) = self.counts.get(topic) {
            return Ok(n);
        }
        let info = topic_info(&self.meta, &self.conn, topic)?;
        if let Some(e) = info.error {
            let why = if info.missing {
                "does not exist (partwise never creates topics when producing)".to_string()
            } else {
                e
            };
            return Err(Error::kafka(format!("topic {topic}"), why));
        }
        let n = PartitionCount::new(info.partitions.len() as u32)
            .map_err(|_| Error::kafka(format!("topic {topic}"), "has no partitions"))?;
        self.counts.insert(topic.to_string(), n);
        Ok(n)
    }

    /// Where the partitioner puts a record, without sending it.
    pub fn route(
        &mut self,
        topic: &str,
        key: Option<&[u8]>,
        headers: &[(&[u8], &[u8])],
    ) -> Result<Placement> {
        let n = self.partition_count(topic)?;
        Ok(self.partitioner.place_with_headers(key, headers, n))
    }

    /// Queues one record. A fixed placement is set on the record; a key-less
    /// placement (sticky, random, round-robin) is left to librdkafka, whose
    /// own key-less strategy then applies. A rejected placement is an error.
    pub fn send(
        &mut self,
        topic: &str,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[(&[u8], &[u8])],
        id: usize,
    ) -> Result<Placement> {
        let placement = self.route(topic, key, headers)?;
        if placement == Placement::Rejected {
            return Err(Error::Invalid(format!(
                "record {id}: {} rejects it (no partition)",
                self.partitioner
            )));
        }
        let mut hs = OwnedHeaders::new_with_capacity(headers.len());
        for (k, v) in headers {
            hs = hs.insert(Header {
                key: &String::from_utf8_lossy(k),
                value: Some(*v),
            });
        }
        let deadline = Instant::now() + self.conn.timeout();
        loop {
            let mut rec: BaseRecord<'_, [u8], [u8], usize> =
                BaseRecord::with_opaque_to(topic, id).headers(hs.clone());
            if let Some(k) = key {
                rec = rec.key(k);
            }
            if let Some(v) = value {
                rec = rec.payload(v);
            }
            if let Placement::Partition(p) = placement {
                rec = rec.partition(p as i32);
            }
            match self.producer.send(rec) {
                Ok(()) => break,
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), _))
                    if Instant::now() < deadline =>
                {
                    self.producer.poll(Duration::from_millis(50));
                }
                Err((e, _)) => return Err(self.conn.error(format!("producing to {topic}"), e)),
            }
        }
        self.producer.poll(Duration::ZERO);
        Ok(placement)
    }

    /// Waits up to the timeout for every queued record and returns the
    /// delivery reports that arrived since the last call.
    pub fn flush(&mut self) -> Result<Vec<Delivery>> {
        let r = self.producer.flush(self.conn.timeout());
        let out = self.producer.context().take();
        r.map_err(|e| self.conn.error("waiting for deliveries", e))?;
        Ok(out)
    }

    /// Delivery reports that arrived so far, without waiting.
    pub fn poll_deliveries(&mut self) -> Vec<Delivery> {
        self.producer.poll(Duration::ZERO);
        self.producer.context().take()
    }
}
