//! Whether a live consumer group is ready for the consumer group protocol
//! of KIP-848, decided without I/O: would Apache Kafka's group coordinator
//! upgrade a classic group online when a `group.protocol=consumer` member
//! joins, would the server `range` assignor keep its co-partitioned indices
//! together, and which `group.remote.assignor` names the brokers accept.
//! For a group already on the consumer protocol: the co-location of the
//! broker's target assignment beside the members' current one.
//!
//! The upgrade rules are the coordinator's of Apache Kafka 4.1
//! (`GroupMetadataManager.getOrMaybeCreateConsumerGroup`,
//! `validateOnlineUpgrade`, `ConsumerGroup.fromClassicGroup`,
//! `throwIfConsumerGroupIsFull`), in its order: an empty classic group is
//! replaced; otherwise the migration policy, the embedded protocol type,
//! the group size, and then every member's assignment user data (custom
//! assignor data would be lost, so the broker refuses). The adapter
//! (partwise-kafka) fetches the description and the broker configs;
//! `partwise kafka group --readiness` renders the [`Readiness`].
//!
//! ```
//! use partwise::group::described::{ClusterTopic, DescribedMember};
//! use partwise::readiness::{classic, BrokerConfig, ClassicGroup, Upgrade};
//! let topic = |name: &str| ClusterTopic { name: name.into(), partitions: 6, healthy: true };
//! let member = |id: &str, sub: &[&str]| DescribedMember {
//!     id: id.into(),
//!     subscription: Some(sub.iter().map(|t| t.to_string()).collect()),
//!     assignment: Some(vec![]),
//!     undecodable: None,
//! };
//! let g = ClassicGroup {
//!     name: "joins".into(),
//!     state: "Stable".into(),
//!     protocol_type: "consumer".into(),
//!     protocol: "copartitioned".into(),
//!     members: vec![member("m1", &["a", "b"]), member("m2", &["a"])],
//!     // The copartitioned leader's co-partition groups ride in the assignment.
//!     assignment_user_data: vec![Some(b"pwu\0...".to_vec()), Some(b"pwu\0...".to_vec())],
//!     clients: vec![],
//! };
//! let r = classic(&g, &[BrokerConfig::default()], &[topic("a"), topic("b")]);
//! assert!(matches!(r.upgrade, Upgrade::Refused { .. }));
//! // m2 reads only `a`: server range would split half of the indices.
//! assert_eq!(r.range.as_ref().unwrap().split_count, 3);
//! assert!(r.findings.iter().any(|f| f.kind == "upgrade-refused-custom-assignor"));
//! ```

use crate::assign::Assignor;
use crate::findings::Finding;
use crate::group::clients::{identify_with, Client, ConsumerProtocol};
use crate::group::described::{analyze, ClusterTopic, DescribedMember, PredictError, View};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

mod classic;
mod consumer;

pub use classic::{classic, classic_with, server_uniform, streams_path};
pub use consumer::{consumer, consumer_with, ConsumerGroupCheck};

/// The group-coordinator settings of one broker (DescribeConfigs); `None`
/// where the broker did not report the setting (its default applies).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BrokerConfig {
    /// The broker id.
    pub broker: i32,
    /// `group.consumer.migration.policy` (`bidirectional` by default).
    pub migration_policy: Option<String>,
    /// `group.consumer.max.size` (`2147483647` by default).
    pub consumer_max_size: Option<u64>,
    /// `group.consumer.assignors`, as listed (names or class names).
    pub assignors: Option<Vec<String>>,
    /// `group.coordinator.rebalance.protocols` (`classic,consumer,streams` by
    /// default in 4.1): without `consumer` the broker serves no
    /// ConsumerGroupHeartbeat at all.
    pub rebalance_protocols: Option<Vec<String>>,
}

const DEFAULT_POLICY: &str = "bidirectional";
const DEFAULT_MAX_SIZE: u64 = i32::MAX as u64;
const UNIFORM_CLASS: &str = "org.apache.kafka.coordinator.group.assignor.UniformAssignor";
const RANGE_CLASS: &str = "org.apache.kafka.coordinator.group.assignor.RangeAssignor";
/// The broker-side assignor built in `bindings/java` (name `copartitioned`).
pub const COPARTITIONED_CLASS: &str = "dev.partwise.BrokerCopartitionedAssignor";

impl BrokerConfig {
    fn policy(&self) -> String {
        self.migration_policy
            .as_deref()
            .unwrap_or(DEFAULT_POLICY)
            .trim()
            .to_ascii_lowercase()
    }

    fn max_size(&self) -> u64 {
        self.consumer_max_size.unwrap_or(DEFAULT_MAX_SIZE)
    }

    fn assignor_entries(&self) -> Vec<String> {
        self.assignors
            .clone()
            .unwrap_or_else(|| vec![UNIFORM_CLASS.into(), RANGE_CLASS.into()])
    }
}

/// A classic group as DescribeGroups returns it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassicGroup {
    /// The group id.
    pub name: String,
    /// `Stable`, `Empty`, `PreparingRebalance`, `CompletingRebalance`, `Dead`.
    pub state: String,
    /// The protocol type (`consumer` for the embedded consumer protocol).
    pub protocol_type: String,
    /// The chosen protocol (the assignor's name).
    pub protocol: String,
    /// The members, with subscriptions and assignments.
    pub members: Vec<DescribedMember>,
    /// Per member (same order), the user data of its assignment, `None`
    /// when it has none or the assignment was not returned.
    pub assignment_user_data: Vec<Option<Vec<u8>>>,
    /// Per member (same order), what the description shows of its client;
    /// a member without an entry is identified from the protocol alone.
    pub clients: Vec<ClientSeen>,
}

