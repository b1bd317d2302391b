//! What counts as handled, and committing it: records handed out by one
//! poll are handled when the application polls again, and only handled
//! offsets are committed (OffsetCommit), so delivery is at least once.

use super::{Consumer, Event, State};
use crate::error::{Error, Result};
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::{OffsetCommitRequest, TopicName};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::ResponseError::{
    self, FencedInstanceId, FencedMemberEpoch, IllegalGeneration, RebalanceInProgress,
    StaleMemberEpoch, UnknownMemberId,
};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Instant;

/// A partition: (topic, partition).
pub(super) type Tp = (String, i32);

/// The offsets of one generation's partitions, each the next offset after
/// a record: where to fetch, what the last poll handed out, what the
/// application has handled.
#[derive(Default)]
pub(super) struct Positions {
    /// Next offset to fetch, per fetched partition.
    pub(super) next: HashMap<Tp, i64>,
    /// Offsets delivered by the last poll, handled once poll is called again.
    pub(super) delivered: HashMap<Tp, i64>,
    /// Next offset to commit.
    pub(super) handled: HashMap<Tp, i64>,
}

impl Consumer {
    /// Marks delivered records handled, except those of partitions whose
    /// records are still queued (one fetch queues one event per unit, and
    /// poll hands out one at a time): committing those would skip records
    /// the application never saw.
    pub(super) fn ack_delivered(&mut self) {
        let State::Stable(g) = &mut self.state else {
            return;
        };
        // Records fetched by a round that was dropped before queuing them
        // count as queued too.
        // One entry per partition of a fetch, not per record.
        let queued: HashSet<(&str, i32)> = self
            .pending
            .iter()
            .flat_map(|e| match e {
                Event::Records { records, .. } => records.partitions(),
                _ => &[],
            })
            .chain(g.fetched.values().flat_map(|r| r.partitions()))
            .map(|p| (p.topic(), p.partition()))
            .collect();
        let p = &mut g.positions;
        let mut keep = HashMap::new();
        for (tp, next) in p.delivered.drain() {
            if queued.contains(&(tp.0.as_str(), tp.1)) {
                keep.insert(tp, next);
            } else {
                p.handled.insert(tp, next);
            }
        }
        p.delivered = keep;
    }

    /// Commits the offsets of records handled so far.
    pub async fn commit(&mut self) -> Result<()> {
        self.ack_delivered();
        self.commit_handled().await
    }

    /// Commits handled offsets the coordinator does not have yet.
    pub(super) async fn commit_handled(&mut self) -> Result<()> {
        if !self.cfg.commit_offsets {
            return Ok(());
        }
        self.last_commit = Instant::now();
        let State::Stable(g) = &self.state else {
            return Ok(());
        };
        let generation = g.assignment.generation;
        let todo: Vec<(Tp, i64)> = g
            .positions
            .handled
            .iter()
            .filter(|(tp, off)| self.committed.get(*tp) != Some(*off))
            .map(|(tp, off)| (tp.clone(), *off))
            .collect();
        if todo.is_empty() || generation < 0 {
            return Ok(());
        }
        let req = self.commit_request(generation, &todo);
        let coord = self.coordinator().await?;
        let timeout = self.cfg.request_timeout;
        let (resp, _) = self.cluster.send_to(&coord, &req, timeout).await?;
        for t in resp.topics {
            for p in t.partitions {
                let tp = (t.name.0.to_string(), p.partition_index);
                match ResponseError::try_from_code(p.error_code) {
                    None => {
                        if let Some(off) = todo.iter().find(|(k, _)| *k == tp).map(|(_, o)| *o) {
                            self.committed.insert(tp, off);
                        }
                    }
                    Some(FencedInstanceId) => {
                        self.shared.lock().expect("poisoned").fenced = true;
                        return Err(self.fenced());
                    }
                    Some(
                        e @ (RebalanceInProgress | IllegalGeneration | UnknownMemberId
                        | StaleMemberEpoch | FencedMemberEpoch),
                    ) => {
                        // The group moved on: these records will be delivered
                        // again to the next owner, which at-least-once allows.
                        // (A consumer-protocol member heartbeats now instead,
                        // and learns its epoch or that it was fenced.)
                        self.shared.lock().expect("poisoned").rejoin = true;
                        if e == UnknownMemberId && !self.kip848() {
                            self.member_id.clear();
                        }
                    }
                    Some(_) if self.coordinator_moved(p.error_code) => {
                        return Err(Error::protocol(&coord, "OffsetCommit", p.error_code));
                    }
                    Some(_) => {
                        return Err(Error::protocol(
                            &self.cfg.group_id,
                            "OffsetCommit",
                            p.error_code,
                        ))
                    }
                }
            }
        }
        Ok(())
    }

    fn commit_request(&self, generation: i32, todo: &[(Tp, i64)]) -> OffsetCommitRequest {
        let mut by_topic: BTreeMap<&str, Vec<OffsetCommitRequestPartition>> = BTreeMap::new();
        for ((t, p), off) in todo {
            by_topic.entry(t.as_str()).or_default().push(
                OffsetCommitRequestPartition::default()
                    .with_partition_index(*p)
                    .with_committed_offset(*off)
                    .with_committed_leader_epoch(-1),
            );
        }
        OffsetCommitRequest::default()
            .with_group_id(self.group_id())
            .with_generation_id_or_member_epoch(generation)
            .with_member_id(self.member())
            .with_group_instance_id(self.instance_id())
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
            )
    }
}
