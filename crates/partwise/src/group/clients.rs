//! Which Kafka client a consumer-group member runs, told from what a classic
//! group's description shows, and what each client can do about the
//! consumer group protocol of KIP-848: the one table of those facts.
//!
//! DescribeGroups shows, per member, the client id, the host, and the
//! metadata and assignment of the group's chosen protocol only (the other
//! protocols a member offered are not kept). The client's software name
//! and version (ApiVersions v3+, KIP-511) reach the broker but only its
//! metrics, never a group description, so the client is told from the
//! protocol name and the client id; where both are shared by several
//! clients (`range` with a custom client id) the member is reported as
//! unidentified, with the candidates. The facts are cited in
//! `docs/reference/clients.md`.
//!
//! ```
//! use partwise::group::clients::{identify, Client};
//! let m = identify("RoundRobinAssigner", "kafkajs", Some(0));
//! assert_eq!(m.client, Client::KafkaJs);
//! assert!(m.client.facts().consumer_protocol.is_none());
//! let m = identify("range", "consumer-joins-1", Some(3));
//! assert_eq!(m.client, Client::Java);
//! // `range` with a client id of the user's own: Java, librdkafka, Sarama or franz-go.
//! assert_eq!(identify("range", "worker-7", Some(1)).client, Client::Unknown);
//! ```

/// A Kafka client (or family of clients on one library).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Client {
    /// Apache Kafka's Java client (kafka-clients), and what runs on it
    /// (Kafka Streams, Spring Kafka, the partwise Java assignor).
    Java,
    /// librdkafka and every client built on it (confluent-kafka-go,
    /// -python, -dotnet, -javascript, node-rdkafka, rust-rdkafka).
    Librdkafka,
    /// KafkaJS.
    KafkaJs,
    /// IBM/sarama (Go).
    Sarama,
    /// franz-go (`kgo`, Go).
    FranzGo,
    /// segmentio/kafka-go (Go).
    KafkaGo,
    /// kafka-python.
    KafkaPython,
    /// aiokafka (asyncio; its coordinator is kafka-python's, vendored).
    AioKafka,
    /// @platformatic/kafka (Node).
    Platformatic,
    /// Kafka Streams (on the Java client, with its own assignor and
    /// protocol name `stream`).
    KafkaStreams,
    /// partwise's own consumer runtime (`partwise kafka consume`).
    Partwise,
    /// Not told apart by what the group shows.
    Unknown,
}

/// From which version a client speaks the consumer group protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ConsumerProtocol {
    /// The first version where it is production-ready (general availability).
    pub since: &'static str,
    /// Earlier versions with it as early access or preview, not for production.
    pub preview: Option<&'static str>,
    /// How a member turns it on, in the client's own words.
    pub setting: &'static str,
    /// The setting that names the broker's assignor (`group.remote.assignor`),
    /// or why the client cannot name one of its own choosing.
    pub remote_assignor: &'static str,
}

/// What partwise knows of one client (the table every verdict reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientFacts {
    /// Its name, as users know it.
    pub name: &'static str,
    /// The protocol names its built-in assignors join with.
    pub protocols: &'static [&'static str],
    /// Its default `client.id` as a pattern (`consumer-<group>-<n>`), for
    /// documentation; what a member shows is matched by [`identify`].
    pub default_client_id: &'static str,
    /// From which version it speaks the consumer protocol (`None`: it does not).
    pub consumer_protocol: Option<ConsumerProtocol>,
    /// Why not, when it does not.
    pub without: Option<&'static str>,
    /// What a group of these members can do instead, or besides.
    pub alternative: &'static str,
    /// How its consumers keep partition p of every co-partitioned topic on
    /// one member, in the client's own words (setting, minimum release).
    pub keep_units: &'static str,
}

const JAVA: ClientFacts = ClientFacts {
    name: "Java (kafka-clients)",
    protocols: &["range", "roundrobin", "sticky", "cooperative-sticky"],
    default_client_id: "consumer-<group>-<n>",
    consumer_protocol: Some(ConsumerProtocol {
        since: "4.0",
        preview: Some("3.7 (early access)"),
        setting: "group.protocol=consumer (and no partition.assignment.strategy, session.timeout.ms or heartbeat.interval.ms)",
        remote_assignor: "group.remote.assignor",
    }),
    without: None,
    alternative: "upgrade kafka-clients to 4.0 or later first",
    keep_units: "partition.assignment.strategy=org.apache.kafka.clients.consumer.RangeAssignor (every member subscribing to the same topics of equal partition counts), or partwise's dev.partwise.CopartitionedAssignor (bindings/java)",
};

