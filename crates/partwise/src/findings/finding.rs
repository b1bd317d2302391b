//! The one finding type every check reports through, and the registry of
//! every finding kind.
//!
//! A check keeps its own typed details (a [`Reason`] names the producers
//! whose partitioners disagree, a [`FamilyReason`] the patterns whose tags
//! differ), but what any command prints or writes as JSON is a [`Finding`]:
//! its kind's stable id, its message, its fix and, where the check has
//! them, its details. Ids are kebab case, like the flags; every id is in
//! [`KINDS`] once, with its severity and, where an id was renamed when the
//! ids became one style, the spelling it had before, which the JSON still
//! carries as `kind_alias` for one release so scripts can move over.
//!
//! [`Reason`]: super::Reason
//! [`FamilyReason`]: super::FamilyReason

use super::{FamilyReason, Reason};
use serde::Serialize;

/// How much a finding weighs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Something is wrong: a join, a slot or a placement does not hold.
    Problem,
    /// Something could not be known (a member's bytes, a topic's records),
    /// so no answer is given for it: never reported as fine.
    Unknown,
    /// Worth knowing; nothing breaks while it holds.
    Note,
}

/// One kind of finding: its id and what the registry knows of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kind {
    /// The stable id, kebab case.
    pub id: &'static str,
    /// The id's spelling before ids were one style, when it was renamed.
    pub was: Option<&'static str>,
    /// How much it weighs.
    pub severity: Severity,
    /// What it means, in one line.
    pub about: &'static str,
}

const fn k(
    id: &'static str,
    was: Option<&'static str>,
    severity: Severity,
    about: &'static str,
) -> Kind {
    Kind {
        id,
        was,
        severity,
        about,
    }
}

use Severity::{Note, Problem, Unknown};

