//! Consumer-group assignors: simulations of the real ones, bit-exact given the
//! same members, and partwise's own co-partitioned assignor.
//!
//! This module owns the assignment model ([`Group`]: members with their
//! subscriptions and previously owned partitions, topics with partition
//! counts), the assignors addressed by spec strings ([`Assignor`]: `java:range`,
//! `kip848:uniform`, `copartitioned`, ...), and the co-location analysis
//! ([`colocation`]: for each partition index, whether one member owns it in
//! every topic that has it).
//!
//! ```
//! use partwise::assign::{colocation, Assignor, Group, Member, Topic};
//!
//! let topics = vec![Topic::new("orders", 6), Topic::new("payments", 6)];
//! let group = Group::new(
//!     (0..4).map(|i| Member::new(format!("m{i:02}"), ["orders", "payments"])).collect(),
//!     topics,
//! );
//! // Round-robin splits partition indices when 4 members share 6 partitions ...
//! let rr = "java:roundrobin".parse::<Assignor>()?.assign(&group)?;
//! assert_eq!(colocation(&group, &rr).split_count(), 6);
//! // ... range and the co-partitioned assignor never do.
//! let range = "java:range".parse::<Assignor>()?.assign(&group)?;
//! assert_eq!(colocation(&group, &range).split_count(), 0);
//! let cp = "copartitioned".parse::<Assignor>()?.assign(&group)?;
//! assert_eq!(colocation(&group, &cp).split_count(), 0);
//! # Ok::<(), partwise::Error>(())
//! ```

mod broker;
mod model;
mod outcome;
mod spec;
pub use broker::{kip848_model_for_broker, BrokerModel};
pub use model::{member_names, Assignment, Group, Member, Topic, Tp};
pub use outcome::{colocation, colocation_of, Colocation, Outcome, Simulation, SIMULATED_RUNS};
pub use spec::KIP848_VERSIONS;

mod copartitioned;
mod franz_sticky;
mod go;
pub mod group_file;
pub mod limits;
pub mod order;
mod platformatic;
mod python;
mod python_sticky;
mod range;
mod rdkafka_sticky;
mod rng;
mod roundrobin;
mod sarama_sticky;
mod sticky;
mod sticky_general;
mod uniform;
mod uniform_hetero;
pub mod units;

pub use copartitioned::copartition_groups;
pub use roundrobin::kafkajs_roundrobin_ordered;

/// librdkafka's sticky assignor without the leader's cooperative adjustment
/// (partitions that change owner are not withheld): the assignor callback's
/// own output, which librdkafka's unit tests check. The group-level behaviour
/// is [`Assignor::LibrdkafkaCooperativeSticky`].
pub fn librdkafka_sticky_unadjusted(group: &Group) -> Result<Assignment, crate::Error> {
    validate(group)?;
    Ok(rdkafka_sticky::unadjusted(group))
}

/// KIP-848 `uniform`'s `UniformHeterogeneousAssignmentBuilder` whatever the
/// subscriptions. [`Assignor::Kip848Uniform`] takes it only when they
/// differ, as the coordinator does; its upstream unit tests also run it on
/// equal ones.
pub fn kip848_uniform_heterogeneous(group: &Group) -> Result<Assignment, crate::Error> {
    validate(group)?;
    Ok(uniform_hetero::heterogeneous(group))
}

use std::fmt;
use std::str::FromStr;

/// Topic indices sorted by name.
fn topics_by_name(group: &Group) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..group.topics.len()).collect();
    idx.sort_by(|&a, &b| order::java_cmp(&group.topics[a].name, &group.topics[b].name));
    idx
}

/// The cooperative step of the Go clients' sticky balancers: a partition
/// planned for member `m` (`added`) that its owner loses this round
/// (`revoked`) is withheld from `m` until the owner has let it go; the
/// withheld partitions sorted by topic name, then partition.
fn withhold(
    group: &Group,
    a: &mut Assignment,
    added: &std::collections::HashMap<Tp, usize>,
    revoked: &std::collections::HashSet<Tp>,
) {
    let mut withheld = Vec::new();
    for (m, list) in a.partitions.iter_mut().enumerate() {
        list.retain(|tp| {
            let drop = revoked.contains(tp) && added.get(tp) == Some(&m);
            if drop {
                withheld.push(*tp);
            }
            !drop
        });
    }
    let rank = topic_name_rank(group);
    withheld.sort_by_key(|tp| (rank[tp.topic as usize], tp.partition));
    a.withheld = withheld;
}

