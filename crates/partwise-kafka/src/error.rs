//! The one error type of partwise-kafka.

use std::fmt;

/// Why a Kafka operation produced no answer. The message names what was
/// being done and, for configuration, the property or file line at fault;
/// it never contains the value of a secret property.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// Bad connection configuration: a `-X` pair, a properties file line, a
    /// property librdkafka rejects.
    Config(String),
    /// The cluster did not answer in time, or answered with an error.
    Kafka {
        /// What partwise was doing (`fetching metadata from 127.0.0.1:9092`).
        doing: String,
        /// librdkafka's account of the failure.
        reason: String,
    },
    /// A consumer-protocol payload (group member metadata or assignment) that
    /// does not decode.
    Decode(String),
    /// Input the caller gave that cannot be used (a key that does not encode,
    /// an empty topic list).
    Invalid(String),
}

impl Error {
    pub(crate) fn kafka(doing: impl Into<String>, reason: impl fmt::Display) -> Error {
        Error::Kafka {
            doing: doing.into(),
            reason: reason.to_string(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Config(m) | Error::Decode(m) | Error::Invalid(m) => f.write_str(m),
            Error::Kafka { doing, reason } => write!(f, "{doing}: {reason}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<partwise::Error> for Error {
    fn from(e: partwise::Error) -> Error {
        Error::Invalid(e.to_string())
    }
}

/// The result type of partwise-kafka.
pub type Result<T, E = Error> = std::result::Result<T, E>;
