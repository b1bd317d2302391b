//! The one error type of the library, [`Error`], with the two errors it
//! carries whole: [`TopologyError`] (a topology file, with the line, column
//! and field at fault) and [`AssignError`] (what an assignor cannot do).

use std::fmt;

/// The grammar of a `priority:` spec, for messages about a bad one.
const PRIORITY_SYNTAX: &str =
    "priority:prefix=TEXT|regex=RE|header=NAME:VALUE,reserved=P[-Q|+R...][,hash=mask|java-abs]";

/// Everything that can go wrong in the pure core: bad specs, counts, keys,
/// key patterns, assignor inputs and topology files.
///
/// Messages name the input at fault, so a CLI can print them as they are;
/// [`std::error::Error::source`] gives the typed cause where there is one
/// (a topology file's bad partitioner spec is an [`Error::UnknownPartitioner`]
/// under the [`TopologyError`] that locates it).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A partitioner spec that names no known partitioner.
    UnknownPartitioner {
        /// What was given.
        spec: String,
        /// The canonical specs, comma-separated.
        known: String,
    },
    /// A `priority:` spec: the partitioner is known, its rules are not
    /// usable.
    PrioritySpec {
        /// The whole spec as given.
        spec: String,
        /// What is wrong with its rules.
        reason: String,
    },
    /// A partition count that is zero, negative, not a number or too large.
    PartitionCount {
        /// What was given.
        input: String,
        /// Why it was refused.
        reason: String,
    },
    /// A key format that partwise does not know.
    UnknownKeyFormat {
        /// What was given.
        input: String,
    },
    /// A value outside what a calculation accepts (a negative rate, ...).
    Invalid {
        /// What the value is.
        what: String,
        /// Why it was refused.
        reason: String,
    },
    /// A key that cannot be encoded in the requested format.
    Key {
        /// The key format (`hex`, `int32`, ...).
        format: String,
        /// Why the key was refused.
        reason: String,
    },
    /// A Redis key-family pattern that cannot be used.
    Pattern {
        /// The pattern as given.
        pattern: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An input the core will not work on: larger than the work it may ask
    /// for (the size and the limit, `12 partitions to assign; at most 10`),
    /// or with nothing to check; the caller names the input.
    Refused {
        /// What is too large and the limit.
        reason: String,
    },
    /// An assignor spec or group the assignors cannot take.
    Assign(AssignError),
    /// A topology file that cannot be used, located.
    Topology(TopologyError),
}

impl Error {
    /// The located topology error, when this is one.
    pub fn topology(&self) -> Option<&TopologyError> {
        match self {
            Error::Topology(e) => Some(e),
            _ => None,
        }
    }

    /// The assignor error, when this is one.
    pub fn assign(&self) -> Option<&AssignError> {
        match self {
            Error::Assign(e) => Some(e),
            _ => None,
        }
    }

    /// Whether the input names something partwise does not know (a
    /// partitioner, key format or assignor spec), rather than a bad value.
    pub fn is_unknown_spec(&self) -> bool {
        matches!(
            self,
            Error::UnknownPartitioner { .. }
                | Error::UnknownKeyFormat { .. }
                | Error::Assign(AssignError::UnknownAssignor { .. })
                | Error::Assign(AssignError::UnknownVersion { .. })
        )
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::UnknownPartitioner { spec, known } => {
                write!(f, "unknown partitioner '{spec}' (known: {known}; or 'all')")
            }
            Error::PrioritySpec { spec, reason } => write!(
                f,
                "invalid priority spec '{spec}': {reason} (a priority spec is {PRIORITY_SYNTAX})"
            ),
            Error::PartitionCount { input, reason } => {
                write!(f, "invalid partition count '{input}': {reason}")
            }
            Error::UnknownKeyFormat { input } => write!(
                f,
                "unknown key format '{input}' (known: utf8, hex, base64, string, int32, int64, avro-sr:ID)"
            ),
            Error::Key { format, reason } => write!(f, "invalid {format} key: {reason}"),
            Error::Invalid { what, reason } => write!(f, "invalid {what}: {reason}"),
            Error::Pattern { pattern, reason } => {
                write!(f, "bad key pattern '{pattern}': {reason}")
            }
            // Carried whole: their own text, their own causes.
            Error::Refused { reason } => f.write_str(reason),
            Error::Assign(e) => e.fmt(f),
            Error::Topology(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Assign(e) => e.source(),
            Error::Topology(e) => e.source(),
            _ => None,
        }
    }
}

