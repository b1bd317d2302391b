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

/// What a member's assignment user data is, for the message.
fn user_data_kind(data: &[u8]) -> String {
    if data.starts_with(b"pwu\x00") {
        "partwise co-partition groups".to_string()
    } else {
        format!("{} bytes of assignor data", data.len())
    }
}

/// The coordinator's decision, in its order of checks.
fn upgrade(g: &ClassicGroup, cfg: &BrokerConfig) -> Upgrade {
    let refuse = |reason, why: &str, detail: String| Upgrade::Refused {
        reason,
        error: "GROUP_ID_NOT_FOUND",
        message: format!(
            "Cannot upgrade classic group {} to consumer group because {why}.",
            g.name
        ),
        detail,
    };
    if g.state.is_empty() || g.state == "Dead" {
        return Upgrade::Allowed {
            how: "the group does not exist: the first member creates a consumer group".into(),
        };
    }
    if g.state == "Empty" {
        return Upgrade::Allowed {
            how: "the classic group is empty: the broker deletes it and creates a consumer group (committed offsets stay)".into(),
        };
    }
    let policy = cfg.policy();
    if policy != "upgrade" && policy != "bidirectional" {
        return refuse(
            Refusal::Policy,
            "online upgrade is disabled",
            format!("group.consumer.migration.policy is {policy}"),
        );
    }
    if g.protocol_type != "consumer" {
        return refuse(
            Refusal::ProtocolType,
            "the group does not use the consumer embedded protocol",
            format!("its protocol type is '{}'", g.protocol_type),
        );
    }
    let n = g.members.len() as u64;
    if n > cfg.max_size() {
        return refuse(
            Refusal::TooLarge,
            "the group size exceeds the consumer group maximum size",
            format!("{n} members, group.consumer.max.size is {}", cfg.max_size()),
        );
    }
    let custom: Vec<String> = g
        .members
        .iter()
        .zip(&g.assignment_user_data)
        .filter_map(|(m, d)| {
            d.as_ref()
                .filter(|d| !d.is_empty())
                .map(|d| format!("{} ({})", m.id, user_data_kind(d)))
        })
        .collect();
    // The coordinator converts member by member, reading the assignment's
    // user data and then the subscription with ConsumerProtocol, which
    // refuses a body shorter than its declared version: the conversion
    // fails with "the embedded consumer protocol is malformed".
    let malformed: Vec<String> = g
        .members
        .iter()
        .zip(&g.clients)
        .filter_map(|(m, c)| {
            let (v, b) = (c.metadata_version?, c.body_version?);
            Some(format!("{} (subscription v{v} with a v{b} body)", m.id))
        })
        .collect();
    if custom.is_empty() && !malformed.is_empty() {
        return refuse(
            Refusal::Malformed,
            "the embedded consumer protocol is malformed",
            format!(
                "the broker's ConsumerProtocol cannot read the subscription of {}",
                malformed.join(", ")
            ),
        );
    }
    if !custom.is_empty() {
        // A large group would make the detail a member list: three name it.
        let more = match custom.len() {
            n if n > 3 => format!(" and {} more", n - 3),
            _ => String::new(),
        };
        return refuse(
            Refusal::CustomAssignor,
            "an unsupported custom assignor is in use. Please refer to the documentation or switch to a default \
             assignor before re-attempting the upgrade",
            format!(
                "assignor {}: the assignment user data of {}{more} would be lost",
                g.protocol,
                custom[..custom.len().min(3)].join(", ")
            ),
        );
    }
    let missing: Vec<&str> = g
        .members
        .iter()
        .filter(|m| m.assignment.is_none())
        .map(|m| m.id.as_str())
        .collect();
    if !missing.is_empty() {
        return Upgrade::Unknown {
            why: format!(
                "the group is in state {} and the broker returned no assignment for {}: \
                 whether their assignor writes user data cannot be told",
                g.state,
                missing.join(", ")
            ),
        };
    }
    if n >= cfg.max_size() {
        // The conversion passes, then the joining member finds the group full
        // and the heartbeat fails, so nothing is written: still classic.
        return Upgrade::Refused {
            reason: Refusal::Full,
            error: "GROUP_MAX_SIZE_REACHED",
            message: format!(
                "The consumer group has reached its maximum capacity of {} members.",
                cfg.max_size()
            ),
            detail: format!(
                "{n} members, group.consumer.max.size is {}: the joining member makes one too many",
                cfg.max_size()
            ),
        };
    }
    Upgrade::Allowed {
        how: format!(
            "the group is converted to a consumer group at the first consumer-protocol heartbeat; \
             its {n} classic members stay until each rejoins with the consumer protocol"
        ),
    }
}