/// `rank[t]`: position of topic `t` when topics are sorted by name.
fn topic_name_rank(group: &Group) -> Vec<usize> {
    let idx = topics_by_name(group);
    let mut rank = vec![0; idx.len()];
    for (r, &t) in idx.iter().enumerate() {
        rank[t] = r;
    }
    rank
}

pub use crate::error::{AssignError, RefusalKind};

/// A spec partwise knows and refuses, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RefusedSpec {
    /// The canonical spec.
    pub spec: &'static str,
    /// Its client, as specs name it.
    pub client: &'static str,
    /// Why it is refused.
    pub kind: RefusalKind,
    /// Why, and what to use, in words.
    pub reason: &'static str,
}

impl RefusedSpec {
    fn error(&self, given: &str) -> crate::Error {
        crate::Error::Assign(AssignError::Refused {
            spec: given.to_string(),
            kind: self.kind,
            reason: self.reason.to_string(),
        })
    }
}

/// The specs partwise knows and refuses, which [`Assignor::catalog`] lists
/// beside the simulated ones.
pub const REFUSED: [RefusedSpec; 1] = [RefusedSpec {
    spec: "aiokafka:cooperative-sticky",
    client: "aiokafka",
    kind: RefusalKind::NotInClient,
    reason: "aiokafka 0.14.0 has no cooperative-sticky assignor (its assignors: roundrobin, the \
             default, range and sticky; kafka-python 3.0 has one: kafka-python:cooperative-sticky)",
}];

/// One line of [`Assignor::catalog`]: a spec, its client, and what partwise
/// does with it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CatalogEntry {
    /// The canonical spec.
    pub spec: &'static str,
    /// Its client, as specs name it (`java`, `sarama`, ...).
    pub client: &'static str,
    /// Whether the client's name alone means it (the client's default).
    pub default: bool,
    /// Whether the real assignor gives one answer per input (`None`: refused).
    pub deterministic: Option<bool>,
    /// Whether partwise simulates it.
    pub simulated: bool,
    /// The library release the simulation reproduces, for the clients that
    /// have one (`Sarama 1.61.1`), or the Kafka releases of a KIP-848 one.
    pub release: Option<String>,
    /// Why its answer varies between runs, when it does.
    pub varies_by: Option<&'static str>,
    /// Why it is refused, when it is.
    pub refused: Option<RefusalKind>,
    /// The refusal in words, when it is refused.
    pub reason: Option<&'static str>,
}