/// What a group description shows of one member's client.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientSeen {
    /// Its `client.id` (may be empty).
    pub client_id: String,
    /// The version of its subscription metadata (`None`: not returned).
    pub metadata_version: Option<i16>,
    /// The version whose fields its subscription's body holds, when lower
    /// than the declared one (@platformatic/kafka: a version-1 header on a
    /// version-0 body); Apache Kafka's coordinator cannot read such bytes.
    pub body_version: Option<i16>,
}

/// The members that run one client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientMembers {
    /// The client.
    pub client: Client,
    /// Its members, by id.
    pub members: Vec<String>,
    /// What told it, for its first member.
    pub evidence: String,
}

/// Its JSON: the client's id and name, the members, the evidence, and the
/// client's facts a move to the consumer protocol depends on.
impl Serialize for ClientMembers {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Json<'a> {
            client: &'static str,
            name: &'static str,
            members: &'a [String],
            evidence: &'a str,
            consumer_protocol: Option<ConsumerProtocol>,
            without: Option<&'static str>,
            alternative: &'static str,
        }
        let f = self.client.facts();
        Json {
            client: self.client.id(),
            name: f.name,
            members: &self.members,
            evidence: &self.evidence,
            consumer_protocol: f.consumer_protocol,
            without: f.without,
            alternative: f.alternative,
        }
        .serialize(s)
    }
}

/// Which brokers accept partwise's broker assignor (`copartitioned` in
/// `group.consumer.assignors`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Copartitioned {
    /// Brokers that list it.
    pub accepting: Vec<i32>,
    /// Brokers that do not.
    pub lacking: Vec<i32>,
}

/// What the coordinator would do when a consumer-protocol member joins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Upgrade {
    /// The group would be upgraded (or, being empty, replaced).
    Allowed {
        /// How.
        how: String,
    },
    /// The join would fail with the broker's words.
    Refused {
        /// Which of the coordinator's checks refuses it.
        reason: Refusal,
        /// The error the joining member gets (`GROUP_ID_NOT_FOUND`, ...).
        error: &'static str,
        /// The broker's message, word for word.
        message: String,
        /// What in this group trips the check.
        detail: String,
    },
    /// It cannot be told from this description.
    Unknown {
        /// Why.
        why: String,
    },
}

/// The coordinator's check that refuses an online upgrade.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// `group.consumer.migration.policy` is `disabled` or `downgrade`.
    Policy,
    /// The protocol type is not `consumer` (Kafka Connect, say).
    ProtocolType,
    /// More members than `group.consumer.max.size`.
    TooLarge,
    /// A member's assignment carries user data.
    CustomAssignor,
    /// Exactly `group.consumer.max.size` members: the joining one is refused.
    Full,
    /// A member's subscription is not the consumer protocol Apache Kafka's
    /// `ConsumerProtocol` reads (a body shorter than its declared version).
    Malformed,
}

impl Refusal {
    /// The finding's stable id.
    pub fn kind(self) -> &'static str {
        match self {
            Refusal::Policy => "upgrade-refused-policy",
            Refusal::ProtocolType => "upgrade-refused-protocol-type",
            Refusal::TooLarge | Refusal::Full => "upgrade-refused-size",
            Refusal::CustomAssignor => "upgrade-refused-custom-assignor",
            Refusal::Malformed => "upgrade-refused-malformed-subscription",
        }
    }

    /// What to do, with `assignor`: how the members get the broker-side
    /// `copartitioned` assignor (set it, or first install it).
    pub(crate) fn fix(self, assignor: &str) -> String {
        match self {
            Refusal::Policy => {
                "set group.consumer.migration.policy=bidirectional (or upgrade) on every broker, \
                 or stop all members and start them with group.protocol=consumer (an empty group is replaced)"
                    .into()
            }
            Refusal::ProtocolType => {
                "only consumer groups (protocol type consumer) can move; Kafka Connect and other protocol types stay classic"
                    .into()
            }
            Refusal::CustomAssignor => format!(
                "roll the classic members to a built-in assignor first (range or cooperative-sticky, which write no \
                 assignment user data), then to group.protocol=consumer with {assignor}; \
                 or stop every member and start them all on the consumer protocol (an empty group is replaced)"
            ),
            Refusal::Malformed => format!(
                "stop every member and start them all on the consumer protocol (an empty group is replaced, committed \
                 offsets stay): for @platformatic/kafka, groupProtocol: 'consumer' (1.18.0 or later) with \
                 {assignor}; the broker cannot convert a live group whose subscriptions it cannot read"
            ),
            Refusal::TooLarge | Refusal::Full => {
                "raise group.consumer.max.size above the group's size, or stop the group and start it on the consumer protocol"
                    .into()
            }
        }
    }
}

