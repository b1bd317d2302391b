//! Membership under KIP-848's consumer group protocol
//! (`group.protocol=consumer`): one ConsumerGroupHeartbeat carries the
//! join, the keep-alive, the member's owned partitions and the broker's
//! answer with its target assignment (computed by the server assignor, so
//! no member leads).
//!
//! The member reconciles towards the broker's assignment as Apache Kafka's
//! `ConsumerMembershipManager` does, revoking before taking: partitions that
//! leave the assignment stop being fetched, their handled offsets are
//! committed (OffsetCommit v9 with the member epoch), and only then does the
//! next heartbeat, sent at once, report the owned set without them, which is
//! what lets the coordinator hand them to another member. Partitions the
//! broker adds are taken as they come; a unit (partition `p` of every topic
//! of a co-partition group) is fetched and handed to the application only
//! when all its partitions are owned, so the partitions of a unit that is
//! not whole yet are held, reported as owned, and not fetched.
//!
//! Heartbeats go out from [`Consumer::poll`](super::Consumer::poll), at the
//! interval the broker returns: there is no heartbeat task in this mode, so
//! an application that stops polling for the broker's session timeout
//! (`group.consumer.session.timeout.ms`, 45 s by default) is expelled.

use super::commit::Tp;
use super::{Consumer, Event, Generation, GroupProtocol, State, UnitAssignment};
use crate::error::{Error, Result};
use crate::protocol::HeartbeatAnswer;
use crate::units::{unit_groups_of_counts, units_in, Unit};
use base64::Engine as _;
use kafka_protocol::messages::consumer_group_heartbeat_request::TopicPartitions;
use kafka_protocol::messages::{ConsumerGroupHeartbeatRequest, TopicName};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::ResponseError::{
    self, FencedInstanceId, FencedMemberEpoch, GroupIdNotFound, UnknownMemberId,
    UnreleasedInstanceId, UnsupportedAssignor,
};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// The member epoch that joins (or rejoins after being fenced).
const JOIN: i32 = 0;
/// The member epoch of a leave: `-1` for good, `-2` a static member's
/// temporary leave (its partitions wait for it for a session).
const LEAVE: i32 = -1;
const LEAVE_STATIC: i32 = -2;

/// What a consumer-protocol member keeps between heartbeats.
pub(super) struct Membership {
    /// The member epoch: [`JOIN`] until the coordinator gives one.
    epoch: i32,
    /// Every partition held: those of whole units (fetched) and those of
    /// units not yet whole (held, not fetched). The heartbeat reports them.
    owned: BTreeSet<Tp>,
    /// The last assignment the coordinator sent, by topic id; the member
    /// reconciles towards it until `owned` equals it.
    target: BTreeMap<Uuid, BTreeSet<i32>>,
    /// Partition counts of the subscribed topics, for the units.
    counts: BTreeMap<String, i32>,
    /// When the next heartbeat is due.
    next_beat: Instant,
    /// When the last heartbeat the coordinator accepted was sent, and the
    /// interval it gave.
    beat_ok: Instant,
    interval: Duration,
    /// The epoch and partitions the application was last told of, so that
    /// an [`Event::Assigned`] comes when either changes.
    announced: Option<(i32, Vec<Tp>)>,
}

impl Membership {
    /// Whether the coordinator has not confirmed this member for two
    /// heartbeat intervals (the process was stopped, the coordinator is
    /// away): it may have been fenced and its units given to another
    /// member, so no record is handed out until a heartbeat says otherwise.
    /// Poll then heartbeats first: fenced, the member drops the records.
    pub(super) fn unconfirmed(&self) -> bool {
        self.beat_ok.elapsed() > 2 * self.interval
    }

    pub(super) fn new() -> Membership {
        Membership {
            epoch: JOIN,
            owned: BTreeSet::new(),
            target: BTreeMap::new(),
            counts: BTreeMap::new(),
            next_beat: Instant::now(),
            beat_ok: Instant::now(),
            interval: Duration::from_secs(5),
            announced: None,
        }
    }
}

