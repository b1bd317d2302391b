//! The cluster as a client sees it: bootstrap brokers, the broker map and
//! partition leaders from Metadata, a pool of connections by broker id, and
//! the requests that are routed to a partition's leader (ListOffsets,
//! Produce) or to any broker (Metadata, FindCoordinator, CreateTopics).

use crate::error::{Error, Result};
use crate::security::Security;
use crate::wire::Connection;
use bytes::Bytes;
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestTopic;
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::{
    BrokerId, CreateTopicsRequest, FindCoordinatorRequest, GroupId, ListOffsetsRequest,
    MetadataRequest, OffsetFetchRequest, ProduceRequest, TopicName,
};
use kafka_protocol::protocol::{Request, StrBytes};
use kafka_protocol::records::{Record, TimestampType};
use kafka_protocol::ResponseError;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// Whether `e` means the group coordinator must be looked up again.
pub fn coordinator_moved(e: ResponseError) -> bool {
    use ResponseError::{CoordinatorLoadInProgress, CoordinatorNotAvailable, NotCoordinator};
    matches!(
        e,
        CoordinatorLoadInProgress | CoordinatorNotAvailable | NotCoordinator
    )
}

/// Whether OffsetFetch to the coordinator at `addr` asks for stable
/// offsets (`require_stable`, v7+), as the Java consumer always does.
///
/// Without it, Apache Kafka's group coordinator (the one of 3.7+, KIP-848's
/// runtime) answers from the offsets its `__consumer_offsets` partition has
/// committed, as far as that partition's high watermark says. Right after
/// the coordinator moved, the new leader of that partition has every commit
/// the old one acknowledged in its log, but its high watermark is still the
/// one it last heard as a follower, a fetch behind: for a moment it answers
/// with offsets older than the old coordinator already returned (a few
/// records behind, for a group committing continuously). With
/// `require_stable` it answers from its whole log, once that is committed,
/// so the offsets read never step back across the move.
pub async fn stable_offsets(c: &mut Cluster, addr: &str) -> Result<bool> {
    Ok(c.version::<OffsetFetchRequest>(addr).await? >= 7)
}

/// Partition count and leaders of one topic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicMeta {
    /// Leader broker id of each partition (index = partition), `-1` when none.
    pub leaders: Vec<i32>,
}

/// Timeouts used by every request of a [`Cluster`].
#[derive(Clone, Copy, Debug)]
pub struct Timeouts {
    /// Connect and ordinary request timeout.
    pub request: Duration,
}

/// A client's view of the cluster: brokers, leaders and open connections.
pub struct Cluster {
    bootstrap: Vec<String>,
    client_id: String,
    timeouts: Timeouts,
    security: Security,
    brokers: HashMap<i32, String>,
    conns: HashMap<String, Connection>,
    topics: HashMap<String, TopicMeta>,
    /// Topic ids (Metadata v10+) both ways: the consumer protocol names
    /// topics by id.
    ids: HashMap<String, Uuid>,
    names: HashMap<Uuid, String>,
    /// Topics some Metadata answer showed existing: only those can be
    /// deleted (a name never seen is a wrong name, or a topic being made).
    seen: HashSet<String>,
    /// Seen topics that Metadata has since answered as unknown: the first
    /// and the latest of those answers, with no answer showing the topic in
    /// between.
    missing: HashMap<String, (Instant, Instant)>,
    /// Seen topics that came back with another topic id: deleted and
    /// created again, a different topic under the same name.
    recreated: HashSet<String>,
}

/// A subscribed topic that went away under a client that had seen it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deletion {
    /// Metadata has answered UNKNOWN_TOPIC_OR_PARTITION for it, but not yet
    /// over [`Cluster::DELETION_CONFIRMED`]: one answer could come from a
    /// broker that has not caught up.
    Suspected,
    /// Unknown in every Metadata answer for [`Cluster::DELETION_CONFIRMED`].
    Deleted,
    /// There again, with another topic id: deleted and created anew.
    Recreated,
}

