//! A generation the coordinator could not store, and what the member does
//! about it.
//!
//! When the leader's SyncGroup arrives, Apache Kafka's coordinator writes the
//! group to `__consumer_offsets` as one record that holds, for every member,
//! its id, client id, host, timeouts, its whole subscription (the metadata it
//! sent in JoinGroup under the chosen protocol) and its assignment. A record
//! larger than that topic's `max.message.bytes` (by default the brokers'
//! `message.max.bytes`, 1048588 bytes) is refused; the coordinator maps the
//! refusal (MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE) to
//! UNKNOWN_SERVER_ERROR, answers every member's SyncGroup with it, and
//! rebalances. Nothing the leader assigns makes a subscription smaller: a
//! member whose subscription alone is over the limit keeps every generation
//! from being stored for as long as it stays, and a member that is gone by
//! the next generation (its session ended, it did not rejoin) no longer
//! counts. So a member rejoins after the first failure, the leader saying
//! which member's subscription is the largest, and stops when the same
//! member is in the way again.

use super::{Consumer, Event};
use crate::error::{Error, Result};
use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::{DescribeConfigsRequest, DescribeGroupsRequest};
use kafka_protocol::protocol::StrBytes;
use std::fmt;

/// The topic the coordinator stores groups in.
const OFFSETS_TOPIC: &str = "__consumer_offsets";
/// The brokers' default `message.max.bytes`, which the offsets topic's
/// `max.message.bytes` takes unless set.
const DEFAULT_LIMIT: i64 = 1_048_588;
/// A leader stops when the same member is the largest in this many
/// generations in a row that could not be stored; any member stops after
/// [`GIVE_UP`] such generations, whoever is in them.
const SAME_MEMBER: u32 = 2;
/// See [`SAME_MEMBER`].
const GIVE_UP: u32 = 3;

/// A generation whose assignment the coordinator could not store: SyncGroup
/// answered UNKNOWN_SERVER_ERROR. The sizes are known only to the member
/// that led it (it saw every member's subscription in JoinGroup).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unstored {
    /// The group.
    pub group: String,
    /// The generation.
    pub generation: i32,
    /// The member that led it.
    pub leader_id: String,
    /// This member led it: the fields below are filled.
    pub led: bool,
    /// How many members were in it.
    pub members: usize,
    /// The bytes of every member's subscription together.
    pub subscription_bytes: usize,
    /// The bytes of every member's assignment together, as the leader sent them.
    pub assignment_bytes: usize,
    /// The member whose subscription is the largest.
    pub largest: Option<LargeMember>,
    /// `max.message.bytes` of `__consumer_offsets`, when DescribeConfigs told it.
    pub limit: Option<i64>,
    /// How many generations in a row could not be stored, this one included.
    pub in_a_row: u32,
}

/// The member with the largest subscription of a generation that could not
/// be stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LargeMember {
    /// Its member id.
    pub member_id: String,
    /// Its `client.id` (from DescribeGroups, else from its member id; empty
    /// when neither tells it).
    pub client_id: String,
    /// The host the coordinator saw it connect from, when DescribeGroups answered.
    pub host: Option<String>,
    /// `group.instance.id` of a static member.
    pub instance_id: Option<String>,
    /// Its subscription's bytes.
    pub bytes: usize,
    /// How many partitions its subscription claims it owned, when it decodes.
    pub claims: Option<usize>,
}

/// What the leader knew of one member when it sent the assignment.
#[derive(Clone, Debug)]
pub(super) struct MemberSize {
    pub member_id: String,
    pub instance_id: Option<String>,
    pub bytes: usize,
    pub claims: Option<usize>,
}

/// What the leader knew of the generation it led when it sent SyncGroup.
#[derive(Clone, Debug, Default)]
pub(super) struct Led {
    pub members: Vec<MemberSize>,
    pub assignment_bytes: usize,
}

impl Unstored {
    /// The member the group cannot be served with (a leader's answer only).
    pub fn culprit(&self) -> Option<&LargeMember> {
        self.largest.as_ref()
    }

    /// The smallest `max.message.bytes` the record could fit in: every
    /// subscription and assignment (the ids, hosts and framing add a little more).
    pub fn needed(&self) -> usize {
        self.subscription_bytes + self.assignment_bytes
    }

    fn limit_words(&self) -> String {
        match self.limit {
            Some(l) => format!("{l} bytes"),
            None => format!(
                "which this member could not read; by default the brokers' message.max.bytes, \
                 {DEFAULT_LIMIT} bytes"
            ),
        }
    }
}

