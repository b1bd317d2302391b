//! The consumer protocol's bytes as this member uses them: the subscription
//! it sends in JoinGroup and the assignment the leader sends in SyncGroup
//! (classic groups; [`partwise_wire::consumer`]'s, shared with
//! partwise-kafka's group description, and re-exported here), and what a
//! ConsumerGroupHeartbeat response of KIP-848's consumer protocol tells the
//! member, checked before the member acts on it ([`HeartbeatAnswer`]).

pub use partwise_wire::consumer::{
    decode_assignment, encode_assignment, Assignment, Subscription, VERSION,
};

use crate::error::{Error, Result};
use bytes::Bytes;
use kafka_protocol::messages::{ApiKey, ConsumerGroupHeartbeatResponse};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use uuid::Uuid;

/// The longest heartbeat interval taken from a coordinator: a broker's
/// `group.consumer.max.heartbeat.interval.ms` is 15 s by default, and a
/// member told to wait an hour would lose its session.
const MAX_INTERVAL: Duration = Duration::from_secs(600);

/// A ConsumerGroupHeartbeat response, checked: partitions are indexes,
/// topic ids are ids, and the interval is one a member can keep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeartbeatAnswer {
    /// The error code (0: none).
    pub error_code: i16,
    /// The coordinator's words about the error, if any.
    pub error_message: Option<String>,
    /// The member id the coordinator knows this member by (v0 assigns it;
    /// from v1 it echoes the client's).
    pub member_id: Option<String>,
    /// The member epoch.
    pub member_epoch: i32,
    /// When to send the next heartbeat.
    pub heartbeat_interval: Duration,
    /// The member's assignment, by topic id, when it changed; `None` when
    /// it is the same as the last one.
    pub assignment: Option<BTreeMap<Uuid, BTreeSet<i32>>>,
}

impl HeartbeatAnswer {
    /// Checks a decoded response. An error answer carries no assignment to
    /// check; a successful one must have a positive interval, partition
    /// indexes of zero or more, and no nil topic id.
    pub fn from_response(resp: ConsumerGroupHeartbeatResponse) -> Result<HeartbeatAnswer> {
        let bad = |why: String| {
            Err(Error::decode(format!(
                "ConsumerGroupHeartbeat response: {why}"
            )))
        };
        let mut answer = HeartbeatAnswer {
            error_code: resp.error_code,
            error_message: resp.error_message.map(|m| m.to_string()),
            member_id: resp.member_id.map(|m| m.to_string()),
            member_epoch: resp.member_epoch,
            heartbeat_interval: Duration::ZERO,
            assignment: None,
        };
        if resp.error_code != 0 {
            return Ok(answer);
        }
        if resp.heartbeat_interval_ms <= 0 {
            return bad(format!(
                "heartbeat interval {} ms",
                resp.heartbeat_interval_ms
            ));
        }
        answer.heartbeat_interval =
            Duration::from_millis(resp.heartbeat_interval_ms as u64).min(MAX_INTERVAL);
        if let Some(a) = resp.assignment {
            let mut by_topic: BTreeMap<Uuid, BTreeSet<i32>> = BTreeMap::new();
            for tp in a.topic_partitions {
                if tp.topic_id.is_nil() {
                    return bad("an assigned topic without an id".into());
                }
                if let Some(p) = tp.partitions.iter().find(|p| **p < 0) {
                    return bad(format!("partition {p} of topic {}", tp.topic_id));
                }
                by_topic
                    .entry(tp.topic_id)
                    .or_default()
                    .extend(tp.partitions);
            }
            answer.assignment = Some(by_topic);
        }
        Ok(answer)
    }
}

/// A ConsumerGroupHeartbeat response body at `version` (the frame without
/// its length prefix, header included, answering correlation id
/// `correlation`), decoded and checked as the member does it.
pub fn decode_heartbeat_response(
    mut body: Bytes,
    version: i16,
    correlation: i32,
) -> Result<HeartbeatAnswer> {
    let resp: ConsumerGroupHeartbeatResponse = partwise_wire::frame::decode_response(
        &mut body,
        ApiKey::ConsumerGroupHeartbeat,
        version,
        correlation,
    )
    .map_err(Error::from)?;
    HeartbeatAnswer::from_response(resp)
}
