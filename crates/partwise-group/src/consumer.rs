//! The group member and the units API.
//!
//! This module owns a member's life in a classic consumer group: finding the
//! coordinator, JoinGroup / SyncGroup (the leader runs the assignor), the
//! heartbeat task, rejoining, OffsetFetch / Fetch / OffsetCommit, and
//! LeaveGroup. The application sees it through [`Consumer::poll`], which
//! returns [`Event`]s: units assigned, units revoked, and records of one unit.
//!
//! Rebalancing is eager: before rejoining, the member commits what the
//! application handled and hands back every unit ([`Event::Revoked`]), so no
//! two members ever process one unit at once; the `copartitioned` assignor is
//! sticky, so the next [`Event::Assigned`] usually gives most units back.

use crate::cluster::{codes, decode_records, Cluster};
use crate::error::{Error, Result};
use crate::protocol::{decode_assignment, encode_assignment, Subscription};
use crate::security::Security;
use crate::units::{complete_units, leader_assignment, JoinedMember, Unit};
use crate::wire::{Connection, Submitted};
use bytes::Bytes;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_protocol::messages::leave_group_request::MemberIdentity;
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestTopic;
use kafka_protocol::messages::sync_group_request::SyncGroupRequestAssignment;
use kafka_protocol::messages::{
    BrokerId, FetchRequest, GroupId, HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest,
    OffsetCommitRequest, OffsetFetchRequest, SyncGroupRequest, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The group protocol a member prefers. It always also offers `range`, which
/// the broker picks when another member of the group does not speak
/// `copartitioned`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupAssignor {
    /// partwise's co-partitioned sticky assignor (protocol name `copartitioned`).
    Copartitioned,
    /// Kafka's `range` assignor only.
    Range,
}

impl GroupAssignor {
    /// The protocol names offered in JoinGroup, preferred first.
    pub fn protocols(self) -> &'static [&'static str] {
        match self {
            GroupAssignor::Copartitioned => &["copartitioned", "range"],
            GroupAssignor::Range => &["range"],
        }
    }
}

/// Where a partition without a committed offset starts (`auto.offset.reset`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OffsetReset {
    /// The oldest record.
    Earliest,
    /// After the newest record.
    Latest,
}

/// A member's settings, named after the Java client's.
#[derive(Clone, Debug)]
pub struct Config {
    /// `bootstrap.servers`, `host:port` each.
    pub bootstrap: Vec<String>,
    /// `group.id`.
    pub group_id: String,
    /// Subscribed topics.
    pub topics: Vec<String>,
    /// The preferred group protocol.
    pub assignor: GroupAssignor,
    /// `client.id`.
    pub client_id: String,
    /// `group.instance.id`: set for a static member.
    pub group_instance_id: Option<String>,
    /// `session.timeout.ms` (default 45 s).
    pub session_timeout: Duration,
    /// `heartbeat.interval.ms` (default 3 s).
    pub heartbeat_interval: Duration,
    /// `max.poll.interval.ms` (default 300 s): a member that does not call
    /// [`Consumer::poll`] for this long leaves the group.
    pub max_poll_interval: Duration,
    /// The rebalance timeout sent in JoinGroup (default: `max_poll_interval`,
    /// as the Java client does).
    pub rebalance_timeout: Duration,
    /// `request.timeout.ms` (default 30 s).
    pub request_timeout: Duration,
    /// `auto.commit.interval.ms` (default 5 s): how often handled offsets are
    /// committed between rebalances.
    pub auto_commit_interval: Duration,
    /// `auto.offset.reset` (default latest).
    pub auto_offset_reset: OffsetReset,
    /// `fetch.max.wait.ms` (default 500 ms).
    pub fetch_max_wait: Duration,
    /// `max.partition.fetch.bytes` (default 1 MiB).
    pub max_partition_fetch_bytes: i32,
    /// How long [`Consumer::poll`] keeps retrying, after the first join, while
    /// the cluster is unreachable, the coordinator unavailable or a subscribed
    /// topic missing (default 120 s). Past it, poll fails with
    /// [`Error::GaveUp`] rather than wait forever in silence.
    pub retry_timeout: Duration,
    /// TLS and SASL (`security.protocol` and friends; default plaintext),
    /// used by every connection: bootstrap, coordinator, leaders, reconnects.
    pub security: Security,
    /// `enable.auto.commit` (default true). Off, nothing is ever committed:
    /// every assignment starts at `auto_offset_reset`, so an application
    /// that rebuilds its state from its partitions replays them whole.
    pub commit_offsets: bool,
}

impl Config {
    /// Settings with the usual defaults for `group_id` over `topics`.
    pub fn new(bootstrap: Vec<String>, group_id: impl Into<String>, topics: Vec<String>) -> Config {
        let max_poll = Duration::from_secs(300);
        Config {
            bootstrap,
            group_id: group_id.into(),
            topics,
            assignor: GroupAssignor::Copartitioned,
            client_id: "partwise".to_string(),
            group_instance_id: None,
            session_timeout: Duration::from_secs(45),
            heartbeat_interval: Duration::from_secs(3),
            max_poll_interval: max_poll,
            rebalance_timeout: max_poll,
            request_timeout: Duration::from_secs(30),
            auto_commit_interval: Duration::from_secs(5),
            auto_offset_reset: OffsetReset::Latest,
            fetch_max_wait: Duration::from_millis(500),
            max_partition_fetch_bytes: 1024 * 1024,
            retry_timeout: Duration::from_secs(120),
            security: Security::plaintext(),
            commit_offsets: true,
        }
    }

