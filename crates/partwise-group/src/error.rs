//! The member's error type: what went wrong, with the broker or group at
//! fault, and the cause (a wire decode, the core's assignor) kept as its
//! [`source`](std::error::Error::source). What the client stack reports
//! (connections, TLS, SASL, a broker's error code) is carried whole as
//! [`Error::Client`]: its message and causes are the client's own.

use kafka_protocol::ResponseError;
pub use partwise_client::error::code_name;
use std::fmt;

/// A cause from another crate, kept typed behind the trait object.
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Everything that can fail in this crate.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A connection, a request or its answer failed (partwise-client).
    Client(partwise_client::Error),
    /// The broker chose a group protocol this member did not offer, or the
    /// group runs a protocol this member does not share.
    GroupProtocol {
        /// The group.
        group: String,
        /// What happened.
        reason: String,
        /// The core's error, when the assignor refused the group.
        source: Option<Cause>,
    },
    /// The member kept failing with retriable errors (no broker reachable,
    /// no coordinator, no leader) for longer than its retry timeout.
    GaveUp {
        /// How long it retried.
        after: std::time::Duration,
        /// The last error.
        last: Box<Error>,
    },
    /// A subscribed topic does not exist.
    UnknownTopic(String),
    /// A subscribed topic was deleted while the member consumed it (or
    /// deleted and created again: another topic under its name). The units
    /// it was part of can never be whole again, so the member stops rather
    /// than hold its partners' partitions unprocessed; what was handled can
    /// still be committed by [`Consumer::close`](crate::Consumer::close).
    TopicDeleted {
        /// The topic.
        topic: String,
        /// It exists again, with a new topic id.
        recreated: bool,
    },
    /// The coordinator could not store the group's generations, the same
    /// member's subscription the largest in each (or three in a row,
    /// whoever was in them): the group cannot be served while it stays.
    Unstorable(Box<crate::consumer::Unstored>),
    /// Invalid configuration of the member.
    Config(String),
    /// The member was closed.
    Closed,
}

/// Shorthand for this crate's results.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub(crate) fn protocol(at: &str, api: &str, code: i16) -> Error {
        Error::Client(partwise_client::Error::protocol(at, api, code))
    }

    pub(crate) fn group_protocol(group: &str, reason: impl Into<String>) -> Error {
        Error::GroupProtocol {
            group: group.to_string(),
            reason: reason.into(),
            source: None,
        }
    }

    /// A response that decoded but lacks what it must carry.
    pub(crate) fn decode(what: String) -> Error {
        Error::Client(partwise_client::Error::Decode(what))
    }

    /// The Kafka error code of a broker error.
    pub fn code(&self) -> Option<i16> {
        match self {
            Error::Client(e) => e.code(),
            _ => None,
        }
    }

    /// The Kafka error of a broker error, as kafka-protocol names it.
    pub fn response_error(&self) -> Option<ResponseError> {
        self.code().and_then(ResponseError::try_from_code)
    }

    /// Whether the error is a lost or unreachable connection, worth retrying
    /// after a pause.
    pub fn is_transport(&self) -> bool {
        matches!(self, Error::Client(e) if e.is_transport())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Client(e) => e.fmt(f),
            Error::GroupProtocol { group, reason, .. } => write!(f, "group '{group}': {reason}"),
            Error::GaveUp { after, last } => write!(
                f,
                "gave up after {:.1} s of retrying (retry timeout): {last}",
                after.as_secs_f64()
            ),
            Error::UnknownTopic(t) => write!(f, "topic '{t}' does not exist"),
            Error::TopicDeleted { topic, recreated } => {
                write!(f, "topic '{topic}' was deleted")?;
                if *recreated {
                    f.write_str(
                        " and created again (a new topic id: its old offsets mean nothing to it)",
                    )?;
                }
                write!(
                    f,
                    " while the group consumed it: the co-partitioned units it was part of \
                     can never be whole again (subscribe without '{topic}', or create it \
                     again and restart)"
                )
            }
            Error::Unstorable(u) => crate::consumer::unstorable(f, u),
            Error::Config(e) => write!(f, "invalid configuration: {e}"),
            Error::Closed => f.write_str("the member is closed"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // Transparent: the client's error is this error's words, so its
            // causes are this error's causes.
            Error::Client(e) => e.source(),
            Error::GroupProtocol {
                source: Some(e), ..
            } => Some(e.as_ref()),
            Error::GaveUp { last, .. } => Some(last.as_ref()),
            _ => None,
        }
    }
}

impl From<partwise_client::Error> for Error {
    fn from(e: partwise_client::Error) -> Error {
        Error::Client(e)
    }
}

impl From<partwise_wire::Error> for Error {
    fn from(e: partwise_wire::Error) -> Error {
        Error::Client(partwise_client::Error::Wire(e))
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    /// A decode that kafka-protocol refuses keeps its message and carries
    /// the wire error, and under it kafka-protocol's, as causes.
    #[test]
    fn decode_errors_keep_their_causes() {
        // v3 subscription: one topic "t", no user data, no owned
        // partitions, generation 1, and a rack that is not UTF-8.
        let bytes = bytes::Bytes::from_static(&[
            0, 3, 0, 0, 0, 1, 0, 1, b't', 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1,
            0xff,
        ]);
        let e: Error = crate::protocol::Subscription::decode(bytes)
            .unwrap_err()
            .into();
        let wire = e.source().expect("the wire error");
        assert!(
            wire.source().is_some(),
            "kafka-protocol's error under {wire}"
        );
        assert!(
            e.to_string()
                .starts_with("cannot decode response: subscription v3"),
            "{e}"
        );
        assert!(e.to_string().ends_with(&wire.to_string()), "{e} / {wire}");
        let gave_up = Error::GaveUp {
            after: std::time::Duration::from_secs(1),
            last: Box::new(e),
        };
        assert!(gave_up.source().and_then(|s| s.source()).is_some());
    }
}