/// What server `range` would do with the group's members and subscriptions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeCheck {
    /// The model of server `range` that computed [`RangeCheck::view`].
    pub model: Assignor,
    /// The assignment server `range` would give the described members.
    pub view: View,
    /// Split indices over every set of equally partitioned topics.
    pub split_count: usize,
    /// Members by subscription, when they differ (subscription -> members).
    pub subscriptions: BTreeMap<Vec<String>, Vec<String>>,
    /// Subscribed topics with their partition counts, when the counts differ.
    pub counts: Vec<(String, u32)>,
}

/// Whether an accepted assignor keeps co-partitioned indices together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum KeepsUnits {
    /// Always (the `copartitioned` assignor).
    Yes,
    /// Not for this group (or not guaranteed for any).
    No,
    /// Only while its preconditions hold; they hold for this group.
    #[serde(rename = "while-preconditions-hold")]
    Holds,
    /// An assignor partwise does not know.
    Unknown,
}

/// A `group.consumer.assignors` entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RemoteAssignor {
    /// The entry as configured.
    pub entry: String,
    /// The name a client sets in `group.remote.assignor`, when known.
    pub name: Option<String>,
    /// The default (the first entry: what a client that sets none gets).
    pub default: bool,
    /// Whether it keeps this group's units whole.
    pub keeps_units: KeepsUnits,
}

/// The readiness of one group.
#[derive(Clone, Debug, PartialEq)]
pub struct Readiness {
    /// The online upgrade's outcome (classic groups).
    pub upgrade: Upgrade,
    /// The group's present co-location, as the members hold their
    /// partitions now (`None`: an assignment was not returned).
    pub live: Option<View>,
    /// Server `range` on the described subscriptions (`None`: not known).
    pub range: Option<RangeCheck>,
    /// The accepted `group.remote.assignor` names, from the first broker
    /// (the others are compared and a difference is a finding).
    pub assignors: Vec<RemoteAssignor>,
    /// Which brokers accept partwise's broker assignor.
    pub copartitioned: Copartitioned,
    /// The members' clients, told from the description, in the order of
    /// [`Client`]: which can join with the consumer protocol, and from
    /// which version, is [`Client::facts`].
    pub clients: Vec<ClientMembers>,
    /// Everything to fix; empty when ready.
    pub findings: Vec<Finding>,
}

impl Readiness {
    /// The members' clients that have no consumer protocol at all (KafkaJS,
    /// Sarama): while any is in the group it cannot move, whatever the
    /// coordinator would allow.
    pub fn without_consumer_protocol(&self) -> Vec<&ClientMembers> {
        self.clients
            .iter()
            .filter(|c| c.client != Client::Unknown && c.client.facts().consumer_protocol.is_none())
            .collect()
    }
}

/// The members of `g` grouped by the client each runs.
pub fn member_clients(g: &ClassicGroup) -> Vec<ClientMembers> {
    let mut out: Vec<ClientMembers> = Vec::new();
    for (i, m) in g.members.iter().enumerate() {
        let seen = g.clients.get(i).cloned().unwrap_or_default();
        let who = identify_with(
            &g.protocol,
            &seen.client_id,
            seen.metadata_version,
            seen.body_version,
        );
        match out.iter_mut().find(|c| c.client == who.client) {
            Some(c) => c.members.push(m.id.clone()),
            None => out.push(ClientMembers {
                client: who.client,
                members: vec![m.id.clone()],
                evidence: who.evidence,
            }),
        }
    }
    out.sort_by_key(|c| c.client);
    out
}

/// Which brokers list partwise's broker assignor.
pub fn copartitioned_brokers(configs: &[BrokerConfig]) -> Copartitioned {
    let mut c = Copartitioned::default();
    for b in configs {
        let listed = b
            .assignor_entries()
            .iter()
            .any(|e| assignor_name(e) == Some("copartitioned"));
        if listed {
            c.accepting.push(b.broker);
        } else {
            c.lacking.push(b.broker);
        }
    }
    c
}