impl Cluster {
    /// A cluster reached through `bootstrap` (`host:port` each); nothing is
    /// connected until the first request.
    pub fn new(bootstrap: Vec<String>, client_id: &str, request_timeout: Duration) -> Cluster {
        Cluster {
            bootstrap,
            client_id: client_id.to_string(),
            timeouts: Timeouts {
                request: request_timeout,
            },
            security: Security::plaintext(),
            brokers: HashMap::new(),
            conns: HashMap::new(),
            topics: HashMap::new(),
            ids: HashMap::new(),
            names: HashMap::new(),
            seen: HashSet::new(),
            missing: HashMap::new(),
            recreated: HashSet::new(),
        }
    }

    /// The same cluster reached as `security` says (TLS, SASL) instead of
    /// in plaintext: every connection it opens uses it.
    pub fn with_security(mut self, security: Security) -> Cluster {
        self.security = security;
        self.conns.clear();
        self
    }

    /// How connections are secured.
    pub fn security(&self) -> &Security {
        &self.security
    }

    /// The request timeout.
    pub fn request_timeout(&self) -> Duration {
        self.timeouts.request
    }

    /// The client id sent with every request.
    pub fn client_id(&self) -> &str {
        &self.client_id
    }

    /// A connection to `addr`, opened if needed.
    pub async fn conn(&mut self, addr: &str) -> Result<&mut Connection> {
        let stale = self.conns.get(addr).is_some_and(|c| !c.usable());
        if stale {
            self.conns.remove(addr);
        }
        if !self.conns.contains_key(addr) {
            let c = Connection::connect_with(
                addr,
                &self.client_id,
                self.timeouts.request,
                &self.security,
            )
            .await?;
            self.conns.insert(addr.to_string(), c);
        }
        Ok(self.conns.get_mut(addr).expect("inserted above"))
    }

    /// The version of `R` agreed with the broker at `addr`, for requests
    /// whose fields depend on it.
    pub async fn version<R: Request>(&mut self, addr: &str) -> Result<i16> {
        self.conn(addr).await?.version::<R>()
    }

    /// Sends `req` to `addr`; a transport failure drops the connection so the
    /// next request reconnects.
    pub async fn send_to<R: Request>(
        &mut self,
        addr: &str,
        req: &R,
        timeout: Duration,
    ) -> Result<(R::Response, i16)> {
        let conn = self.conn(addr).await?;
        let r = conn.send(req, timeout).await;
        if let Err(e) = &r {
            if e.is_transport() {
                self.conns.remove(addr);
            }
        }
        r
    }

    /// Sends `req` to the first broker that answers: known brokers first,
    /// then the bootstrap list.
    pub async fn send_any<R: Request>(&mut self, req: &R) -> Result<(R::Response, i16)> {
        let mut candidates: Vec<String> = self.conns.keys().cloned().collect();
        let mut known: Vec<&String> = self.brokers.values().collect();
        known.sort();
        candidates.extend(known.into_iter().cloned());
        candidates.extend(self.bootstrap.iter().cloned());
        let mut seen = std::collections::HashSet::new();
        let mut tried = Vec::new();
        let timeout = self.timeouts.request;
        for addr in candidates {
            if !seen.insert(addr.clone()) {
                continue;
            }
            match self.send_to(&addr, req, timeout).await {
                Ok(r) => return Ok(r),
                Err(e) if e.is_transport() => tried.push(e.to_string()),
                Err(e) => return Err(e),
            }
        }
        Err(Error::NoBroker { tried })
    }

    /// The address of every broker of the last Metadata, by broker id.
    pub fn broker_addrs(&self) -> Vec<String> {
        let mut ids: Vec<(&i32, &String)> = self.brokers.iter().collect();
        ids.sort();
        ids.into_iter().map(|(_, a)| a.clone()).collect()
    }

    /// The address of broker `id`, from the last Metadata.
    pub fn broker_addr(&self, id: i32) -> Option<&str> {
        self.brokers.get(&id).map(String::as_str)
    }