/// A member id as the Java client makes one (KIP-1082): 16 random bytes in
/// URL-safe base64 without padding.
fn new_member_id() -> Result<String> {
    use ring::rand::SecureRandom;
    let mut raw = [0u8; 16];
    ring::rand::SystemRandom::new()
        .fill(&mut raw)
        .map_err(|_| Error::Config("no system randomness for a member id".into()))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw))
}

fn millis(d: Duration) -> i32 {
    i32::try_from(d.as_millis()).unwrap_or(i32::MAX)
}

impl Consumer {
    /// One step of a consumer-protocol member: a heartbeat when due (or
    /// when joining), the reconciliation with the broker's assignment, a
    /// commit when due, and one fetch round.
    pub(super) async fn step_consumer(&mut self) -> Result<()> {
        // A commit refused for a stale or fenced epoch asks for a heartbeat now.
        if std::mem::take(&mut self.shared.lock().expect("poisoned").rejoin) {
            self.kip.next_beat = Instant::now();
        }
        if matches!(self.state, State::Unjoined) || Instant::now() >= self.kip.next_beat {
            self.beat().await?;
        }
        if !matches!(self.state, State::Stable(_)) {
            return Ok(());
        }
        self.reconcile().await?;
        if self.last_commit.elapsed() >= self.cfg.auto_commit_interval {
            self.commit_handled().await?;
        }
        if Instant::now() >= self.kip.next_beat {
            // A revocation to report: no fetch before it.
            return Ok(());
        }
        self.fetch().await
    }

    /// The owned partitions by topic id, as the heartbeat reports them.
    async fn owned_by_id(&mut self) -> Result<Vec<TopicPartitions>> {
        let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
        for (t, p) in &self.kip.owned {
            by_topic.entry(t.as_str()).or_default().push(*p);
        }
        let mut out = Vec::new();
        for (t, ps) in by_topic {
            // Every owned topic came from an id this cluster resolved.
            let id = self
                .cluster
                .topic_id(t)
                .ok_or_else(|| Error::UnknownTopic(t.to_string()))?;
            out.push(
                TopicPartitions::default()
                    .with_topic_id(id)
                    .with_partitions(ps),
            );
        }
        Ok(out)
    }