const LIBRDKAFKA: ClientFacts = ClientFacts {
    name: "librdkafka (confluent-kafka-go/-python/-dotnet/-javascript, node-rdkafka, rust-rdkafka)",
    protocols: &["range", "roundrobin", "cooperative-sticky"],
    default_client_id: "rdkafka",
    consumer_protocol: Some(ConsumerProtocol {
        since: "2.12.0 (confluent-kafka-go and -python 2.12.0, confluent-kafka-javascript 1.6.0)",
        preview: Some("2.4.0 (early access), 2.10.0 (preview)"),
        setting: "group.protocol=consumer (librdkafka refuses partition.assignment.strategy, session.timeout.ms and heartbeat.interval.ms with it)",
        remote_assignor: "group.remote.assignor",
    }),
    without: None,
    alternative: "upgrade librdkafka (or the client built on it) to 2.12.0 or later first",
    keep_units: "partition.assignment.strategy=range (every member subscribing to the same topics of equal partition counts); librdkafka takes no custom assignor",
};

const KAFKAJS: ClientFacts = ClientFacts {
    name: "KafkaJS",
    protocols: &["RoundRobinAssigner"],
    default_client_id: "kafkajs",
    consumer_protocol: None,
    without: Some(
        "KafkaJS has no consumer protocol and none is planned (its last release is 2.2.4, of 2023-02-27, \
         and the project is looking for maintainers)",
    ),
    alternative: "stay on the classic protocol with partwise's copartitioned assigner for KafkaJS \
         (partitionAssigners: [copartitionedAssigner()] from partwise-kafkajs, bindings/kafkajs), which keeps \
         every co-partitioned index on one member; or move the members to a client with the consumer protocol \
         (confluent-kafka-javascript 1.6.0 or later, which has a KafkaJS-compatible API: configure its producers \
         through the kafkaJS: {...} block, which selects librdkafka's Java-compatible murmur2_random, since with \
         librdkafka property names its default partitioner is consistent_random (CRC32) and keys move; or the Java \
         client 4.0 or later)",
    keep_units: "partitionAssigners: [copartitionedAssigner()] from partwise-kafkajs (KafkaJS has only its round-robin assigner built in)",
};

const SARAMA: ClientFacts = ClientFacts {
    name: "Sarama (IBM/sarama)",
    protocols: &["range", "roundrobin", "sticky", "cooperative-sticky"],
    default_client_id: "sarama",
    consumer_protocol: None,
    without: Some(
        "Sarama's consumer groups speak only the classic protocol (its KIP-848 work covers the admin APIs \
         ListConsumerGroups and ConsumerGroupDescribe, not a consumer-protocol member)",
    ),
    alternative: "stay on the classic protocol with Sarama's range strategy \
         (Config.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{sarama.NewBalanceStrategyRange()}), \
         which keeps co-partitioned indices together while every member subscribes to the same topics of equal \
         partition counts; or run the members on franz-go 1.22.0 or later (kgo.ServerSideBalancer()), or on \
         confluent-kafka-go 2.12.0 or later (group.protocol=consumer)",
    keep_units: "Config.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{sarama.NewBalanceStrategyRange()} (every member subscribing to the same topics of equal partition counts)",
};

const FRANZ_GO: ClientFacts = ClientFacts {
    name: "franz-go (kgo)",
    protocols: &["range", "roundrobin", "sticky", "cooperative-sticky"],
    default_client_id: "kgo",
    consumer_protocol: Some(ConsumerProtocol {
        since: "1.22.0 (the kgo.ServerSideBalancer() option)",
        preview: Some("1.19.0 (beta, behind a context value)"),
        setting: "kgo.ServerSideBalancer(), with kgo.RangeBalancer() or a sticky balancer first in kgo.Balancers",
        remote_assignor: "not by name: franz-go asks for range when kgo.RangeBalancer() is its first balancer and for \
             uniform when a sticky one is, so it cannot ask for copartitioned",
    }),
    without: None,
    alternative: "upgrade franz-go to 1.22.0 or later first",
    keep_units: "kgo.Balancers(kgo.RangeBalancer()) (every member subscribing to the same topics of equal partition counts; franz-go's default cooperative-sticky balancer does not keep them together)",
};

