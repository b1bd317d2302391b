//! Read-only views of a cluster: topics with their partitions and leaders,
//! the watermarks of partitions, and its groups with their types.

use crate::connect::Connection;
use crate::error::{Error, Result};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::metadata::Metadata;
use rdkafka::types::RDKafkaErrorCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Properties that keep a partwise consumer read-only, whatever the user
/// passed: it never commits, never creates topics, and is told about the end
/// of each partition.
pub(crate) const READ_ONLY: &[(&str, &str)] = &[
    ("enable.auto.commit", "false"),
    ("enable.auto.offset.store", "false"),
    ("allow.auto.create.topics", "false"),
    ("enable.partition.eof", "true"),
];

/// A partition as the metadata describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionInfo {
    /// Partition id.
    pub id: u32,
    /// Leader broker id; `None` when the partition has no leader.
    pub leader: Option<i32>,
    /// The broker's error for this partition, if any.
    pub error: Option<String>,
}

/// A topic as the metadata describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicInfo {
    /// Topic name.
    pub name: String,
    /// Partitions, by id.
    pub partitions: Vec<PartitionInfo>,
    /// The broker's error for the topic, if any.
    pub error: Option<String>,
    /// Whether the broker says the topic does not exist.
    pub missing: bool,
}

/// A consumer that reads without joining a group and without committing.
///
/// librdkafka's assign() needs a `group.id` even though an assigned consumer
/// never joins (no JoinGroup) and, with explicit offsets and auto-commit
/// off, never fetches or commits offsets. So the consumer carries a fresh
/// throwaway id: a `group.id` from `-X` or `-F` would name a real group.
pub(crate) fn read_only_consumer(conn: &Connection) -> Result<BaseConsumer> {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let group = format!("partwise-readonly-{}-{nanos}", std::process::id());
    let mut fixed: Vec<(&str, &str)> = READ_ONLY.to_vec();
    fixed.push(("group.id", &group));
    conn.client_config(&fixed)
        .create()
        .map_err(|e| conn.error("configuring the Kafka client", e))
}

/// librdkafka settings for reading a sample to the end of each partition,
/// which `-X` may override.
///
/// `fetch.wait.max.ms` (librdkafka's default 500): librdkafka learns that a
/// partition has ended from a fetch that finds nothing new, and the broker
/// holds such a fetch that long waiting for records. So the last fetch of an
/// audit, when every partition still open is at its end, added half a second
/// to every audit (seen with `-X debug=fetch`). A sample stops at the end of
/// each partition, so shorter long polls cost only a few empty fetches.
///
/// `fetch.queue.backoff.ms` (librdkafka's default 1000): when the local
/// queue of a partition is over `queued.min.messages` while the audit is
/// still analysing a batch, librdkafka postpones that partition's next fetch
/// by this long. An audit that reads a topic to its end then stalled for a
/// whole second in most runs (600,000 records: 1.33-1.44 s against
/// 0.36-0.41 s with 10 ms, the same CPU time); a sample wants the next
/// fetch as soon as the queue has room.
pub(crate) const SAMPLING: &[(&str, &str)] = &[
    ("fetch.wait.max.ms", "100"),
    ("fetch.queue.backoff.ms", "10"),
];

/// A consumer that belongs to no group, not even a throwaway one: it reads
/// metadata, watermarks and, through [`crate::fetch`], partitions. A
/// `group.id` given with `-X` or `-F` is dropped, so nothing can join or
/// commit, and closing it does not wait on a group.
pub(crate) fn groupless_consumer(conn: &Connection) -> Result<BaseConsumer> {
    let mut cfg = conn.client_config_over(SAMPLING, READ_ONLY);
    cfg.remove("group.id");
    cfg.remove("group.instance.id");
    cfg.create()
        .map_err(|e| conn.error("configuring the Kafka client", e))
}

fn convert(md: &Metadata) -> Vec<TopicInfo> {
    md.topics()
        .iter()
        .map(|t| {
            let mut partitions: Vec<PartitionInfo> = t
                .partitions()
                .iter()
                .map(|p| PartitionInfo {
                    id: p.id().max(0) as u32,
                    leader: (p.leader() >= 0).then_some(p.leader()),
                    error: p.error().map(|e| RDKafkaErrorCode::from(e).to_string()),
                })
                .collect();
            partitions.sort_by_key(|p| p.id);
            TopicInfo {
                name: t.name().to_string(),
                partitions,
                error: t.error().map(|e| RDKafkaErrorCode::from(e).to_string()),
                missing: t.error().is_some_and(|e| {
                    RDKafkaErrorCode::from(e) == RDKafkaErrorCode::UnknownTopicOrPartition
                }),
            }
        })
        .collect()
}

