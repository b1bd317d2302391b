//! How a live topic differs from its declaration in a topology file, from
//! what an audit read: the live partition count and the core's [`Routing`]
//! of the sampled records (`report -b`). Each difference is a [`Drift`]
//! finding.

use crate::findings::Drift;
use crate::inference::Routing;
use crate::partitioner::Partitioner;
use crate::strategy::resize::producer_defaults;
use crate::topology::Topology;

/// One audited topic beside its declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct TopicDrift {
    /// The declared partitioner of its first keyed producer.
    pub partitioner: Option<Partitioner>,
    /// What the sampled records say wrote it: the inferred partitioners, or
    /// when none explains every record each one that explains them clearly
    /// more than chance, with its share, and the share an unknown
    /// partitioner or explicit partitions placed (empty: nothing to tell).
    pub inferred: Vec<String>,
    /// Every way the live topic differs from the declared one.
    pub drifts: Vec<Drift>,
}

/// How the live `topic` (its audit's `error`, its `live` partition count
/// and the `routing` of its sampled records) differs from its declaration
/// in `declared`.
pub fn topic_drift(
    declared: &Topology,
    topic: &str,
    error: Option<&str>,
    live: Option<u32>,
    routing: Option<&Routing>,
) -> TopicDrift {
    let decl = declared.topic(topic);
    let partitioner = decl.and_then(producer_defaults).map(|d| d.0);
    let mut drifts = Vec::new();
    if let Some(e) = error {
        drifts.push(Drift::Unreadable {
            topic: topic.to_string(),
            error: e.to_string(),
        });
    }
    if let (Some(d), Some(l)) = (decl, live) {
        if d.partitions.get() != l {
            drifts.push(Drift::PartitionCount {
                topic: topic.to_string(),
                declared: d.partitions.get(),
                live: l,
            });
        }
    }
    let mut inferred: Vec<String> = routing
        .map(|r| r.inferred.iter().map(ToString::to_string).collect())
        .unwrap_or_default();
    // No one partitioner explains the records: each known one that explains
    // clearly more than chance, with its share, and the share none explains.
    let mixture = routing.and_then(|r| r.forensics.as_ref()?.mixture.as_ref());
    if let Some(m) = mixture {
        inferred = m
            .members
            .iter()
            .map(|x| format!("{} ({:.1}% of records)", x.primary(), 100.0 * x.share))
            .collect();
        if m.unexplained > 0 {
            inferred.push(format!(
                "an unknown partitioner, or explicit partitions ({:.1}% of records)",
                100.0 * m.unexplained_share()
            ));
        }
    }
    if let (Some(p), Some(r)) = (partitioner, routing) {
        let in_mixture = mixture.is_some_and(|m| {
            m.members
                .iter()
                .any(|x| x.family.iter().any(|c| c.partitioner == p))
        });
        if r.keyed > 0 && in_mixture {
            drifts.push(Drift::Mixed {
                topic: topic.to_string(),
                declared: p,
                written: inferred.clone(),
            });
        } else if r.keyed > 0 && !r.inferred.iter().any(|c| c.partitioner == p) {
            drifts.push(Drift::Partitioner {
                topic: topic.to_string(),
                declared: p,
                written: inferred.clone(),
            });
        }
    }
    TopicDrift {
        partitioner,
        inferred,
        drifts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared() -> Topology {
        "[[topic]]\nname = \"orders\"\npartitions = 6\nkey = \"id\"\n\n[[topic.producer]]\nname = \"app\"\npartitioner = \"java\"\nkey_format = \"string\"\n"
            .parse()
            .unwrap()
    }

    /// A live count other than the declared one is one drift, with its kind
    /// and the report's words; the same count is none, and an unreadable
    /// topic says what the audit met.
    #[test]
    fn a_live_count_other_than_the_declared_one_is_a_partition_count_drift() {
        let t = declared();
        let d = topic_drift(&t, "orders", None, Some(8), None);
        assert_eq!(d.partitioner, Some("java".parse().unwrap()));
        assert_eq!(d.drifts.len(), 1);
        assert_eq!(d.drifts[0].kind(), "partition-count-drift");
        assert_eq!(
            d.drifts[0].to_string(),
            "orders: declared 6 partitions, the cluster has 8"
        );
        assert!(topic_drift(&t, "orders", None, Some(6), None)
            .drifts
            .is_empty());
        let gone = topic_drift(&t, "orders", Some("unknown topic"), None, None);
        assert_eq!(gone.drifts[0].kind(), "topic-unreadable");
        assert_eq!(gone.drifts[0].to_string(), "orders: unknown topic");
    }
}