/// Server `range` on the described subscriptions; `None` (with a finding)
/// when a subscription or topic is unknown.
fn range_check(
    members: &[DescribedMember],
    topics: &[ClusterTopic],
    model: Assignor,
    assignor: &str,
    findings: &mut Vec<Finding>,
) -> Option<RangeCheck> {
    let r = match analyze(members, topics, Some((model, &[]))) {
        Ok(r) => r,
        Err(e) => {
            let why = match &e {
                PredictError::NoSubscription { member } => format!(
                    "the broker returned no subscription for member {member} (the group is rebalancing)"
                ),
                other => other.to_string(),
            };
            findings.push(finding(
                "range-unknown",
                format!("what server range would do cannot be told: {why}"),
                "run again when the group is Stable",
            ));
            return None;
        }
    };
    let (_, view) = r.predicted?;
    let mut subscriptions: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
    // A member whose subscription could not be read is its own finding, not
    // a member of another subscription.
    for m in members.iter().filter(|m| m.undecodable.is_none()) {
        let mut s = m.subscription.clone().unwrap_or_default();
        s.sort();
        s.dedup();
        subscriptions.entry(s).or_default().push(m.id.clone());
    }
    if subscriptions.len() < 2 {
        subscriptions.clear();
    }
    let names: BTreeSet<&String> = members
        .iter()
        .flat_map(|m| m.subscription.iter().flatten())
        .collect();
    let mut counts: Vec<(String, u32)> = names
        .into_iter()
        .filter_map(|t| {
            topics
                .iter()
                .find(|c| &c.name == t)
                .map(|c| (t.clone(), c.partitions))
        })
        .collect();
    if counts.iter().map(|c| c.1).collect::<BTreeSet<_>>().len() < 2 {
        counts.clear();
    } else {
        counts.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    }
    let split_count = view.split_count();
    if split_count > 0 {
        let sets: Vec<String> = view
            .sets
            .iter()
            .filter(|s| s.colocation.split_count() > 0)
            .map(|s| {
                format!(
                    "{} of {} indices of {}",
                    s.colocation.split_count(),
                    s.colocation.owners.len(),
                    s.topics.join(", ")
                )
            })
            .collect();
        let cause = if subscriptions.is_empty() {
            String::new()
        } else {
            format!(
                ": the members do not subscribe to the same topics ({})",
                subscriptions
                    .iter()
                    .map(|(s, ms)| format!("{} -> {}", ms.join(","), s.join(",")))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        };
        findings.push(finding(
            "range-splits",
            format!("server range would split {}{cause}", sets.join("; ")),
            format!(
                "give every member the same subscription before the move (server range co-partitions only then, \
                 and only topics of equal partition counts), or use {assignor}"
            ),
        ));
    }
    Some(RangeCheck {
        model,
        view,
        split_count,
        subscriptions,
        counts,
    })
}

fn remote_assignors(
    configs: &[BrokerConfig],
    range_whole: Option<bool>,
    findings: &mut Vec<Finding>,
) -> Vec<RemoteAssignor> {
    let Some(first) = configs.first() else {
        return Vec::new();
    };
    let copartitioned = copartitioned_brokers(configs);
    let off: Vec<String> = configs
        .iter()
        .filter(|c| {
            c.rebalance_protocols
                .as_ref()
                .is_some_and(|p| !p.iter().any(|p| p.trim().eq_ignore_ascii_case("consumer")))
        })
        .map(|c| c.broker.to_string())
        .collect();
    if !off.is_empty() {
        findings.push(finding(
            "consumer-protocol-disabled",
            format!(
                "broker(s) {} do not list consumer in group.coordinator.rebalance.protocols: \
                 a group.protocol=consumer member cannot join at all",
                off.join(", ")
            ),
            "add consumer to group.coordinator.rebalance.protocols on every broker (and check that the \
             cluster's group.version feature is 1 or more)",
        ));
    }
    for c in &configs[1..] {
        if c.assignor_entries() != first.assignor_entries()
            || c.policy() != first.policy()
            || c.max_size() != first.max_size()
            || c.rebalance_protocols != first.rebalance_protocols
        {
            findings.push(finding(
                "broker-configs-differ",
                format!(
                    "brokers {} and {} differ in group.consumer.assignors, group.consumer.migration.policy \
                     or group.consumer.max.size: the group's coordinator decides, and it moves on failover",
                    first.broker, c.broker
                ),
                match (&copartitioned.accepting[..], &copartitioned.lacking[..]) {
                    ([_, ..], [_, ..]) => format!(
                        "give every broker the same group.consumer.* settings; for partwise's broker assignor, set {}",
                        copartitioned_advice(configs)
                    ),
                    _ => "give every broker the same group.consumer.* settings".into(),
                },
            ));
        }
    }
    let list: Vec<RemoteAssignor> = first
        .assignor_entries()
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let name = assignor_name(e);
            let keeps_units = match name {
                Some("copartitioned") => KeepsUnits::Yes,
                Some("range") => match range_whole {
                    Some(true) => KeepsUnits::Holds,
                    Some(false) => KeepsUnits::No,
                    None => KeepsUnits::Unknown,
                },
                Some(_) => KeepsUnits::No,
                None => KeepsUnits::Unknown,
            };
            RemoteAssignor {
                entry: e.trim().to_string(),
                name: name.map(str::to_string),
                keeps_units,
                default: i == 0,
            }
        })
        .collect();
    if !list
        .iter()
        .any(|a| matches!(a.keeps_units, KeepsUnits::Yes | KeepsUnits::Holds))
    {
        findings.push(finding(
            "no-remote-assignor-keeps-units",
            if list.is_empty() {
                "the brokers accept no assignor (group.consumer.assignors is empty), so none keeps this group's co-partitioned indices together".to_string()
            } else {
                format!(
                    "no assignor the brokers accept ({}) keeps this group's co-partitioned indices together",
                    list.iter()
                        .map(|a| a.name.clone().unwrap_or_else(|| a.entry.clone()))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            },
            format!("set {}", copartitioned_advice(configs)),
        ));
    }
    list
}

