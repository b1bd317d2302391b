//! Helpers of the live tests: the broker address, unique topics, producing
//! with librdkafka's own partitioners (the independent oracle). A broker to
//! kill is a private Apache Kafka (`partwise_faults::KafkaCluster`).
#![allow(dead_code)]

use futures_executor::block_on;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The broker of the live tests. Unset is a failure, not a skip: CI must
/// never pass without having talked to a broker.
pub fn bootstrap() -> String {
    match std::env::var("PARTWISE_KAFKA_BOOTSTRAP") {
        Ok(b) if !b.trim().is_empty() => b,
        _ => panic!(
            "PARTWISE_KAFKA_BOOTSTRAP is unset: these tests need a Kafka-API broker. \
             Run `export PARTWISE_KAFKA_BOOTSTRAP=$(bash scripts/kafka-up)` (bash scripts/test does it)"
        ),
    }
}

/// A topic name no other test run uses.
pub fn unique(prefix: &str) -> String {
    let n = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}-{}-{n}", std::process::id())
}

pub fn create_topics(bootstrap: &str, topics: &[(&str, i32)]) {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    let new: Vec<NewTopic<'_>> = topics
        .iter()
        .map(|(t, n)| NewTopic::new(t, *n, TopicReplication::Fixed(1)))
        .collect();
    let opts = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
    for r in block_on(admin.create_topics(&new, &opts)).unwrap() {
        r.unwrap();
    }
    // Wait until the metadata shows every partition with a leader.
    let c: rdkafka::consumer::BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    for (t, n) in topics {
        loop {
            use rdkafka::consumer::Consumer;
            let ok = c
                .fetch_metadata(Some(t), Duration::from_secs(5))
                .is_ok_and(|md| {
                    md.topics().iter().any(|x| {
                        x.name() == *t
                            && x.error().is_none()
                            && x.partitions().len() == *n as usize
                            && x.partitions().iter().all(|p| p.leader() >= 0)
                    })
                });
            if ok {
                break;
            }
            assert!(Instant::now() < deadline, "topic {t} did not appear");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// Produces `keys` (None: a null key) with librdkafka's built-in
/// `partitioner` property; returns the partition of each from its delivery report.
pub fn produce_with(
    bootstrap: &str,
    topic: &str,
    partitioner: &str,
    keys: &[Option<String>],
) -> Vec<i32> {
    use rdkafka::message::Message;
    use rdkafka::producer::{DeliveryResult, ProducerContext};
    use std::sync::Mutex;
    struct Ctx(Mutex<Vec<(usize, i32)>>);
    impl rdkafka::client::ClientContext for Ctx {}
    impl ProducerContext for Ctx {
        type DeliveryOpaque = usize;
        fn delivery(&self, r: &DeliveryResult<'_>, id: usize) {
            let m = r.as_ref().expect("delivery failed");
            self.0.lock().unwrap().push((id, m.partition()));
        }
    }
    let p: BaseProducer<Ctx> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("partitioner", partitioner)
        // One record per batch: tansu's end offsets then count every record.
        .set("linger.ms", "0")
        .set("batch.num.messages", "1")
        .create_with_context(Ctx(Mutex::new(Vec::new())))
        .unwrap();
    for (i, k) in keys.iter().enumerate() {
        let mut r: BaseRecord<'_, str, str, usize> =
            BaseRecord::with_opaque_to(topic, i).payload("v");
        if let Some(k) = k {
            r = r.key(k.as_str());
        }
        p.send(r).map_err(|(e, _)| e).unwrap();
        p.poll(Duration::ZERO);
    }
    p.flush(Duration::from_secs(60)).unwrap();
    let mut got = std::mem::take(&mut *p.context().0.lock().unwrap());
    got.sort();
    assert_eq!(got.len(), keys.len());
    got.into_iter().map(|(_, p)| p).collect()
}

pub fn keys(n: usize, prefix: &str) -> Vec<Option<String>> {
    (0..n).map(|i| Some(format!("{prefix}{i}"))).collect()
}
