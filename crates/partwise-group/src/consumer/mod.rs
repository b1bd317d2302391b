//! The group member and the units API.
//!
//! This module owns a member's life in a consumer group, one job per
//! submodule: [`config`] (settings), `coordinator` (finding the group
//! coordinator, and which errors are worth retrying), `membership`
//! (classic JoinGroup / SyncGroup, the leader running the assignor,
//! LeaveGroup), `heartbeat` (the classic protocol's task that keeps the
//! session alive), `kip848` (the consumer protocol's membership:
//! ConsumerGroupHeartbeat and the reconciliation with the broker's
//! assignment), `fetch` (start positions, the fetch loop) and `commit` (what
//! counts as handled, and OffsetCommit); both protocols share the last two. The application sees it through [`Consumer::poll`], which
//! returns [`Event`]s: units assigned, units revoked, and records of one unit.
//!
//! The member's state is one [`State`]: in no generation, holding one
//! (its assignment, positions and fetch connections together), or closed.
//! Rebalancing is eager: before rejoining, the member commits what the
//! application handled and hands back every unit ([`Event::Revoked`]), so no
//! two members ever process one unit at once; the `copartitioned` assignor is
//! sticky, so the next [`Event::Assigned`] usually gives most units back.
//! Under the consumer protocol it is incremental: [`Event::Revoked`] names
//! only the units given up, and is followed by an [`Event::Assigned`] with
//! every unit still owned.

mod commit;
pub(crate) mod config;
mod coordinator;
mod fetch;
mod heartbeat;
mod kip848;
mod membership;
mod unstored;

pub use config::{Config, GroupAssignor, GroupProtocol, OffsetReset};
pub(crate) use unstored::unstorable;
pub use unstored::{LargeMember, Unstored};

use crate::error::{Error, Result};
use crate::units::{Unit, UnreadableMember};
use bytes::Bytes;
use commit::Positions;
use fetch::Fetcher;
use heartbeat::{heartbeat_loop, Shared};
use kafka_protocol::messages::GroupId;
use kafka_protocol::protocol::StrBytes;
use partwise_client::cluster::Cluster;
use partwise_wire::records::RecordRun;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The units (and their partitions) of one generation of one member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitAssignment {
    /// The group generation; under the consumer protocol, the member epoch
    /// (which the coordinator moves per member, towards the group epoch).
    pub generation: i32,
    /// This member led the generation: it computed every member's
    /// assignment (whatever runtime the others run). Always false under the
    /// consumer protocol, where the broker assigns.
    pub leader: bool,
    /// This member's id.
    pub member_id: String,
    /// The whole units this member owns; only these are fetched.
    pub units: Vec<Unit>,
    /// Every partition assigned, (topic, partition), sorted. Partitions of a
    /// unit that is not whole (under classic `range` with unequal partition
    /// counts; under the consumer protocol, a server assignor that splits
    /// units, or a partition still being released by its last owner) are
    /// held but never processed. In an [`Event::Revoked`] of the consumer
    /// protocol: the partitions given up.
    pub partitions: Vec<(String, i32)>,
    /// When this member led: the members it gave nothing because their
    /// subscription could not be decoded, with why (the application should
    /// say so; the rest of the group is assigned as if they were absent).
    pub unreadable: Vec<UnreadableMember>,
}

/// One record, owned (see [`RecordRef::to_owned`]).
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

/// One record, as handed to the application: borrowed from the fetched
/// bytes, nothing copied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordRef<'a> {
    /// Topic.
    pub topic: &'a str,
    /// Partition.
    pub partition: i32,
    /// Offset.
    pub offset: i64,
    /// Timestamp, milliseconds since the epoch.
    pub timestamp: i64,
    /// Key bytes.
    pub key: Option<&'a [u8]>,
    /// Value bytes.
    pub value: Option<&'a [u8]>,
}

impl RecordRef<'_> {
    /// The record with its own copies of topic, key and value.
    pub fn to_owned(&self) -> ConsumedRecord {
        ConsumedRecord {
            topic: self.topic.to_string(),
            partition: self.partition,
            offset: self.offset,
            timestamp: self.timestamp,
            key: self.key.map(Bytes::copy_from_slice),
            value: self.value.map(Bytes::copy_from_slice),
        }
    }
}