    /// One ConsumerGroupHeartbeat, and what its answer says to do.
    async fn beat(&mut self) -> Result<()> {
        let group = self.cfg.group_id.clone();
        let coord = self.coordinator().await?;
        let version = match self
            .cluster
            .version::<ConsumerGroupHeartbeatRequest>(&coord)
            .await
        {
            Ok(v) => v,
            Err(partwise_client::Error::Unsupported { addr, what }) => {
                return Err(Error::group_protocol(
                    &group,
                    format!(
                        "the broker at {addr} does not speak the consumer group protocol \
                         (KIP-848; {what}): use the classic group protocol"
                    ),
                ))
            }
            Err(e) => return Err(e.into()),
        };
        if self.member_id.is_empty() && version >= 1 {
            self.member_id = new_member_id()?;
        }
        if self.kip.epoch == JOIN {
            // The units are cut by partition counts, read once per join.
            let meta = self.cluster.metadata(&self.cfg.topics).await?;
            self.kip.counts = self
                .cfg
                .topics
                .iter()
                .map(|t| {
                    let m = meta.get(t).ok_or_else(|| Error::UnknownTopic(t.clone()))?;
                    Ok((t.clone(), m.leaders.len() as i32))
                })
                .collect::<Result<_>>()?;
        }
        let owned = self.owned_by_id().await?;
        let req = ConsumerGroupHeartbeatRequest::default()
            .with_group_id(self.group_id())
            .with_member_id(self.member())
            .with_member_epoch(self.kip.epoch)
            .with_instance_id(self.instance_id())
            .with_rebalance_timeout_ms(millis(self.cfg.rebalance_timeout))
            .with_subscribed_topic_names(Some(
                self.cfg
                    .topics
                    .iter()
                    .map(|t| TopicName(StrBytes::from_string(t.clone())))
                    .collect(),
            ))
            .with_server_assignor(self.cfg.remote_assignor.clone().map(StrBytes::from_string))
            .with_topic_partitions(Some(owned));
        let sent = Instant::now();
        let timeout = self.cfg.request_timeout;
        let (resp, _) = self.cluster.send_to(&coord, &req, timeout).await?;
        self.joined_once = true;
        let answer = HeartbeatAnswer::from_response(resp)?;
        let message = answer
            .error_message
            .as_deref()
            .map(|m| format!(": {m}"))
            .unwrap_or_default();
        match ResponseError::try_from_code(answer.error_code) {
            None => {}
            Some(FencedMemberEpoch | UnknownMemberId) => {
                // The coordinator gave this member's partitions away (its
                // session lapsed) or never knew it: what it holds is lost,
                // uncommitted, and it joins again with epoch 0.
                if version == 0 && answer.error_code == UnknownMemberId.code() {
                    self.member_id.clear();
                }
                self.lose_all();
                return Ok(());
            }
            Some(GroupIdNotFound) if self.kip.epoch != JOIN => {
                // The group was deleted under a live member: join it anew.
                self.lose_all();
                return Ok(());
            }
            Some(e) => return Err(self.refusal(e, answer.error_code, &message)),
        }
        if let Some(id) = answer.member_id.filter(|m| !m.is_empty()) {
            self.member_id = id;
        }
        self.kip.epoch = answer.member_epoch;
        self.kip.next_beat = sent + answer.heartbeat_interval;
        self.kip.beat_ok = sent;
        self.kip.interval = answer.heartbeat_interval;
        let mut lost_topic = false;
        if let Some(a) = answer.assignment {
            lost_topic = self.kip.target.keys().any(|id| !a.contains_key(id));
            self.kip.target = a;
        }
        // A topic gone from the assignment, or never in it beside its
        // partners, may be a topic deleted: this member fetches none of its
        // partitions, so no refused fetch would tell, and the rest of its
        // units would be held unprocessed. (A member that joined a moment
        // before the deletion may never have been given any of it: since
        // Kafka 4.1 a joiner's target comes a heartbeat later.) Metadata
        // says whether it still exists; poll acts on it.
        let incomplete = !self.kip.target.is_empty()
            && self.cfg.topics.iter().any(|t| {
                self.cluster
                    .topic_id(t)
                    .is_none_or(|id| !self.kip.target.contains_key(&id))
            });
        if lost_topic || incomplete {
            let _ = self.cluster.metadata(&self.cfg.topics).await;
        }
        if matches!(self.state, State::Unjoined) {
            self.kip.announced = None;
            self.state = State::Stable(Box::new(Generation {
                assignment: self.unit_assignment(Vec::new(), Vec::new()),
                positions: Default::default(),
                fetchers: Default::default(),
                fetched: Default::default(),
            }));
        }
        if let State::Stable(g) = &mut self.state {
            // Commits carry the epoch.
            g.assignment.generation = self.kip.epoch;
        }
        Ok(())
    }

    /// The error a heartbeat answer `e` (`code`) that the member does not
    /// ride out ends it with, naming what is at fault.
    fn refusal(&mut self, e: ResponseError, code: i16, message: &str) -> Error {
        let group = self.cfg.group_id.clone();
        let id = self.cfg.group_instance_id.as_deref().unwrap_or_default();
        let reason = match e {
            GroupIdNotFound => "GROUP_ID_NOT_FOUND: the coordinator refused to make it a \
                                consumer-protocol group (a classic group of that id, say)"
                .to_string(),
            UnsupportedAssignor => format!(
                "UNSUPPORTED_ASSIGNOR: the broker does not offer server assignor '{}' \
                 (group.remote.assignor); it offers those its group.consumer.assignors lists",
                self.cfg.remote_assignor.as_deref().unwrap_or("(default)")
            ),
            UnreleasedInstanceId => format!(
                "UNRELEASED_INSTANCE_ID: group.instance.id '{id}' is still held by another \
                 member, which must leave first"
            ),
            FencedInstanceId => {
                format!("FENCED_INSTANCE_ID: another member took group.instance.id '{id}'")
            }
            // A moved coordinator is retried by poll, which looks it up again.
            _ if self.coordinator_moved(code) || message.is_empty() => {
                return Error::protocol(&group, "ConsumerGroupHeartbeat", code)
            }
            _ => format!("ConsumerGroupHeartbeat: {}", crate::error::code_name(code)),
        };
        Error::group_protocol(&group, format!("{reason}{message}"))
    }

