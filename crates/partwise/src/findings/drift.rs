//! How a live topic differs from its declaration in a topology file: what
//! `report -b` finds when it audits the declared co-partition groups.
//! Each difference is a [`Drift`] with a stable `kind`, its message and its
//! fix; `check::topic_drift` finds them from what an audit read (the live
//! partition count and the core's `Routing` of the sampled records).

use super::Finding;
use crate::partitioner::Partitioner;
use std::fmt;

/// One way a live topic differs from the topology file.
#[derive(Clone, Debug, PartialEq)]
pub enum Drift {
    /// The topic could not be audited (missing, or unreadable).
    Unreadable {
        /// The topic.
        topic: String,
        /// What the audit met.
        error: String,
    },
    /// The cluster has another partition count than the file declares.
    PartitionCount {
        /// The topic.
        topic: String,
        /// The declared count.
        declared: u32,
        /// The live count.
        live: u32,
    },
    /// Its keyed records were written by other partitioners than the
    /// declared one (`written` is empty when no partitioner partwise knows
    /// explains them and the audit did not look for several producers).
    Partitioner {
        /// The topic.
        topic: String,
        /// The declared partitioner of its first keyed producer.
        declared: Partitioner,
        /// What the sampled records say wrote it.
        written: Vec<String>,
    },
    /// The declared partitioner is one of several that wrote the topic.
    Mixed {
        /// The topic.
        topic: String,
        /// The declared partitioner of its first keyed producer.
        declared: Partitioner,
        /// Each partitioner that explains the records clearly more than
        /// chance, with its share of them, and the share an unknown
        /// partitioner or explicit partitions placed.
        written: Vec<String>,
    },
    /// A partition could not be read, so the audit is partial.
    Partial,
}

/// The fix of every drift: which side is right is the operator's call, the
/// file or the cluster.
const BRING_TOGETHER: &str = "change the file to what runs, or the cluster to what is declared";

impl Drift {
    /// The stable id of this kind of drift.
    pub fn kind(&self) -> &'static str {
        match self {
            Drift::Unreadable { .. } => "topic-unreadable",
            Drift::PartitionCount { .. } => "partition-count-drift",
            Drift::Partitioner { .. } => "partitioner-drift",
            Drift::Mixed { .. } => "partitioners-mixed-drift",
            Drift::Partial => "audit-partial",
        }
    }

    /// What to do about it.
    pub fn fix(&self) -> String {
        BRING_TOGETHER.to_string()
    }

    /// The finding, as every command prints it.
    pub fn finding(&self) -> Finding {
        Finding::new(self.kind(), self.to_string(), self.fix())
    }
}

impl fmt::Display for Drift {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Drift::Unreadable { topic, error } => write!(f, "{topic}: {error}"),
            Drift::PartitionCount {
                topic,
                declared,
                live,
            } => write!(
                f,
                "{topic}: declared {declared} partitions, the cluster has {live}"
            ),
            Drift::Partitioner {
                topic,
                declared,
                written,
            } => write!(
                f,
                "{topic}: declared {}, but its records were written by {}",
                declared.spec(),
                if written.is_empty() {
                    "no partitioner partwise knows".to_string()
                } else {
                    written.join(", ")
                }
            ),
            Drift::Mixed {
                topic,
                declared,
                written,
            } => write!(
                f,
                "{topic}: declared {}, but its records were written by several partitioners: {}",
                declared.spec(),
                written.join(", ")
            ),
            Drift::Partial => write!(f, "the audit is partial (a partition could not be read)"),
        }
    }
}