/// Every topic of the cluster (internal `__` topics included), sorted by name.
pub fn list_topics(conn: &Connection) -> Result<Vec<TopicInfo>> {
    all_topics(&read_only_consumer(conn)?, conn)
}

/// Every topic of the cluster, sorted by name, from a consumer the caller
/// already has.
pub(crate) fn all_topics(c: &BaseConsumer, conn: &Connection) -> Result<Vec<TopicInfo>> {
    let md = c
        .fetch_metadata(None, conn.timeout())
        .map_err(|e| unreachable_via(c, conn, e))?;
    let mut t = convert(&md);
    t.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(t)
}

/// Every topic of the cluster with its partition count and health, in the
/// core's terms: what the group analyses and the readiness check read.
pub fn cluster_topics(conn: &Connection) -> Result<Vec<partwise::group::described::ClusterTopic>> {
    Ok(list_topics(conn)?
        .into_iter()
        .map(|t| partwise::group::described::ClusterTopic {
            partitions: t.partitions.len() as u32,
            healthy: t.error.is_none(),
            name: t.name,
        })
        .collect())
}

/// [`unreachable`] after serving `c`'s queued events, which is where
/// librdkafka puts the errors and logs that say why (a refused login).
pub(crate) fn unreachable_via(
    c: &BaseConsumer,
    conn: &Connection,
    e: rdkafka::error::KafkaError,
) -> Error {
    for _ in 0..16 {
        // Errors and logs are delivered to the context (and so to diag)
        // while polling; the poll itself returns nothing useful here.
        if c.poll(Duration::ZERO).is_none() {
            break;
        }
    }
    unreachable(conn, e)
}

pub(crate) fn unreachable(conn: &Connection, e: rdkafka::error::KafkaError) -> Error {
    let waited = format!(
        "no answer from the Kafka cluster at {} within {:.1}s",
        conn.brokers(),
        conn.timeout().as_secs_f64()
    );
    // librdkafka tells a refused login or TLS handshake only to its error
    // callback; the request itself just times out.
    let doing = match crate::diag::last_error() {
        Some(said) if crate::diag::is_security_refusal(&said) => format!(
            "the Kafka cluster at {} refused the connection's security settings (check security.protocol, sasl.mechanism and the credentials): {}",
            conn.brokers(),
            conn.scrub(&said)
        ),
        _ => format!("{waited} (is the address right, is it up?)"),
    };
    conn.error(doing, e)
}

/// One topic's metadata, from a consumer the caller already has.
pub(crate) fn topic_info(c: &BaseConsumer, conn: &Connection, topic: &str) -> Result<TopicInfo> {
    let md = c
        .fetch_metadata(Some(topic), conn.timeout())
        .map_err(|e| unreachable_via(c, conn, e))?;
    convert(&md)
        .into_iter()
        .find(|t| t.name == topic)
        .ok_or_else(|| Error::kafka(format!("topic {topic}"), "not in the metadata"))
}

/// The low and high watermarks of every partition of `topic`.
pub fn watermarks(conn: &Connection, topic: &str) -> Result<Vec<(u32, i64, i64)>> {
    let c = read_only_consumer(conn)?;
    let info = topic_info(&c, conn, topic)?;
    if let Some(e) = info.error {
        return Err(Error::kafka(format!("topic {topic}"), e));
    }
    info.partitions
        .iter()
        .map(|p| {
            c.fetch_watermarks(topic, p.id as i32, conn.timeout())
                .map(|(lo, hi)| (p.id, lo, hi))
                .map_err(|e| conn.error(format!("watermarks of {topic}/{}", p.id), e))
        })
        .collect()
}

/// A group's type, as its coordinator names it in ListGroups v5.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroupType {
    /// A consumer group of the classic protocol (JoinGroup, SyncGroup).
    Classic,
    /// A consumer group of the consumer protocol (KIP-848).
    Consumer,
    /// A Kafka Streams group of the streams protocol (KIP-1071).
    Streams,
    /// A share group (KIP-932).
    Share,
    /// A type this release does not know, in the broker's words.
    Other(String),
    /// Not said: the coordinator answers ListGroups below v5.
    Unknown,
}