    fn unit_assignment(&self, units: Vec<Unit>, partitions: Vec<Tp>) -> UnitAssignment {
        UnitAssignment {
            generation: self.kip.epoch,
            leader: false,
            member_id: self.member_id.clone(),
            units,
            partitions,
            unreadable: Vec::new(),
        }
    }

    /// The broker's assignment in topic names, when every id is known
    /// (after one Metadata refresh at most); `None` while some id is not.
    async fn target_names(&mut self) -> Result<Option<BTreeSet<Tp>>> {
        let resolve = |m: &Membership, c: &partwise_client::cluster::Cluster| {
            let mut out = BTreeSet::new();
            for (id, ps) in &m.target {
                let name = c.topic_name(id)?;
                let n = *m.counts.get(name)?;
                for p in ps {
                    if *p >= n {
                        return None;
                    }
                    out.insert((name.to_string(), *p));
                }
            }
            Some(out)
        };
        if let Some(t) = resolve(&self.kip, &self.cluster) {
            return Ok(Some(t));
        }
        // An id or a partition this member has not seen: a topic created
        // again, or grown. The broker assigns subscribed topics only.
        let meta = self.cluster.metadata(&self.cfg.topics).await?;
        for (t, m) in &meta {
            self.kip.counts.insert(t.clone(), m.leaders.len() as i32);
        }
        Ok(resolve(&self.kip, &self.cluster))
    }

    /// Moves the owned set towards the broker's assignment: revoking first,
    /// then taking, then telling the application.
    async fn reconcile(&mut self) -> Result<()> {
        let Some(target) = self.target_names().await? else {
            // Tried again after the next heartbeat.
            return Ok(());
        };
        let revoke: BTreeSet<Tp> = self.kip.owned.difference(&target).cloned().collect();
        if !revoke.is_empty() {
            self.give_up(&revoke).await?;
            // The coordinator learns of it now, not an interval later.
            self.kip.next_beat = Instant::now();
        }
        let add: BTreeSet<Tp> = target.difference(&self.kip.owned).cloned().collect();
        if !add.is_empty() {
            self.take(&add).await?;
        }
        let State::Stable(g) = &mut self.state else {
            return Ok(());
        };
        let now = (self.kip.epoch, g.assignment.partitions.clone());
        if self.kip.announced.as_ref() != Some(&now) {
            self.kip.announced = Some(now);
            self.pending
                .push_back(Event::Assigned(g.assignment.clone()));
        }
        Ok(())
    }

    fn groups(&self) -> Vec<Vec<String>> {
        unit_groups_of_counts(&self.kip.counts)
    }