const KAFKA_GO: ClientFacts = ClientFacts {
    name: "kafka-go (segmentio/kafka-go)",
    protocols: &["range", "roundrobin", "rack-affinity"],
    default_client_id: "<program>@<hostname> (github.com/segmentio/kafka-go)",
    consumer_protocol: None,
    without: Some(
        "kafka-go's consumer groups (kafka.Reader with a GroupID) speak only the classic protocol: it has no \
         consumer-protocol member",
    ),
    alternative: "stay on the classic protocol, choosing the balancer in ReaderConfig.GroupBalancers (kafka-go's \
         RangeGroupBalancer is its default; segmentio/kafka-go#838 reports it splitting co-partitioned topics, so \
         check the group with partwise kafka group); or run the members on franz-go 1.22.0 or later \
         (kgo.ServerSideBalancer()), or on confluent-kafka-go 2.12.0 or later (group.protocol=consumer)",
    keep_units: "ReaderConfig.GroupBalancers = []kafka.GroupBalancer{kafka.RangeGroupBalancer{}}, checked with partwise kafka group (segmentio/kafka-go#838 reports its range balancer splitting co-partitioned topics)",
};

const KAFKA_PYTHON: ClientFacts = ClientFacts {
    name: "kafka-python",
    protocols: &["range", "roundrobin", "sticky", "cooperative-sticky"],
    default_client_id: "kafka-python-<version>",
    consumer_protocol: None,
    without: Some(
        "kafka-python has no consumer-protocol (KIP-848) member: its KafkaConsumer joins groups only with \
         JoinGroup and SyncGroup, the classic protocol",
    ),
    alternative: "stay on the classic protocol with KafkaConsumer(partition_assignment_strategy=[RangePartitionAssignor]) \
         (from kafka.coordinator.assignors.range), which keeps co-partitioned indices together while every member \
         subscribes to the same topics of equal partition counts; or move the members to confluent-kafka-python \
         2.12.0 or later with group.protocol=consumer",
    keep_units: "KafkaConsumer(partition_assignment_strategy=[RangePartitionAssignor]) from kafka.coordinator.assignors.range (every member subscribing to the same topics of equal partition counts)",
};

const AIOKAFKA: ClientFacts = ClientFacts {
    name: "aiokafka",
    protocols: &["roundrobin", "range", "sticky"],
    default_client_id: "aiokafka-<version>",
    consumer_protocol: None,
    without: Some(
        "aiokafka has no consumer-protocol (KIP-848) member: its AIOKafkaConsumer joins groups only with \
         JoinGroup and SyncGroup, the classic protocol",
    ),
    alternative: "stay on the classic protocol with AIOKafkaConsumer(partition_assignment_strategy=(RangePartitionAssignor,)) \
         (from aiokafka.coordinator.assignors.range; aiokafka's default is RoundRobinPartitionAssignor), which keeps \
         co-partitioned indices together while every member subscribes to the same topics of equal partition counts; \
         or move the members to confluent-kafka-python 2.12.0 or later with group.protocol=consumer",
    keep_units: "AIOKafkaConsumer(partition_assignment_strategy=(RangePartitionAssignor,)) from aiokafka.coordinator.assignors.range (every member subscribing to the same topics of equal partition counts)",
};

const PLATFORMATIC: ClientFacts = ClientFacts {
    name: "@platformatic/kafka",
    protocols: &["roundrobin"],
    default_client_id: "(none: clientId is required)",
    consumer_protocol: Some(ConsumerProtocol {
        since: "1.18.0",
        preview: None,
        setting: "groupProtocol: 'consumer' in the Consumer's options",
        remote_assignor: "groupRemoteAssignor",
    }),
    without: None,
    alternative: "upgrade @platformatic/kafka to 1.18.0 or later first",
    keep_units: "a custom assigner in the Consumer's partitionAssigner option that gives partition p of every co-partitioned topic to one member (@platformatic/kafka's built-in roundRobinAssigner deals partitions over all subscribed topics in turn)",
};

