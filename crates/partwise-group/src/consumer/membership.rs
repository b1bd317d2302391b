//! Joining and leaving the group: JoinGroup, the leader's assignment,
//! SyncGroup, and LeaveGroup.
//!
//! A join goes through two steps, each of which may send it back to the
//! first (a rebalance started meanwhile, the member id was unknown, the
//! coordinator moved): JoinGroup, then SyncGroup with the assignments when
//! this member leads. It ends holding a generation ([`State::Stable`]).

use super::unstored::{Led, MemberSize};
use super::{Consumer, Event, Generation, Previous, State, UnitAssignment};
use crate::error::{Error, Result};
use crate::protocol::{Assignment, Subscription};
use crate::units::{leader_sync_assignments_around, read_members, unit_groups_of_counts, units_in};
use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_protocol::messages::leave_group_request::MemberIdentity;
use kafka_protocol::messages::sync_group_request::SyncGroupRequestAssignment;
use kafka_protocol::messages::{
    JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest, SyncGroupRequest,
};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::ResponseError::{
    self, FencedInstanceId, IllegalGeneration, InconsistentGroupProtocol, MemberIdRequired,
    RebalanceInProgress, UnknownMemberId, UnknownServerError,
};
use partwise_wire::consumer::decode_unit_groups;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// Where a join is.
enum Join {
    /// Sending JoinGroup.
    Joining,
    /// Joined generation `generation` under `protocol`; sending SyncGroup,
    /// with every member's assignment when this member leads.
    Syncing {
        generation: i32,
        leader: String,
        protocol: String,
        assignments: Vec<SyncGroupRequestAssignment>,
    },
}

/// How a SyncGroup ended.
enum Synced {
    /// The generation is taken up.
    Taken,
    /// Join again now.
    Again,
    /// The coordinator could not store the generation: an
    /// [`Event::Unstored`] is queued, and the member joins again after it.
    Unstored,
}