    fn validate(&self) -> Result<()> {
        if self.bootstrap.is_empty() {
            return Err(Error::Config("no bootstrap broker".into()));
        }
        if self.group_id.is_empty() {
            return Err(Error::Config("empty group id".into()));
        }
        if self.topics.is_empty() {
            return Err(Error::Config("no topic subscribed".into()));
        }
        if self.heartbeat_interval >= self.session_timeout {
            return Err(Error::Config(
                "heartbeat interval must be below the session timeout".into(),
            ));
        }
        Ok(())
    }
}

/// The units (and their partitions) of one generation of one member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitAssignment {
    /// The group generation.
    pub generation: i32,
    /// This member's id.
    pub member_id: String,
    /// The whole units this member owns; only these are fetched.
    pub units: Vec<Unit>,
    /// Every partition assigned, (topic, partition), sorted. Partitions of a
    /// unit that is not whole (possible only under `range` with unequal
    /// partition counts) are held but never processed.
    pub partitions: Vec<(String, i32)>,
}

/// One record, as handed to the application.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsumedRecord {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
    /// Offset.
    pub offset: i64,
    /// Timestamp, milliseconds since the epoch.
    pub timestamp: i64,
    /// Key bytes.
    pub key: Option<Bytes>,
    /// Value bytes.
    pub value: Option<Bytes>,
}

/// What [`Consumer::poll`] hands the application.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// This member now owns these units; processing may start.
    Assigned(UnitAssignment),
    /// This member gives up these units; their handled offsets are already
    /// committed, and no record of them comes until they are assigned again.
    Revoked(UnitAssignment),
    /// Records of one unit, from any of its topics, in offset order per partition.
    Records {
        /// The unit.
        unit: Unit,
        /// The records.
        records: Vec<ConsumedRecord>,
    },
}

/// What the heartbeat task and the member share.
struct Shared {
    coordinator: Option<String>,
    member_id: String,
    generation: i32,
    /// The heartbeat task only beats between a SyncGroup and the next rejoin.
    active: bool,
    rejoin: bool,
    forget_member: bool,
    last_poll: Instant,
    /// When the last heartbeat (or SyncGroup) the coordinator accepted was
    /// sent: the session is known to be alive until a session timeout later.
    beat_at: Instant,
    closed: bool,
}

/// A member of a consumer group that hands out co-partitioned units.
///
/// Records returned by [`poll`](Consumer::poll) count as handled when the
/// application calls `poll` again (or [`commit`](Consumer::commit) or
/// [`close`](Consumer::close)); only handled offsets are committed, so
/// delivery is at least once.
pub struct Consumer {
    cfg: Config,
    cluster: Cluster,
    shared: Arc<Mutex<Shared>>,
    heartbeat: Option<tokio::task::JoinHandle<()>>,
    coordinator: Option<String>,
    member_id: String,
    generation: i32,
    current: Option<UnitAssignment>,
    /// Partition counts of the subscribed topics at the last join.
    counts: BTreeMap<String, i32>,
    /// Next offset to fetch, per fetched partition.
    position: HashMap<(String, i32), i64>,
    /// Offsets delivered by the last poll, handled once poll is called again.
    delivered: HashMap<(String, i32), i64>,
    /// Next offset to commit (handled), and what was last committed.
    handled: HashMap<(String, i32), i64>,
    committed: HashMap<(String, i32), i64>,
    last_commit: Instant,
    pending: VecDeque<Event>,
    /// Partitions of the last assignment, sent as owned so the leader can be sticky.
    last_owned: Option<Vec<(String, i32)>>,
    joined_once: bool,
    /// Since when every step has failed with a retriable error.
    failing_since: Option<Instant>,
    /// Fetch connections by leader address, each with its next fetch in flight.
    fetchers: HashMap<String, Fetcher>,
    closed: bool,
}

/// A leader's fetch connection and the fetch written to it, with the offsets
/// it asked for.
struct Fetcher {
    conn: Connection,
    pending: Option<(Submitted<FetchRequest>, Offsets)>,
}

/// Fetch offsets by (topic, partition).
type Offsets = BTreeMap<(String, i32), i64>;

impl Consumer {
    /// A member with `cfg`; it joins the group on the first
    /// [`poll`](Consumer::poll). The bootstrap brokers are contacted here, so
    /// an unreachable cluster fails now.
    pub async fn new(cfg: Config) -> Result<Consumer> {
        cfg.validate()?;
        let mut cluster = Cluster::new(cfg.bootstrap.clone(), &cfg.client_id, cfg.request_timeout)
            .with_security(cfg.security.clone());
        let meta = cluster.metadata(&cfg.topics).await?;
        for t in &cfg.topics {
            if !meta.contains_key(t) {
                return Err(Error::UnknownTopic(t.clone()));
            }
        }
        let shared = Arc::new(Mutex::new(Shared {
            coordinator: None,
            member_id: String::new(),
            generation: -1,
            active: false,
            rejoin: false,
            forget_member: false,
            last_poll: Instant::now(),
            beat_at: Instant::now(),
            closed: false,
        }));
        let heartbeat = tokio::spawn(heartbeat_loop(shared.clone(), cfg.clone()));
        Ok(Consumer {
            cfg,
            cluster,
            shared,
            heartbeat: Some(heartbeat),
            coordinator: None,
            member_id: String::new(),
            generation: -1,
            current: None,
            counts: BTreeMap::new(),
            position: HashMap::new(),
            delivered: HashMap::new(),
            handled: HashMap::new(),
            committed: HashMap::new(),
            last_commit: Instant::now(),
            pending: VecDeque::new(),
            last_owned: None,
            joined_once: false,
            failing_since: None,
            fetchers: HashMap::new(),
            closed: false,
        })
    }