const KAFKA_STREAMS: ClientFacts = ClientFacts {
    name: "Kafka Streams",
    protocols: &["stream"],
    default_client_id: "<application.id>-<process uuid>-StreamThread-<n>-consumer",
    consumer_protocol: None,
    without: Some(
        "a Kafka Streams application does not move to group.protocol=consumer: its way off the classic protocol is \
         the streams rebalance protocol (group.protocol=streams in Kafka Streams, production-ready with Kafka Streams \
         and brokers 4.2 or later, early access in 4.1), where the broker assigns tasks",
    ),
    alternative: "keep the classic protocol (StreamsPartitionAssignor keeps a task's partitions together), or set \
         group.protocol=streams once Kafka Streams and every broker run 4.2 or later (partwise kafka group \
         describes the streams group then)",
    keep_units: "nothing to set: StreamsPartitionAssignor keeps a task's partitions (partition p of each source topic of a sub-topology) on one member",
};

const PARTWISE: ClientFacts = ClientFacts {
    name: "partwise (partwise kafka consume)",
    protocols: &["copartitioned"],
    default_client_id: "partwise",
    consumer_protocol: Some(ConsumerProtocol {
        since: "0.1.0",
        preview: None,
        setting: "--group-protocol consumer",
        remote_assignor: "--remote-assignor",
    }),
    without: None,
    alternative: "restart the members with --group-protocol consumer",
    keep_units: "--assignor copartitioned (the default of partwise kafka consume)",
};

const UNKNOWN: ClientFacts = ClientFacts {
    name: "an unidentified client",
    protocols: &[],
    default_client_id: "",
    consumer_protocol: None,
    without: Some("which client this member runs cannot be told from the group's description"),
    alternative: "check which client and version each such member runs (its client id and host are shown): the \
         consumer protocol needs the Java client 4.0, librdkafka 2.12.0, franz-go 1.22.0 or @platformatic/kafka 1.18.0 \
         or later; KafkaJS, Sarama, kafka-go, kafka-python and aiokafka have no consumer protocol, and Kafka Streams moves to \
         group.protocol=streams instead",
    keep_units: "identify the client first (its client id and host are shown), then use its range or co-partitioning assignor",
};

impl Client {
    /// Every identifiable client, in the order the table lists them.
    pub const ALL: [Client; 11] = [
        Client::Java,
        Client::Librdkafka,
        Client::KafkaJs,
        Client::Sarama,
        Client::FranzGo,
        Client::KafkaGo,
        Client::KafkaPython,
        Client::AioKafka,
        Client::Platformatic,
        Client::KafkaStreams,
        Client::Partwise,
    ];

    /// What partwise knows of the client.
    pub fn facts(self) -> &'static ClientFacts {
        match self {
            Client::Java => &JAVA,
            Client::Librdkafka => &LIBRDKAFKA,
            Client::KafkaJs => &KAFKAJS,
            Client::Sarama => &SARAMA,
            Client::FranzGo => &FRANZ_GO,
            Client::KafkaGo => &KAFKA_GO,
            Client::KafkaPython => &KAFKA_PYTHON,
            Client::AioKafka => &AIOKAFKA,
            Client::Platformatic => &PLATFORMATIC,
            Client::KafkaStreams => &KAFKA_STREAMS,
            Client::Partwise => &PARTWISE,
            Client::Unknown => &UNKNOWN,
        }
    }

    /// The client whose assignor specs start with `prefix` (`sarama` in
    /// `sarama:range`), for the clients whose consumers are told their own
    /// range setting: Go, Python and Node's.
    pub fn of_spec(prefix: &str) -> Option<Client> {
        [
            Client::Sarama,
            Client::FranzGo,
            Client::KafkaGo,
            Client::KafkaPython,
            Client::AioKafka,
            Client::Platformatic,
        ]
        .into_iter()
        .find(|c| c.id() == prefix)
    }

    /// A stable id for JSON (`java`, `librdkafka`, `kafkajs`, `sarama`,
    /// `franz-go`, `kafka-go`, `kafka-python`, `aiokafka`, `platformatic`,
    /// `kafka-streams`, `partwise`, `unknown`).
    pub fn id(self) -> &'static str {
        match self {
            Client::Java => "java",
            Client::Librdkafka => "librdkafka",
            Client::KafkaJs => "kafkajs",
            Client::Sarama => "sarama",
            Client::FranzGo => "franz-go",
            Client::KafkaGo => "kafka-go",
            Client::KafkaPython => "kafka-python",
            Client::AioKafka => "aiokafka",
            Client::Platformatic => "platformatic",
            Client::KafkaStreams => "kafka-streams",
            Client::Partwise => "partwise",
            Client::Unknown => "unknown",
        }
    }
}

