//! The crate's one error type: every failure names the node, pattern or keys
//! at fault, so a CLI can print it as is; a failure redis-rs reported keeps
//! redis-rs's error as its cause.

use crate::NodeAddr;
use std::fmt;

/// Why a live Redis Cluster operation failed.
///
/// The message already carries its cause's text; [`std::error::Error::source`]
/// gives redis-rs's error itself ([`RedisCause`]) to callers that need its kind.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A `HOST:PORT` that does not parse.
    Address {
        /// The text given.
        input: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A node that could not be reached, or did not answer within the timeout.
    Unreachable {
        /// The node.
        node: NodeAddr,
        /// The underlying I/O error.
        reason: String,
        /// redis-rs's error, when it reported the failure.
        cause: Option<RedisCause>,
    },
    /// The server answers but has cluster support disabled.
    NotACluster {
        /// The node.
        node: NodeAddr,
    },
    /// The cluster does not serve every slot (`cluster_state:fail`, or a slot
    /// without an owner).
    ClusterDown {
        /// The node that said so.
        node: NodeAddr,
        /// Its explanation.
        reason: String,
        /// redis-rs's error, when it reported the failure.
        cause: Option<RedisCause>,
    },
    /// A key family pattern that cannot be used.
    Pattern {
        /// The pattern as given.
        pattern: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Keys that must be written together but live in different slots: one
    /// transaction cannot touch them all. Raised before sending when the slots
    /// are known to differ, and for the server's own `CROSSSLOT` answer.
    CrossSlot {
        /// Each key (lossy UTF-8) with its slot.
        keys: Vec<(String, u16)>,
    },
    /// A node answered with an error, or with a reply we cannot read.
    Server {
        /// The node.
        node: NodeAddr,
        /// The command that failed.
        command: String,
        /// The server's message.
        reason: String,
        /// redis-rs's error, when it reported the failure.
        cause: Option<RedisCause>,
    },
}

/// redis-rs's error behind an [`Error`]. Two causes are equal when they are
/// of the same kind with the same text (redis-rs's error has no equality).
#[derive(Clone, Debug)]
pub struct RedisCause(redis::RedisError);

impl RedisCause {
    /// redis-rs's error.
    pub fn error(&self) -> &redis::RedisError {
        &self.0
    }
}

impl PartialEq for RedisCause {
    fn eq(&self, other: &RedisCause) -> bool {
        self.0.kind() == other.0.kind() && self.0.to_string() == other.0.to_string()
    }
}

impl Eq for RedisCause {}

impl fmt::Display for RedisCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for RedisCause {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Address { input, reason } => {
                write!(
                    f,
                    "bad node address '{input}': {reason} (expected HOST:PORT)"
                )
            }
            Error::Unreachable { node, reason, .. } => {
                write!(f, "cannot reach Redis node {node}: {reason}")
            }
            Error::NotACluster { node } => write!(
                f,
                "{node} is not a Redis Cluster node (cluster support is disabled there)"
            ),
            Error::ClusterDown { node, reason, .. } => {
                write!(f, "Redis Cluster at {node} is down: {reason}")
            }
            Error::Pattern { pattern, reason } => {
                write!(f, "bad key pattern '{pattern}': {reason}")
            }
            Error::CrossSlot { keys } => {
                let list: Vec<String> = keys
                    .iter()
                    .map(|(k, s)| format!("{k} (slot {s})"))
                    .collect();
                write!(
                    f,
                    "CROSSSLOT: keys in different slots cannot be written in one transaction: {}; \
                     give them a shared hash tag such as {{id}}",
                    list.join(", ")
                )
            }
            Error::Server {
                node,
                command,
                reason,
                ..
            } => write!(f, "{command} on {node} failed: {reason}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Unreachable { cause, .. }
            | Error::ClusterDown { cause, .. }
            | Error::Server { cause, .. } => cause.as_ref().map(|c| c as _),
            _ => None,
        }
    }
}

/// Turns a redis-rs error from `node` into ours: I/O and timeouts become
/// [`Error::Unreachable`], disabled cluster support [`Error::NotACluster`],
/// and everything else [`Error::Server`] with the command named.
pub(crate) fn from_redis(node: &NodeAddr, command: &str, e: redis::RedisError) -> Error {
    if e.is_io_error() || e.is_timeout() || e.is_connection_refusal() || e.is_connection_dropped() {
        return Error::Unreachable {
            node: node.clone(),
            reason: io_reason(&e),
            cause: Some(RedisCause(e)),
        };
    }
    let text = e.to_string();
    if text.contains("cluster support disabled") {
        return Error::NotACluster { node: node.clone() };
    }
    if e.code() == Some("CLUSTERDOWN") {
        return Error::ClusterDown {
            node: node.clone(),
            reason: text,
            cause: Some(RedisCause(e)),
        };
    }
    Error::Server {
        node: node.clone(),
        command: command.to_string(),
        reason: text,
        cause: Some(RedisCause(e)),
    }
}

fn io_reason(e: &redis::RedisError) -> String {
    if e.is_timeout() {
        "no answer within the timeout".to_string()
    } else if e.is_connection_refusal() {
        "connection refused (is redis-server running there?)".to_string()
    } else {
        e.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn redis_errors_are_kept_as_causes_under_the_same_message() {
        let node = NodeAddr::new("127.0.0.1", 7100);
        let refused = redis::RedisError::from(std::io::Error::new(
            std::io::ErrorKind::ConnectionRefused,
            "refused",
        ));
        let e = from_redis(&node, "PING", refused);
        assert_eq!(
            e.to_string(),
            "cannot reach Redis node 127.0.0.1:7100: connection refused (is redis-server running there?)"
        );
        let cause = e.source().unwrap().downcast_ref::<RedisCause>().unwrap();
        assert!(cause.error().is_connection_refusal());
        assert!(cause.source().unwrap().is::<redis::RedisError>());

        let parse = redis::RedisError::from((redis::ErrorKind::Parse, "bad reply"));
        let text = parse.to_string();
        let e = from_redis(&node, "CLUSTER SHARDS", parse);
        assert_eq!(
            e.to_string(),
            format!("CLUSTER SHARDS on 127.0.0.1:7100 failed: {text}")
        );
        assert!(matches!(&e, Error::Server { cause: Some(_), .. }));
        let e = Error::Pattern {
            pattern: "x".into(),
            reason: "y".into(),
        };
        assert!(e.source().is_none());
    }
}