/// Whether the classic group `g` is ready to move, with the brokers'
/// settings `configs` (at least one; the first is shown) and the cluster's
/// partition counts; server `range` as [`Assignor::Kip848Range`] computes it.
pub fn classic(g: &ClassicGroup, configs: &[BrokerConfig], topics: &[ClusterTopic]) -> Readiness {
    classic_with(g, configs, topics, Assignor::Kip848Range)
}

/// [`classic`], with server `range` as `range_model` computes it (the model
/// of the brokers' release, [`crate::assign::kip848_model_for_broker`]).
pub fn classic_with(
    g: &ClassicGroup,
    configs: &[BrokerConfig],
    topics: &[ClusterTopic],
    range_model: Assignor,
) -> Readiness {
    let default = BrokerConfig::default();
    let cfg = configs.first().unwrap_or(&default);
    let clients = member_clients(g);
    let client_id = |i: usize| {
        crate::group::clients::shown_client_id(
            g.clients.get(i).map_or("", |c| c.client_id.as_str()),
        )
    };
    // A member whose bytes partwise cannot read subscribes to what it cannot
    // tell: no prediction is made for the group as if it subscribed to nothing.
    let mut findings: Vec<Finding> = g
        .members
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            let why = m.undecodable.as_ref()?;
            Some(finding(
                crate::group::described::UNDECODABLE,
                format!(
                    "member {} ({}): {why}; what it subscribes to is unknown, so partwise predicts \
                     no server assignor's target for this group and cannot call it ready",
                    m.id,
                    client_id(i)
                ),
                format!(
                    "check which client and version member {} runs ({}; its host is in the member \
                     table): it writes bytes that are not the consumer protocol's; fix or stop it, then run again",
                    m.id,
                    client_id(i)
                ),
            ))
        })
        .collect();
    let undecodable = g
        .members
        .iter()
        .any(|m| m.undecodable.is_some() && m.subscription.is_none());
    let advice = copartitioned_advice(configs);
    // The group's present state comes first: a group that splits units now
    // is not ready, whatever a move would do.
    let live = analyze(&g.members, topics, None).ok().and_then(|a| a.live);
    if let Some(v) = live.as_ref().filter(|v| v.split_count() > 0) {
        let sets: Vec<String> = v
            .sets
            .iter()
            .filter(|s| s.colocation.split_count() > 0)
            .map(|s| {
                format!(
                    "{} of {} indices of {}",
                    s.colocation.split_count(),
                    s.colocation.owners.len(),
                    s.topics.join(", ")
                )
            })
            .collect();
        let keep: Vec<String> = clients
            .iter()
            .map(|c| format!("{}: {}", c.client.facts().name, c.client.facts().keep_units))
            .collect();
        findings.push(finding(
            "splits-now",
            format!(
                "the group splits co-partitioned indices right now, under its assignor {}: {}",
                g.protocol,
                sets.join("; ")
            ),
            format!(
                "keep each index's partitions on one member before (or instead of) any move: {}",
                keep.join("; ")
            ),
        ));
    }
    let streams = clients.iter().any(|c| c.client == Client::KafkaStreams);
    // A member whose client has no consumer protocol cannot join with it, so
    // the group cannot move while it is in the group, whatever the
    // coordinator would allow: each such client is a finding of its own,
    // with what its members can do instead. A member partwise cannot
    // identify may be one of them: unknown, never ready.
    for c in &clients {
        let f = c.client.facts();
        let members = c.members.join(", ");
        match (c.client, f.without) {
            (Client::Unknown, _) => {
                let ids: Vec<String> = g
                    .members
                    .iter()
                    .enumerate()
                    .filter(|(_, m)| c.members.contains(&m.id))
                    .map(|(i, m)| format!("{} ({})", m.id, client_id(i)))
                    .collect();
                findings.push(finding(
                    "client-unknown",
                    format!(
                        "member(s) {} run a client partwise cannot identify ({}): whether they can join with \
                         the consumer protocol, and from which release, is unknown",
                        ids.join(", "),
                        c.evidence
                    ),
                    f.alternative,
                ))
            }
            (Client::KafkaStreams, Some(without)) => findings.push(finding(
                "streams-group",
                format!("member(s) {members} run Kafka Streams ({}): {without}", c.evidence),
                streams_path(configs),
            )),
            (_, Some(without)) => findings.push(finding(
                "client-without-consumer-protocol",
                format!(
                    "member(s) {members} run {} ({}): {without}, so they cannot join with the consumer protocol and \
                     the group cannot move to it while they are in it",
                    f.name, c.evidence
                ),
                f.alternative,
            )),
            _ => {}
        }
    }
    let upgrade = upgrade(g, cfg);
    match &upgrade {
        // Kafka Streams never joins with group.protocol=consumer: the
        // coordinator's upgrade rules do not apply to its move.
        _ if streams => {}
        Upgrade::Refused {
            reason,
            error,
            message,
            detail,
        } => findings.push(finding(
            reason.kind(),
            format!("an online upgrade would be refused ({detail}): the joining member gets {error}: {message}"),
            reason.fix(&advice),
        )),
        Upgrade::Unknown { why } => findings.push(finding(
            "upgrade-unknown",
            format!("whether an online upgrade would be refused cannot be told: {why}"),
            "run again when the group is Stable",
        )),
        Upgrade::Allowed { .. } => {}
    }
    // Server range is what a consumer-protocol member would get: not asked
    // for a Streams group, nor when a member's subscription is unknown.
    let range = if g.members.is_empty() || streams || undecodable {
        None
    } else {
        range_check(&g.members, topics, range_model, &advice, &mut findings)
    };
    let mut assignor_findings = Vec::new();
    let assignors = remote_assignors(
        configs,
        range.as_ref().map(|r| r.split_count == 0),
        &mut assignor_findings,
    );
    if !streams {
        findings.extend(assignor_findings);
    }
    Readiness {
        upgrade,
        live,
        range,
        assignors,
        copartitioned: copartitioned_brokers(configs),
        clients,
        findings,
    }
}