/// The records of one partition from one fetch, in offset order: they stay
/// in the bytes the broker sent (uncompressed batches) or the decompressed
/// batch, and each record is a place in them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionRecords {
    topic: Arc<str>,
    partition: i32,
    runs: Vec<RecordRun>,
}

impl PartitionRecords {
    fn new(topic: Arc<str>, partition: i32, runs: Vec<RecordRun>) -> PartitionRecords {
        PartitionRecords {
            topic,
            partition,
            runs,
        }
    }

    /// Topic.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// Partition.
    pub fn partition(&self) -> i32 {
        self.partition
    }

    /// How many records.
    pub fn len(&self) -> usize {
        self.runs.iter().map(|r| r.slots.len()).sum()
    }

    /// No records.
    pub fn is_empty(&self) -> bool {
        self.runs.iter().all(|r| r.slots.is_empty())
    }

    /// Each record as (offset, timestamp, key, value), without the topic and
    /// partition every one of them shares.
    pub fn slots(&self) -> impl Iterator<Item = (i64, i64, Option<&[u8]>, Option<&[u8]>)> + '_ {
        self.runs
            .iter()
            .flat_map(|r| r.iter().map(|(s, k, v)| (s.offset, s.timestamp, k, v)))
    }

    /// Each record.
    pub fn iter(&self) -> impl Iterator<Item = RecordRef<'_>> + '_ {
        self.slots()
            .map(|(offset, timestamp, key, value)| RecordRef {
                topic: &self.topic,
                partition: self.partition,
                offset,
                timestamp,
                key,
                value,
            })
    }

    /// The offset after the last record.
    fn next_offset(&self) -> Option<i64> {
        self.runs
            .iter()
            .rev()
            .find_map(|r| r.slots.last())
            .map(|s| s.offset + 1)
    }
}

/// The records of one unit that one [`Event::Records`] hands out: by
/// partition, in offset order within each.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Records {
    parts: Vec<PartitionRecords>,
}

impl Records {
    /// How many records.
    pub fn len(&self) -> usize {
        self.parts.iter().map(PartitionRecords::len).sum()
    }

    /// No records.
    pub fn is_empty(&self) -> bool {
        self.parts.iter().all(PartitionRecords::is_empty)
    }

    /// The records by partition (a partition may come more than once when
    /// several fetches were queued together).
    pub fn partitions(&self) -> &[PartitionRecords] {
        &self.parts
    }

    /// Every record, partition by partition.
    pub fn iter(&self) -> impl Iterator<Item = RecordRef<'_>> + '_ {
        self.parts.iter().flat_map(PartitionRecords::iter)
    }

    /// Every record, owned.
    pub fn to_vec(&self) -> Vec<ConsumedRecord> {
        self.iter().map(|r| r.to_owned()).collect()
    }

    fn push(&mut self, p: PartitionRecords) {
        self.parts.push(p);
    }
}

impl<'a> IntoIterator for &'a Records {
    type Item = RecordRef<'a>;
    type IntoIter = Box<dyn Iterator<Item = RecordRef<'a>> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

/// Every record, owned (copies of its topic, key and value).
impl IntoIterator for Records {
    type Item = ConsumedRecord;
    type IntoIter = std::vec::IntoIter<ConsumedRecord>;

