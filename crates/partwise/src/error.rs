//! The one error type of the library.

use std::fmt;

/// The grammar of a `priority:` spec, for messages about a bad one.
const PRIORITY_SYNTAX: &str =
    "priority:prefix=TEXT|regex=RE|header=NAME:VALUE,reserved=P[-Q|+R...][,hash=mask|java-abs]";

/// Everything that can go wrong in the pure core: bad specs, counts and keys.
///
/// Messages name the input at fault, so a CLI can print them as they are.
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
        }
    }
}

impl std::error::Error for Error {}