/// A classic Kafka Streams group's way off the classic protocol: the
/// streams rebalance protocol, in Kafka Streams' and the broker's own
/// settings, with the brokers that leave `streams` out of
/// `group.coordinator.rebalance.protocols` named, the offline move the
/// coordinator requires (no online migration between the classic and the
/// streams protocol) and what the streams protocol does not support yet
/// (Apache Kafka's "Streams Rebalance Protocol" guide; the sources are in
/// `docs/reference/kafka-streams.md`).
pub fn streams_path(configs: &[BrokerConfig]) -> String {
    let mut s = String::from(
        "set group.protocol=streams in the application's StreamsConfig (Kafka Streams 4.2 or later), with every broker on Apache Kafka 4.2 or later and streams groups enabled: \
         the feature streams.version=1 (set on a cluster formatted by 4.2 or later; on an upgraded one \
         kafka-features.sh upgrade --feature streams.version=1) and streams in \
         group.coordinator.rebalance.protocols",
    );
    let lacking: Vec<String> = configs
        .iter()
        .filter(|c| {
            c.rebalance_protocols
                .as_ref()
                .is_some_and(|p| !p.iter().any(|x| x == "streams"))
        })
        .map(|c| c.broker.to_string())
        .collect();
    if !lacking.is_empty() {
        s.push_str(&format!(
            " (broker(s) {} leave streams out of group.coordinator.rebalance.protocols: add it)",
            lacking.join(", ")
        ));
    }
    s.push_str(
        "; the move is offline: stop every instance, wait for session.timeout.ms (or have them leave the \
         group), then start them all with group.protocol=streams (committed offsets are kept); not supported \
         yet under the streams protocol: static membership (a group.instance.id is rejected), source topics \
         by regular expression, warm-up tasks (the broker's sticky assignor only), and topology changes that \
         add source topics or sub-topologies (they need a new application.id)",
    );
    s
}