    /// This member's id (empty before the first join).
    pub fn member_id(&self) -> &str {
        &self.member_id
    }

    /// The current generation's assignment, if any.
    pub fn assignment(&self) -> Option<&UnitAssignment> {
        self.current.as_ref()
    }

    /// The next event. Joins the group when needed, fetches records of owned
    /// units, commits handled offsets every `auto_commit_interval`, and
    /// rejoins when the group rebalances.
    ///
    /// Errors are those the member cannot recover from: an unreachable
    /// cluster before the first join, a group protocol it does not share, a
    /// fenced static member. Lost connections, a moved or unavailable
    /// coordinator and missing leaders after the first join are retried for
    /// up to `retry_timeout`, then reported as [`Error::GaveUp`].
    ///
    /// Not cancel-safe: dropping the future mid-request makes the member
    /// reconnect, and a dropped join leaves it to rejoin on the next call.
    pub async fn poll(&mut self) -> Result<Event> {
        if self.closed {
            return Err(Error::Closed);
        }
        self.ack_delivered();
        self.shared.lock().expect("poisoned").last_poll = Instant::now();
        loop {
            if let Some(e) = self.pending.pop_front() {
                if matches!(e, Event::Records { .. }) && self.session_lapsed() {
                    // No heartbeat got through for a whole session (the
                    // process was stopped, say): the coordinator may have
                    // expelled this member and given its units to another,
                    // so none of these records is handed out, and the units
                    // are revoked before rejoining.
                    self.pending.retain(|e| !matches!(e, Event::Records { .. }));
                    self.delivered.clear();
                    self.shared.lock().expect("poisoned").rejoin = true;
                    continue;
                }
                return Ok(e);
            }
            match self.step().await {
                Ok(()) => self.failing_since = None,
                Err(e) if self.retriable(&e) => {
                    let since = *self.failing_since.get_or_insert_with(Instant::now);
                    if since.elapsed() >= self.cfg.retry_timeout {
                        return Err(Error::GaveUp {
                            after: since.elapsed(),
                            last: Box::new(e),
                        });
                    }
                    self.coordinator = None;
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn session_lapsed(&self) -> bool {
        let s = self.shared.lock().expect("poisoned");
        s.active && s.beat_at.elapsed() > self.cfg.session_timeout
    }

    fn retriable(&self, e: &Error) -> bool {
        // Before the first join these mean a wrong address or topic name; after
        // it, a broker restarting (and, with it, topic metadata briefly gone).
        if e.is_transport() || matches!(e, Error::UnknownTopic(_)) {
            return self.joined_once;
        }
        matches!(e.code(), Some(c) if codes::coordinator_moved(c)
            || c == codes::REBALANCE_IN_PROGRESS
            || c == codes::NOT_LEADER_OR_FOLLOWER
            || c == codes::LEADER_NOT_AVAILABLE
            || c == codes::UNKNOWN_TOPIC_OR_PARTITION)
    }

    async fn step(&mut self) -> Result<()> {
        let rejoin = {
            let mut s = self.shared.lock().expect("poisoned");
            if s.forget_member {
                s.forget_member = false;
                self.member_id.clear();
            }
            if s.coordinator.is_none() {
                self.coordinator = None;
            }
            std::mem::take(&mut s.rejoin)
        };
        if rejoin || self.current.is_none() {
            if let Some(cur) = self.current.take() {
                self.shared.lock().expect("poisoned").active = false;
                // Committed before the units are handed back, so the next
                // owner starts after what this member handled.
                if let Err(e) = self.commit_handled().await {
                    if !self.retriable(&e) {
                        return Err(e);
                    }
                }
                self.position.clear();
                // Fetches in flight were for units given up now.
                self.fetchers.clear();
                self.handled.clear();
                self.delivered.clear();
                self.pending.push_back(Event::Revoked(cur));
                return Ok(());
            }
            return self.join().await;
        }
        if self.coordinator.is_none() {
            // The heartbeat task lost the coordinator and waits for it; the
            // units are kept and fetching goes on meanwhile.
            if let Err(e) = self.coordinator().await {
                if !self.retriable(&e) {
                    return Err(e);
                }
            }
        }
        if self.last_commit.elapsed() >= self.cfg.auto_commit_interval {
            self.commit_handled().await?;
        }
        self.fetch().await
    }

    /// Marks delivered records handled, except those of partitions whose
    /// records are still queued (one fetch queues one event per unit, and
    /// poll hands out one at a time): committing those would skip records
    /// the application never saw.
    fn ack_delivered(&mut self) {
        let queued: std::collections::HashSet<(&str, i32)> = self
            .pending
            .iter()
            .flat_map(|e| match e {
                Event::Records { records, .. } => records.as_slice(),
                _ => &[],
            })
            .map(|r| (r.topic.as_str(), r.partition))
            .collect();
        let mut keep = HashMap::new();
        for (tp, next) in self.delivered.drain() {
            if queued.contains(&(tp.0.as_str(), tp.1)) {
                keep.insert(tp, next);
            } else {
                self.handled.insert(tp, next);
            }
        }
        self.delivered = keep;
    }

    /// Commits the offsets of records handled so far.
    pub async fn commit(&mut self) -> Result<()> {
        self.ack_delivered();
        self.commit_handled().await
    }

    async fn coordinator(&mut self) -> Result<String> {
        if let Some(c) = &self.coordinator {
            return Ok(c.clone());
        }
        let c = self.cluster.find_coordinator(&self.cfg.group_id).await?;
        self.coordinator = Some(c.clone());
        self.shared.lock().expect("poisoned").coordinator = Some(c.clone());
        Ok(c)
    }

    async fn commit_handled(&mut self) -> Result<()> {
        if !self.cfg.commit_offsets {
            return Ok(());
        }
        self.last_commit = Instant::now();
        let todo: Vec<((String, i32), i64)> = self
            .handled
            .iter()
            .filter(|(tp, off)| self.committed.get(*tp) != Some(*off))
            .map(|(tp, off)| (tp.clone(), *off))
            .collect();
        if todo.is_empty() || self.generation < 0 {
            return Ok(());
        }
        let mut by_topic: BTreeMap<&str, Vec<OffsetCommitRequestPartition>> = BTreeMap::new();
        for ((t, p), off) in &todo {
            by_topic.entry(t.as_str()).or_default().push(
                OffsetCommitRequestPartition::default()
                    .with_partition_index(*p)
                    .with_committed_offset(*off)
                    .with_committed_leader_epoch(-1),
            );
        }
        let req = OffsetCommitRequest::default()
            .with_group_id(GroupId(StrBytes::from_string(self.cfg.group_id.clone())))
            .with_generation_id_or_member_epoch(self.generation)
            .with_member_id(StrBytes::from_string(self.member_id.clone()))
            .with_group_instance_id(
                self.cfg
                    .group_instance_id
                    .clone()
                    .map(StrBytes::from_string),
            )
            .with_retention_time_ms(-1)
            .with_topics(
                by_topic
                    .into_iter()
                    .map(|(t, ps)| {
                        OffsetCommitRequestTopic::default()
                            .with_name(TopicName(StrBytes::from_string(t.to_string())))
                            .with_partitions(ps)
                    })
                    .collect(),
            );
        let coord = self.coordinator().await?;
        let timeout = self.cfg.request_timeout;
        let (resp, _) = self.cluster.send_to(&coord, &req, timeout).await?;
        for t in resp.topics {
            for p in t.partitions {
                let tp = (t.name.0.to_string(), p.partition_index);
                match p.error_code {
                    0 => {
                        if let Some(off) = todo.iter().find(|(k, _)| *k == tp).map(|(_, o)| *o) {
                            self.committed.insert(tp, off);
                        }
                    }
                    c if c == codes::REBALANCE_IN_PROGRESS
                        || c == codes::ILLEGAL_GENERATION
                        || c == codes::UNKNOWN_MEMBER_ID =>
                    {
                        // The group moved on: these records will be delivered
                        // again to the next owner, which at-least-once allows.
                        self.shared.lock().expect("poisoned").rejoin = true;
                        if c == codes::UNKNOWN_MEMBER_ID {
                            self.member_id.clear();
                        }
                    }
                    c if codes::coordinator_moved(c) => {
                        self.coordinator = None;
                        return Err(Error::protocol(&coord, "OffsetCommit", c));
                    }
                    c => return Err(Error::protocol(&self.cfg.group_id, "OffsetCommit", c)),
                }
            }
        }
        Ok(())
    }

    async fn join(&mut self) -> Result<()> {
        let meta = self.cluster.metadata(&self.cfg.topics).await?;
        let mut counts = BTreeMap::new();
        for t in &self.cfg.topics {
            let m = meta.get(t).ok_or_else(|| Error::UnknownTopic(t.clone()))?;
            counts.insert(t.clone(), m.leaders.len() as i32);
        }
        self.counts = counts;
        let owned = self.last_owned.clone().unwrap_or_default();
        let sub = Subscription {
            topics: self.cfg.topics.clone(),
            owned,
            generation: self.generation,
        }
        .encode()?;
        let protocols: Vec<JoinGroupRequestProtocol> = self
            .cfg
            .assignor
            .protocols()
            .iter()
            .map(|name| {
                JoinGroupRequestProtocol::default()
                    .with_name(StrBytes::from_static_str(name))
                    .with_metadata(sub.clone())
            })
            .collect();
        let group = self.cfg.group_id.clone();
        loop {
            let coord = self.coordinator().await?;
            let req = JoinGroupRequest::default()
                .with_group_id(GroupId(StrBytes::from_string(group.clone())))
                .with_session_timeout_ms(self.cfg.session_timeout.as_millis() as i32)
                .with_rebalance_timeout_ms(self.cfg.rebalance_timeout.as_millis() as i32)
                .with_member_id(StrBytes::from_string(self.member_id.clone()))
                .with_group_instance_id(
                    self.cfg
                        .group_instance_id
                        .clone()
                        .map(StrBytes::from_string),
                )
                .with_protocol_type(StrBytes::from_static_str("consumer"))
                .with_protocols(protocols.clone());
            // The coordinator holds JoinGroup until every member rejoined or
            // the rebalance timeout passed.
            let timeout = self.cfg.rebalance_timeout + self.cfg.request_timeout;
            let (resp, _) = self.cluster.send_to(&coord, &req, timeout).await?;
            self.joined_once = true;
            match resp.error_code {
                0 => {}
                codes::MEMBER_ID_REQUIRED => {
                    self.member_id = resp.member_id.to_string();
                    continue;
                }
                codes::UNKNOWN_MEMBER_ID => {
                    self.member_id.clear();
                    continue;
                }
                codes::REBALANCE_IN_PROGRESS => continue,
                c if codes::coordinator_moved(c) => {
                    self.coordinator = None;
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                }
                codes::INCONSISTENT_GROUP_PROTOCOL => {
                    let offered = self.cfg.assignor.protocols().join(", ");
                    return Err(Error::GroupProtocol {
                        group,
                        reason: format!(
                            "INCONSISTENT_GROUP_PROTOCOL: the group's members run a protocol \
                             type or protocols this member does not share (this member: type \
                             'consumer', protocols {offered})"
                        ),
                    });
                }
                c => return Err(Error::protocol(&group, "JoinGroup", c)),
            }
            self.member_id = resp.member_id.to_string();
            let generation = resp.generation_id;
            let protocol = resp
                .protocol_name
                .as_ref()
                .map(|p| p.to_string())
                .unwrap_or_default();
            if !self.cfg.assignor.protocols().contains(&protocol.as_str()) {
                return Err(Error::GroupProtocol {
                    group,
                    reason: format!(
                        "the broker chose protocol '{protocol}', not one of {}",
                        self.cfg.assignor.protocols().join(", ")
                    ),
                });
            }
            let assignments = if resp.leader.as_str() == self.member_id {
                let members: Vec<JoinedMember> = resp
                    .members
                    .iter()
                    .map(|m| {
                        Ok(JoinedMember {
                            member_id: m.member_id.to_string(),
                            instance_id: m.group_instance_id.as_ref().map(|s| s.to_string()),
                            subscription: Subscription::decode(m.metadata.clone())?,
                        })
                    })
                    .collect::<Result<_>>()?;
                let all_topics: BTreeSet<String> = members
                    .iter()
                    .flat_map(|m| m.subscription.topics.iter().cloned())
                    .collect();
                let all: Vec<String> = all_topics.into_iter().collect();
                let meta = self.cluster.metadata(&all).await?;
                let counts: BTreeMap<String, i32> = meta
                    .iter()
                    .map(|(t, m)| (t.clone(), m.leaders.len() as i32))
                    .collect();
                let plan =
                    leader_assignment(&protocol, &members, &counts).map_err(|e| match e {
                        Error::GroupProtocol { reason, .. } => Error::GroupProtocol {
                            group: group.clone(),
                            reason,
                        },
                        e => e,
                    })?;
                members
                    .iter()
                    .map(|m| {
                        let parts = plan.get(&m.member_id).cloned().unwrap_or_default();
                        Ok(SyncGroupRequestAssignment::default()
                            .with_member_id(StrBytes::from_string(m.member_id.clone()))
                            .with_assignment(encode_assignment(&parts)?))
                    })
                    .collect::<Result<Vec<_>>>()?
            } else {
                Vec::new()
            };
            // v5 names the protocol so the coordinator can check it (KIP-559).
            let named = self.cluster.version::<SyncGroupRequest>(&coord).await? >= 5;
            let req = SyncGroupRequest::default()
                .with_group_id(GroupId(StrBytes::from_string(group.clone())))
                .with_generation_id(generation)
                .with_member_id(StrBytes::from_string(self.member_id.clone()))
                .with_group_instance_id(
                    self.cfg
                        .group_instance_id
                        .clone()
                        .map(StrBytes::from_string),
                )
                .with_protocol_type(named.then(|| StrBytes::from_static_str("consumer")))
                .with_protocol_name(named.then(|| StrBytes::from_string(protocol.clone())))
                .with_assignments(assignments);
            let synced_at = Instant::now();
            let (resp, _) = self.cluster.send_to(&coord, &req, timeout).await?;
            match resp.error_code {
                0 => {}
                codes::UNKNOWN_MEMBER_ID => {
                    self.member_id.clear();
                    continue;
                }
                codes::REBALANCE_IN_PROGRESS | codes::ILLEGAL_GENERATION => continue,
                c if codes::coordinator_moved(c) => {
                    self.coordinator = None;
                    continue;
                }
                c => return Err(Error::protocol(&group, "SyncGroup", c)),
            }
            let partitions: Vec<(String, i32)> = decode_assignment(resp.assignment.clone())?
                .into_iter()
                .filter(|(t, p)| self.counts.get(t).is_some_and(|n| *p < *n))
                .collect();
            self.generation = generation;
            let units = complete_units(&partitions, &self.counts);
            self.last_owned = Some(partitions.clone());
            {
                let mut s = self.shared.lock().expect("poisoned");
                s.member_id = self.member_id.clone();
                s.generation = generation;
                s.active = true;
                s.rejoin = false;
                s.beat_at = synced_at;
            }
            let assignment = UnitAssignment {
                generation,
                member_id: self.member_id.clone(),
                units,
                partitions,
            };
            self.start_positions(&assignment).await?;
            self.current = Some(assignment.clone());
            self.pending.push_back(Event::Assigned(assignment));
            return Ok(());
        }
    }

    /// Positions of the partitions of whole units: the committed offset, or
    /// the reset point when nothing is committed.
    async fn start_positions(&mut self, a: &UnitAssignment) -> Result<()> {
        let mut want: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
        for u in &a.units {
            for t in &u.topics {
                want.entry(t.as_str()).or_default().push(u.partition);
            }
        }
        self.position.clear();
        self.fetchers.clear();
        if want.is_empty() {
            return Ok(());
        }
        let req = OffsetFetchRequest::default()
            .with_group_id(GroupId(StrBytes::from_string(self.cfg.group_id.clone())))
            .with_topics(Some(
                want.iter()
                    .map(|(t, ps)| {
                        OffsetFetchRequestTopic::default()
                            .with_name(TopicName(StrBytes::from_string(t.to_string())))
                            .with_partition_indexes(ps.clone())
                    })
                    .collect(),
            ));
        let coord = self.coordinator().await?;
        let timeout = self.cfg.request_timeout;
        let (resp, _) = self.cluster.send_to(&coord, &req, timeout).await?;
        if resp.error_code != 0 {
            if codes::coordinator_moved(resp.error_code) {
                self.coordinator = None;
            }
            return Err(Error::protocol(&coord, "OffsetFetch", resp.error_code));
        }
        let mut missing = Vec::new();
        for t in &resp.topics {
            for p in &t.partitions {
                let tp = (t.name.0.to_string(), p.partition_index);
                if p.error_code != 0 {
                    return Err(Error::protocol(&coord, "OffsetFetch", p.error_code));
                }
                if p.committed_offset >= 0 {
                    self.committed.insert(tp.clone(), p.committed_offset);
                    self.position.insert(tp, p.committed_offset);
                } else {
                    missing.push(tp);
                }
            }
        }
        for (t, ps) in &want {
            for p in ps {
                let tp = (t.to_string(), *p);
                if !self.position.contains_key(&tp) && !missing.contains(&tp) {
                    missing.push(tp);
                }
            }
        }
        if !missing.is_empty() {
            let ts = match self.cfg.auto_offset_reset {
                OffsetReset::Earliest => -2,
                OffsetReset::Latest => -1,
            };
            self.position
                .extend(self.cluster.list_offsets(&missing, ts).await?);
        }
        Ok(())
    }

    async fn reset_offset(&mut self, topic: &str, partition: i32) -> Result<i64> {
        let ts = match self.cfg.auto_offset_reset {
            OffsetReset::Earliest => -2,
            OffsetReset::Latest => -1,
        };
        self.cluster.list_offset(topic, partition, ts).await
    }

    /// The Fetch request for `parts` (partition -> offset) of one leader.
    fn fetch_request(&self, parts: &Offsets) -> FetchRequest {
        let mut topics: BTreeMap<&str, Vec<FetchPartition>> = BTreeMap::new();
        for ((t, p), off) in parts {
            topics.entry(t.as_str()).or_default().push(
                FetchPartition::default()
                    .with_partition(*p)
                    .with_current_leader_epoch(-1)
                    .with_fetch_offset(*off)
                    .with_last_fetched_epoch(-1)
                    .with_log_start_offset(-1)
                    .with_partition_max_bytes(self.cfg.max_partition_fetch_bytes),
            );
        }
        FetchRequest::default()
            .with_replica_id(BrokerId(-1))
            .with_max_wait_ms(self.cfg.fetch_max_wait.as_millis() as i32)
            .with_min_bytes(1)
            .with_max_bytes(50 * 1024 * 1024)
            .with_isolation_level(0)
            .with_session_id(0)
            .with_session_epoch(-1)
            .with_topics(
                topics
                    .into_iter()
                    .map(|(t, ps)| {
                        FetchTopic::default()
                            .with_topic(TopicName(StrBytes::from_string(t.to_string())))
                            .with_partitions(ps)
                    })
                    .collect(),
            )
    }

    /// Drops the fetch connection of a leader that cannot be reached, and
    /// the cached leaders of its partitions: a broker that died stays the
    /// leader in the cache until Metadata is asked again, and the next fetch
    /// must go to whichever broker took its partitions over.
    fn lost_leader(&mut self, leader: &str, parts: &Offsets) {
        self.fetchers.remove(leader);
        let topics: BTreeSet<&str> = parts.keys().map(|(t, _)| t.as_str()).collect();
        for t in topics {
            self.cluster.invalidate(t);
        }
    }

    /// Reads one fetch response from every leader of an owned partition and
    /// queues its records as events. Each leader has its own connection with
    /// the next fetch already written to it before the records are handed
    /// out, so the broker reads the log while the application handles the
    /// last batch.
    async fn fetch(&mut self) -> Result<()> {
        let Some(cur) = &self.current else {
            return Ok(());
        };
        let units = cur.units.clone();
        if units.is_empty() {
            // Nothing to fetch: wait like an empty fetch would, so rebalances
            // are still noticed promptly.
            tokio::time::sleep(self.cfg.fetch_max_wait).await;
            return Ok(());
        }
        let unit_of: HashMap<(String, i32), Unit> = units
            .iter()
            .flat_map(|u| {
                u.topics
                    .iter()
                    .map(move |t| ((t.clone(), u.partition), u.clone()))
            })
            .collect();
        let mut tps: Vec<((String, i32), i64)> =
            self.position.iter().map(|(k, v)| (k.clone(), *v)).collect();
        tps.sort();
        let mut by_leader: BTreeMap<String, Offsets> = BTreeMap::new();
        for (tp, off) in tps {
            let leader = self.cluster.leader_or_refresh(&tp.0, tp.1).await?;
            by_leader.entry(leader).or_default().insert(tp, off);
        }
        self.fetchers.retain(|addr, _| by_leader.contains_key(addr));
        let timeout = self.cfg.request_timeout + self.cfg.fetch_max_wait;
        let mut per_unit: BTreeMap<Unit, Vec<ConsumedRecord>> = BTreeMap::new();
        // A leader that fails ends the round, but what the others already
        // returned is queued: their positions moved past those records.
        let mut failed = None;
        'leaders: for (leader, parts) in by_leader {
            if !self.fetchers.contains_key(&leader) {
                let conn = match Connection::connect_with(
                    &leader,
                    &self.cfg.client_id,
                    self.cfg.request_timeout,
                    &self.cfg.security,
                )
                .await
                {
                    Ok(c) => c,
                    Err(e) => {
                        self.lost_leader(&leader, &parts);
                        failed = Some(e);
                        break 'leaders;
                    }
                };
                self.fetchers.insert(
                    leader.clone(),
                    Fetcher {
                        conn,
                        pending: None,
                    },
                );
            }
            let (sub, asked) = match self
                .fetchers
                .get_mut(&leader)
                .and_then(|f| f.pending.take())
            {
                Some(p) => p,
                None => {
                    let req = self.fetch_request(&parts);
                    let f = self.fetchers.get_mut(&leader).expect("inserted above");
                    match f.conn.submit(&req, timeout).await {
                        Ok(sub) => (sub, parts.clone()),
                        Err(e) => {
                            self.lost_leader(&leader, &parts);
                            failed = Some(e);
                            break 'leaders;
                        }
                    }
                }
            };
            let f = self.fetchers.get_mut(&leader).expect("inserted above");
            let resp = match f.conn.receive(sub, timeout).await {
                Ok((resp, _)) => resp,
                Err(e) => {
                    self.lost_leader(&leader, &parts);
                    failed = Some(e);
                    break 'leaders;
                }
            };
            if resp.error_code != 0 {
                self.fetchers.remove(&leader);
                failed = Some(Error::protocol(&leader, "Fetch", resp.error_code));
                break 'leaders;
            }
            for t in resp.responses {
                let topic = t.topic.0.to_string();
                for p in t.partitions {
                    let tp = (topic.clone(), p.partition_index);
                    // A position that moved since this fetch was written
                    // (reset, or not owned any more) makes its data stale.
                    let Some(&from) = self.position.get(&tp) else {
                        continue;
                    };
                    if asked.get(&tp) != Some(&from) {
                        continue;
                    }
                    match p.error_code {
                        0 => {}
                        codes::OFFSET_OUT_OF_RANGE => {
                            match self.reset_offset(&tp.0, tp.1).await {
                                Ok(off) => self.position.insert(tp, off),
                                Err(e) => {
                                    self.fetchers.remove(&leader);
                                    failed = Some(e);
                                    break 'leaders;
                                }
                            };
                            continue;
                        }
                        codes::NOT_LEADER_OR_FOLLOWER
                        | codes::LEADER_NOT_AVAILABLE
                        | codes::UNKNOWN_TOPIC_OR_PARTITION
                        | codes::FENCED_LEADER_EPOCH
                        | codes::UNKNOWN_LEADER_EPOCH => {
                            self.cluster.invalidate(&topic);
                            continue;
                        }
                        c => {
                            self.fetchers.remove(&leader);
                            failed = Some(Error::Broker {
                                at: format!("{leader} ({topic}-{})", tp.1),
                                api: "Fetch".into(),
                                code: c,
                            });
                            break 'leaders;
                        }
                    }
                    let records = match decode_records(p.records, from) {
                        Ok(r) => r,
                        Err(e) => {
                            self.fetchers.remove(&leader);
                            failed = Some(e);
                            break 'leaders;
                        }
                    };
                    let Some(last) = records.last() else { continue };
                    let next = last.offset + 1;
                    self.position.insert(tp.clone(), next);
                    self.delivered.insert(tp.clone(), next);
                    let Some(unit) = unit_of.get(&tp) else {
                        continue;
                    };
                    let out = per_unit.entry(unit.clone()).or_default();
                    out.extend(records.into_iter().map(|r| ConsumedRecord {
                        topic: topic.clone(),
                        partition: tp.1,
                        offset: r.offset,
                        timestamp: r.timestamp,
                        key: r.key,
                        value: r.value,
                    }));
                }
            }
            // The next fetch of this leader's partitions, from where this one ended.
            let next: Offsets = parts
                .keys()
                .filter_map(|tp| self.position.get(tp).map(|o| (tp.clone(), *o)))
                .collect();
            let req = self.fetch_request(&next);
            let f = self.fetchers.get_mut(&leader).expect("inserted above");
            match f.conn.submit(&req, timeout).await {
                Ok(sub) => f.pending = Some((sub, next)),
                // Reconnected on the next fetch.
                Err(_) => {
                    self.fetchers.remove(&leader);
                }
            }
        }
        for (unit, records) in per_unit {
            self.pending.push_back(Event::Records { unit, records });
        }
        failed.map_or(Ok(()), Err)
    }

    /// Commits what was handled, leaves the group (a static member stays, as
    /// the Java client's does, so its restart does not rebalance) and stops
    /// the heartbeat task.
    pub async fn close(mut self) -> Result<()> {
        self.closed = true;
        self.ack_delivered();
        let commit = if self.current.is_some() {
            self.commit_handled().await
        } else {
            Ok(())
        };
        {
            let mut s = self.shared.lock().expect("poisoned");
            s.closed = true;
            s.active = false;
        }
        if let Some(h) = self.heartbeat.take() {
            h.abort();
        }
        let leave = if self.cfg.group_instance_id.is_none() && !self.member_id.is_empty() {
            self.leave().await
        } else {
            Ok(())
        };
        commit.and(leave)
    }

    async fn leave(&mut self) -> Result<()> {
        let coord = self.coordinator().await?;
        let v = self.cluster.version::<LeaveGroupRequest>(&coord).await?;
        let member = StrBytes::from_string(self.member_id.clone());
        let mut req = LeaveGroupRequest::default()
            .with_group_id(GroupId(StrBytes::from_string(self.cfg.group_id.clone())));
        // v3 moved the member into a list (batch leave, KIP-345); v5 added a reason.
        if v >= 3 {
            let reason =
                (v >= 5).then(|| StrBytes::from_static_str("the consumer is being closed"));
            req = req.with_members(vec![MemberIdentity::default()
                .with_member_id(member)
                .with_group_instance_id(
                    self.cfg
                        .group_instance_id
                        .clone()
                        .map(StrBytes::from_string),
                )
                .with_reason(reason)]);
        } else {
            req = req.with_member_id(member);
        }
        let timeout = self.cfg.request_timeout;
        let (resp, _) = self.cluster.send_to(&coord, &req, timeout).await?;
        match resp.error_code {
            0 | codes::UNKNOWN_MEMBER_ID => Ok(()),
            c => Err(Error::protocol(&self.cfg.group_id, "LeaveGroup", c)),
        }
    }
}

impl Drop for Consumer {
    fn drop(&mut self) {
        if let Some(h) = self.heartbeat.take() {
            h.abort();
        }
    }
}

/// Beats every `heartbeat_interval` on its own connection while the member
/// holds an assignment, and flags a rejoin when the coordinator says the
/// group moved on, or when the application stopped polling for longer than
/// `max_poll_interval`.
async fn heartbeat_loop(shared: Arc<Mutex<Shared>>, cfg: Config) {
    let mut conn: Option<Connection> = None;
    let mut last_ok = Instant::now();
    loop {
        tokio::time::sleep(cfg.heartbeat_interval).await;
        let (addr, member_id, generation, overdue) = {
            let s = shared.lock().expect("poisoned");
            if s.closed {
                return;
            }
            if !s.active {
                last_ok = Instant::now();
                continue;
            }
            let Some(addr) = s.coordinator.clone() else {
                drop(s);
                check_session(&shared, &cfg, last_ok);
                continue;
            };
            (
                addr,
                s.member_id.clone(),
                s.generation,
                s.last_poll.elapsed() > cfg.max_poll_interval,
            )
        };
        if overdue {
            // The application is stuck: give the units to someone who polls.
            let mut s = shared.lock().expect("poisoned");
            s.active = false;
            s.rejoin = true;
            s.forget_member = cfg.group_instance_id.is_none();
            continue;
        }
        if conn
            .as_ref()
            .is_none_or(|c| c.addr() != addr || !c.usable())
        {
            conn =
                Connection::connect_with(&addr, &cfg.client_id, cfg.request_timeout, &cfg.security)
                    .await
                    .ok();
        }
        let Some(c) = conn.as_mut() else {
            check_session(&shared, &cfg, last_ok);
            continue;
        };
        let req = HeartbeatRequest::default()
            .with_group_id(GroupId(StrBytes::from_string(cfg.group_id.clone())))
            .with_generation_id(generation)
            .with_member_id(StrBytes::from_string(member_id))
            .with_group_instance_id(cfg.group_instance_id.clone().map(StrBytes::from_string));
        let sent = Instant::now();
        match c.send(&req, cfg.request_timeout).await {
            Ok((resp, _)) => {
                let mut s = shared.lock().expect("poisoned");
                if s.generation != generation {
                    continue;
                }
                match resp.error_code {
                    0 => {
                        last_ok = Instant::now();
                        s.beat_at = s.beat_at.max(sent);
                    }
                    codes::REBALANCE_IN_PROGRESS | codes::ILLEGAL_GENERATION => s.rejoin = true,
                    codes::UNKNOWN_MEMBER_ID | codes::FENCED_INSTANCE_ID => {
                        s.rejoin = true;
                        s.forget_member = true;
                    }
                    // The member is still in its generation (the Java client
                    // keeps it too): only the coordinator is looked up again.
                    // A coordinator whose log writes stall (a replica of
                    // __consumer_offsets died) answers COORDINATOR_NOT_AVAILABLE
                    // for a few seconds; rejoining would revoke every unit of
                    // the group for nothing. Should the session lapse
                    // meanwhile, check_session and poll's session check act.
                    c if codes::coordinator_moved(c) => s.coordinator = None,
                    // Unknown trouble: rejoining is the safe answer.
                    _ => s.rejoin = true,
                }
            }
            Err(_) => {
                conn = None;
                check_session(&shared, &cfg, last_ok);
            }
        }
    }
}

/// After a session's worth of failed heartbeats the coordinator has dropped
/// us: stop processing and rejoin.
fn check_session(shared: &Arc<Mutex<Shared>>, cfg: &Config, last_ok: Instant) {
    if last_ok.elapsed() > cfg.session_timeout {
        let mut s = shared.lock().expect("poisoned");
        s.rejoin = true;
        s.coordinator = None;
    }
}
