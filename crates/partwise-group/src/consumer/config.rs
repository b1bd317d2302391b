//! A member's settings, named after the Java client's, and the choices
//! they make: the group protocol (classic or KIP-848's consumer protocol),
//! the assignor asked for, and where a partition without a committed offset
//! starts.

use crate::error::{Error, Result};
use partwise_client::Security;
use std::time::Duration;

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
    /// The runtime's assignor that runs `a` when this member leads, `None`
    /// for an assignor it does not run: it leads a classic group with
    /// partwise's own `copartitioned` or with Java's `range` (the protocol
    /// every client's range assignor is named by), whose placement it
    /// computes with the core's model of each.
    pub fn of(a: partwise::assign::Assignor) -> Option<GroupAssignor> {
        use partwise::assign::Assignor;
        match a {
            Assignor::Copartitioned => Some(GroupAssignor::Copartitioned),
            Assignor::JavaRange => Some(GroupAssignor::Range),
            _ => None,
        }
    }

    /// The protocol names offered in JoinGroup, preferred first.
    pub fn protocols(self) -> &'static [&'static str] {
        match self {
            GroupAssignor::Copartitioned => &["copartitioned", "range"],
            GroupAssignor::Range => &["range"],
        }
    }
}

/// The group protocol a member speaks (`group.protocol`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GroupProtocol {
    /// JoinGroup / SyncGroup / Heartbeat: a member leads and runs
    /// [`Config::assignor`] (`copartitioned` or `range`).
    #[default]
    Classic,
    /// KIP-848's ConsumerGroupHeartbeat: the broker computes the assignment
    /// with its server assignor ([`Config::remote_assignor`], or the broker's
    /// default); client-side assignors are no part of it.
    Consumer,
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
    /// The preferred client-side assignor (classic protocol only).
    pub assignor: GroupAssignor,
    /// `group.protocol` (default classic).
    pub group_protocol: GroupProtocol,
    /// `group.remote.assignor`: the server assignor the consumer protocol
    /// asks for (`uniform`, `range`, or one the broker lists in
    /// `group.consumer.assignors`); `None` takes the broker's default.
    pub remote_assignor: Option<String>,
    /// `client.id`.
    pub client_id: String,
    /// `group.instance.id`: set for a static member.
    pub group_instance_id: Option<String>,
    /// `session.timeout.ms` (default 45 s). Classic protocol only: under the
    /// consumer protocol the broker sets it (`group.consumer.session.timeout.ms`).
    pub session_timeout: Duration,
    /// `heartbeat.interval.ms` (default 3 s). Classic protocol only: under the
    /// consumer protocol each heartbeat's answer says when to send the next.
    pub heartbeat_interval: Duration,
    /// `max.poll.interval.ms` (default 300 s): a member that does not call
    /// [`Consumer::poll`](super::Consumer::poll) for this long leaves the group.
    /// Under the consumer protocol heartbeats go out from `poll`, so there the
    /// broker's session timeout bounds the time between polls instead.
    pub max_poll_interval: Duration,
    /// The rebalance timeout sent in JoinGroup, or in ConsumerGroupHeartbeat
    /// under the consumer protocol (default: `max_poll_interval`, as the Java
    /// client does).
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
    /// How long [`Consumer::poll`](super::Consumer::poll) keeps retrying, after the first join, while
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
            group_protocol: GroupProtocol::Classic,
            remote_assignor: None,
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

    pub(super) fn validate(&self) -> Result<()> {
        if self.bootstrap.is_empty() {
            return Err(Error::Config("no bootstrap broker".into()));
        }
        if self.group_id.is_empty() {
            return Err(Error::Config("empty group id".into()));
        }
        if self.topics.is_empty() {
            return Err(Error::Config("no topic subscribed".into()));
        }
        match (&self.remote_assignor, self.group_protocol) {
            (Some(_), GroupProtocol::Classic) => {
                return Err(Error::Config(
                    "group.remote.assignor is a setting of the consumer group protocol, \
                     not of the classic one"
                        .into(),
                ))
            }
            (Some(a), GroupProtocol::Consumer) if a.trim().is_empty() => {
                return Err(Error::Config("empty group.remote.assignor".into()))
            }
            _ => {}
        }
        if self.heartbeat_interval >= self.session_timeout {
            return Err(Error::Config(
                "heartbeat interval must be below the session timeout".into(),
            ));
        }
        Ok(())
    }
}

impl OffsetReset {
    /// The ListOffsets timestamp that finds the reset point: `-2` the log
    /// start, `-1` its end.
    pub(super) fn timestamp(self) -> i64 {
        match self {
            OffsetReset::Earliest => -2,
            OffsetReset::Latest => -1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> Config {
        Config::new(vec!["127.0.0.1:9092".into()], "g", vec!["t".into()])
    }

    #[test]
    fn a_remote_assignor_belongs_to_the_consumer_protocol() {
        let mut c = cfg();
        assert_eq!(c.group_protocol, GroupProtocol::Classic);
        c.validate().unwrap();
        c.remote_assignor = Some("range".into());
        match c.validate() {
            Err(Error::Config(m)) => assert!(m.contains("group.remote.assignor"), "{m}"),
            other => panic!("{other:?}"),
        }
        c.group_protocol = GroupProtocol::Consumer;
        c.validate().unwrap();
        c.remote_assignor = Some(" ".into());
        match c.validate() {
            Err(Error::Config(m)) => assert!(m.contains("empty group.remote.assignor"), "{m}"),
            other => panic!("{other:?}"),
        }
        c.remote_assignor = None;
        c.validate().unwrap();
    }
}