    /// Refreshes brokers and the leaders of `topics`; returns the topics that
    /// exist, by name. Topics being created (leader not yet elected) are
    /// returned with leader `-1`.
    pub async fn metadata(&mut self, topics: &[String]) -> Result<BTreeMap<String, TopicMeta>> {
        let req = MetadataRequest::default()
            .with_topics(Some(
                topics
                    .iter()
                    .map(|t| {
                        MetadataRequestTopic::default()
                            .with_name(Some(TopicName(StrBytes::from_string(t.clone()))))
                    })
                    .collect(),
            ))
            .with_allow_auto_topic_creation(false);
        let (resp, _) = self.send_any(&req).await?;
        for b in &resp.brokers {
            self.brokers
                .insert(b.node_id.0, format!("{}:{}", b.host.as_str(), b.port));
        }
        let mut out = BTreeMap::new();
        let now = Instant::now();
        for t in resp.topics {
            let Some(name) = t.name else { continue };
            if t.error_code == ResponseError::UnknownTopicOrPartition.code() {
                if self.seen.contains(name.0.as_str()) {
                    self.topics.remove(name.0.as_str());
                    let m = self.missing.entry(name.0.to_string()).or_insert((now, now));
                    m.1 = now;
                }
                continue;
            }
            if t.partitions.is_empty() {
                continue;
            }
            self.seen.insert(name.0.to_string());
            self.missing.remove(name.0.as_str());
            let n = t
                .partitions
                .iter()
                .map(|p| p.partition_index + 1)
                .max()
                .unwrap_or(0)
                .max(0) as usize;
            let mut leaders = vec![-1; n];
            for p in &t.partitions {
                leaders[p.partition_index as usize] = p.leader_id.0;
            }
            let meta = TopicMeta { leaders };
            if !t.topic_id.is_nil() {
                // A topic deleted and created again has a new id.
                if let Some(old) = self.ids.insert(name.0.to_string(), t.topic_id) {
                    if old != t.topic_id {
                        self.names.remove(&old);
                        self.recreated.insert(name.0.to_string());
                    }
                }
                self.names.insert(t.topic_id, name.0.to_string());
            }
            self.topics.insert(name.0.to_string(), meta.clone());
            out.insert(name.0.to_string(), meta);
        }
        Ok(out)
    }

    /// How long every Metadata answer must have called a topic this client
    /// saw unknown before it counts as deleted. KRaft brokers answer from
    /// the metadata log they have replayed, and one answer of a broker that
    /// lags it is not worth ending a consumer over.
    pub const DELETION_CONFIRMED: Duration = Duration::from_millis(500);

    /// Whether `topic`, which an earlier Metadata answer showed, has been
    /// deleted since (or deleted and created again), as far as the Metadata
    /// answers so far say; `None` while it stands.
    pub fn deletion(&self, topic: &str) -> Option<Deletion> {
        if self.recreated.contains(topic) {
            return Some(Deletion::Recreated);
        }
        let (first, last) = self.missing.get(topic)?;
        Some(if *last - *first >= Self::DELETION_CONFIRMED {
            Deletion::Deleted
        } else {
            Deletion::Suspected
        })
    }

    /// The id of topic `name`, from the last Metadata that named it.
    pub fn topic_id(&self, name: &str) -> Option<Uuid> {
        self.ids.get(name).copied()
    }

    /// The name of the topic with id `id`, from the last Metadata that named it.
    pub fn topic_name(&self, id: &Uuid) -> Option<&str> {
        self.names.get(id).map(String::as_str)
    }

    /// The address of `partition`'s leader, from the last Metadata.
    pub fn leader(&self, topic: &str, partition: i32) -> Option<String> {
        let id = *self.topics.get(topic)?.leaders.get(partition as usize)?;
        self.brokers.get(&id).cloned()
    }

    /// The group coordinator of `group`: its address.
    pub async fn find_coordinator(&mut self, group: &str) -> Result<String> {
        let req = FindCoordinatorRequest::default()
            .with_key(StrBytes::from_string(group.to_string()))
            .with_key_type(0);
        let (resp, _) = self.send_any(&req).await?;
        if resp.error_code != 0 {
            return Err(Error::protocol(group, "FindCoordinator", resp.error_code));
        }
        let addr = format!("{}:{}", resp.host.as_str(), resp.port);
        self.brokers.insert(resp.node_id.0, addr.clone());
        Ok(addr)
    }

