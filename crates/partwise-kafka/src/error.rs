//! The one error type of partwise-kafka, with its causes: librdkafka's error
//! (secrets scrubbed) and the core's.

use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use std::fmt;

/// Why a Kafka operation produced no answer. The message names what was
/// being done and, for configuration, the property or file line at fault;
/// it never contains the value of a secret property.
///
/// The message already carries its cause's text, so it can be printed as it
/// is; [`std::error::Error::source`] gives the typed cause to callers that
/// need more than text (librdkafka's error code, the core error).
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
        /// librdkafka's error, when the failure came from librdkafka (boxed:
        /// it is large, and most results are not errors).
        cause: Option<Box<KafkaCause>>,
    },
    /// A request partwise-client made for partwise-kafka (DescribeGroups,
    /// ConsumerGroupDescribe, ApiVersions, StreamsGroupDescribe) failed.
    Client {
        /// What partwise was doing (`describing group g`).
        doing: String,
        /// partwise-client's error, kept whole (boxed, as `Kafka`'s).
        cause: Box<ClientCause>,
    },
    /// A consumer-protocol payload (group member metadata or assignment) that
    /// does not decode.
    Decode(String),
    /// Input the caller gave that cannot be used (an empty topic list, a
    /// record count of 0).
    Invalid(String),
    /// The cluster says the topic named does not exist.
    UnknownTopic(String),
    /// Input the core refused (a key that does not encode, a bad spec).
    Core(partwise::Error),
    /// Stopped by the caller (a signal) before the work was done.
    Interrupted,
    /// A measurement that failed after making its temporary topic: whether
    /// the topic is gone, with the failure as the cause.
    Measure {
        /// The temporary topic.
        topic: String,
        /// The bootstrap brokers, for the command that deletes it.
        brokers: String,
        /// Whether it was deleted.
        deleted: bool,
        /// Why the measurement failed.
        cause: Box<Error>,
    },
}

/// librdkafka's error behind an [`Error::Kafka`]. Its text is librdkafka's
/// with the connection's secrets scrubbed out, and it has no source of its
/// own, so printing a whole cause chain prints no secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KafkaCause {
    error: KafkaError,
    text: String,
}

impl KafkaCause {
    /// Wraps `error`, whose printed form is `text` (already scrubbed).
    pub(crate) fn new(error: KafkaError, text: String) -> KafkaCause {
        KafkaCause { error, text }
    }

    /// librdkafka's error.
    pub fn error(&self) -> &KafkaError {
        &self.error
    }

    /// librdkafka's error code, when the error carries one.
    pub fn code(&self) -> Option<RDKafkaErrorCode> {
        self.error.rdkafka_error_code()
    }
}

impl fmt::Display for KafkaCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::error::Error for KafkaCause {}

/// partwise-client's error behind an [`Error::Client`], kept whole for the
/// callers that match on it ([`ClientCause::error`]). Its text is the
/// client's with the connection's secrets scrubbed out (a server's words can
/// echo a configured value), and it has no source of its own, so printing a
/// whole cause chain prints no secret.
#[derive(Debug, Clone)]
pub struct ClientCause {
    error: std::sync::Arc<partwise_client::Error>,
    text: String,
}

impl ClientCause {
    /// Wraps `error`, whose printed form is `text` (already scrubbed).
    pub(crate) fn new(error: partwise_client::Error, text: String) -> ClientCause {
        ClientCause {
            error: std::sync::Arc::new(error),
            text,
        }
    }

    /// partwise-client's error.
    pub fn error(&self) -> &partwise_client::Error {
        &self.error
    }
}

// partwise-client's error is not comparable; two causes are equal when they
// say the same.
impl PartialEq for ClientCause {
    fn eq(&self, other: &ClientCause) -> bool {
        self.text == other.text
    }
}

impl Eq for ClientCause {}

impl fmt::Display for ClientCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::error::Error for ClientCause {}

impl Error {
    /// A failure partwise itself detected while talking to the cluster (no
    /// librdkafka error behind it).
    pub(crate) fn kafka(doing: impl Into<String>, reason: impl fmt::Display) -> Error {
        Error::Kafka {
            doing: doing.into(),
            reason: reason.to_string(),
            cause: None,
        }
    }

    /// librdkafka's error code behind the failure, if any.
    pub fn kafka_code(&self) -> Option<RDKafkaErrorCode> {
        match self {
            Error::Kafka { cause: Some(c), .. } => c.code(),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Config(m) | Error::Decode(m) | Error::Invalid(m) => f.write_str(m),
            Error::Kafka { doing, reason, .. } => write!(f, "{doing}: {reason}"),
            Error::Client { doing, cause } => write!(f, "{doing}: {cause}"),
            Error::Core(e) => e.fmt(f),
            Error::UnknownTopic(t) => write!(f, "topic {t} does not exist"),
            Error::Interrupted => f.write_str("interrupted"),
            Error::Measure {
                topic,
                brokers,
                deleted,
                cause,
            } => {
                if *deleted {
                    write!(f, "{cause}; the temporary topic {topic} was deleted")
                } else {
                    write!(
                        f,
                        "{cause}; the temporary topic {topic} was NOT deleted: kafka-topics --bootstrap-server {brokers} --delete --topic {topic}"
                    )
                }
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Kafka { cause: Some(c), .. } => Some(c.as_ref()),
            Error::Client { cause, .. } => Some(cause.as_ref()),
            Error::Core(e) => Some(e),
            Error::Measure { cause, .. } => Some(cause.as_ref()),
            _ => None,
        }
    }
}

impl From<partwise::Error> for Error {
    fn from(e: partwise::Error) -> Error {
        Error::Core(e)
    }
}

/// The result type of partwise-kafka.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn causes_are_kept_and_messages_unchanged() {
        let core = "nope".parse::<partwise::Partitioner>().unwrap_err();
        let e = Error::from(core.clone());
        assert_eq!(e.to_string(), core.to_string());
        let inner = e.source().unwrap().downcast_ref::<partwise::Error>();
        assert_eq!(inner, Some(&core));

        let lib = KafkaError::MetadataFetch(RDKafkaErrorCode::BrokerTransportFailure);
        let e = Error::Kafka {
            doing: "fetching metadata".into(),
            reason: lib.to_string(),
            cause: Some(Box::new(KafkaCause::new(lib.clone(), lib.to_string()))),
        };
        assert_eq!(e.to_string(), format!("fetching metadata: {lib}"));
        assert_eq!(
            e.kafka_code(),
            Some(RDKafkaErrorCode::BrokerTransportFailure)
        );
        let cause = e.source().unwrap().downcast_ref::<KafkaCause>().unwrap();
        assert_eq!(cause.error(), &lib);
        assert!(cause.source().is_none());
        assert!(Error::kafka("x", "y").source().is_none());
    }
}