/// One member's client, as told from the group's description.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identified {
    /// The client.
    pub client: Client,
    /// What told it (`protocol RoundRobinAssigner`, `client id rdkafka`),
    /// or, for [`Client::Unknown`], what was seen and who could have sent it.
    pub evidence: String,
}

/// A member's client id as findings show it: `client id 'x'`, or `no
/// client id` for an empty one.
pub fn shown_client_id(id: &str) -> String {
    if id.is_empty() {
        "no client id".to_string()
    } else {
        format!("client id '{id}'")
    }
}

/// Whether `id` is the Java client's default `consumer-<group>-<n>`.
fn java_default_id(id: &str) -> bool {
    id.strip_prefix("consumer-")
        .and_then(|rest| rest.rsplit_once('-'))
        .is_some_and(|(group, n)| {
            !group.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
        })
}

/// Whether `id` is `<prefix><version>` with a version of digits and dots
/// (`aiokafka-0.14.0`, `kafka-python-3.0.12`): the Python clients' default
/// `client_id` is their name and `__version__`.
fn versioned_id(id: &str, prefix: &str) -> bool {
    id.strip_prefix(prefix).is_some_and(|v| {
        v.starts_with(|c: char| c.is_ascii_digit())
            && v.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b'+')
    })
}

/// Whether `id` is Kafka Streams' main consumer's client id,
/// `<client.id or application.id-uuid>-StreamThread-<n>-consumer`.
fn streams_id(id: &str) -> bool {
    id.strip_suffix("-consumer")
        .and_then(|rest| rest.rsplit_once("-StreamThread-"))
        .is_some_and(|(app, n)| {
            !app.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
        })
}

/// The client a default (or client-shaped) client id names.
fn by_client_id(id: &str) -> Option<Client> {
    match id {
        "kafkajs" => Some(Client::KafkaJs),
        "rdkafka" => Some(Client::Librdkafka),
        "sarama" => Some(Client::Sarama),
        "kgo" => Some(Client::FranzGo),
        "partwise" => Some(Client::Partwise),
        id if streams_id(id) => Some(Client::KafkaStreams),
        id if java_default_id(id) => Some(Client::Java),
        id if versioned_id(id, "aiokafka-") => Some(Client::AioKafka),
        id if versioned_id(id, "kafka-python-") => Some(Client::KafkaPython),
        // kafka-go's DefaultClientID: `<program>@<hostname> (github.com/segmentio/kafka-go)`.
        id if id.ends_with(" (github.com/segmentio/kafka-go)") => Some(Client::KafkaGo),
        _ => None,
    }
}

/// The client of a consumer-protocol (KIP-848) member: ConsumerGroupDescribe
/// shows no protocol name nor subscription bytes, so only a default client
/// id tells it; any other id is [`Client::Unknown`].
pub fn identify_consumer_member(client_id: &str) -> Identified {
    let shown = shown_client_id(client_id);
    match by_client_id(client_id) {
        Some(c) => Identified {
            client: c,
            evidence: format!(
                "{shown}: '{client_id}' is {}'s default client id",
                c.facts().name
            ),
        },
        None => Identified {
            client: Client::Unknown,
            evidence: format!(
                "{shown}: a consumer-protocol member shows only its client id, and this one is \
                 no client's default"
            ),
        },
    }
}

/// The client a member runs: from the group's chosen `protocol`, the
/// member's `client_id`, and the version of its subscription metadata
/// (`None` when the broker returned none), which is shown as evidence.
pub fn identify(protocol: &str, client_id: &str, metadata_version: Option<i16>) -> Identified {
    identify_with(protocol, client_id, metadata_version, None)
}

