//! What partwise's checks report: one [`Finding`] type (kind, message, fix,
//! details), with every kind's id in one registry, [`KINDS`]. The checks
//! keep typed details: [`Reason`] for topics that must be co-partitioned
//! (declared in a topology file, or observed on live topics),
//! [`FamilyReason`] for Redis key families (a topology file's, or patterns
//! linted against a live cluster), [`Drift`] for a live topic that differs
//! from its declaration, [`LeaderFinding`] for what a client's leader does
//! with stale claims; each gives its [`Finding`] (`finding()`), so every
//! command that sees the same finding reports it in the same words and JSON.

mod copartition;
mod details;
mod drift;
mod family;
mod finding;
mod leader;
#[cfg(test)]
mod texts;

pub use copartition::{
    summarize, MixedWriter, ObservedWriter, ProducerRef, Reason, SampleDiff, Unexplained,
};
pub use drift::Drift;
pub use family::FamilyReason;
pub use finding::{kind, Details, Finding, Kind, Severity, KINDS};
pub use leader::{leader_findings, LeaderFinding, KAFKA_CLIENTS};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::check;
    use crate::topology::Topology;

    fn family_reasons(patterns: &[&str]) -> Vec<FamilyReason> {
        let list: Vec<String> = patterns.iter().map(|p| format!("{p:?}")).collect();
        let t: Topology = format!(
            "[[redis_family]]\nname = \"f\"\npatterns = [{}]\n",
            list.join(", ")
        )
        .parse()
        .unwrap();
        check(&t, &[]).families.remove(0).reasons
    }

    /// The same Redis finding from `check` (a topology file) and from the
    /// lint `redis check` prints is one value: same id, words and fix.
    #[test]
    fn a_family_finding_is_the_same_from_check_and_from_the_lint() {
        let untagged = ["market:%s", "notif:{%s}"];
        let lint = crate::redis::family::lint(&untagged);
        let from_check = family_reasons(&untagged);
        assert_eq!(lint, from_check);
        assert_eq!(lint[0].kind(), "no-hash-tag");
        assert_eq!(
            lint[0].to_string(),
            "no hash tag in market:%s: the whole key is hashed, so members of one family land in unrelated slots"
        );
        assert_eq!(lint[0].fix(), from_check[0].fix());

        let differ = ["market:{%s}", "notif:{n-%s}"];
        let lint = crate::redis::family::lint(&differ);
        let kinds: Vec<&str> = lint.iter().map(FamilyReason::kind).collect();
        assert_eq!(kinds, ["tag-not-just-key", "hash-tags-differ"]);
        // The note is the lint's alone; the problem is the same value in both.
        assert_eq!(family_reasons(&differ), lint[1..]);

        // Untagged and empty-tagged patterns are one finding in a verdict, one
        // per pattern in the lint.
        let both = ["a:%s", "b:{}%s", "c:{%s}"];
        let kinds: Vec<&str> = crate::redis::family::lint(&both)
            .iter()
            .map(FamilyReason::kind)
            .collect();
        assert_eq!(kinds, ["no-hash-tag", "empty-tag"]);
        assert_eq!(
            family_reasons(&both),
            [FamilyReason::NoHashTag {
                patterns: vec!["a:%s".into(), "b:{}%s".into()]
            }]
        );
    }

    /// The ids are an interface: scripts match on them.
    #[test]
    fn the_ids_are_stable() {
        let p = ProducerRef {
            topic: "t".into(),
            index: 0,
            name: None,
            partitioner: None,
            key_format: crate::KeyFormat::String,
        };
        let ids: Vec<&str> = [
            Reason::PartitionCountsDiffer {
                counts: vec![],
                sample: None,
            },
            Reason::KeysDiffer { keys: vec![] },
            Reason::NoProducers { topic: "t".into() },
            Reason::SampleKeysUnplaced {
                producer: p.clone(),
                unplaced: 1,
                keys: 2,
                example: "VIP_1".into(),
                why: "rejected",
            },
            Reason::KeylessProducer {
                producer: p.clone(),
                declared: true,
                behaviour: "keyless",
            },
            Reason::PartitionersDisagree {
                a: p.clone(),
                b: p.clone(),
                sample: None,
            },
            Reason::ObservedPartitionersDisagree { topics: vec![] },
            Reason::KeyEncodingsDiffer {
                a: p.clone(),
                b: p,
                sample: None,
            },
            Reason::ObservedKeyEncodingsDiffer { encodings: vec![] },
            Reason::TopicUnreadable {
                topic: "t".into(),
                error: "e".into(),
            },
            Reason::NoKeyedRecords { topic: "t".into() },
            Reason::RecordsUnexplained {
                topic: "t".into(),
                misplaced: 1,
                best: None,
                found: None,
            },
            Reason::MixedPartitioners {
                topic: "t".into(),
                writers: vec![],
                unexplained: 0,
                unexplained_share: 0.0,
                split_keys: 0,
                example: None,
            },
        ]
        .iter()
        .map(Reason::kind)
        .collect();
        assert_eq!(
            ids,
            [
                "partition-counts-differ",
                "keys-differ",
                "no-producers",
                "sample-keys-unplaced",
                "keyless-producer",
                "partitioners-disagree",
                "partitioners-disagree",
                "key-encodings-differ",
                "key-encodings-differ",
                "topic-unreadable",
                "no-keyed-records",
                "records-unexplained",
                "mixed-partitioners"
            ]
        );
    }
}