    fn into_iter(self) -> Self::IntoIter {
        self.to_vec().into_iter()
    }
}

/// Records that were not fetched (tests, replays): grouped into one
/// [`PartitionRecords`] per run of the same topic and partition, with
/// copies of their keys and values.
impl FromIterator<ConsumedRecord> for Records {
    fn from_iter<I: IntoIterator<Item = ConsumedRecord>>(iter: I) -> Records {
        let all: Vec<ConsumedRecord> = iter.into_iter().collect();
        let mut out = Records::default();
        for same in all.chunk_by(|a, b| a.topic == b.topic && a.partition == b.partition) {
            out.push(PartitionRecords {
                topic: Arc::from(same[0].topic.as_str()),
                partition: same[0].partition,
                runs: vec![RecordRun::from_records(same.iter().map(|r| {
                    (r.offset, r.timestamp, r.key.as_deref(), r.value.as_deref())
                }))],
            });
        }
        out
    }
}

/// What [`Consumer::poll`] hands the application.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// This member now owns these units; processing may start. Each one
    /// lists every unit owned, not only the new ones.
    Assigned(UnitAssignment),
    /// This member gives up these units; their handled offsets are already
    /// committed, and no record of them comes until they are assigned again.
    /// Under the consumer protocol only the units listed are given up (an
    /// [`Event::Assigned`] with the rest follows), except when the member
    /// was fenced: then it lost every unit, and nothing was committed.
    Revoked(UnitAssignment),
    /// Records of one unit, from any of its topics, in offset order per partition.
    Records {
        /// The unit.
        unit: Unit,
        /// The records.
        records: Records,
    },
    /// The coordinator could not store a generation (classic protocol: its
    /// record, every member's subscription and assignment, is larger than
    /// the offsets topic takes), and this member joins again. From the
    /// leader it names the member with the largest subscription; the
    /// application should say so. When the same member is in the way again,
    /// [`Consumer::poll`] fails with [`Error::Unstorable`] instead.
    Unstored(Unstored),
}

/// Where the member is. Everything that lives only as long as one
/// generation's assignment is inside [`State::Stable`], so leaving a
/// generation drops it all at once.
enum State {
    /// In no generation: before the first join, after the units were handed
    /// back, or after a join that did not finish. The next step joins.
    Unjoined,
    /// Holding a generation's assignment: fetching and committing.
    Stable(Box<Generation>),
    /// Closed by [`Consumer::close`].
    Closed,
}

/// One generation as this member holds it.
struct Generation {
    /// The units and partitions, with the generation id and member id.
    assignment: UnitAssignment,
    /// Where each partition of a whole unit is, for fetching and committing.
    positions: Positions,
    /// Fetch connections by leader address, each with its next fetch in flight.
    fetchers: HashMap<String, Fetcher>,
    /// Records a fetch round read, by unit, not yet queued as events. They
    /// live here rather than in the round so that a poll dropped mid-round
    /// (a signal, a `select!`) keeps them: their positions have moved on,
    /// so losing them would skip records, and committing them (close()
    /// after the drop) would skip them for the next owner too.
    fetched: std::collections::BTreeMap<Unit, Records>,
}