    /// The offset of `partition` at `timestamp` (`-1` latest, `-2` earliest),
    /// asked of its leader.
    pub async fn list_offset(
        &mut self,
        topic: &str,
        partition: i32,
        timestamp: i64,
    ) -> Result<i64> {
        let addr = self.leader_or_refresh(topic, partition).await?;
        let req = ListOffsetsRequest::default()
            .with_replica_id(BrokerId(-1))
            .with_topics(vec![ListOffsetsTopic::default()
                .with_name(TopicName(StrBytes::from_string(topic.to_string())))
                .with_partitions(vec![ListOffsetsPartition::default()
                    .with_partition_index(partition)
                    .with_current_leader_epoch(-1)
                    .with_timestamp(timestamp)])]);
        let timeout = self.timeouts.request;
        let (resp, _) = self.send_to(&addr, &req, timeout).await?;
        let p = resp
            .topics
            .first()
            .and_then(|t| t.partitions.first())
            .ok_or_else(|| Error::Decode("ListOffsets: empty response".into()))?;
        if p.error_code != 0 {
            self.topics.remove(topic);
            return Err(Error::protocol(&addr, "ListOffsets", p.error_code));
        }
        Ok(p.offset)
    }

    /// The offsets of many partitions at `timestamp` (`-1` latest, `-2`
    /// earliest): one ListOffsets per leader instead of one per partition,
    /// which is what a member joining with nothing committed asks.
    pub async fn list_offsets(
        &mut self,
        partitions: &[(String, i32)],
        timestamp: i64,
    ) -> Result<HashMap<(String, i32), i64>> {
        let mut by_leader: BTreeMap<String, BTreeMap<&str, Vec<i32>>> = BTreeMap::new();
        for (t, p) in partitions {
            let addr = self.leader_or_refresh(t, *p).await?;
            by_leader
                .entry(addr)
                .or_default()
                .entry(t.as_str())
                .or_default()
                .push(*p);
        }
        let mut out = HashMap::new();
        for (addr, topics) in by_leader {
            let req = ListOffsetsRequest::default()
                .with_replica_id(BrokerId(-1))
                .with_topics(
                    topics
                        .iter()
                        .map(|(t, ps)| {
                            ListOffsetsTopic::default()
                                .with_name(TopicName(StrBytes::from_string(t.to_string())))
                                .with_partitions(
                                    ps.iter()
                                        .map(|p| {
                                            ListOffsetsPartition::default()
                                                .with_partition_index(*p)
                                                .with_current_leader_epoch(-1)
                                                .with_timestamp(timestamp)
                                        })
                                        .collect(),
                                )
                        })
                        .collect(),
                );
            let timeout = self.timeouts.request;
            let (resp, _) = self.send_to(&addr, &req, timeout).await?;
            for t in resp.topics {
                let topic = t.name.0.to_string();
                for p in t.partitions {
                    if p.error_code != 0 {
                        self.topics.remove(&topic);
                        return Err(Error::protocol(
                            &format!("{addr} ({topic}-{})", p.partition_index),
                            "ListOffsets",
                            p.error_code,
                        ));
                    }
                    out.insert((topic.clone(), p.partition_index), p.offset);
                }
            }
        }
        for tp in partitions {
            if !out.contains_key(tp) {
                return Err(Error::Decode(format!(
                    "ListOffsets: no answer for {}-{}",
                    tp.0, tp.1
                )));
            }
        }
        Ok(out)
    }

    /// The leader's address, refreshing metadata once if it is unknown.
    pub async fn leader_or_refresh(&mut self, topic: &str, partition: i32) -> Result<String> {
        if let Some(a) = self.leader(topic, partition) {
            return Ok(a);
        }
        self.metadata(&[topic.to_string()]).await?;
        self.leader(topic, partition).ok_or_else(|| Error::Broker {
            at: format!("{topic}-{partition}"),
            api: "Metadata".into(),
            code: ResponseError::LeaderNotAvailable.code(),
        })
    }

    /// Forgets the leaders of `topic`, so the next request refreshes them.
    pub fn invalidate(&mut self, topic: &str) {
        self.topics.remove(topic);
    }

