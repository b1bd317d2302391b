//! The crate's error type: which bytes failed to encode or decode, with
//! kafka-protocol's own error as the cause.

use std::fmt;

/// kafka-protocol's errors (anyhow's) as a standard error, so they can be a
/// [`source`](std::error::Error::source).
type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why bytes could not be framed, encoded or decoded.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A frame's 4-byte length is below 4 (no room for a correlation id) or
    /// above [`MAX_FRAME`](crate::frame::MAX_FRAME).
    FrameLength(i32),
    /// A response answered another request than the one waited for.
    Correlation {
        /// The id of the request sent.
        expected: i32,
        /// The id in the response header.
        got: i32,
    },
    /// A value could not be encoded.
    Encode {
        /// What was being encoded.
        what: String,
        /// kafka-protocol's reason.
        source: Cause,
    },
    /// Bytes could not be decoded.
    Decode {
        /// What was being decoded, e.g. `Fetch v12 response`.
        what: String,
        /// kafka-protocol's reason, when it was kafka-protocol that refused.
        source: Option<Cause>,
        /// Our own reason otherwise (a truncated version, an absurd count).
        reason: Option<String>,
    },
    /// The core's assignor refused the group a leader was assigning.
    Assignor(partwise::Error),
}

/// Shorthand for this crate's results.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub(crate) fn encode(what: impl Into<String>, e: impl Into<Cause>) -> Error {
        Error::Encode {
            what: what.into(),
            source: e.into(),
        }
    }

    pub(crate) fn decode(what: impl Into<String>, e: impl Into<Cause>) -> Error {
        Error::Decode {
            what: what.into(),
            source: Some(e.into()),
            reason: None,
        }
    }

    pub(crate) fn invalid(what: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::Decode {
            what: what.into(),
            source: None,
            reason: Some(reason.into()),
        }
    }

    /// Whether the error says the byte stream itself is broken (a bad length
    /// or an answer to another request): the connection cannot be trusted
    /// any more, unlike a message that merely fails to decode.
    pub fn is_stream(&self) -> bool {
        matches!(self, Error::FrameLength(_) | Error::Correlation { .. })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::FrameLength(len) => {
                // A TLS record (alert 0x15 or handshake 0x16, version 3.x)
                // read as a Kafka length: the listener speaks TLS and we do not.
                let hint = if matches!(len.to_be_bytes(), [0x15 | 0x16, 0x03, ..]) {
                    " (the broker answered with TLS: set security.protocol=ssl or sasl_ssl)"
                } else {
                    ""
                };
                write!(f, "bad response length {len}{hint}")
            }
            Error::Correlation { expected, got } => {
                write!(f, "correlation id {got} answered request {expected}")
            }
            // The cause's text is part of the message, as it always was; it
            // is also the source, for callers that want the typed error.
            Error::Encode { what, source } if what.is_empty() => write!(f, "{source}"),
            Error::Encode { what, source } => write!(f, "{what}: {source}"),
            Error::Decode {
                what,
                source,
                reason,
            } => {
                f.write_str(what)?;
                if let Some(s) = source {
                    write!(f, ": {s}")?;
                }
                if let Some(r) = reason {
                    write!(f, ": {r}")?;
                }
                Ok(())
            }
            Error::Assignor(e) => write!(f, "assignor: {e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Encode { source, .. } => Some(source.as_ref()),
            Error::Decode {
                source: Some(s), ..
            } => Some(s.as_ref()),
            Error::Assignor(e) => Some(e),
            _ => None,
        }
    }
}