/// The target server `uniform` would give the members of a group that
/// moves with none of them carrying partitions over (a fresh consumer
/// group), as `model` computes it: the model of the brokers' release
/// ([`crate::assign::kip848_model_for_broker`]). `None` when the model is
/// undecided, there are no members, or a subscription is unknown.
pub fn server_uniform(
    members: &[DescribedMember],
    topics: &[ClusterTopic],
    model: Option<Assignor>,
) -> Option<View> {
    let model = model?;
    if members.is_empty()
        || members
            .iter()
            .any(|m| m.undecodable.is_some() && m.subscription.is_none())
    {
        return None;
    }
    analyze(members, topics, Some((model, &[])))
        .ok()
        .and_then(|a| a.predicted)
        .map(|(_, view)| view)
}

/// A consumer-protocol group's two assignments: what the broker's assignor
/// decided (target) and what the members own now (current).
#[derive(Clone, Debug, PartialEq)]
pub struct ConsumerGroupCheck {
    /// The group's assignor (`group.remote.assignor` in use).
    pub assignor: String,
    /// The target assignment's view (`None`: not returned).
    pub target: Option<View>,
    /// The current assignment's view.
    pub current: Option<View>,
    /// Whether the members own their targets (reconciliation done).
    pub reconciled: bool,
    /// Server `range` on the members' subscriptions (`None`: not known).
    pub range: Option<RangeCheck>,
    /// The accepted assignors.
    pub assignors: Vec<RemoteAssignor>,
    /// The clients the members run, as their client ids tell them (empty
    /// when the caller gave none).
    pub clients: Vec<ClientMembers>,
    /// Everything to fix; empty when every unit is whole in both and every
    /// member's client is known.
    pub findings: Vec<Finding>,
}

/// A consumer-protocol group: `current` holds the members' owned
/// partitions, `target` the same members with the broker's target
/// assignment; server `range` as [`Assignor::Kip848Range`] computes it.
pub fn consumer(
    assignor: &str,
    current: &[DescribedMember],
    target: &[DescribedMember],
    configs: &[BrokerConfig],
    topics: &[ClusterTopic],
) -> ConsumerGroupCheck {
    consumer_with(
        assignor,
        current,
        target,
        configs,
        topics,
        Assignor::Kip848Range,
        false,
        &[],
    )
}