impl fmt::Display for LargeMember {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "member {} (client id '{}'",
            self.member_id, self.client_id
        )?;
        if let Some(h) = &self.host {
            write!(f, ", host '{h}'")?;
        }
        if let Some(i) = &self.instance_id {
            write!(f, ", group.instance.id '{i}'")?;
        }
        write!(f, "): {} bytes", self.bytes)?;
        if let Some(c) = self.claims {
            write!(f, ", claiming {c} owned partitions")?;
        }
        Ok(())
    }
}

impl fmt::Display for Unstored {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the coordinator could not store generation {} of group '{}' (SyncGroup answered \
             UNKNOWN_SERVER_ERROR, as Kafka does when the group's record in {OFFSETS_TOPIC}, \
             which holds every member's subscription and assignment, is larger than that \
             topic's max.message.bytes, {})",
            self.generation,
            self.group,
            self.limit_words()
        )?;
        if !self.led {
            return write!(
                f,
                "; its leader, member {}, saw the members' subscriptions and can name the largest",
                self.leader_id
            );
        }
        write!(
            f,
            ": the members' subscriptions are {} bytes from {} member(s), their assignments {} bytes",
            self.subscription_bytes, self.members, self.assignment_bytes
        )?;
        if let Some(m) = &self.largest {
            write!(f, "; the largest subscription is that of {m}")?;
        }
        Ok(())
    }
}

/// The words of [`Error::Unstorable`]: the failure, and what to do.
pub(crate) fn unstorable(f: &mut fmt::Formatter<'_>, u: &Unstored) -> fmt::Result {
    write!(
        f,
        "{u}. {} generations in a row could not be stored",
        u.in_a_row
    )?;
    match u.culprit() {
        Some(m) => write!(
            f,
            ": the group cannot be served while member {} stays (its subscription alone is {} \
             bytes, and the coordinator stores it whatever the leader assigns). Stop or fix that \
             client{}, or raise max.message.bytes of the {OFFSETS_TOPIC} topic above {} bytes",
            m.member_id,
            m.bytes,
            m.host
                .as_ref()
                .map(|h| format!(" (client id '{}' on host '{h}')", m.client_id))
                .unwrap_or_default(),
            u.needed()
        ),
        None => write!(
            f,
            ": the group cannot be served with its members as they are; the leader's warnings \
             name the member with the largest subscription (stop or fix that client, or raise \
             max.message.bytes of the {OFFSETS_TOPIC} topic)"
        ),
    }
}

impl Consumer {
    /// SyncGroup of generation `generation` answered UNKNOWN_SERVER_ERROR:
    /// says why (as leader, with the members' sizes and the largest), and
    /// either queues that as [`Event::Unstored`] so the member rejoins, or,
    /// when the same member keeps the group from being stored, is the error
    /// the member stops with.
    pub(super) async fn unstored(&mut self, generation: i32, leader_id: String) -> Result<()> {
        let led = self.led.take();
        let mut u = Unstored {
            group: self.cfg.group_id.clone(),
            generation,
            leader_id,
            led: led.is_some(),
            members: 0,
            subscription_bytes: 0,
            assignment_bytes: 0,
            largest: None,
            limit: None,
            in_a_row: self.unstored_in_a_row + 1,
        };
        if let Some(led) = led {
            u.members = led.members.len();
            u.subscription_bytes = led.members.iter().map(|m| m.bytes).sum();
            u.assignment_bytes = led.assignment_bytes;
            if let Some(m) = led.members.iter().max_by_key(|m| m.bytes) {
                let (client_id, host) = self.described_member(&m.member_id).await;
                u.largest = Some(LargeMember {
                    member_id: m.member_id.clone(),
                    client_id: client_id
                        .unwrap_or_else(|| crate::units::client_id_of(&m.member_id)),
                    host,
                    instance_id: m.instance_id.clone(),
                    bytes: m.bytes,
                    claims: m.claims,
                });
            }
        }
        u.limit = self.offsets_topic_limit().await;
        let largest = u.largest.as_ref().map(|m| m.member_id.clone());
        let same = largest.is_some() && largest == self.unstored_largest;
        self.unstored_in_a_row = u.in_a_row;
        if largest.is_some() {
            self.unstored_largest = largest;
        }
        if (same && u.in_a_row >= SAME_MEMBER) || u.in_a_row >= GIVE_UP {
            return Err(Error::Unstorable(Box::new(u)));
        }
        self.pending.push_back(Event::Unstored(u));
        Ok(())
    }