fn ids(brokers: &[i32]) -> String {
    brokers
        .iter()
        .map(i32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// How members get the broker-side `copartitioned` assignor: the setting
/// when every broker accepts it, else what to install on which broker
/// first (the entries each lacking broker lists now, plus the class).
pub fn copartitioned_advice(configs: &[BrokerConfig]) -> String {
    let c = copartitioned_brokers(configs);
    if c.lacking.is_empty() && !c.accepting.is_empty() {
        return "group.remote.assignor=copartitioned on the members (partwise's broker assignor, which every broker accepts)"
            .into();
    }
    // Brokers grouped by the setting they need: their own entries, then the class.
    let mut settings: Vec<(String, Vec<i32>)> = Vec::new();
    for b in configs.iter().filter(|b| c.lacking.contains(&b.broker)) {
        let mut entries: Vec<String> = b
            .assignor_entries()
            .iter()
            .map(|e| e.trim().to_string())
            .map(|e| match assignor_name(&e) {
                Some(n @ ("uniform" | "range")) => n.to_string(),
                _ => e,
            })
            .collect();
        entries.push(COPARTITIONED_CLASS.into());
        let setting = format!("group.consumer.assignors={}", entries.join(","));
        match settings.iter_mut().find(|(s, _)| *s == setting) {
            Some((_, bs)) => bs.push(b.broker),
            None => settings.push((setting, vec![b.broker])),
        }
    }
    let which = if configs.is_empty() {
        "every broker".to_string()
    } else if c.accepting.is_empty() {
        format!("every broker ({}: none lists it)", ids(&c.lacking))
    } else {
        format!(
            "broker(s) {} (broker(s) {} list it already, and a group's coordinator moves on failover)",
            ids(&c.lacking),
            ids(&c.accepting)
        )
    };
    let set = if settings.is_empty() {
        format!("add {COPARTITIONED_CLASS} to group.consumer.assignors")
    } else if settings.len() == 1 {
        settings[0].0.clone()
    } else {
        settings
            .iter()
            .map(|(s, bs)| format!("{s} on broker(s) {}", ids(bs)))
            .collect::<Vec<_>>()
            .join("; ")
    };
    format!(
        "group.remote.assignor=copartitioned on the members, after installing partwise's broker assignor on {which}: \
         put partwise-copartitioned-assignor-0.1.0.jar (mvn -f bindings/java/pom.xml package) in each such broker's \
         libs/ directory, set {set}, and restart it"
    )
}

/// The name Apache Kafka's `name()` gives a `group.consumer.assignors` entry.
pub fn assignor_name(entry: &str) -> Option<&'static str> {
    match entry.trim() {
        "uniform" | UNIFORM_CLASS => Some("uniform"),
        "range" | RANGE_CLASS => Some("range"),
        "copartitioned" | COPARTITIONED_CLASS => Some("copartitioned"),
        _ => None,
    }
}

fn finding(kind: &'static str, message: String, fix: impl Into<String>) -> Finding {
    Finding::new(kind, message, fix)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topic(name: &str, partitions: u32) -> ClusterTopic {
        ClusterTopic {
            name: name.into(),
            partitions,
            healthy: true,
        }
    }

    fn member(id: &str, sub: &[&str], parts: Option<&[(&str, &[u32])]>) -> DescribedMember {
        DescribedMember {
            id: id.into(),
            subscription: Some(sub.iter().map(|t| t.to_string()).collect()),
            assignment: parts.map(|ps| {
                ps.iter()
                    .map(|(t, p)| (t.to_string(), p.to_vec()))
                    .collect()
            }),
            undecodable: None,
        }
    }

    /// A group of Java members (their default client ids tell them).
    fn group(state: &str, members: Vec<DescribedMember>, data: Vec<Option<&[u8]>>) -> ClassicGroup {
        let clients = (1..=members.len())
            .map(|i| ClientSeen {
                client_id: format!("consumer-g-{i}"),
                metadata_version: Some(3),
                body_version: None,
            })
            .collect();
        ClassicGroup {
            name: "g".into(),
            state: state.into(),
            protocol_type: "consumer".into(),
            protocol: "range".into(),
            members,
            assignment_user_data: data.into_iter().map(|d| d.map(<[u8]>::to_vec)).collect(),
            clients,
        }
    }

    fn kinds(r: &Readiness) -> Vec<&'static str> {
        r.findings.iter().map(|f| f.kind).collect()
    }

    const AB: &[&str] = &["a", "b"];

    fn whole_pair() -> Vec<DescribedMember> {
        vec![
            member("m1", AB, Some(&[("a", &[0, 1, 2]), ("b", &[0, 1, 2])])),
            member("m2", AB, Some(&[("a", &[3, 4, 5]), ("b", &[3, 4, 5])])),
        ]
    }

    #[test]
    fn a_range_group_with_equal_subscriptions_is_ready() {
        let g = group("Stable", whole_pair(), vec![None, Some(&[])]);
        let r = classic(
            &g,
            &[BrokerConfig::default()],
            &[topic("a", 6), topic("b", 6)],
        );
        assert!(matches!(r.upgrade, Upgrade::Allowed { .. }), "{r:?}");
        assert_eq!(r.range.as_ref().unwrap().split_count, 0);
        let names: Vec<_> = r.assignors.iter().map(|a| a.name.as_deref()).collect();
        assert_eq!(names, [Some("uniform"), Some("range")]);
        assert_eq!(r.assignors[1].keeps_units, KeepsUnits::Holds);
        assert!(r.assignors[0].default);
        assert!(r.findings.is_empty(), "{:?}", r.findings);
    }

    #[test]
    fn the_coordinators_checks_in_its_order() {
        let pw: &[u8] = b"pwu\x00\x00\x00\x00\x01";
        let cfg = |policy: &str, max: u64| BrokerConfig {
            broker: 1,
            migration_policy: Some(policy.into()),
            consumer_max_size: Some(max),
            assignors: None,
            rebalance_protocols: None,
        };
        let t = [topic("a", 6), topic("b", 6)];
        let custom = group("Stable", whole_pair(), vec![Some(pw), None]);
        // The policy comes before everything else.
        let r = classic(&custom, &[cfg("Downgrade", 10)], &t);
        assert_eq!(kinds(&r), ["upgrade-refused-policy"]);
        let r = classic(&custom, &[cfg("upgrade", 1)], &t);
        assert_eq!(kinds(&r), ["upgrade-refused-size"]);
        let r = classic(&custom, &[cfg("BIDIRECTIONAL", 10)], &t);
        assert_eq!(kinds(&r), ["upgrade-refused-custom-assignor"]);
        let Upgrade::Refused {
            message,
            error,
            detail,
            ..
        } = &r.upgrade
        else {
            panic!("{r:?}")
        };
        assert_eq!(*error, "GROUP_ID_NOT_FOUND");
        assert!(
            message.starts_with(
                "Cannot upgrade classic group g to consumer group because an unsupported custom assignor is in use. "
            ),
            "{message}"
        );
        assert!(
            detail.contains("m1 (partwise co-partition groups)"),
            "{detail}"
        );
        assert!(!detail.contains("m2"), "{detail}");
        // Exactly full: the conversion passes, the joining member does not.
        let plain = group("Stable", whole_pair(), vec![None, None]);
        let r = classic(&plain, &[cfg("upgrade", 2)], &t);
        assert!(matches!(
            r.upgrade,
            Upgrade::Refused {
                error: "GROUP_MAX_SIZE_REACHED",
                ..
            }
        ));
        assert!(matches!(
            classic(&plain, &[cfg("upgrade", 3)], &t).upgrade,
            Upgrade::Allowed { .. }
        ));
        // Not the consumer protocol type.
        let mut connect = plain.clone();
        connect.protocol_type = "connect".into();
        assert_eq!(
            kinds(&classic(&connect, &[cfg("upgrade", 3)], &t)),
            ["upgrade-refused-protocol-type"]
        );
        // An empty group is replaced whatever the policy.
        let empty = group("Empty", vec![], vec![]);
        let r = classic(&empty, &[cfg("disabled", 0)], &t);
        assert!(matches!(r.upgrade, Upgrade::Allowed { .. }), "{r:?}");
        assert!(r.range.is_none());
    }

    #[test]
    fn a_rebalancing_group_is_unknown_unless_already_refused() {
        let members = vec![member("m1", AB, None), member("m2", AB, None)];
        let g = group("PreparingRebalance", members, vec![None, None]);
        let t = [topic("a", 6), topic("b", 6)];
        let r = classic(&g, &[BrokerConfig::default()], &t);
        assert!(matches!(r.upgrade, Upgrade::Unknown { .. }));
        assert_eq!(kinds(&r), ["upgrade-unknown"]);
        let off = BrokerConfig {
            migration_policy: Some("disabled".into()),
            ..BrokerConfig::default()
        };
        assert_eq!(
            classic(&g, &[off], &t).findings[0].kind,
            "upgrade-refused-policy"
        );
    }

    /// A member whose subscription could not be decoded is a finding of its
    /// own, naming its client id; no server assignor's target is predicted
    /// as if it subscribed to nothing, and the group is never ready.
    #[test]
    fn an_undecodable_member_is_named_and_nothing_is_predicted() {
        let mut members = whole_pair();
        members.push(DescribedMember {
            id: "bad".into(),
            subscription: None,
            assignment: Some(vec![]),
            undecodable: Some("subscription could not be decoded: not UTF-8".into()),
        });
        let cfg = BrokerConfig {
            assignors: Some(vec![COPARTITIONED_CLASS.into()]),
            ..BrokerConfig::default()
        };
        let g = group("Stable", members.clone(), vec![None, None, None]);
        let t = [topic("a", 6), topic("b", 6)];
        let r = classic(&g, &[cfg], &t);
        assert_eq!(kinds(&r), ["member-undecodable"]);
        assert!(
            r.findings[0].message.starts_with(
                "member bad (client id 'consumer-g-3'): subscription could not be decoded"
            ),
            "{}",
            r.findings[0].message
        );
        assert!(r.findings[0].fix.contains("client id 'consumer-g-3'"));
        assert!(r.range.is_none(), "{:?}", r.range);
        assert!(server_uniform(&members, &t, Some(Assignor::Kip848Uniform)).is_none());
        assert!(server_uniform(&whole_pair(), &t, Some(Assignor::Kip848Uniform)).is_some());
    }

    /// What partwise cannot identify is unknown, never ready: an aiokafka
    /// group cannot join at all, a member of no known client is named with
    /// its client id, and @platformatic/kafka's subscriptions make the
    /// coordinator refuse the online upgrade as malformed.
    #[test]
    fn unknown_and_classic_only_clients_are_never_ready() {
        let t = [topic("a", 6), topic("b", 6)];
        let with = |protocol: &str, id: &str, body: Option<i16>| {
            let mut g = group("Stable", whole_pair(), vec![None, None]);
            g.protocol = protocol.into();
            for c in &mut g.clients {
                c.client_id = id.into();
                c.metadata_version = Some(if body.is_some() { 1 } else { 0 });
                c.body_version = body;
            }
            classic(&g, &[BrokerConfig::default()], &t)
        };
        let r = with("roundrobin", "aiokafka-0.14.0", None);
        assert_eq!(kinds(&r), ["client-without-consumer-protocol"]);
        assert!(
            r.findings[0]
                .message
                .contains("aiokafka has no consumer-protocol"),
            "{:?}",
            r.findings
        );
        assert!(r.findings[0]
            .fix
            .contains("partition_assignment_strategy=(RangePartitionAssignor,)"));
        assert!(!r.findings[0].fix.contains("org.apache.kafka"));
        let r = with("roundrobin", "orders-svc", None);
        assert_eq!(kinds(&r), ["client-unknown"]);
        assert!(
            r.findings[0].message.starts_with(
                "member(s) m1 (client id 'orders-svc'), m2 (client id 'orders-svc') run a client partwise cannot identify"
            ),
            "{}",
            r.findings[0].message
        );
        let r = with("", "", None);
        assert!(
            r.findings[0].message.contains("m1 (no client id)"),
            "{}",
            r.findings[0].message
        );
        let r = with("roundrobin", "orders-svc", Some(0));
        assert_eq!(r.clients[0].client, Client::Platformatic);
        assert_eq!(kinds(&r), ["upgrade-refused-malformed-subscription"]);
        assert!(
            r.findings[0].message.contains(
                "Cannot upgrade classic group g to consumer group because the embedded consumer protocol is malformed."
            ),
            "{}",
            r.findings[0].message
        );
        assert!(
            r.findings[0].fix.contains("groupProtocol: 'consumer'"),
            "{}",
            r.findings[0].fix
        );
        // Kafka Streams: named, and never sent to group.protocol=consumer.
        let r = with("stream", "app-1-StreamThread-1-consumer", None);
        assert_eq!(kinds(&r), ["streams-group"]);
        assert!(r.findings[0].message.contains("group.protocol=streams"));
        for words in [
            "set group.protocol=streams",
            "streams.version=1",
            "group.coordinator.rebalance.protocols",
            "the move is offline",
            "static membership",
        ] {
            assert!(
                r.findings[0].fix.contains(words),
                "{words}: {}",
                r.findings[0].fix
            );
        }
        assert!(r.range.is_none());
        // A broker that leaves streams out of its protocols is named.
        let cfg = BrokerConfig {
            broker: 3,
            rebalance_protocols: Some(vec!["classic".into(), "consumer".into()]),
            ..BrokerConfig::default()
        };
        assert!(
            streams_path(&[cfg]).contains("broker(s) 3 leave streams out"),
            "{}",
            streams_path(&[])
        );
        for f in &r.findings {
            assert!(!f.fix.contains("group.protocol=consumer"), "{}", f.fix);
            assert!(!f.fix.contains("group.remote.assignor"), "{}", f.fix);
        }
    }

    /// A group that splits units right now is not ready, whatever the move
    /// would do: franz-go's default balancer split this one.
    #[test]
    fn a_group_that_splits_now_is_not_ready() {
        let mut g = group(
            "Stable",
            vec![
                member("m1", AB, Some(&[("a", &[0, 1, 2]), ("b", &[3, 4, 5])])),
                member("m2", AB, Some(&[("a", &[3, 4, 5]), ("b", &[0, 1, 2])])),
            ],
            vec![None, None],
        );
        g.protocol = "cooperative-sticky".into();
        for c in &mut g.clients {
            c.client_id = "kgo".into();
        }
        let r = classic(
            &g,
            &[BrokerConfig::default()],
            &[topic("a", 6), topic("b", 6)],
        );
        assert_eq!(r.live.as_ref().unwrap().split_count(), 6);
        assert_eq!(kinds(&r), ["splits-now"]);
        let f = &r.findings[0];
        assert!(
            f.message
                .contains("under its assignor cooperative-sticky: 6 of 6 indices of a, b"),
            "{}",
            f.message
        );
        assert!(
            f.fix.contains("kgo.Balancers(kgo.RangeBalancer())"),
            "{}",
            f.fix
        );
        assert!(
            !f.fix.contains("partition.assignment.strategy"),
            "{}",
            f.fix
        );
    }

    #[test]
    fn unequal_subscriptions_split_under_range_and_name_the_members() {
        let g = group(
            "Stable",
            vec![
                member(
                    "m1",
                    AB,
                    Some(&[("a", &[0, 1, 2]), ("b", &[0, 1, 2, 3, 4, 5])]),
                ),
                member("m2", &["a"], Some(&[("a", &[3, 4, 5])])),
            ],
            vec![None, None],
        );
        let r = classic(
            &g,
            &[BrokerConfig::default()],
            &[topic("a", 6), topic("b", 6)],
        );
        let rc = r.range.as_ref().unwrap();
        assert_eq!(rc.split_count, 3);
        assert_eq!(rc.subscriptions.len(), 2);
        // m2 holds a 3..5 without b 3..5: split now, and under server range.
        assert_eq!(
            kinds(&r),
            [
                "splits-now",
                "range-splits",
                "no-remote-assignor-keeps-units"
            ]
        );
        assert!(
            r.findings[1].message.contains("m2 -> a"),
            "{}",
            r.findings[1].message
        );
        assert_eq!(r.assignors[1].keeps_units, KeepsUnits::No);
        // With the broker assignor installed, the group has a way.
        let cfg = BrokerConfig {
            assignors: Some(vec!["uniform".into(), COPARTITIONED_CLASS.into()]),
            ..BrokerConfig::default()
        };
        let r = classic(&g, &[cfg], &[topic("a", 6), topic("b", 6)]);
        assert_eq!(kinds(&r), ["splits-now", "range-splits"]);
        assert_eq!(r.assignors[1].name.as_deref(), Some("copartitioned"));
        assert_eq!(r.assignors[1].keeps_units, KeepsUnits::Yes);
    }

    #[test]
    fn unequal_counts_are_listed_and_unknown_classes_are_not_named() {
        let g = group(
            "Stable",
            vec![member(
                "m1",
                &["a", "c"],
                Some(&[("a", &[0, 1]), ("c", &[0, 1, 2])]),
            )],
            vec![None],
        );
        let cfg = |n: i32| BrokerConfig {
            broker: n,
            assignors: Some(vec!["com.example.Mine".into()]),
            ..BrokerConfig::default()
        };
        let r = classic(
            &g,
            &[cfg(1), BrokerConfig::default()],
            &[topic("a", 2), topic("c", 3)],
        );
        assert_eq!(
            r.range.as_ref().unwrap().counts,
            [("a".into(), 2), ("c".into(), 3)]
        );
        assert_eq!(r.assignors[0].name, None);
        assert_eq!(r.assignors[0].keeps_units, KeepsUnits::Unknown);
        assert_eq!(
            kinds(&r),
            ["broker-configs-differ", "no-remote-assignor-keeps-units"]
        );
        let classic_only = BrokerConfig {
            rebalance_protocols: Some(vec!["classic".into()]),
            ..BrokerConfig::default()
        };
        let r = classic(&g, &[classic_only], &[topic("a", 2), topic("c", 3)]);
        assert_eq!(kinds(&r), ["consumer-protocol-disabled"]);
    }

    #[test]
    fn a_consumer_group_target_and_current() {
        let t = [topic("a", 2), topic("b", 2)];
        let target = vec![
            member("m1", AB, Some(&[("a", &[0]), ("b", &[0])])),
            member("m2", AB, Some(&[("a", &[1]), ("b", &[1])])),
        ];
        // m2 has not yet received b-1: index 1 has no owner for b.
        let current = vec![
            member("m1", AB, Some(&[("a", &[0]), ("b", &[0])])),
            member("m2", AB, Some(&[("a", &[1])])),
        ];
        let c = consumer("range", &current, &target, &[BrokerConfig::default()], &t);
        assert!(!c.reconciled);
        assert_eq!(
            c.findings.iter().map(|f| f.kind).collect::<Vec<_>>(),
            ["reconciling-split"]
        );
        let c = consumer("range", &target, &target, &[BrokerConfig::default()], &t);
        assert!(c.reconciled && c.findings.is_empty(), "{c:?}");
        // A group in state Assigning owns its old target: not reconciled yet.
        let c = consumer_with(
            "range",
            &target,
            &target,
            &[BrokerConfig::default()],
            &t,
            Assignor::Kip848Range,
            true,
            &[],
        );
        assert!(!c.reconciled, "{c:?}");
        assert_eq!(
            c.findings.iter().map(|f| f.kind).collect::<Vec<_>>(),
            ["target-pending"]
        );
        // Whole units, but one member's client id is no client's default:
        // unknown, named with its client id, never ready.
        let seen = |id: &str| ClientSeen {
            client_id: id.into(),
            ..ClientSeen::default()
        };
        let run = |ids: &[ClientSeen]| {
            consumer_with(
                "range",
                &target,
                &target,
                &[BrokerConfig::default()],
                &t,
                Assignor::Kip848Range,
                false,
                ids,
            )
        };
        let c = run(&[seen("consumer-g-1"), seen("worker-7")]);
        assert_eq!(
            c.findings.iter().map(|f| f.kind).collect::<Vec<_>>(),
            ["client-unknown"]
        );
        assert!(
            c.findings[0].message.contains("m2 (client id 'worker-7')"),
            "{c:?}"
        );
        assert_eq!(
            c.clients.iter().map(|c| c.client).collect::<Vec<_>>(),
            [Client::Java, Client::Unknown]
        );
        let c = run(&[seen("consumer-g-1"), seen("consumer-g-2")]);
        assert!(c.findings.is_empty(), "{c:?}");
        let split = vec![
            member("m1", AB, Some(&[("a", &[0, 1])])),
            member("m2", AB, Some(&[("b", &[0, 1])])),
        ];
        let c = consumer("uniform", &split, &split, &[BrokerConfig::default()], &t);
        assert_eq!(c.findings[0].kind, "target-splits");
        // Range would keep them: same subscriptions, equal counts.
        assert_eq!(c.range.as_ref().unwrap().split_count, 0);
        assert_eq!(c.assignors[1].keeps_units, KeepsUnits::Holds);
        assert!(
            c.findings[0].message.contains("uniform splits 2"),
            "{}",
            c.findings[0].message
        );
    }

    fn seen(ids: &[&str]) -> Vec<ClientSeen> {
        ids.iter()
            .map(|id| ClientSeen {
                client_id: id.to_string(),
                metadata_version: Some(0),
                body_version: None,
            })
            .collect()
    }

    fn fix_of<'a>(r: &'a Readiness, kind: &str) -> &'a str {
        &r.findings.iter().find(|f| f.kind == kind).unwrap().fix
    }

    /// The seeds' KafkaJS round-robin workers: the coordinator would take the
    /// upgrade, but KafkaJS has no consumer protocol, so the verdict names
    /// the client, its members and the alternative, and no text tells them
    /// to set group.remote.assignor.
    #[test]
    fn a_kafkajs_group_cannot_move_and_is_told_the_alternative() {
        let mut g = group("Stable", whole_pair(), vec![None, None]);
        g.protocol = "RoundRobinAssigner".into();
        g.clients = seen(&["kafkajs", "kafkajs"]);
        let cfg = BrokerConfig {
            assignors: Some(vec![
                "uniform".into(),
                "range".into(),
                COPARTITIONED_CLASS.into(),
            ]),
            ..BrokerConfig::default()
        };
        let r = classic(&g, &[cfg], &[topic("a", 6), topic("b", 6)]);
        // The coordinator's own rule still allows it; the clients do not.
        assert!(matches!(r.upgrade, Upgrade::Allowed { .. }), "{r:?}");
        assert_eq!(kinds(&r), ["client-without-consumer-protocol"]);
        let blocked = r.without_consumer_protocol();
        assert_eq!(blocked.len(), 1);
        assert_eq!(blocked[0].client, Client::KafkaJs);
        assert_eq!(blocked[0].members, ["m1", "m2"]);
        let f = &r.findings[0];
        assert!(
            f.message
                .starts_with("member(s) m1, m2 run KafkaJS (protocol RoundRobinAssigner"),
            "{}",
            f.message
        );
        assert!(
            f.message.contains("KafkaJS has no consumer protocol"),
            "{}",
            f.message
        );
        assert!(f.fix.contains("copartitionedAssigner()"), "{}", f.fix);
        assert!(
            f.fix.contains("confluent-kafka-javascript 1.6.0"),
            "{}",
            f.fix
        );
        assert!(!f.fix.contains("group.remote.assignor"), "{}", f.fix);
    }

    /// Java and KafkaJS members in one copartitioned group: each client is
    /// named with its own members; only KafkaJS blocks the move.
    #[test]
    fn a_mixed_java_and_kafkajs_group_names_each_client() {
        let mut members = whole_pair();
        members.push(member("k1", AB, Some(&[])));
        let mut g = group("Stable", members, vec![None, None, None]);
        g.protocol = "copartitioned".into();
        g.clients = seen(&["consumer-g-1", "consumer-g-2", "kafkajs"]);
        let r = classic(
            &g,
            &[BrokerConfig::default()],
            &[topic("a", 6), topic("b", 6)],
        );
        let clients: Vec<(Client, Vec<String>)> = r
            .clients
            .iter()
            .map(|c| (c.client, c.members.clone()))
            .collect();
        assert_eq!(
            clients,
            [
                (Client::Java, vec!["m1".to_string(), "m2".to_string()]),
                (Client::KafkaJs, vec!["k1".to_string()]),
            ]
        );
        let blocked: Vec<Client> = r
            .without_consumer_protocol()
            .iter()
            .map(|c| c.client)
            .collect();
        assert_eq!(blocked, [Client::KafkaJs]);
        assert_eq!(kinds(&r)[0], "client-without-consumer-protocol");
        assert!(
            r.findings[0]
                .message
                .starts_with("member(s) k1 run KafkaJS"),
            "{}",
            r.findings[0].message
        );
        assert_eq!(Client::Java.facts().consumer_protocol.unwrap().since, "4.0");
    }

    /// A broker without partwise's assignor (`uniform,range`, or nothing
    /// set): no fix tells the members to set group.remote.assignor=copartitioned
    /// without first saying what to install on which broker.
    #[test]
    fn copartitioned_is_recommended_only_where_the_brokers_accept_it() {
        let pw: &[u8] = b"pwu\x00\x00\x00\x00\x01";
        let mut g = group("Stable", whole_pair(), vec![Some(pw), Some(pw)]);
        g.protocol = "copartitioned".into();
        let t = [topic("a", 6), topic("b", 6)];
        let plain = |broker: i32, list: Option<&[&str]>| BrokerConfig {
            broker,
            assignors: list.map(|l| l.iter().map(|s| s.to_string()).collect()),
            ..BrokerConfig::default()
        };
        let installed: &[&str] = &["uniform", "range", COPARTITIONED_CLASS];
        for cfgs in [
            vec![plain(1, Some(&["uniform", "range"]))],
            vec![plain(1, None), plain(2, None)],
        ] {
            let r = classic(&g, &cfgs, &t);
            assert!(r.copartitioned.accepting.is_empty(), "{r:?}");
            let fix = fix_of(&r, "upgrade-refused-custom-assignor");
            assert!(
                fix.contains("group.remote.assignor=copartitioned on the members, after installing partwise's broker assignor on every broker"),
                "{fix}"
            );
            assert!(
                fix.contains("set group.consumer.assignors=uniform,range,dev.partwise.BrokerCopartitionedAssignor"),
                "{fix}"
            );
            assert!(fix.contains("libs/"), "{fix}");
        }
        // Installed everywhere: the setting alone.
        let r = classic(
            &g,
            &[plain(1, Some(installed)), plain(2, Some(installed))],
            &t,
        );
        let fix = fix_of(&r, "upgrade-refused-custom-assignor");
        assert!(fix.contains("group.remote.assignor=copartitioned on the members (partwise's broker assignor, which every broker accepts)"), "{fix}");
        assert!(!fix.contains("install"), "{fix}");
        // On broker 1 only: broker 2 is named, with the setting it needs from its own list.
        let r = classic(
            &g,
            &[plain(1, Some(installed)), plain(2, Some(&["range"]))],
            &t,
        );
        assert_eq!(
            r.copartitioned,
            Copartitioned {
                accepting: vec![1],
                lacking: vec![2]
            }
        );
        let fix = fix_of(&r, "upgrade-refused-custom-assignor");
        assert!(
            fix.contains(
                "installing partwise's broker assignor on broker(s) 2 (broker(s) 1 list it already"
            ),
            "{fix}"
        );
        assert!(
            fix.contains(
                "set group.consumer.assignors=range,dev.partwise.BrokerCopartitionedAssignor,"
            ),
            "{fix}"
        );
        assert!(fix_of(&r, "broker-configs-differ").contains("on broker(s) 2"));
    }
}