impl From<AssignError> for Error {
    fn from(e: AssignError) -> Error {
        Error::Assign(e)
    }
}

impl From<TopologyError> for Error {
    fn from(e: TopologyError) -> Error {
        Error::Topology(e)
    }
}

/// A topology file that cannot be used: the place and the field at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopologyError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// The field path, such as `topic[1].partitions` (indices from 0), or
    /// empty when the error is not inside a field.
    pub field: String,
    /// What is wrong.
    pub message: String,
    /// The core error behind the message (a partitioner, key format or
    /// assignor spec that does not parse), when there is one; `message` is
    /// its text.
    pub(crate) cause: Option<Box<Error>>,
}

impl fmt::Display for TopologyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}: ", self.line, self.column)?;
        if !self.field.is_empty() {
            write!(f, "field '{}': ", self.field)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for TopologyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// Why a spec partwise knows is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RefusalKind {
    /// The client ships no such assignor.
    NotInClient,
    /// The client ships it; partwise does not simulate it.
    NotSimulated,
}

impl RefusalKind {
    /// A few words for messages: `not in its client`, `not simulated`.
    pub fn words(self) -> &'static str {
        match self {
            RefusalKind::NotInClient => "not in its client",
            RefusalKind::NotSimulated => "not simulated",
        }
    }
}

/// What an assignor cannot do with its input.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AssignError {
    /// A spec that names no known assignor.
    UnknownAssignor {
        /// What was given.
        spec: String,
        /// The known specs, comma-separated (given by the assignors, so
        /// that this module names no other).
        known: String,
    },
    /// A spec whose `@VERSION` names no Kafka version partwise has known
    /// answers for, or one whose patch releases behave differently.
    UnknownVersion {
        /// What was given.
        spec: String,
        /// Why it is refused and which versions are accepted.
        reason: String,
    },
    /// A spec partwise knows and refuses: an assignor its client does not
    /// ship (`aiokafka:cooperative-sticky`), or one partwise does not
    /// simulate; `kind` says which, `reason` why and what to use.
    Refused {
        /// What was given.
        spec: String,
        /// Why the spec is refused.
        kind: RefusalKind,
        /// Why it is refused, and what to use, in words.
        reason: String,
    },
    /// The group has no members.
    NoMembers,
    /// Two members share an id.
    DuplicateMember {
        /// The repeated id.
        id: String,
    },
    /// Input the simulated algorithm does not cover (named in `reason`).
    Unsupported {
        /// The assignor's spec.
        assignor: &'static str,
        /// What is not covered.
        reason: String,
    },
    /// Weights whose length does not match the topic's partition count.
    Weights {
        /// The topic.
        topic: String,
    },
    /// The simulated client's own leader would throw on this group (Java's
    /// sticky assignors on claims past a topic's partition count): the
    /// simulation's answer, not a limit of partwise.
    LeaderThrows {
        /// The assignor's spec.
        assignor: &'static str,
        /// The exception's class, as Java names it.
        exception: &'static str,
        /// The exception's message, as the real code words it.
        message: String,
    },
}

impl fmt::Display for AssignError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AssignError::UnknownAssignor { spec, known } => write!(
                f,
                "unknown assignor '{spec}' (known: {known}; the kip848 ones take @VERSION, \
                 4.0.0 to 4.4.0)"
            ),
            AssignError::UnknownVersion { spec, reason } => {
                write!(f, "assignor '{spec}': {reason}")
            }
            AssignError::Refused { spec, kind, reason } => {
                write!(f, "assignor '{spec}': {}: {reason}", kind.words())
            }
            AssignError::NoMembers => f.write_str("the group has no members"),
            AssignError::DuplicateMember { id } => write!(f, "member id '{id}' given twice"),
            AssignError::Unsupported { assignor, reason } => {
                write!(f, "{assignor}: not simulated: {reason}")
            }
            AssignError::Weights { topic } => write!(
                f,
                "weights of topic '{topic}' must give one value per partition"
            ),
            AssignError::LeaderThrows {
                assignor,
                exception,
                message,
            } => write!(f, "{assignor}: the leader throws {exception}: {message}"),
        }
    }
}

impl std::error::Error for AssignError {}