impl Consumer {
    /// Joins the group and takes up the generation it gets.
    pub(super) async fn join(&mut self) -> Result<()> {
        let meta = self.cluster.metadata(&self.cfg.topics).await?;
        let mut counts = BTreeMap::new();
        for t in &self.cfg.topics {
            let m = meta.get(t).ok_or_else(|| Error::UnknownTopic(t.clone()))?;
            counts.insert(t.clone(), m.leaders.len() as i32);
        }
        let sub = Subscription {
            topics: self.cfg.topics.clone(),
            owned: self.previous.partitions.clone(),
            generation: self.previous.generation,
            user_data: None,
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
        self.left_out.clear();
        let mut step = Join::Joining;
        loop {
            step = match step {
                Join::Joining => match self.join_group(&protocols).await? {
                    Some(s) => s,
                    None => Join::Joining,
                },
                Join::Syncing {
                    generation,
                    leader,
                    protocol,
                    assignments,
                } => match self
                    .sync_group(generation, leader, &protocol, assignments, &counts)
                    .await?
                {
                    // After Unstored the member is in no generation; the
                    // event is handed out, and the next poll joins again.
                    Synced::Taken | Synced::Unstored => return Ok(()),
                    Synced::Again => Join::Joining,
                },
            };
        }
    }

    /// One JoinGroup: the next step, or `None` to send JoinGroup again.
    async fn join_group(&mut self, protocols: &[JoinGroupRequestProtocol]) -> Result<Option<Join>> {
        let group = self.cfg.group_id.clone();
        let coord = self.coordinator().await?;
        let req = JoinGroupRequest::default()
            .with_group_id(self.group_id())
            .with_session_timeout_ms(self.cfg.session_timeout.as_millis() as i32)
            .with_rebalance_timeout_ms(self.cfg.rebalance_timeout.as_millis() as i32)
            .with_member_id(self.member())
            .with_group_instance_id(self.instance_id())
            .with_protocol_type(StrBytes::from_static_str("consumer"))
            .with_protocols(protocols.to_vec());
        let (resp, _) = self
            .cluster
            .send_to(&coord, &req, self.join_timeout())
            .await?;
        self.joined_once = true;
        match ResponseError::try_from_code(resp.error_code) {
            None => {}
            Some(MemberIdRequired) => {
                self.member_id = resp.member_id.to_string();
                return Ok(None);
            }
            Some(UnknownMemberId) => {
                self.member_id.clear();
                return Ok(None);
            }
            Some(RebalanceInProgress) => return Ok(None),
            Some(FencedInstanceId) => return Err(self.fenced()),
            Some(_) if self.coordinator_moved(resp.error_code) => {
                tokio::time::sleep(Duration::from_millis(200)).await;
                return Ok(None);
            }
            Some(InconsistentGroupProtocol) => {
                let offered = self.cfg.assignor.protocols().join(", ");
                return Err(Error::group_protocol(
                    &group,
                    format!(
                        "INCONSISTENT_GROUP_PROTOCOL: the group's members run a protocol \
                         type or protocols this member does not share (this member: type \
                         'consumer', protocols {offered})"
                    ),
                ));
            }
            Some(_) => return Err(Error::protocol(&group, "JoinGroup", resp.error_code)),
        }
        self.member_id = resp.member_id.to_string();
        let protocol = resp
            .protocol_name
            .as_ref()
            .map(|p| p.to_string())
            .unwrap_or_default();
        if !self.cfg.assignor.protocols().contains(&protocol.as_str()) {
            return Err(Error::group_protocol(
                &group,
                format!(
                    "the broker chose protocol '{protocol}', not one of {}",
                    self.cfg.assignor.protocols().join(", ")
                ),
            ));
        }
        self.led = None;
        let assignments = if resp.leader.as_str() == self.member_id {
            self.lead(&resp, &protocol).await?
        } else {
            Vec::new()
        };
        Ok(Some(Join::Syncing {
            generation: resp.generation_id,
            leader: resp.leader.to_string(),
            protocol,
            assignments,
        }))
    }

    /// The coordinator holds JoinGroup until every member rejoined or the
    /// rebalance timeout passed; SyncGroup waits for the leader likewise.
    fn join_timeout(&self) -> Duration {
        self.cfg.rebalance_timeout + self.cfg.request_timeout
    }

    /// The leader's work: every member's assignment under `protocol`, each
    /// with the co-partition groups in its user data (a member sees only its
    /// own subscription, the leader sees them all).
    async fn lead(
        &mut self,
        resp: &JoinGroupResponse,
        protocol: &str,
    ) -> Result<Vec<SyncGroupRequestAssignment>> {
        let group = &self.cfg.group_id;
        // A member whose subscription cannot be read gets nothing; failing
        // here instead would end every partwise member that leads in turn,
        // the whole group stopped by one member's bytes.
        let (members, unreadable) = read_members(resp.members.iter().map(|m| {
            (
                m.member_id.to_string(),
                m.group_instance_id.as_ref().map(|s| s.to_string()),
                m.metadata.clone(),
            )
        }));
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
        let assignments = leader_sync_assignments_around(protocol, &members, &unreadable, &counts)
            .map_err(|e| match e {
                Error::GroupProtocol { reason, source, .. } => Error::GroupProtocol {
                    group: group.clone(),
                    reason,
                    source,
                },
                e => e,
            })?;
        self.left_out = unreadable;
        // What the coordinator will store, should it refuse to.
        let claims: BTreeMap<&str, usize> = members
            .iter()
            .map(|m| (m.member_id.as_str(), m.subscription.owned.len()))
            .collect();
        self.led = Some(Led {
            members: resp
                .members
                .iter()
                .map(|m| MemberSize {
                    member_id: m.member_id.to_string(),
                    instance_id: m.group_instance_id.as_ref().map(|s| s.to_string()),
                    bytes: m.metadata.len(),
                    claims: claims.get(m.member_id.as_str()).copied(),
                })
                .collect(),
            assignment_bytes: assignments.iter().map(|(_, b)| b.len()).sum(),
        });
        Ok(assignments
            .into_iter()
            .map(|(member, bytes)| {
                SyncGroupRequestAssignment::default()
                    .with_member_id(StrBytes::from_string(member))
                    .with_assignment(bytes)
            })
            .collect())
    }

    /// One SyncGroup of generation `generation`, led by member `leader`.
    /// `counts`: the subscribed topics' partition counts.
    async fn sync_group(
        &mut self,
        generation: i32,
        leader: String,
        protocol: &str,
        assignments: Vec<SyncGroupRequestAssignment>,
        counts: &BTreeMap<String, i32>,
    ) -> Result<Synced> {
        let group = self.cfg.group_id.clone();
        let coord = self.coordinator().await?;
        // A leader sends every member's assignment, its own included; the
        // others send none.
        let led = !assignments.is_empty();
        // v5 names the protocol so the coordinator can check it (KIP-559).
        let named = self.cluster.version::<SyncGroupRequest>(&coord).await? >= 5;
        let req = SyncGroupRequest::default()
            .with_group_id(self.group_id())
            .with_generation_id(generation)
            .with_member_id(self.member())
            .with_group_instance_id(self.instance_id())
            .with_protocol_type(named.then(|| StrBytes::from_static_str("consumer")))
            .with_protocol_name(named.then(|| StrBytes::from_string(protocol.to_string())))
            .with_assignments(assignments);
        let synced_at = Instant::now();
        let (resp, _) = self
            .cluster
            .send_to(&coord, &req, self.join_timeout())
            .await?;
        match ResponseError::try_from_code(resp.error_code) {
            None => {}
            Some(UnknownMemberId) => {
                self.member_id.clear();
                return Ok(Synced::Again);
            }
            Some(RebalanceInProgress | IllegalGeneration) => return Ok(Synced::Again),
            Some(FencedInstanceId) => return Err(self.fenced()),
            Some(_) if self.coordinator_moved(resp.error_code) => return Ok(Synced::Again),
            // What the coordinator answers every member when it could not
            // write the group's record (see `unstored`); it rebalances.
            Some(UnknownServerError) => {
                self.unstored(generation, leader).await?;
                return Ok(Synced::Unstored);
            }
            Some(_) => return Err(Error::protocol(&group, "SyncGroup", resp.error_code)),
        }
        // Empty bytes (a member that got nothing, as some brokers send it)
        // are no partitions.
        let got = if resp.assignment.is_empty() {
            Assignment::default()
        } else {
            Assignment::decode(resp.assignment.clone())?
        };
        self.led = None;
        self.stored();
        self.take_up(generation, led, got, counts, synced_at)
            .await?;
        Ok(Synced::Taken)
    }

    /// Takes up generation `generation` with the assignment `got`: its whole
    /// units, the heartbeat started, the start positions looked up. `led`:
    /// this member computed the generation's assignment.
    async fn take_up(
        &mut self,
        generation: i32,
        led: bool,
        got: Assignment,
        counts: &BTreeMap<String, i32>,
        synced_at: Instant,
    ) -> Result<()> {
        let partitions: Vec<(String, i32)> = got
            .partitions
            .into_iter()
            .filter(|(t, p)| counts.get(t).is_some_and(|n| *p < *n))
            .collect();
        // The leader's groups when it sent them (a partwise leader); a
        // member alone can only group its own topics by partition count.
        let groups = got
            .user_data
            .as_deref()
            .and_then(decode_unit_groups)
            .unwrap_or_else(|| unit_groups_of_counts(counts));
        let units = units_in(&partitions, &groups, counts);
        self.previous = Previous {
            generation,
            partitions: partitions.clone(),
        };
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
            leader: led,
            member_id: self.member_id.clone(),
            units,
            partitions,
            unreadable: if led {
                std::mem::take(&mut self.left_out)
            } else {
                Vec::new()
            },
        };
        let positions = self.start_positions(&assignment).await?;
        self.state = State::Stable(Box::new(Generation {
            assignment: assignment.clone(),
            positions,
            fetchers: Default::default(),
            fetched: Default::default(),
        }));
        self.pending.push_back(Event::Assigned(assignment));
        Ok(())
    }

    /// LeaveGroup, so the group rebalances now rather than after a session.
    pub(super) async fn leave(&mut self) -> Result<()> {
        let coord = self.coordinator().await?;
        let v = self.cluster.version::<LeaveGroupRequest>(&coord).await?;
        let member = StrBytes::from_string(self.member_id.clone());
        let mut req = LeaveGroupRequest::default().with_group_id(self.group_id());
        // v3 moved the member into a list (batch leave, KIP-345); v5 added a reason.
        if v >= 3 {
            let reason =
                (v >= 5).then(|| StrBytes::from_static_str("the consumer is being closed"));
            req = req.with_members(vec![MemberIdentity::default()
                .with_member_id(member)
                .with_group_instance_id(self.instance_id())
                .with_reason(reason)]);
        } else {
            req = req.with_member_id(member);
        }
        let timeout = self.cfg.request_timeout;
        let (resp, _) = self.cluster.send_to(&coord, &req, timeout).await?;
        match ResponseError::try_from_code(resp.error_code) {
            None | Some(UnknownMemberId) => Ok(()),
            Some(_) => Err(Error::protocol(
                &self.cfg.group_id,
                "LeaveGroup",
                resp.error_code,
            )),
        }
    }
}