/// An assignor, addressed by spec (`java:range`, `copartitioned`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Assignor {
    /// Java `RangeAssignor` (classic protocol, client side; no racks).
    JavaRange,
    /// Java `RoundRobinAssignor`.
    JavaRoundRobin,
    /// Java `StickyAssignor` (eager): `ConstrainedAssignmentBuilder` when all
    /// subscriptions are equal, `GeneralAssignmentBuilder` otherwise; no racks.
    JavaSticky,
    /// Java `CooperativeStickyAssignor`: as sticky, minus partitions changing owner.
    JavaCooperativeSticky,
    /// KIP-848 server-side `uniform` (`UniformAssignor`): the homogeneous or
    /// heterogeneous builder, by subscriptions, as Kafka 4.0.1 to 4.4.0
    /// compute it (the newest; `kip848:uniform`, `kip848:uniform@4.1`, ...).
    Kip848Uniform,
    /// KIP-848 `uniform` as Kafka 4.0.0 computes it (`kip848:uniform@4.0.0`):
    /// its homogeneous builder gives the spare partitions to the first
    /// members in `memberIds()` order; from 4.0.1 a member that keeps fewer
    /// owned partitions than its quota leaves the spare one to others.
    Kip848Uniform400,
    /// KIP-848 server-side `range` (`RangeAssignor` of the group coordinator).
    Kip848Range,
    /// KafkaJS `RoundRobinAssigner`.
    KafkajsRoundRobin,
    /// librdkafka `range` (no racks).
    LibrdkafkaRange,
    /// librdkafka `roundrobin`.
    LibrdkafkaRoundRobin,
    /// librdkafka `cooperative-sticky` (its port of Java's general sticky
    /// algorithm, plus the leader's cooperative adjustment), no racks.
    LibrdkafkaCooperativeSticky,
    /// partwise's co-partitioned sticky assignor.
    Copartitioned,
    /// franz-go `CooperativeStickyBalancer` (kgo's default): franz-go's own
    /// sticky balancer, not Java's, plus its cooperative adjustment; its
    /// answer follows Go's randomised map order (see [`Assignor::deterministic`]).
    FranzgoCooperativeSticky,
    /// franz-go `StickyBalancer` (eager).
    FranzgoSticky,
    /// franz-go `RangeBalancer` (no racks).
    FranzgoRange,
    /// franz-go `RoundRobinBalancer`.
    FranzgoRoundRobin,
    /// Sarama `NewBalanceStrategyRange` (Sarama's default).
    SaramaRange,
    /// Sarama `NewBalanceStrategyRoundRobin` (partitions sorted as strings).
    SaramaRoundRobin,
    /// Sarama `NewBalanceStrategySticky` (eager): its Go port of Java's old
    /// sticky algorithm, claims read from the assignment user data; its
    /// answer follows Go's randomised map order.
    SaramaSticky,
    /// Sarama `NewBalanceStrategyCooperativeSticky`: the same algorithm on
    /// the subscription's owned partitions, minus partitions changing owner.
    SaramaCooperativeSticky,
    /// kafka-go `RangeGroupBalancer` (kafka-go's default).
    KafkagoRange,
    /// kafka-go `RoundRobinGroupBalancer`.
    KafkagoRoundRobin,
    /// kafka-python `RangePartitionAssignor` (kafka-python's default).
    KafkaPythonRange,
    /// kafka-python `RoundRobinPartitionAssignor` (raises `KeyError` on
    /// unequal subscriptions).
    KafkaPythonRoundRobin,
    /// kafka-python `StickyPartitionAssignor`: its port of Java's old
    /// sticky algorithm, whose answer can follow Python's set order.
    KafkaPythonSticky,
    /// kafka-python `CooperativeStickyAssignor`: the sticky answer minus
    /// partitions that change owner.
    KafkaPythonCooperativeSticky,
    /// aiokafka `RoundRobinPartitionAssignor` (aiokafka's default).
    AiokafkaRoundRobin,
    /// aiokafka `RangePartitionAssignor`.
    AiokafkaRange,
    /// aiokafka `StickyPartitionAssignor` (kafka-python's older sticky code).
    AiokafkaSticky,
    /// @platformatic/kafka `roundRobinAssigner` (its Consumer's default):
    /// the leader's topics dealt over the members in the coordinator's order.
    PlatformaticRoundRobin,
    /// @platformatic/kafka `cooperativeStickyAssigner` (its default under
    /// protocol `cooperative-sticky`), with its cooperative adjustment.
    PlatformaticCooperativeSticky,
}

impl Assignor {
    /// Every assignor, in the order `partwise assign` lists them.
    pub const ALL: [Assignor; 11] = [
        Assignor::JavaRange,
        Assignor::JavaRoundRobin,
        Assignor::JavaSticky,
        Assignor::JavaCooperativeSticky,
        Assignor::Kip848Uniform,
        Assignor::Kip848Range,
        Assignor::KafkajsRoundRobin,
        Assignor::LibrdkafkaRange,
        Assignor::LibrdkafkaRoundRobin,
        Assignor::LibrdkafkaCooperativeSticky,
        Assignor::Copartitioned,
    ];

    /// The Go clients' balancers, in the order `partwise assign` lists them:
    /// simulated for groups of those clients, never offered to a team of
    /// another client (a fix names assignors of the group's own client).
    pub const GO: [Assignor; 10] = [
        Assignor::FranzgoCooperativeSticky,
        Assignor::FranzgoSticky,
        Assignor::FranzgoRange,
        Assignor::FranzgoRoundRobin,
        Assignor::SaramaRange,
        Assignor::SaramaRoundRobin,
        Assignor::SaramaSticky,
        Assignor::SaramaCooperativeSticky,
        Assignor::KafkagoRange,
        Assignor::KafkagoRoundRobin,
    ];