impl GroupType {
    fn of(listed: Option<&str>) -> GroupType {
        match listed {
            None => GroupType::Unknown,
            Some(t) => match t.to_ascii_lowercase().as_str() {
                "classic" => GroupType::Classic,
                "consumer" => GroupType::Consumer,
                "streams" => GroupType::Streams,
                "share" => GroupType::Share,
                _ => GroupType::Other(t.to_string()),
            },
        }
    }
}

impl std::fmt::Display for GroupType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            GroupType::Classic => "classic",
            GroupType::Consumer => "consumer",
            GroupType::Streams => "streams",
            GroupType::Share => "share",
            GroupType::Other(t) => t,
            GroupType::Unknown => "unknown",
        })
    }
}

/// One group of the cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedGroup {
    /// The group id.
    pub name: String,
    /// Its type.
    pub group_type: GroupType,
    /// Its state in its coordinator's words (`Stable`, `Empty`, `NotReady`,
    /// ...), `None` from a coordinator that does not say.
    pub state: Option<String>,
    /// The protocol type (`consumer` for consumer groups of either protocol).
    pub protocol_type: String,
}

/// Every group of the cluster, and why some types are unknown.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupListing {
    /// The groups, by name.
    pub groups: Vec<ListedGroup>,
    /// The brokers that answered ListGroups below v5, with the version:
    /// the groups they coordinate have type [`GroupType::Unknown`].
    pub untyped: Vec<(String, i16)>,
}

impl GroupListing {
    /// The names of the streams groups.
    pub fn streams_groups(&self) -> Vec<String> {
        self.groups
            .iter()
            .filter(|g| g.group_type == GroupType::Streams)
            .map(|g| g.name.clone())
            .collect()
    }

    /// Why some groups' types are unknown, when some are.
    pub fn unknown_types(&self) -> Option<String> {
        if self.untyped.is_empty() {
            return None;
        }
        let brokers: Vec<String> = self
            .untyped
            .iter()
            .map(|(b, v)| format!("{b} answers ListGroups v{v}"))
            .collect();
        Some(format!(
            "group types are unknown where the coordinator answers ListGroups below v5 \
             (brokers before KIP-848's group types): {}",
            brokers.join(", ")
        ))
    }
}

/// Every group of the cluster (all states, every type) with its type:
/// ListGroups v5 to each broker, through partwise-client (librdkafka's
/// listing does not carry the type).
pub fn groups(conn: &Connection) -> Result<GroupListing> {
    let target = conn.client_target()?;
    let l = partwise_client::blocking::list_groups(&target)
        .map_err(|e| conn.client_error("listing the cluster's groups", e))?;
    let untyped = l
        .untyped_brokers()
        .into_iter()
        .map(|(b, v)| (b.clone(), *v))
        .collect();
    Ok(GroupListing {
        groups: l
            .groups
            .into_iter()
            .map(|g| ListedGroup {
                group_type: GroupType::of(g.group_type.as_deref()),
                name: g.group_id,
                state: g.state,
                protocol_type: g.protocol_type,
            })
            .collect(),
        untyped,
    })
}

/// The names of the cluster's groups, every type.
pub fn list_groups(conn: &Connection) -> Result<Vec<String>> {
    Ok(groups(conn)?.groups.into_iter().map(|g| g.name).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_groups_type_is_the_coordinators_word_and_unknown_when_unsaid() {
        assert_eq!(GroupType::of(Some("streams")), GroupType::Streams);
        assert_eq!(GroupType::of(Some("Classic")), GroupType::Classic);
        assert_eq!(GroupType::of(Some("share")).to_string(), "share");
        assert_eq!(
            GroupType::of(Some("future")),
            GroupType::Other("future".into())
        );
        assert_eq!(GroupType::of(None).to_string(), "unknown");
        let l = GroupListing {
            groups: vec![],
            untyped: vec![("b1:9092".into(), 4)],
        };
        let why = l.unknown_types().unwrap();
        assert!(why.contains("b1:9092 answers ListGroups v4"), "{why}");
        assert_eq!(GroupListing::default().unknown_types(), None);
    }
}