/// [`identify`], with `body_version`: the version whose fields the
/// subscription's body really holds when it is lower than the declared one
/// (partwise-wire's `Subscription::decode_lenient`). @platformatic/kafka
/// declares version 1 and writes a version-0 body, and requires a
/// `clientId` of the user's choosing, so that shape is what tells it.
pub fn identify_with(
    protocol: &str,
    client_id: &str,
    metadata_version: Option<i16>,
    body_version: Option<i16>,
) -> Identified {
    let version = match (metadata_version, body_version) {
        (Some(v), Some(b)) => format!(", subscription v{v} with a v{b} body"),
        (Some(v), None) => format!(", subscription v{v}"),
        _ => String::new(),
    };
    let shown = format!(
        "protocol {protocol}, {}{version}",
        shown_client_id(client_id)
    );
    let told = |client: Client, by: &str| Identified {
        client,
        evidence: format!("{shown}: {by}"),
    };
    if protocol == "RoundRobinAssigner" {
        return told(
            Client::KafkaJs,
            "RoundRobinAssigner is KafkaJS's own protocol name",
        );
    }
    if protocol == "stream" {
        return told(
            Client::KafkaStreams,
            "stream is Kafka Streams' own protocol name (StreamsPartitionAssignor)",
        );
    }
    if let (Some(1), Some(0)) = (metadata_version, body_version) {
        return told(
            Client::Platformatic,
            "a version-1 subscription with a version-0 body (no owned partitions) is what @platformatic/kafka writes",
        );
    }
    let shares = |c: Client| c.facts().protocols.contains(&protocol);
    match by_client_id(client_id) {
        // Every client takes assignors of the user's own under any name, so
        // a default client id names its client whatever the protocol.
        Some(c) => told(
            c,
            &format!("'{client_id}' is {}'s default client id", c.facts().name),
        ),
        None => {
            let candidates: Vec<&str> = Client::ALL
                .iter()
                .filter(|c| shares(**c))
                .map(|c| c.facts().name)
                .collect();
            let who = match (protocol, candidates.as_slice()) {
                ("copartitioned", _) => {
                    "partwise's copartitioned assignor runs in partwise, the Java client and KafkaJS".to_string()
                }
                (_, []) => format!("no client partwise knows joins with protocol {protocol}"),
                (_, [one]) => format!("only {one} joins with protocol {protocol}"),
                (_, many) => format!("{} all join with protocol {protocol}", many.join(", ")),
            };
            match candidates.as_slice() {
                [one] if protocol != "copartitioned" => {
                    let c = Client::ALL.into_iter().find(|c| c.facts().name == *one);
                    told(c.unwrap_or(Client::Unknown), &who)
                }
                _ => Identified {
                    client: Client::Unknown,
                    evidence: format!("{shown}: {who}, and the client id is not a default one"),
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_names_and_default_client_ids_tell_clients_apart() {
        let cases = [
            ("RoundRobinAssigner", "kafkajs", Client::KafkaJs),
            // KafkaJS's protocol name wins over any client id.
            ("RoundRobinAssigner", "ticker-joiner-3", Client::KafkaJs),
            ("copartitioned", "kafkajs", Client::KafkaJs),
            ("range", "consumer-joins-12", Client::Java),
            ("cooperative-sticky", "consumer-my-group-1", Client::Java),
            ("copartitioned", "consumer-g-1", Client::Java),
            ("range", "rdkafka", Client::Librdkafka),
            ("cooperative-sticky", "rdkafka", Client::Librdkafka),
            ("roundrobin", "sarama", Client::Sarama),
            ("sticky", "kgo", Client::FranzGo),
            ("copartitioned", "partwise", Client::Partwise),
            ("cooperative-sticky", "sarama", Client::Sarama),
            // A KafkaJS assigner of the user's own, under a Java name.
            ("range", "kafkajs", Client::KafkaJs),
            ("range", "orders-service", Client::Unknown),
            ("copartitioned", "worker-1", Client::Unknown),
            ("consumer-a-b", "consumer-", Client::Unknown),
            ("range", "consumer-joins-x", Client::Unknown),
            ("roundrobin", "aiokafka-0.14.0", Client::AioKafka),
            ("range", "kafka-python-3.0.12", Client::KafkaPython),
            ("range", "aiokafka-", Client::Unknown),
            ("range", "kafka-python-dev", Client::Unknown),
            (
                "range",
                "orders@host-1 (github.com/segmentio/kafka-go)",
                Client::KafkaGo,
            ),
            ("rack-affinity", "orders", Client::KafkaGo),
            ("stream", "orders", Client::KafkaStreams),
            (
                "copartitioned",
                "joins-6f1c2d3e-0000-4000-8000-000000000000-StreamThread-1-consumer",
                Client::KafkaStreams,
            ),
            ("range", "app-StreamThread-x-consumer", Client::Unknown),
            ("roundrobin", "orders", Client::Unknown),
        ];
        for (protocol, id, want) in cases {
            assert_eq!(identify(protocol, id, None).client, want, "{protocol} {id}");
        }
    }

    #[test]
    fn the_evidence_names_what_was_seen_and_the_candidates() {
        let m = identify("range", "orders", Some(3));
        assert_eq!(
            m.evidence,
            "protocol range, client id 'orders', subscription v3: Java (kafka-clients), librdkafka \
             (confluent-kafka-go/-python/-dotnet/-javascript, node-rdkafka, rust-rdkafka), Sarama (IBM/sarama), \
             franz-go (kgo), kafka-go (segmentio/kafka-go), kafka-python, aiokafka all join with protocol range, and \
             the client id is not a default one"
        );
        let m = identify("RoundRobinAssigner", "m0", Some(0));
        assert!(
            m.evidence.contains("KafkaJS's own protocol name"),
            "{}",
            m.evidence
        );
    }

    /// @platformatic/kafka requires a client id of the user's own, so the
    /// shape of its subscription tells it: a version-1 header on a version-0
    /// body; a whole version-1 body is not it.
    #[test]
    fn platformatic_is_told_by_its_subscription_shape() {
        let m = identify_with("roundrobin", "orders-svc", Some(1), Some(0));
        assert_eq!(m.client, Client::Platformatic);
        assert!(
            m.evidence.contains("subscription v1 with a v0 body"),
            "{}",
            m.evidence
        );
        assert_eq!(
            identify_with("roundrobin", "orders-svc", Some(1), None).client,
            Client::Unknown
        );
        assert_eq!(
            identify("roundrobin", "orders-svc", Some(1)).client,
            Client::Unknown
        );
    }

    /// Assignor spec prefixes name the Go, Python and Node clients, whose
    /// range setting is in their own words.
    #[test]
    fn spec_prefixes_name_their_clients_and_settings() {
        assert_eq!(Client::of_spec("aiokafka"), Some(Client::AioKafka));
        assert_eq!(Client::of_spec("franz-go"), Some(Client::FranzGo));
        assert_eq!(Client::of_spec("java"), None);
        assert!(AIOKAFKA.keep_units.starts_with(
            "AIOKafkaConsumer(partition_assignment_strategy=(RangePartitionAssignor,))"
        ));
        assert!(KAFKA_PYTHON
            .keep_units
            .starts_with("KafkaConsumer(partition_assignment_strategy=[RangePartitionAssignor])"));
        assert!(SARAMA
            .keep_units
            .starts_with("Config.Consumer.Group.Rebalance.GroupStrategies"));
        assert!(FRANZ_GO
            .keep_units
            .starts_with("kgo.Balancers(kgo.RangeBalancer())"));
        assert!(KAFKA_GO
            .keep_units
            .starts_with("ReaderConfig.GroupBalancers"));
        for c in Client::ALL
            .into_iter()
            .filter(|c| !matches!(c, Client::Java | Client::Librdkafka))
        {
            assert!(
                !c.facts().keep_units.contains("org.apache.kafka.clients"),
                "{c:?}"
            );
            assert!(
                !c.facts()
                    .keep_units
                    .contains("partition.assignment.strategy="),
                "{c:?}"
            );
        }
    }

    /// Every client's facts say what to do: a setting and version, or why
    /// not and the alternative, with no empty text.
    #[test]
    fn every_client_has_its_facts() {
        for c in Client::ALL.into_iter().chain([Client::Unknown]) {
            let f = c.facts();
            assert!(!f.name.is_empty() && !f.alternative.is_empty(), "{c:?}");
            match f.consumer_protocol {
                Some(p) => {
                    assert!(f.without.is_none(), "{c:?}");
                    assert!(!p.since.is_empty() && !p.setting.is_empty(), "{c:?}");
                }
                None => assert!(f.without.is_some_and(|w| !w.is_empty()), "{c:?}"),
            }
        }
        assert!(KAFKAJS.alternative.contains("copartitionedAssigner"));
    }
}