/// Every finding kind partwise reports, by area. The `texts` tests walk
/// every kind's words; [`kind`] looks one up.
pub const KINDS: &[Kind] = &[
    // Co-partition groups, declared (`check`) or observed (`kafka audit`).
    k(
        "partition-counts-differ",
        Some("partition_counts_differ"),
        Problem,
        "the topics of a co-partition group have different partition counts",
    ),
    k(
        "keys-differ",
        Some("keys_differ"),
        Problem,
        "the topics declare different keys",
    ),
    k(
        "no-producers",
        Some("no_producers"),
        Problem,
        "a topic declares no producer, so nothing shows how it is keyed",
    ),
    k(
        "sample-keys-unplaced",
        Some("sample_keys_unplaced"),
        Problem,
        "a producer cannot place some sample keys by key",
    ),
    k(
        "keyless-producer",
        Some("keyless_producer"),
        Problem,
        "a producer's records do not follow their key",
    ),
    k(
        "partitioners-disagree",
        Some("partitioners_disagree"),
        Problem,
        "two producers hash keys differently",
    ),
    k(
        "key-encodings-differ",
        Some("key_encodings_differ"),
        Problem,
        "two producers serialize one key to different bytes",
    ),
    k(
        "topic-unreadable",
        Some("topic_unreadable"),
        Unknown,
        "a topic could not be read",
    ),
    k(
        "no-keyed-records",
        Some("no_keyed_records"),
        Unknown,
        "no keyed record was sampled, so the partitioner is unknown",
    ),
    k(
        "records-unexplained",
        Some("records_unexplained"),
        Unknown,
        "no known partitioner explains a topic's records",
    ),
    k(
        "mixed-partitioners",
        Some("mixed_partitioners"),
        Problem,
        "producers that hash keys differently write one topic",
    ),
    // A live topic against its declaration (`report -b`).
    k(
        "partition-count-drift",
        Some("partition_count_drift"),
        Problem,
        "the cluster has another partition count than declared",
    ),
    k(
        "partitioner-drift",
        Some("partitioner_drift"),
        Problem,
        "other partitioners than the declared one wrote the topic",
    ),
    k(
        "partitioners-mixed-drift",
        Some("partitioners_mixed_drift"),
        Problem,
        "the declared partitioner is one of several that wrote the topic",
    ),
    k(
        "audit-partial",
        Some("audit_partial"),
        Unknown,
        "a partition could not be read, so the audit is partial",
    ),
    // Redis key families.
    k(
        "no-hash-tag",
        Some("no_hash_tag"),
        Problem,
        "a pattern without a hash tag: its keys hash whole",
    ),
    k(
        "empty-tag",
        Some("empty_tag"),
        Problem,
        "an empty hash tag, which Redis ignores",
    ),
    k(
        "tag-without-key",
        Some("tag_without_key"),
        Problem,
        "a hash tag without the key: every key in one slot",
    ),
    k(
        "tag-not-just-key",
        Some("tag_not_just_key"),
        Note,
        "a hash tag holding more than the key",
    ),
    k(
        "hash-tags-differ",
        Some("hash_tags_differ"),
        Problem,
        "the patterns' hash tags differ",
    ),
    k(
        "sample-keys-split",
        Some("sample_keys_split"),
        Problem,
        "sample keys whose family members land in different slots",
    ),
    // Where a consumer group puts partition p of each topic.
    k(
        "unsubscribed-topics",
        Some("unsubscribed_topics"),
        Problem,
        "a consumer group does not subscribe to every topic of its co-partition group",
    ),
    k(
        "counts-differ",
        Some("counts_differ"),
        Problem,
        "no assignor keeps units whole while the counts differ",
    ),
    k(
        "units-split",
        Some("units_split"),
        Problem,
        "the assignor splits partition p of the topics across members",
    ),
    k(
        "placement-unchecked",
        Some("placement_unchecked"),
        Unknown,
        "the placement could not be checked",
    ),
    // Salting a hot key of a co-partition group.
    k(
        "key-fields-differ",
        Some("key_fields_differ"),
        Problem,
        "the topics key by different fields, so no salt holds in all",
    ),
    k(
        "no-producer",
        Some("no_producer"),
        Problem,
        "a topic without a producer cannot be salted",
    ),
    k(
        "key-format-cannot-salt",
        Some("key_format_cannot_salt"),
        Problem,
        "a key format that cannot carry a salted key",
    ),
    k(
        "sub-keys-land-apart",
        Some("sub_keys_land_apart"),
        Problem,
        "a salted key's sub-keys land apart in the topics",
    ),
    // What a client's leader does with stale claims.
    k(
        "java-leader-assigns-missing-partition",
        None,
        Problem,
        "the Java leader assigns a partition past the topic's count",
    ),
    k(
        "java-leader-assigns-partition-twice",
        None,
        Problem,
        "the Java leader assigns one partition to two members",
    ),
    k(
        "java-leader-assigns-unsubscribed-topic",
        None,
        Problem,
        "the Java leader assigns a topic the member does not subscribe to",
    ),
    k(
        "java-leader-throws",
        None,
        Problem,
        "the Java leader throws, so the rebalance never completes",
    ),
    k(
        "python-leader-assigns-missing-partition",
        None,
        Problem,
        "the Python leader assigns a partition past the topic's count",
    ),
    k(
        "python-leader-assigns-partition-twice",
        None,
        Problem,
        "the Python leader assigns one partition to two members",
    ),
    k(
        "python-leader-assigns-unsubscribed-topic",
        None,
        Problem,
        "the Python leader assigns a topic the member does not subscribe to",
    ),
    k(
        "python-leader-raises",
        None,
        Problem,
        "the Python leader raises, so the rebalance never completes",
    ),
    // A live group and its move to the consumer protocol.
    k(
        "member-undecodable",
        None,
        Unknown,
        "a member's consumer-protocol bytes could not be decoded",
    ),
    k(
        "splits-now",
        None,
        Problem,
        "the group splits partition p across members now",
    ),
    k(
        "range-splits",
        None,
        Problem,
        "server range would split partition p across members",
    ),
    k(
        "range-unknown",
        None,
        Unknown,
        "what server range would do is unknown",
    ),
    k(
        "consumer-protocol-disabled",
        None,
        Problem,
        "the brokers do not accept the consumer protocol",
    ),
    k(
        "broker-configs-differ",
        None,
        Problem,
        "the brokers' group settings differ",
    ),
    k(
        "no-remote-assignor-keeps-units",
        None,
        Problem,
        "no accepted server assignor keeps units whole",
    ),
    k(
        "client-unknown",
        None,
        Unknown,
        "a member's client is not known",
    ),
    k(
        "streams-group",
        None,
        Note,
        "a Kafka Streams application, whose path is group.protocol=streams",
    ),
    k(
        "client-without-consumer-protocol",
        None,
        Problem,
        "a member's client has no consumer protocol",
    ),
    k(
        "upgrade-refused-policy",
        None,
        Problem,
        "the migration policy refuses the online upgrade",
    ),
    k(
        "upgrade-refused-protocol-type",
        None,
        Problem,
        "the group's protocol type cannot move",
    ),
    k(
        "upgrade-refused-size",
        None,
        Problem,
        "the group is too large for the consumer protocol",
    ),
    k(
        "upgrade-refused-custom-assignor",
        None,
        Problem,
        "a member's assignment carries user data",
    ),
    k(
        "upgrade-refused-malformed-subscription",
        None,
        Problem,
        "a member's subscription is not the consumer protocol's",
    ),
    k(
        "upgrade-unknown",
        None,
        Unknown,
        "whether the coordinator upgrades the group is unknown",
    ),
    k(
        "target-pending",
        None,
        Note,
        "the coordinator has not computed a target yet",
    ),
    k(
        "target-splits",
        None,
        Problem,
        "the coordinator's target splits partition p across members",
    ),
    k(
        "target-unknown",
        None,
        Unknown,
        "the coordinator's target is unknown",
    ),
    k(
        "reconciling-split",
        None,
        Note,
        "members still reconcile toward a target that keeps units whole",
    ),
    // Kafka Streams groups.
    k(
        "streams-not-ready",
        None,
        Problem,
        "the coordinator keeps the streams group NOT_READY",
    ),
    k(
        "streams-task-split",
        None,
        Problem,
        "a task holds partition p of one source and not another",
    ),
    k(
        "streams-unknown-subtopology",
        None,
        Unknown,
        "a task of a sub-topology the coordinator does not describe",
    ),
    k(
        "streams-member-unknown",
        None,
        Unknown,
        "a Streams member whose user data could not be read",
    ),
];