    /// The Python clients' assignors, in the order `partwise assign` lists
    /// them: simulated for groups of those clients, never offered to a team
    /// of another client.
    pub const PYTHON: [Assignor; 7] = [
        Assignor::KafkaPythonRange,
        Assignor::KafkaPythonRoundRobin,
        Assignor::KafkaPythonSticky,
        Assignor::KafkaPythonCooperativeSticky,
        Assignor::AiokafkaRoundRobin,
        Assignor::AiokafkaRange,
        Assignor::AiokafkaSticky,
    ];

    /// @platformatic/kafka's assigners, in the order `partwise assign`
    /// lists them; like the Go clients', offered only to its own teams.
    pub const PLATFORMATIC: [Assignor; 2] = [
        Assignor::PlatformaticRoundRobin,
        Assignor::PlatformaticCooperativeSticky,
    ];

    /// Every assignor a spec can name: [`Assignor::ALL`], then
    /// [`Assignor::GO`], [`Assignor::PYTHON`], then [`Assignor::PLATFORMATIC`].
    pub fn every() -> impl Iterator<Item = Assignor> {
        Assignor::ALL
            .into_iter()
            .chain(Assignor::GO)
            .chain(Assignor::PYTHON)
            .chain(Assignor::PLATFORMATIC)
    }

    /// Every spec partwise knows, one registry for `partwise assign --help`
    /// and `partwise partitioners`: [`Assignor::every`], each with its client
    /// and whether it is deterministic, then [`REFUSED`] (not simulated).
    pub fn catalog() -> Vec<CatalogEntry> {
        let mut out: Vec<CatalogEntry> = Assignor::every()
            .map(|a| CatalogEntry {
                spec: a.spec(),
                client: a.client(),
                default: a.client().parse::<Assignor>().ok() == Some(a),
                deterministic: Some(a.deterministic()),
                simulated: true,
                release: a
                    .kafka_versions()
                    .map(|v| format!("Kafka {v}"))
                    .or_else(|| a.library_version().map(str::to_string)),
                varies_by: a.varies_by(),
                refused: None,
                reason: None,
            })
            .collect();
        out.extend(REFUSED.iter().map(|r| CatalogEntry {
            spec: r.spec,
            client: r.client,
            default: false,
            deterministic: None,
            simulated: false,
            release: None,
            varies_by: None,
            refused: Some(r.kind),
            reason: Some(r.reason),
        }));
        out
    }

    /// The assignors a team running this one can switch to, itself among
    /// them, as a placement's fix weighs them: [`Assignor::ALL`] for the
    /// Java, KafkaJS and librdkafka ones and partwise's; a Go client's own
    /// balancers for a Go client's (franz-go's also the KIP-848 server
    /// assignors, which it joins from release 1.19; Sarama and kafka-go
    /// have no consumer-protocol member).
    pub fn alternatives(self) -> Vec<Assignor> {
        match self.client() {
            "franz-go" => {
                let mut v: Vec<Assignor> = Assignor::GO
                    .into_iter()
                    .filter(|a| a.client() == "franz-go")
                    .collect();
                v.extend([Assignor::Kip848Uniform, Assignor::Kip848Range]);
                v
            }
            "platformatic" => {
                // @platformatic/kafka joins consumer-protocol groups from 1.18.0.
                let mut v = Assignor::PLATFORMATIC.to_vec();
                v.extend([Assignor::Kip848Uniform, Assignor::Kip848Range]);
                v
            }
            c @ ("sarama" | "kafka-go") => Assignor::GO
                .into_iter()
                .filter(|a| a.client() == c)
                .collect(),
            // Neither Python client has a consumer-protocol member.
            c @ ("kafka-python" | "aiokafka") => Assignor::PYTHON
                .into_iter()
                .filter(|a| a.client() == c)
                .collect(),
            _ => {
                let mut v = Assignor::ALL.to_vec();
                if !v.contains(&self) {
                    v.push(self);
                }
                v
            }
        }
    }