    /// Gives up `revoke`: the units they belong to stop being fetched,
    /// their records not yet handed out are dropped (the next owner starts
    /// from the committed offset), what was handled is committed, and the
    /// application gets [`Event::Revoked`] with the units given up.
    async fn give_up(&mut self, revoke: &BTreeSet<Tp>) -> Result<()> {
        let State::Stable(g) = &mut self.state else {
            return Ok(());
        };
        let gone: Vec<Unit> = g
            .assignment
            .units
            .iter()
            .filter(|u| {
                u.topics
                    .iter()
                    .any(|t| revoke.contains(&(t.clone(), u.partition)))
            })
            .cloned()
            .collect();
        // The partitions that stop being fetched: the revoked ones, and the
        // rest of their units, which are held now.
        let stop: BTreeSet<Tp> = gone
            .iter()
            .flat_map(|u| u.topics.iter().map(|t| (t.clone(), u.partition)))
            .chain(revoke.iter().cloned())
            .collect();
        for tp in &stop {
            g.positions.next.remove(tp);
            g.positions.delivered.remove(tp);
        }
        g.fetched.retain(|u, _| !gone.contains(u));
        self.pending
            .retain(|e| !matches!(e, Event::Records { unit, .. } if gone.contains(unit)));
        let committed = self.commit_handled().await;
        if let Err(e) = committed {
            // Not committed, the records are handed out again by the next
            // owner, which at-least-once allows; giving the partitions up
            // late would hold the whole group back.
            if !self.retriable(&e) {
                return Err(e);
            }
        }
        for tp in revoke {
            self.kip.owned.remove(tp);
        }
        let owned: Vec<Tp> = self.kip.owned.iter().cloned().collect();
        let units = units_in(&owned, &self.groups(), &self.kip.counts);
        let revoked = self.unit_assignment(gone, revoke.iter().cloned().collect());
        let State::Stable(g) = &mut self.state else {
            return Ok(());
        };
        for tp in &stop {
            g.positions.handled.remove(tp);
        }
        g.assignment.units = units;
        g.assignment.partitions = owned;
        self.pending.push_back(Event::Revoked(revoked));
        Ok(())
    }

    /// Takes `add`: held at once, and the units it makes whole fetched from
    /// their committed offsets.
    async fn take(&mut self, add: &BTreeSet<Tp>) -> Result<()> {
        let State::Stable(g) = &self.state else {
            return Ok(());
        };
        let mut owned = self.kip.owned.clone();
        owned.extend(add.iter().cloned());
        let owned: Vec<Tp> = owned.into_iter().collect();
        let units = units_in(&owned, &self.groups(), &self.kip.counts);
        let new: Vec<Unit> = units
            .iter()
            .filter(|u| !g.assignment.units.contains(u))
            .cloned()
            .collect();
        // Looked up before anything changes: a failure leaves the member as
        // it was, and the next step tries again.
        let fresh = self.unit_assignment(new, Vec::new());
        let start = self.start_positions(&fresh).await?;
        self.kip.owned.extend(add.iter().cloned());
        let State::Stable(g) = &mut self.state else {
            return Ok(());
        };
        g.positions.next.extend(start.next);
        g.assignment.units = units;
        g.assignment.partitions = owned;
        Ok(())
    }

    /// Fenced, or unknown to the coordinator: every partition is lost
    /// (the application is told, nothing more is handed out or committed)
    /// and the next step joins with epoch 0.
    fn lose_all(&mut self) {
        if let State::Stable(g) = std::mem::replace(&mut self.state, State::Unjoined) {
            self.pending.retain(|e| !matches!(e, Event::Records { .. }));
            let mut a = g.assignment;
            a.generation = self.kip.epoch;
            self.pending.push_back(Event::Revoked(a));
        }
        self.kip = Membership::new();
    }

    /// Leaves the group: a heartbeat with epoch -1, or -2 for a static
    /// member, whose partitions then wait a session for its return.
    pub(super) async fn leave_consumer(&mut self) -> Result<()> {
        if self.member_id.is_empty() || self.kip.epoch == JOIN {
            return Ok(());
        }
        let epoch = if self.cfg.group_instance_id.is_some() {
            LEAVE_STATIC
        } else {
            LEAVE
        };
        let coord = self.coordinator().await?;
        let req = ConsumerGroupHeartbeatRequest::default()
            .with_group_id(self.group_id())
            .with_member_id(self.member())
            .with_member_epoch(epoch)
            .with_instance_id(self.instance_id());
        let timeout = self.cfg.request_timeout;
        let (resp, _) = self.cluster.send_to(&coord, &req, timeout).await?;
        match ResponseError::try_from_code(resp.error_code) {
            None | Some(UnknownMemberId | FencedMemberEpoch) => Ok(()),
            Some(_) => Err(Error::protocol(
                &self.cfg.group_id,
                "ConsumerGroupHeartbeat",
                resp.error_code,
            )),
        }
    }

    /// Whether this member speaks the consumer protocol.
    pub(super) fn kip848(&self) -> bool {
        self.cfg.group_protocol == GroupProtocol::Consumer
    }
}