/// The registry entry of `id` (a current id, or a renamed one's old
/// spelling).
pub fn kind(id: &str) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.id == id || k.was == Some(id))
}

/// One finding, whatever found it: its JSON is every command's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    /// The kind's stable id.
    pub kind: &'static str,
    /// The id's old spelling, for one release, where it was renamed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind_alias: Option<&'static str>,
    /// What is wrong, naming the topics, members or patterns.
    pub message: String,
    /// What to do, in the client's own words.
    pub fix: String,
    /// The check's typed details, where it has them.
    #[serde(flatten)]
    pub details: Option<Details>,
}

/// A finding's typed details: the fields its check names.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Details {
    /// Of a co-partition group.
    Copartition(Reason),
    /// Of a Redis key family.
    Family(FamilyReason),
}

impl Finding {
    /// A finding of `kind` without typed details. `kind` must be in
    /// [`KINDS`] (the `texts` tests walk every kind a check reports).
    pub fn new(kind: &'static str, message: impl Into<String>, fix: impl Into<String>) -> Finding {
        Finding {
            kind,
            kind_alias: self::kind(kind).and_then(|k| k.was),
            message: message.into(),
            fix: fix.into(),
            details: None,
        }
    }

    /// The same, with `details`.
    pub fn with(mut self, details: Details) -> Finding {
        self.details = Some(details);
        self
    }

    /// Its severity, from the registry (a kind missing there counts as a
    /// problem, the safe side).
    pub fn severity(&self) -> Severity {
        kind(self.kind).map_or(Severity::Problem, |k| k.severity)
    }
}

// A check's details give their finding here, so that the details' modules
// do not name this one (which names them).
impl Reason {
    /// The finding, as every command prints it.
    pub fn finding(&self) -> Finding {
        Finding::new(self.kind(), self.to_string(), self.fix())
            .with(Details::Copartition(self.clone()))
    }
}

impl FamilyReason {
    /// The finding, as every command prints it.
    pub fn finding(&self) -> Finding {
        Finding::new(self.kind(), self.to_string(), self.fix()).with(Details::Family(self.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Each id and each old spelling names one kind, ids are kebab case and
    /// old spellings snake case.
    #[test]
    fn the_registry_is_one_style_without_clashes() {
        let mut seen = HashSet::new();
        for k in KINDS {
            assert!(seen.insert(k.id), "{} twice", k.id);
            assert!(
                k.id.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "{} is not kebab case",
                k.id
            );
            if let Some(w) = k.was {
                assert!(seen.insert(w), "{w} twice");
                assert_eq!(w.replace('_', "-"), k.id, "{w} renamed to another word");
            }
        }
    }

    #[test]
    fn old_spellings_are_written_beside_the_new() {
        let f = Finding::new("no-hash-tag", "m", "f");
        assert_eq!(
            serde_json::to_string(&f).unwrap(),
            r#"{"kind":"no-hash-tag","kind_alias":"no_hash_tag","message":"m","fix":"f"}"#
        );
        let f = Finding::new("range-splits", "m", "f");
        assert_eq!(
            serde_json::to_string(&f).unwrap(),
            r#"{"kind":"range-splits","message":"m","fix":"f"}"#
        );
        assert_eq!(kind("units_split").map(|k| k.id), Some("units-split"));
    }

    /// docs/reference/findings.md lists every kind, with its old spelling
    /// and severity, and nothing else.
    #[test]
    fn the_reference_page_is_the_registry() {
        let page = include_str!("../../../../docs/reference/findings.md");
        let rows: Vec<&str> = page.lines().filter(|l| l.starts_with("| `")).collect();
        assert_eq!(rows.len(), KINDS.len(), "rows: {rows:?}");
        for k in KINDS {
            let was = k.was.map(|w| format!("`{w}`")).unwrap_or_default();
            let severity = format!("{:?}", k.severity).to_lowercase();
            let row = format!("| `{}` | {was} | {severity} | {} |", k.id, k.about);
            assert!(rows.contains(&row.as_str()), "missing or changed: {row}");
        }
    }
}
