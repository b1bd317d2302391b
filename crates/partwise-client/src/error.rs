//! The client's error type: what went wrong, with the broker at fault, and
//! the cause (a wire decode) kept as its [`source`](std::error::Error::source).
//! partwise-group's error carries it whole, so a member's message and causes
//! are the client's own.

use kafka_protocol::ResponseError;
use std::fmt;

/// Everything that can fail in a connection or a request.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// No TCP connection could be made.
    Connect {
        /// `host:port` tried.
        addr: String,
        /// Why.
        reason: String,
    },
    /// The connection broke or timed out mid-request.
    Io {
        /// `host:port` of the broker.
        addr: String,
        /// Why.
        reason: String,
    },
    /// The TLS handshake failed: the broker's certificate was not trusted,
    /// or the broker refused ours. Not retried: it fails the same way again.
    Tls {
        /// `host:port` of the broker.
        addr: String,
        /// rustls' reason.
        reason: String,
    },
    /// The broker refused the SASL credentials or mechanism. Not retried.
    Auth {
        /// `host:port` of the broker.
        addr: String,
        /// The broker's message (it never contains the password).
        reason: String,
    },
    /// No bootstrap broker answered.
    NoBroker {
        /// The bootstrap list, and each address's failure.
        tried: Vec<String>,
    },
    /// A request could not be encoded, or a response decoded: the wire
    /// bytes' own error, with kafka-protocol's as its source.
    Wire(partwise_wire::Error),
    /// A broker's response that does not decode (truncated, absurd counts,
    /// not Kafka), with the wire bytes' error as its source.
    Response {
        /// `host:port` of the broker.
        addr: String,
        /// What the decoder found.
        source: partwise_wire::Error,
    },
    /// A response decoded but lacks what it must carry.
    Decode(String),
    /// The broker does not speak a version we can use.
    Unsupported {
        /// `host:port` of the broker.
        addr: String,
        /// What is missing.
        what: String,
    },
    /// The broker answered a request with an error code we do not recover from.
    Broker {
        /// `host:port` of the broker, or the group.
        at: String,
        /// The request.
        api: String,
        /// Kafka error code.
        code: i16,
    },
    /// Invalid configuration.
    Config(String),
}

/// Shorthand for this crate's results.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// A broker's answer to `api` with error `code`, at a broker or group `at`.
    pub fn protocol(at: &str, api: &str, code: i16) -> Error {
        Error::Broker {
            at: at.to_string(),
            api: api.to_string(),
            code,
        }
    }

    /// The Kafka error code of a broker error.
    pub fn code(&self) -> Option<i16> {
        match self {
            Error::Broker { code, .. } => Some(*code),
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
        matches!(
            self,
            Error::Connect { .. } | Error::Io { .. } | Error::NoBroker { .. }
        )
    }
}

/// The name Kafka gives an error code (`REBALANCE_IN_PROGRESS` as `RebalanceInProgress`).
pub fn code_name(code: i16) -> String {
    match ResponseError::try_from_code(code) {
        None => "NONE".to_string(),
        Some(e) => format!("{e:?} ({code})"),
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Connect { addr, reason } => {
                write!(f, "cannot connect to broker {addr}: {reason}")
            }
            Error::Io { addr, reason } => write!(f, "connection to broker {addr} failed: {reason}"),
            Error::Tls { addr, reason } => {
                write!(f, "TLS handshake with broker {addr} failed: {reason}")
            }
            Error::Auth { addr, reason } => {
                write!(f, "broker {addr}: authentication failed: {reason}")
            }
            Error::NoBroker { tried } => {
                write!(f, "no broker reachable: {}", tried.join("; "))
            }
            Error::Wire(e @ partwise_wire::Error::Encode { .. }) => {
                write!(f, "cannot encode request: {e}")
            }
            Error::Wire(e) => write!(f, "cannot decode response: {e}"),
            Error::Response { addr, source } => {
                write!(f, "broker {addr}: cannot decode response: {source}")
            }
            Error::Decode(e) => write!(f, "cannot decode response: {e}"),
            Error::Unsupported { addr, what } => write!(f, "broker {addr}: unsupported: {what}"),
            Error::Broker { at, api, code } => {
                write!(f, "{api} at {at} failed: {}", code_name(*code))
            }
            Error::Config(e) => write!(f, "invalid configuration: {e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Wire(e) | Error::Response { source: e, .. } => Some(e),
            _ => None,
        }
    }
}

impl From<partwise_wire::Error> for Error {
    fn from(e: partwise_wire::Error) -> Error {
        Error::Wire(e)
    }
}
