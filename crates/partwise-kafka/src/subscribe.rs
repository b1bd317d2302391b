//! A member of a consumer group run by librdkafka itself, with one of its
//! own assignors (`range`, `roundrobin`, `cooperative-sticky`): the client
//! whose placements partwise checks, run as a real client, so a program can
//! show what that assignor does to its topics. partwise's own group runtime
//! is partwise-group; this is librdkafka's.
//!
//! The member commits nothing and, having no committed offsets, reads every
//! partition it is given from its beginning: what it shows is the
//! assignor's placement and the records it delivers, not a consumer's
//! progress.

use crate::connect::Connection;
use crate::error::Result;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::message::{BorrowedMessage, Message};
use std::sync::Mutex;
use std::time::Duration;

/// How the member joins its group.
#[derive(Clone, Debug)]
pub struct MemberOptions {
    /// The consumer group's id.
    pub group: String,
    /// The member's `client.id`.
    pub client_id: String,
    /// librdkafka's `partition.assignment.strategy`: `range`,
    /// `roundrobin`, `cooperative-sticky`.
    pub assignment_strategy: String,
    /// `session.timeout.ms`.
    pub session_timeout: Duration,
    /// `heartbeat.interval.ms`.
    pub heartbeat_interval: Duration,
}

/// What the group did to this member since the last poll.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rebalance {
    /// These partitions (topic, partition) are the member's now.
    Assigned(Vec<(String, i32)>),
    /// These partitions are taken away.
    Revoked(Vec<(String, i32)>),
    /// The rebalance failed (librdkafka's words, secrets scrubbed); the
    /// member holds nothing until the next one.
    Failed(String),
}

/// A record the member was given, valid until the next poll.
pub struct Record<'m> {
    m: BorrowedMessage<'m>,
}

impl Record<'_> {
    /// Its topic.
    pub fn topic(&self) -> &str {
        self.m.topic()
    }

    /// Its partition.
    pub fn partition(&self) -> i32 {
        self.m.partition()
    }

    /// Its offset.
    pub fn offset(&self) -> i64 {
        self.m.offset()
    }

    /// Its key (`None`: a null key).
    pub fn key(&self) -> Option<&[u8]> {
        self.m.key()
    }

    /// Its value (`None`: a null value).
    pub fn value(&self) -> Option<&[u8]> {
        self.m.payload()
    }
}

/// What one [`Member::poll`] brought: the rebalances that happened during
/// it, in order, then a record, a consumption error, or nothing (the wait
/// ran out).
pub struct Polled<'m> {
    /// Rebalances, oldest first; they happened before the record.
    pub rebalances: Vec<Rebalance>,
    /// A record, an error librdkafka reports about consuming (it retries by
    /// itself), or `None` when nothing came within the wait.
    pub record: Option<Result<Record<'m>>>,
}

/// Collects the rebalances librdkafka runs inside poll, for the poll's caller.
struct Rebalances {
    seen: Mutex<Vec<Rebalance>>,
}

fn parts(tpl: &rdkafka::TopicPartitionList) -> Vec<(String, i32)> {
    tpl.elements()
        .iter()
        .map(|e| (e.topic().to_string(), e.partition()))
        .collect()
}

impl rdkafka::ClientContext for Rebalances {}

impl ConsumerContext for Rebalances {
    fn post_rebalance(&self, _: &BaseConsumer<Self>, r: &rdkafka::consumer::Rebalance<'_>) {
        let ev = match r {
            rdkafka::consumer::Rebalance::Assign(tpl) => Rebalance::Assigned(parts(tpl)),
            rdkafka::consumer::Rebalance::Revoke(tpl) => Rebalance::Revoked(parts(tpl)),
            rdkafka::consumer::Rebalance::Error(e) => Rebalance::Failed(e.to_string()),
        };
        if let Ok(mut seen) = self.seen.lock() {
            seen.push(ev);
        }
    }
}

/// librdkafka settings of a member that `-X` may override: a short long
/// poll, so a member whose partitions are all read returns to its caller
/// (and notices a stop) within a tenth of a second.
const DEFAULTS: &[(&str, &str)] = &[("fetch.wait.max.ms", "100")];