/// [`consumer`], with server `range` as `range_model` computes it;
/// `assigning`: the group is in state Assigning (its group epoch is ahead of
/// its target's: a member joined, left or changed its subscription, and the
/// coordinator has not computed the new target yet; since Kafka 4.1 it does
/// that a moment later, and meanwhile a joiner's target is empty);
/// `clients`: per member of `current` (same order), what the description
/// shows of its client (ConsumerGroupDescribe: its client id). A member
/// whose client its client id does not tell is unknown: a finding naming
/// it, so the group is never called ready while it is there. An empty
/// `clients` identifies no one (a caller without client ids).
#[allow(clippy::too_many_arguments)]
pub fn consumer_with(
    assignor: &str,
    current: &[DescribedMember],
    target: &[DescribedMember],
    configs: &[BrokerConfig],
    topics: &[ClusterTopic],
    range_model: Assignor,
    assigning: bool,
    clients: &[ClientSeen],
) -> ConsumerGroupCheck {
    let mut findings = crate::group::described::undecodable_findings(current);
    let mut members_of: Vec<ClientMembers> = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    for (m, seen) in current.iter().zip(clients) {
        let who = crate::group::clients::identify_consumer_member(&seen.client_id);
        if who.client == Client::Unknown {
            unknown.push(format!(
                "{} ({})",
                m.id,
                crate::group::clients::shown_client_id(&seen.client_id)
            ));
        }
        match members_of.iter_mut().find(|c| c.client == who.client) {
            Some(c) => c.members.push(m.id.clone()),
            None => members_of.push(ClientMembers {
                client: who.client,
                members: vec![m.id.clone()],
                evidence: who.evidence,
            }),
        }
    }
    members_of.sort_by_key(|c| c.client);
    if !unknown.is_empty() {
        findings.push(finding(
            "client-unknown",
            format!(
                "member(s) {} run a client partwise cannot identify: a consumer-protocol member \
                 shows only its client id, and none of these is a client's default; what the \
                 client does with its assignment (and whether it keeps a unit's partitions \
                 together while it reconciles) is unknown, so the group is not called ready",
                unknown.join(", ")
            ),
            format!(
                "check which client library and release each of {} runs (its host is in the \
                 member table); leave client.id (client_id, clientId) at the library's default \
                 to let partwise tell it, then run again",
                unknown.join(", ")
            ),
        ));
    }
    let view = |ms: &[DescribedMember]| analyze(ms, topics, None).ok().and_then(|r| r.live);
    let (cur, tgt) = (view(current), view(target));
    let reconciled = !assigning
        && match (&cur, &tgt) {
            (Some(c), Some(t)) => c.owned_by() == t.owned_by(),
            _ => false,
        };
    if assigning {
        findings.push(finding(
            "target-pending",
            "the coordinator is computing a new target assignment (group state Assigning: \
             the membership or a subscription changed moments ago); the target shown is \
             the previous one"
                .into(),
            "run again in a few seconds",
        ));
    }
    let sets = |v: &View| {
        v.sets
            .iter()
            .filter(|s| s.colocation.split_count() > 0)
            .map(|s| format!("{} of {}", s.colocation.split_count(), s.topics.join(", ")))
            .collect::<Vec<_>>()
            .join("; ")
    };
    match &tgt {
        Some(t) if t.split_count() > 0 => findings.push(finding(
            "target-splits",
            format!(
                "the broker's assignor {assignor} splits {} indices in its target assignment ({})",
                t.split_count(),
                sets(t)
            ),
            format!(
                "use {}, or, for range, the same subscription on every member and equal partition counts",
                copartitioned_advice(configs)
            ),
        )),
        Some(_) => {}
        None => findings.push(finding(
            "target-unknown",
            "the broker returned no target assignment".into(),
            "run again",
        )),
    }
    if let Some(c) = &cur {
        if c.split_count() > 0 && tgt.as_ref().is_some_and(|t| t.split_count() == 0) {
            findings.push(finding(
                "reconciling-split",
                format!(
                    "members still reconcile to the target: {} indices are split right now ({})",
                    c.split_count(),
                    sets(c)
                ),
                "a partwise runtime hands a unit out only when all its partitions are owned; \
                 other members process split indices until reconciliation ends: run again",
            ));
        }
    }
    // Whether range would do: its own verdict on these subscriptions, not the
    // target of whichever assignor the group uses now. Its findings would
    // repeat target-splits for a range group and are noise for the others.
    let range = range_check(target, topics, range_model, "", &mut Vec::new());
    let whole = range.as_ref().map(|r| r.split_count == 0);
    let assignors = remote_assignors(configs, whole, &mut Vec::new());
    ConsumerGroupCheck {
        assignor: assignor.to_string(),
        target: tgt,
        current: cur,
        reconciled,
        range,
        assignors,
        clients: members_of,
        findings,
    }
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