    /// The client whose assignor this is, as specs name it (`java`,
    /// `kip848`, `kafkajs`, `librdkafka`, `copartitioned`, `franz-go`,
    /// `sarama`, `kafka-go`).
    pub fn client(self) -> &'static str {
        let spec = self.spec();
        spec.split_once(':').map_or(spec, |(c, _)| c)
    }

    /// The release of the client library whose code this simulation
    /// reproduces (checked against it, `tests/vectors/README.md`), for the
    /// Go and Python clients' assignors; `None` for the others.
    pub fn library_version(self) -> Option<&'static str> {
        match self.client() {
            "franz-go" => Some("franz-go 1.22.3"),
            "sarama" => Some("Sarama 1.61.1"),
            "kafka-go" => Some("kafka-go 0.4.51"),
            "kafka-python" => Some(python::KAFKA_PYTHON),
            "aiokafka" => Some(python::AIOKAFKA),
            "platformatic" => Some("@platformatic/kafka 2.12.1"),
            _ => None,
        }
    }

    /// Why the real assignor's answer varies between runs, in a few words
    /// (`Go's random map order`); `None` for a deterministic one.
    pub fn varies_by(self) -> Option<&'static str> {
        if self.deterministic() {
            return None;
        }
        Some(if self.python_setting().is_some() {
            "Python's set order, seeded per process by PYTHONHASHSEED"
        } else {
            "Go's random map order"
        })
    }

    /// How a team of the Python clients selects this assignor, in the
    /// client's own words (its consumer's option and the class with its
    /// module); `None` for the other clients' assignors.
    pub fn python_setting(self) -> Option<&'static str> {
        Some(match self {
            Assignor::KafkaPythonRange => "KafkaConsumer(partition_assignment_strategy=[RangePartitionAssignor]) from kafka.coordinator.assignors.range",
            Assignor::KafkaPythonRoundRobin => "KafkaConsumer(partition_assignment_strategy=[RoundRobinPartitionAssignor]) from kafka.coordinator.assignors.roundrobin",
            Assignor::KafkaPythonSticky => "KafkaConsumer(partition_assignment_strategy=[StickyPartitionAssignor]) from kafka.coordinator.assignors.sticky.sticky_assignor",
            Assignor::KafkaPythonCooperativeSticky => "KafkaConsumer(partition_assignment_strategy=[CooperativeStickyAssignor]) from kafka.coordinator.assignors.cooperative_sticky",
            Assignor::AiokafkaRoundRobin => "AIOKafkaConsumer(partition_assignment_strategy=(RoundRobinPartitionAssignor,)) from aiokafka.coordinator.assignors.roundrobin",
            Assignor::AiokafkaRange => "AIOKafkaConsumer(partition_assignment_strategy=(RangePartitionAssignor,)) from aiokafka.coordinator.assignors.range",
            Assignor::AiokafkaSticky => "AIOKafkaConsumer(partition_assignment_strategy=(StickyPartitionAssignor,)) from aiokafka.coordinator.assignors.sticky.sticky_assignor",
            _ => return None,
        })
    }

    /// Whether one run of the real assignor gives the same answer as every
    /// other on the same group. franz-go's sticky balancers number
    /// partitions in the order of a Go map, which Go randomises, so two runs
    /// over the same members can differ: partwise runs them several times
    /// ([`Assignor::simulate`]); Sarama's sticky strategies walk Go maps at
    /// every step. The Python clients' sticky assignors take
    /// elements of sets of partitions, whose order follows Python's string
    /// hash, seeded anew in every process (`PYTHONHASHSEED`).
    pub fn deterministic(self) -> bool {
        !matches!(
            self,
            Assignor::FranzgoCooperativeSticky
                | Assignor::FranzgoSticky
                | Assignor::SaramaSticky
                | Assignor::SaramaCooperativeSticky
                | Assignor::KafkaPythonSticky
                | Assignor::KafkaPythonCooperativeSticky
                | Assignor::AiokafkaSticky
        )
    }

    /// The canonical spec.
    pub fn spec(self) -> &'static str {
        match self {
            Assignor::JavaRange => "java:range",
            Assignor::JavaRoundRobin => "java:roundrobin",
            Assignor::JavaSticky => "java:sticky",
            Assignor::JavaCooperativeSticky => "java:cooperative-sticky",
            Assignor::Kip848Uniform => "kip848:uniform",
            Assignor::Kip848Uniform400 => "kip848:uniform@4.0.0",
            Assignor::Kip848Range => "kip848:range",
            Assignor::KafkajsRoundRobin => "kafkajs:roundrobin",
            Assignor::LibrdkafkaRange => "librdkafka:range",
            Assignor::LibrdkafkaRoundRobin => "librdkafka:roundrobin",
            Assignor::LibrdkafkaCooperativeSticky => "librdkafka:cooperative-sticky",
            Assignor::Copartitioned => "copartitioned",
            Assignor::FranzgoCooperativeSticky => "franz-go:cooperative-sticky",
            Assignor::FranzgoSticky => "franz-go:sticky",
            Assignor::FranzgoRange => "franz-go:range",
            Assignor::FranzgoRoundRobin => "franz-go:roundrobin",
            Assignor::SaramaRange => "sarama:range",
            Assignor::SaramaRoundRobin => "sarama:roundrobin",
            Assignor::SaramaSticky => "sarama:sticky",
            Assignor::SaramaCooperativeSticky => "sarama:cooperative-sticky",
            Assignor::KafkagoRange => "kafka-go:range",
            Assignor::KafkagoRoundRobin => "kafka-go:roundrobin",
            Assignor::KafkaPythonRange => "kafka-python:range",
            Assignor::KafkaPythonRoundRobin => "kafka-python:roundrobin",
            Assignor::KafkaPythonSticky => "kafka-python:sticky",
            Assignor::KafkaPythonCooperativeSticky => "kafka-python:cooperative-sticky",
            Assignor::AiokafkaRoundRobin => "aiokafka:roundrobin",
            Assignor::AiokafkaRange => "aiokafka:range",
            Assignor::AiokafkaSticky => "aiokafka:sticky",
            Assignor::PlatformaticRoundRobin => "platformatic:roundrobin",
            Assignor::PlatformaticCooperativeSticky => "platformatic:cooperative-sticky",
        }
    }

    /// The Apache Kafka releases whose server assignor this is, for the
    /// KIP-848 assignors (checked against those releases' jars, see
    /// `tests/vectors/README.md`); `None` for client-side assignors.
    pub fn kafka_versions(self) -> Option<&'static str> {
        match self {
            Assignor::Kip848Uniform => Some("4.0.1 to 4.4.0"),
            Assignor::Kip848Uniform400 => Some("4.0.0"),
            Assignor::Kip848Range => Some("4.0.0 to 4.4.0"),
            _ => None,
        }
    }

    /// The spec, followed for a KIP-848 assignor by the Kafka releases it
    /// models, `kip848:uniform (Kafka 4.0.1 to 4.4.0)`, and for a Go
    /// client's by the library release, `franz-go:range (franz-go 1.22.3)`.
    pub fn label(self) -> String {
        match (self.kafka_versions(), self.library_version()) {
            (Some(v), _) => format!("{} (Kafka {v})", self.spec()),
            (None, Some(v)) => format!("{} ({v})", self.spec()),
            (None, None) => self.spec().to_string(),
        }
    }

    /// The KIP-848 server assignor the broker of Apache Kafka `version`
    /// (`major.minor` or `major.minor.patch`) runs under the name `name`
    /// (`uniform` or `range`): `Err` names the reason for a version partwise
    /// has no known answers for, or one (`4.0`) whose releases differ.
    pub fn kip848_for_version(name: &str, version: &str) -> Result<Assignor, String> {
        let range = match name {
            "uniform" => false,
            "range" => true,
            _ => {
                return Err(format!(
                    "no KIP-848 server assignor '{name}' (uniform, range)"
                ))
            }
        };
        let v = version.trim();
        let known = KIP848_VERSIONS.contains(&v);
        if !known {
            return Err(format!(
                "no known answers for Kafka {v} (known: {})",
                KIP848_VERSIONS.join(", ")
            ));
        }
        Ok(match (range, v) {
            (true, _) => Assignor::Kip848Range,
            (false, "4.0") => {
                return Err("Kafka 4.0.0 and 4.0.1+ compute uniform differently: \
                     say @4.0.0 or @4.0.1"
                    .into())
            }
            (false, "4.0.0") => Assignor::Kip848Uniform400,
            (false, _) => Assignor::Kip848Uniform,
        })
    }

    /// Whether the assignor reads the members' previously owned partitions.
    pub fn is_sticky(self) -> bool {
        matches!(
            self,
            Assignor::JavaSticky
                | Assignor::JavaCooperativeSticky
                | Assignor::Kip848Uniform
                | Assignor::Kip848Uniform400
                | Assignor::LibrdkafkaCooperativeSticky
                | Assignor::Copartitioned
                | Assignor::FranzgoCooperativeSticky
                | Assignor::FranzgoSticky
                | Assignor::SaramaSticky
                | Assignor::SaramaCooperativeSticky
                | Assignor::KafkaPythonSticky
                | Assignor::KafkaPythonCooperativeSticky
                | Assignor::AiokafkaSticky
                | Assignor::PlatformaticCooperativeSticky
        )
    }

    /// One run of the assignor with `seed` standing for the run's Go map
    /// orders; a deterministic assignor ignores it. [`Assignor::assign`] and
    /// [`Assignor::simulate`] are made of these.
    pub fn assign_seeded(self, group: &Group, seed: u64) -> Result<Assignment, crate::Error> {
        self.run_seeded(group, seed).map_err(crate::Error::Assign)
    }

    /// `runs` runs of the assignor with seeds 0, 1, ...: each distinct
    /// outcome with the number of runs that gave it, the most frequent
    /// first. A deterministic assignor is run once.
    pub fn simulate(self, group: &Group, runs: usize) -> Result<Simulation, crate::Error> {
        let runs = if self.deterministic() { 1 } else { runs.max(1) };
        let mut outcomes: Vec<Outcome> = Vec::new();
        for seed in 0..runs as u64 {
            let a = self.assign_seeded(group, seed)?;
            match outcomes.iter_mut().find(|o| o.assignment == a) {
                Some(o) => o.runs += 1,
                None => outcomes.push(Outcome {
                    assignment: a,
                    runs: 1,
                }),
            }
        }
        // Stable: among equally frequent outcomes, the first seen first.
        outcomes.sort_by_key(|o| std::cmp::Reverse(o.runs));
        Ok(Simulation {
            deterministic: self.deterministic(),
            runs,
            outcomes,
        })
    }

    /// Runs the assignor on `group`; a refusal is an [`crate::Error::Assign`].
    pub fn assign(self, group: &Group) -> Result<Assignment, crate::Error> {
        self.run(group).map_err(crate::Error::Assign)
    }

    fn run(self, group: &Group) -> Result<Assignment, AssignError> {
        if self.deterministic() {
            return self.run_seeded(group, 0);
        }
        // What can happen: of the simulated runs, the outcome that splits
        // most indices (the most frequent among those).
        let sim = self.simulate(group, SIMULATED_RUNS).map_err(|e| match e {
            crate::Error::Assign(a) => a,
            other => AssignError::Unsupported {
                assignor: self.spec(),
                reason: other.to_string(),
            },
        })?;
        Ok(sim.worst(group).clone())
    }

    fn run_seeded(self, group: &Group, seed: u64) -> Result<Assignment, AssignError> {
        validate(group)?;
        // Claims past a topic's count reach only the assignors whose real
        // code keeps them (Java's sticky ones); for every other the claim of
        // a partition that does not exist is dropped, as each of them (and
        // partwise's own leader) does.
        // The Python sticky assignors and Sarama's keep them too: a claim
        // decides whether their assignment is a fresh one.
        let java_sticky = matches!(
            self,
            Assignor::JavaSticky
                | Assignor::JavaCooperativeSticky
                | Assignor::SaramaSticky
                | Assignor::SaramaCooperativeSticky
                | Assignor::KafkaPythonSticky
                | Assignor::KafkaPythonCooperativeSticky
                | Assignor::AiokafkaSticky
        );
        let cleaned;
        let group = if !java_sticky && group.has_stale_claims() {
            cleaned = group.without_stale_claims();
            &cleaned
        } else {
            group
        };
        Ok(match self {
            Assignor::JavaRange | Assignor::Kip848Range => {
                range::range(group, order::java_member_order(&group.members))
            }
            Assignor::LibrdkafkaRange => {
                range::range(group, order::librdkafka_member_order(&group.members))
            }
            Assignor::JavaRoundRobin => roundrobin::java(group),
            Assignor::LibrdkafkaRoundRobin => roundrobin::librdkafka(group),
            Assignor::LibrdkafkaCooperativeSticky => rdkafka_sticky::cooperative(group),
            Assignor::KafkajsRoundRobin => roundrobin::kafkajs(group),
            Assignor::JavaSticky | Assignor::JavaCooperativeSticky => {
                let cooperative = self == Assignor::JavaCooperativeSticky;
                if sticky_general::subscriptions_equal(group) {
                    sticky::constrained(group, cooperative)?
                } else {
                    sticky_general::general(group, cooperative)?
                }
            }
            Assignor::Kip848Uniform | Assignor::Kip848Uniform400 => {
                let release = if self == Assignor::Kip848Uniform400 {
                    uniform::Release::V4_0_0
                } else {
                    uniform::Release::V4_0_1
                };
                // The coordinator calls a group homogeneous when every subscribed
                // topic name has every member as a subscriber.
                if sticky_general::subscriptions_equal(group) {
                    uniform::homogeneous(group, release, self.spec())?
                } else {
                    uniform_hetero::heterogeneous(group)
                }
            }
            Assignor::Copartitioned => copartitioned::assign(group)?,
            Assignor::FranzgoCooperativeSticky | Assignor::FranzgoSticky => {
                franz_sticky::balance(group, self == Assignor::FranzgoCooperativeSticky, seed)?
            }
            Assignor::FranzgoRange => go::franzgo_range(group),
            Assignor::FranzgoRoundRobin => go::franzgo_roundrobin(group),
            Assignor::SaramaRange => go::sarama_range(group),
            Assignor::SaramaRoundRobin => go::sarama_roundrobin(group),
            Assignor::SaramaSticky | Assignor::SaramaCooperativeSticky => {
                sarama_sticky::plan(group, self == Assignor::SaramaCooperativeSticky, seed)?
            }
            Assignor::KafkagoRange => go::kafkago_range(group),
            Assignor::KafkagoRoundRobin => go::kafkago_roundrobin(group),
            Assignor::KafkaPythonRange => python::kafka_python_range(group),
            Assignor::KafkaPythonRoundRobin => python::kafka_python_roundrobin(group)?,
            Assignor::AiokafkaRange => python::aiokafka_range(group),
            Assignor::AiokafkaRoundRobin => python::aiokafka_roundrobin(group),
            Assignor::KafkaPythonSticky => {
                python_sticky::assign(group, python_sticky::Library::KafkaPython, false, seed)?
            }
            Assignor::KafkaPythonCooperativeSticky => {
                python_sticky::assign(group, python_sticky::Library::KafkaPython, true, seed)?
            }
            Assignor::AiokafkaSticky => {
                python_sticky::assign(group, python_sticky::Library::Aiokafka, false, seed)?
            }
            Assignor::PlatformaticRoundRobin => platformatic::roundrobin(group),
            Assignor::PlatformaticCooperativeSticky => platformatic::cooperative_sticky(group),
        })
    }
}

fn validate(group: &Group) -> Result<(), AssignError> {
    if group.members.is_empty() {
        return Err(AssignError::NoMembers);
    }
    let mut seen = std::collections::HashSet::new();
    for m in &group.members {
        if !seen.insert(m.id.as_str()) {
            return Err(AssignError::DuplicateMember { id: m.id.clone() });
        }
    }
    for t in &group.topics {
        if let Some(w) = &t.weights {
            if w.len() != t.partitions as usize {
                return Err(AssignError::Weights {
                    topic: t.name.clone(),
                });
            }
        }
    }
    Ok(())
}