/// One member of a librdkafka consumer group.
pub struct Member {
    consumer: BaseConsumer<Rebalances>,
    conn: Connection,
}

impl Member {
    /// Joins `opts.group` on `conn`, subscribed to `topics`. The join itself
    /// happens in the polls that follow.
    pub fn join(conn: &Connection, opts: &MemberOptions, topics: &[&str]) -> Result<Member> {
        let session = opts.session_timeout.as_millis().to_string();
        let heartbeat = opts.heartbeat_interval.as_millis().to_string();
        // The options' settings win over -X: they are what the caller asked
        // this member to be; commits stay off whatever -X says (see the
        // module's note).
        let fixed = [
            ("group.id", opts.group.as_str()),
            ("client.id", opts.client_id.as_str()),
            (
                "partition.assignment.strategy",
                opts.assignment_strategy.as_str(),
            ),
            ("session.timeout.ms", session.as_str()),
            ("heartbeat.interval.ms", heartbeat.as_str()),
            ("enable.auto.commit", "false"),
            ("auto.offset.reset", "earliest"),
        ];
        let consumer: BaseConsumer<Rebalances> = conn
            .client_config_over(DEFAULTS, &fixed)
            .create_with_context(Rebalances {
                seen: Mutex::new(Vec::new()),
            })
            .map_err(|e| conn.error("configuring the Kafka consumer", e))?;
        consumer
            .subscribe(topics)
            .map_err(|e| conn.error(format!("subscribing to {}", topics.join(", ")), e))?;
        Ok(Member {
            consumer,
            conn: conn.clone(),
        })
    }

    /// Waits up to `timeout` for a record, serving the group meanwhile
    /// (heartbeats, rebalances).
    pub fn poll(&self, timeout: Duration) -> Polled<'_> {
        let m = self.consumer.poll(timeout);
        let rebalances = self
            .consumer
            .context()
            .seen
            .lock()
            .map(|mut s| std::mem::take(&mut *s))
            .unwrap_or_default()
            .into_iter()
            .map(|r| match r {
                Rebalance::Failed(e) => Rebalance::Failed(self.conn.scrub(&e)),
                r => r,
            })
            .collect();
        let record = m.map(|r| {
            r.map(|m| Record { m })
                .map_err(|e| self.conn.error("consuming", e))
        });
        Polled { rebalances, record }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> MemberOptions {
        MemberOptions {
            group: "g".into(),
            client_id: "c".into(),
            assignment_strategy: "roundrobin".into(),
            session_timeout: Duration::from_secs(6),
            heartbeat_interval: Duration::from_secs(1),
        }
    }

    /// With no broker, a member is given nothing: no rebalance, no record,
    /// at most librdkafka's errors about the broker, each poll within its wait.
    #[test]
    fn a_member_without_a_broker_is_given_nothing() {
        let mut c = Connection::new(Duration::from_secs(1));
        c.bootstrap("127.0.0.1:9").unwrap();
        let m = Member::join(&c, &opts(), &["t"]).unwrap();
        for _ in 0..5 {
            let t0 = std::time::Instant::now();
            let p = m.poll(Duration::from_millis(50));
            assert!(t0.elapsed() < Duration::from_secs(2));
            assert!(p.rebalances.is_empty());
            if let Some(r) = p.record {
                let e = r.err().expect("no record without a broker");
                assert!(e.to_string().starts_with("consuming: "), "{e}");
            }
        }
    }

    /// An assignor librdkafka does not have is refused when the member is made.
    #[test]
    fn an_unknown_assignor_is_an_error() {
        let mut c = Connection::new(Duration::from_secs(1));
        c.bootstrap("127.0.0.1:9").unwrap();
        let mut o = opts();
        o.assignment_strategy = "no-such-assignor".into();
        let e = Member::join(&c, &o, &["t"]).err().expect("refused");
        assert!(e.to_string().contains("no-such-assignor"), "{e}");
    }
}