    /// The committed offsets of `group` for `partitions` of `topic` (none
    /// committed: absent), asked of the group's coordinator.
    pub async fn committed_offsets(
        &mut self,
        group: &str,
        topic: &str,
        partitions: &[i32],
    ) -> Result<BTreeMap<i32, i64>> {
        let coord = self.find_coordinator(group).await?;
        let req = OffsetFetchRequest::default()
            .with_group_id(GroupId(StrBytes::from_string(group.to_string())))
            .with_require_stable(stable_offsets(self, &coord).await?)
            .with_topics(Some(vec![OffsetFetchRequestTopic::default()
                .with_name(TopicName(StrBytes::from_string(topic.to_string())))
                .with_partition_indexes(partitions.to_vec())]));
        let timeout = self.timeouts.request;
        let (resp, _) = self.send_to(&coord, &req, timeout).await?;
        if resp.error_code != 0 {
            return Err(Error::protocol(&coord, "OffsetFetch", resp.error_code));
        }
        let mut out = BTreeMap::new();
        for t in resp.topics {
            for p in t.partitions {
                if p.error_code == 0 && p.committed_offset >= 0 {
                    out.insert(p.partition_index, p.committed_offset);
                }
            }
        }
        Ok(out)
    }

    /// Creates `topics` (name, partitions) with replication factor 1; topics
    /// that already exist are left as they are.
    pub async fn create_topics(&mut self, topics: &[(&str, i32)]) -> Result<()> {
        let req = CreateTopicsRequest::default()
            .with_timeout_ms(30_000)
            .with_topics(
                topics
                    .iter()
                    .map(|(name, n)| {
                        CreatableTopic::default()
                            .with_name(TopicName(StrBytes::from_string(name.to_string())))
                            .with_num_partitions(*n)
                            .with_replication_factor(1)
                    })
                    .collect(),
            );
        let (resp, _) = self.send_any(&req).await?;
        for t in resp.topics {
            if t.error_code != 0 && t.error_code != ResponseError::TopicAlreadyExists.code() {
                return Err(Error::protocol(
                    t.name.0.as_str(),
                    "CreateTopics",
                    t.error_code,
                ));
            }
        }
        Ok(())
    }

    /// Produces `records` (key, value) to `partition` in one batch, acks=all;
    /// returns the base offset. Used by tests and examples to feed a group.
    pub async fn produce(
        &mut self,
        topic: &str,
        partition: i32,
        records: &[(Option<Bytes>, Option<Bytes>)],
    ) -> Result<i64> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        let recs: Vec<Record> = records
            .iter()
            .enumerate()
            .map(|(i, (k, v))| Record {
                transactional: false,
                control: false,
                delete_horizon: false,
                partition_leader_epoch: 0,
                producer_id: -1,
                producer_epoch: -1,
                timestamp_type: TimestampType::Creation,
                offset: i as i64,
                // kafka-protocol starts a new batch wherever offset minus
                // sequence changes, and a broker takes one batch per
                // partition: this keeps them in one, with the batch's base
                // sequence -1 (no producer id, no sequence).
                sequence: i as i32 - 1,
                timestamp: now,
                key: k.clone(),
                value: v.clone(),
                headers: Default::default(),
            })
            .collect();
        let batch = partwise_wire::records::encode_batch(&recs)?;
        let addr = self.leader_or_refresh(topic, partition).await?;
        let req = ProduceRequest::default()
            .with_acks(-1)
            .with_timeout_ms(30_000)
            .with_topic_data(vec![TopicProduceData::default()
                .with_name(TopicName(StrBytes::from_string(topic.to_string())))
                .with_partition_data(vec![PartitionProduceData::default()
                    .with_index(partition)
                    .with_records(Some(batch))])]);
        let timeout = self.timeouts.request;
        let (resp, _) = self.send_to(&addr, &req, timeout).await?;
        let p = resp
            .responses
            .first()
            .and_then(|t| t.partition_responses.first())
            .ok_or_else(|| Error::Decode("Produce: empty response".into()))?;
        if p.error_code != 0 {
            self.topics.remove(topic);
            return Err(Error::protocol(&addr, "Produce", p.error_code));
        }
        Ok(p.base_offset)
    }
}