    /// A generation was taken up: the failures in a row are over.
    pub(super) fn stored(&mut self) {
        self.unstored_in_a_row = 0;
        self.unstored_largest = None;
    }

    /// The client id and host the coordinator has for `member`, if it says.
    async fn described_member(&mut self, member: &str) -> (Option<String>, Option<String>) {
        let Ok(coord) = self.coordinator().await else {
            return (None, None);
        };
        let req = DescribeGroupsRequest::default().with_groups(vec![self.group_id()]);
        let timeout = self.cfg.request_timeout;
        let Ok((resp, _)) = self.cluster.send_to(&coord, &req, timeout).await else {
            return (None, None);
        };
        resp.groups
            .iter()
            .flat_map(|g| g.members.iter())
            .find(|m| m.member_id.as_str() == member)
            .map(|m| {
                (
                    Some(m.client_id.to_string()),
                    Some(m.client_host.to_string()),
                )
            })
            .unwrap_or((None, None))
    }

    /// `max.message.bytes` of the offsets topic, if DescribeConfigs tells it
    /// (it needs DescribeConfigs on that topic, which a member may not have).
    async fn offsets_topic_limit(&mut self) -> Option<i64> {
        const TOPIC: i8 = 2;
        let req = DescribeConfigsRequest::default().with_resources(vec![
            DescribeConfigsResource::default()
                .with_resource_type(TOPIC)
                .with_resource_name(StrBytes::from_static_str(OFFSETS_TOPIC))
                .with_configuration_keys(Some(vec![StrBytes::from_static_str(
                    "max.message.bytes",
                )])),
        ]);
        let (resp, _) = self.cluster.send_any(&req).await.ok()?;
        let r = resp.results.first().filter(|r| r.error_code == 0)?;
        r.configs
            .iter()
            .find(|c| c.name.as_str() == "max.message.bytes")?
            .value
            .as_ref()?
            .parse()
            .ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unstored(led: bool, limit: Option<i64>, in_a_row: u32) -> Unstored {
        Unstored {
            group: "g".into(),
            generation: 7,
            leader_id: "partwise-1".into(),
            led,
            members: if led { 2 } else { 0 },
            subscription_bytes: if led { 4_000_370 } else { 0 },
            assignment_bytes: if led { 384 } else { 0 },
            largest: led.then(|| LargeMember {
                member_id: "big-1".into(),
                client_id: "big".into(),
                host: Some("/10.0.0.9".into()),
                instance_id: None,
                bytes: 4_000_110,
                claims: Some(1_000_000),
            }),
            limit,
            in_a_row,
        }
    }

    /// The leader's words name the cause, the sizes, the limit and the
    /// member; a member that did not lead names the leader instead.
    #[test]
    fn the_words_name_the_cause_the_sizes_and_the_member() {
        let u = unstored(true, Some(1_048_588), 1).to_string();
        for part in [
            "could not store generation 7 of group 'g'",
            "UNKNOWN_SERVER_ERROR",
            "max.message.bytes, 1048588 bytes",
            "4000370 bytes from 2 member(s), their assignments 384 bytes",
            "member big-1 (client id 'big', host '/10.0.0.9'): 4000110 bytes, claiming 1000000 owned partitions",
        ] {
            assert!(u.contains(part), "{part}: {u}");
        }
        let u = unstored(true, None, 1).to_string();
        assert!(
            u.contains("could not read; by default the brokers' message.max.bytes, 1048588 bytes"),
            "{u}"
        );
        let u = unstored(false, None, 1).to_string();
        assert!(u.contains("its leader, member partwise-1"), "{u}");
        assert!(!u.contains("largest subscription is"), "{u}");
    }

    /// The error says the group cannot be served while the member stays,
    /// and what to do: stop or fix it, or raise the limit above the sizes.
    #[test]
    fn the_error_says_what_to_do() {
        let e = Error::Unstorable(Box::new(unstored(true, Some(1_048_588), 2))).to_string();
        for part in [
            "2 generations in a row could not be stored",
            "cannot be served while member big-1 stays",
            "Stop or fix that client (client id 'big' on host '/10.0.0.9')",
            "max.message.bytes of the __consumer_offsets topic above 4000754 bytes",
        ] {
            assert!(e.contains(part), "{part}: {e}");
        }
        let e = Error::Unstorable(Box::new(unstored(false, None, 3))).to_string();
        assert!(
            e.contains("3 generations in a row")
                && e.contains("cannot be served with its members as they are"),
            "{e}"
        );
    }
}