/// What the next JoinGroup claims as owned, so the leader can be sticky:
/// the partitions of the last assignment and its generation.
struct Previous {
    generation: i32,
    partitions: Vec<(String, i32)>,
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
    state: State,
    previous: Previous,
    /// What was last committed, per partition; kept across generations, so
    /// an offset the coordinator already has is not sent again.
    committed: HashMap<(String, i32), i64>,
    last_commit: Instant,
    pending: VecDeque<Event>,
    /// Whether any JoinGroup was answered: before that, a lost connection or
    /// a missing topic is a wrong address or name, not a broker restarting.
    joined_once: bool,
    /// Since when every step has failed with a retriable error.
    failing_since: Option<Instant>,
    /// The consumer protocol's member state (unused by classic members).
    kip: kip848::Membership,
    /// The members the join in progress left out as unreadable, when this
    /// member leads it.
    left_out: Vec<UnreadableMember>,
    /// The sizes of the generation this member leads, until it is stored.
    led: Option<unstored::Led>,
    /// Generations in a row the coordinator could not store.
    unstored_in_a_row: u32,
    /// The member with the largest subscription in the last of them.
    unstored_largest: Option<String>,
}

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
        let shared = Arc::new(Mutex::new(Shared::new()));
        // The consumer protocol heartbeats from poll (kip848).
        let heartbeat = (cfg.group_protocol == GroupProtocol::Classic)
            .then(|| tokio::spawn(heartbeat_loop(shared.clone(), cfg.clone())));
        Ok(Consumer {
            cfg,
            cluster,
            shared,
            heartbeat,
            coordinator: None,
            member_id: String::new(),
            state: State::Unjoined,
            previous: Previous {
                generation: -1,
                partitions: Vec::new(),
            },
            committed: HashMap::new(),
            last_commit: Instant::now(),
            pending: VecDeque::new(),
            joined_once: false,
            failing_since: None,
            kip: kip848::Membership::new(),
            left_out: Vec::new(),
            led: None,
            unstored_in_a_row: 0,
            unstored_largest: None,
        })
    }

    /// This member's id (empty before the first join).
    pub fn member_id(&self) -> &str {
        &self.member_id
    }

    /// The current generation's assignment, if any.
    pub fn assignment(&self) -> Option<&UnitAssignment> {
        match &self.state {
            State::Stable(g) => Some(&g.assignment),
            _ => None,
        }
    }

    /// The next event. Joins the group when needed, fetches records of owned
    /// units, commits handled offsets every `auto_commit_interval`, and
    /// rejoins when the group rebalances.
    ///
    /// Errors are those the member cannot recover from: an unreachable
    /// cluster before the first join, a group protocol it does not share, a
    /// fenced static member. Lost connections, a moved or unavailable
    /// coordinator and missing leaders after the first join are retried for
    /// up to `retry_timeout`, then reported as [`Error::GaveUp`]. A
    /// subscribed topic deleted meanwhile (Metadata calls it unknown for
    /// half a second, or gives it a new topic id) is not waited for: it is
    /// [`Error::TopicDeleted`] at once, under either group protocol, and
    /// [`close`](Consumer::close) then commits what was handled of the
    /// other topics and leaves the group.
    ///
    /// Not cancel-safe: dropping the future mid-request makes the member
    /// reconnect, and a dropped join leaves it to rejoin on the next call.
    pub async fn poll(&mut self) -> Result<Event> {
        if matches!(self.state, State::Closed) {
            return Err(Error::Closed);
        }
        self.ack_delivered();
        self.queue_fetched();
        self.shared.lock().expect("poisoned").last_poll = Instant::now();
        loop {
            if self.shared.lock().expect("poisoned").fenced {
                // Nothing more is handed out or committed: the units are
                // another member's now.
                self.pending.clear();
                self.state = State::Unjoined;
                return Err(self.fenced());
            }
            let unconfirmed = self.kip848()
                && matches!(self.pending.front(), Some(Event::Records { .. }))
                && self.kip.unconfirmed();
            if let Some(e) = self.pending.pop_front().filter(|_| !unconfirmed) {
                if matches!(e, Event::Records { .. }) && self.session_lapsed() {
                    // No heartbeat got through for a whole session (the
                    // process was stopped, say): the coordinator may have
                    // expelled this member and given its units to another,
                    // so none of these records is handed out, and the units
                    // are revoked before rejoining.
                    self.pending.retain(|e| !matches!(e, Event::Records { .. }));
                    if let State::Stable(g) = &mut self.state {
                        g.positions.delivered.clear();
                    }
                    self.shared.lock().expect("poisoned").rejoin = true;
                    continue;
                }
                return Ok(e);
            }
            let stepped = self.step().await;
            // Whatever the step ended in (a fetch of the topic refused, no
            // leader, a heartbeat that took its partitions away), a deleted
            // topic is said now rather than retried until the retry timeout.
            if let Some(e) = self.deleted_topic().await {
                return Err(e);
            }
            match stepped {
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

    /// The error a classic static member stops with when the coordinator
    /// answers FENCED_INSTANCE_ID (to a heartbeat, JoinGroup, SyncGroup or
    /// OffsetCommit): another member joined with its group.instance.id and
    /// took its place. It must not rejoin: that would fence the other in
    /// turn, and the two would trade the units forever.
    fn fenced(&self) -> Error {
        let id = self.cfg.group_instance_id.as_deref().unwrap_or_default();
        Error::group_protocol(
            &self.cfg.group_id,
            format!(
                "FENCED_INSTANCE_ID: another member joined with group.instance.id '{id}' and \
                 took this member's place, so this one stops; two running members must not \
                 share a group.instance.id (give each its own --group-instance-id)"
            ),
        )
    }

    /// A subscribed topic deleted since the member started, as
    /// [`Error::TopicDeleted`]; its partitions are dropped from the
    /// positions, so that [`close`](Consumer::close) commits what was handled
    /// of the others. A deletion only suspected (one Metadata answer) is
    /// asked of Metadata again once it can be confirmed.
    async fn deleted_topic(&mut self) -> Option<Error> {
        use partwise_client::cluster::Deletion;
        let suspected: Vec<String> = self
            .cfg
            .topics
            .iter()
            .filter(|t| self.cluster.deletion(t) == Some(Deletion::Suspected))
            .cloned()
            .collect();
        if !suspected.is_empty() {
            tokio::time::sleep(Cluster::DELETION_CONFIRMED).await;
            // An answer that fails says nothing either way; the next step asks again.
            let _ = self.cluster.metadata(&suspected).await;
        }
        let (topic, how) = self
            .cfg
            .topics
            .iter()
            .find_map(|t| match self.cluster.deletion(t) {
                Some(d @ (Deletion::Deleted | Deletion::Recreated)) => Some((t.clone(), d)),
                _ => None,
            })?;
        if let State::Stable(g) = &mut self.state {
            let p = &mut g.positions;
            for map in [&mut p.next, &mut p.delivered, &mut p.handled] {
                map.retain(|(t, _), _| *t != topic);
            }
        }
        self.pending.retain(|e| match e {
            Event::Records { unit, .. } => !unit.topics.contains(&topic),
            _ => true,
        });
        Some(Error::TopicDeleted {
            topic,
            recreated: how == Deletion::Recreated,
        })
    }

    /// The group id, as every group request carries it.
    fn group_id(&self) -> GroupId {
        GroupId(StrBytes::from_string(self.cfg.group_id.clone()))
    }

    /// `group.instance.id`, as every group request carries it.
    fn instance_id(&self) -> Option<StrBytes> {
        self.cfg
            .group_instance_id
            .clone()
            .map(StrBytes::from_string)
    }

    /// This member's id, as every group request carries it.
    fn member(&self) -> StrBytes {
        StrBytes::from_string(self.member_id.clone())
    }

    fn session_lapsed(&self) -> bool {
        let s = self.shared.lock().expect("poisoned");
        s.active && s.beat_at.elapsed() > self.cfg.session_timeout
    }

    async fn step(&mut self) -> Result<()> {
        if self.kip848() {
            return self.step_consumer().await;
        }
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
        match self.state {
            State::Stable(_) if rejoin => return self.revoke().await,
            State::Stable(_) => {}
            _ => return self.join().await,
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

    /// Hands the units back before rejoining: what was handled is committed
    /// first, so the next owner starts after it, and the generation's
    /// positions and fetches in flight go with it.
    async fn revoke(&mut self) -> Result<()> {
        self.shared.lock().expect("poisoned").active = false;
        let committed = self.commit_handled().await;
        let State::Stable(g) = std::mem::replace(&mut self.state, State::Unjoined) else {
            return Ok(());
        };
        if let Err(e) = committed {
            if !self.retriable(&e) {
                return Err(e);
            }
        }
        self.pending.push_back(Event::Revoked(g.assignment));
        Ok(())
    }

    /// Commits what was handled, leaves the group (a static member stays, as
    /// the Java client's does, so its restart does not rebalance) and stops
    /// the heartbeat task.
    pub async fn close(mut self) -> Result<()> {
        self.ack_delivered();
        let commit = if matches!(self.state, State::Stable(_)) {
            self.commit_handled().await
        } else {
            Ok(())
        };
        self.state = State::Closed;
        {
            let mut s = self.shared.lock().expect("poisoned");
            s.closed = true;
            s.active = false;
        }
        if let Some(h) = self.heartbeat.take() {
            h.abort();
        }
        let leave = if self.kip848() {
            self.leave_consumer().await
        } else if self.cfg.group_instance_id.is_none() && !self.member_id.is_empty() {
            self.leave().await
        } else {
            Ok(())
        };
        commit.and(leave)
    }
}

impl Drop for Consumer {
    fn drop(&mut self) {
        if let Some(h) = self.heartbeat.take() {
            h.abort();
        }
    }
}
