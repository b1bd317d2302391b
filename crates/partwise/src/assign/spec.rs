//! An assignor's spec: parsing (canonical specs, the clients' own names,
//! `kip848:*@VERSION`) and printing, and which KIP-848 release takes which
//! server model ([`KIP848_VERSIONS`]).

use super::*;

impl fmt::Display for Assignor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.spec())
    }
}

impl FromStr for Assignor {
    type Err = crate::Error;

    /// Canonical specs, the clients' own names (`RangeAssignor`,
    /// `cooperative-sticky`, `CooperativeStickyAssignor`), and bare client
    /// names for their defaults (`java`: range, `kip848`: uniform, `kafkajs`
    /// and `librdkafka`: their first strategy). The KIP-848 assignors take
    /// an Apache Kafka version, `kip848:uniform@4.0.0`, `kip848:range@4.4`
    /// (see [`Assignor::kip848_for_version`]); without one, the newest.
    fn from_str(s: &str) -> Result<Assignor, crate::Error> {
        let (base, version) = match s.split_once('@') {
            Some((b, v)) => (b, Some(v)),
            None => (s, None),
        };
        let a = Assignor::parse_base(s, base)?;
        let Some(version) = version else {
            return Ok(a);
        };
        let name = match a {
            Assignor::Kip848Uniform => "uniform",
            Assignor::Kip848Range => "range",
            _ => {
                return Err(crate::Error::Assign(AssignError::UnknownVersion {
                    spec: s.to_string(),
                    reason: "only the KIP-848 server assignors (kip848:uniform, kip848:range) \
                             take an @VERSION"
                        .into(),
                }))
            }
        };
        Assignor::kip848_for_version(name, version).map_err(|reason| {
            crate::Error::Assign(AssignError::UnknownVersion {
                spec: s.to_string(),
                reason,
            })
        })
    }
}

/// The Apache Kafka versions `kip848:uniform@V` / `kip848:range@V` accept:
/// every release of 4.0 to 4.4 on Maven Central. The jars of 4.0.0, 4.0.2,
/// 4.1.1, 4.2.0, 4.3.0 and 4.4.0 produced the committed known answers; the
/// other releases have assignor sources (4.0.1, 4.1.0, 4.1.2, 4.2.1, 4.3.1) or
/// bytecode (4.2.2, 4.3.2) identical to one of those. `major.minor` stands for
/// every release of the line.
pub const KIP848_VERSIONS: [&str; 18] = [
    "4.0", "4.0.0", "4.0.1", "4.0.2", "4.1", "4.1.0", "4.1.1", "4.1.2", "4.2", "4.2.0", "4.2.1",
    "4.2.2", "4.3", "4.3.0", "4.3.1", "4.3.2", "4.4", "4.4.0",
];

impl Assignor {
    fn parse_base(s: &str, base: &str) -> Result<Assignor, crate::Error> {
        let norm: String = base
            .trim()
            .to_ascii_lowercase()
            .chars()
            .filter(|c| !matches!(c, '-' | '_'))
            .collect();
        let (client, name) = match norm.split_once(':') {
            Some((c, n)) => (c.to_string(), n.trim_end_matches("assignor").to_string()),
            None => (norm.clone(), String::new()),
        };
        let client = match client.as_str() {
            "java" | "kafka" | "classic" => "java",
            "kip848" | "consumer" | "server" => "kip848",
            "kafkajs" | "js" => "kafkajs",
            "librdkafka" | "rdkafka" | "confluentkafka" => "librdkafka",
            "copartitioned" | "partwise" => "copartitioned",
            "franzgo" | "franz" | "kgo" => "franzgo",
            "sarama" => "sarama",
            "kafkago" | "segmentio" => "kafkago",
            "kafkapython" => "kafkapython",
            "aiokafka" => "aiokafka",
            "platformatic" | "platformatickafka" | "@platformatic/kafka" => "platformatic",
            _ => "",
        };
        let a = match (client, name.as_str()) {
            ("java", "" | "range") => Assignor::JavaRange,
            ("java", "roundrobin" | "rr") => Assignor::JavaRoundRobin,
            ("java", "sticky") => Assignor::JavaSticky,
            ("java", "cooperativesticky") => Assignor::JavaCooperativeSticky,
            ("kip848", "" | "uniform") => Assignor::Kip848Uniform,
            ("kip848", "range") => Assignor::Kip848Range,
            ("kafkajs", "" | "roundrobin" | "roundrobinassigner" | "rr") => {
                Assignor::KafkajsRoundRobin
            }
            ("librdkafka", "" | "range") => Assignor::LibrdkafkaRange,
            ("librdkafka", "roundrobin" | "rr") => Assignor::LibrdkafkaRoundRobin,
            ("librdkafka", "cooperativesticky") => Assignor::LibrdkafkaCooperativeSticky,
            ("copartitioned", "" | "copartitioned") => Assignor::Copartitioned,
            // franz-go names its balancers `...Balancer`, kafka-go `...GroupBalancer`,
            // Sarama `BalanceStrategy...`.
            ("franzgo", "" | "cooperativesticky" | "cooperativestickybalancer") => {
                Assignor::FranzgoCooperativeSticky
            }
            ("franzgo", "sticky" | "stickybalancer") => Assignor::FranzgoSticky,
            ("franzgo", "range" | "rangebalancer") => Assignor::FranzgoRange,
            ("franzgo", "roundrobin" | "rr" | "roundrobinbalancer") => Assignor::FranzgoRoundRobin,
            ("sarama", "" | "range" | "balancestrategyrange") => Assignor::SaramaRange,
            ("sarama", "roundrobin" | "rr" | "balancestrategyroundrobin") => {
                Assignor::SaramaRoundRobin
            }
            ("kafkago", "" | "range" | "rangegroupbalancer") => Assignor::KafkagoRange,
            ("kafkago", "roundrobin" | "rr" | "roundrobingroupbalancer") => {
                Assignor::KafkagoRoundRobin
            }
            // The Python clients name theirs `...PartitionAssignor` (the
            // suffix `assignor` is trimmed above).
            ("kafkapython", "" | "range" | "rangepartition") => Assignor::KafkaPythonRange,
            ("kafkapython", "roundrobin" | "rr" | "roundrobinpartition") => {
                Assignor::KafkaPythonRoundRobin
            }
            ("kafkapython", "sticky" | "stickypartition") => Assignor::KafkaPythonSticky,
            ("kafkapython", "cooperativesticky") => Assignor::KafkaPythonCooperativeSticky,
            ("aiokafka", "" | "roundrobin" | "rr" | "roundrobinpartition") => {
                Assignor::AiokafkaRoundRobin
            }
            ("aiokafka", "range" | "rangepartition") => Assignor::AiokafkaRange,
            ("aiokafka", "sticky" | "stickypartition") => Assignor::AiokafkaSticky,
            ("aiokafka", "cooperativesticky") => return Err(REFUSED[0].error(s)),
            // @platformatic/kafka names its assigners `...Assigner`.
            ("platformatic", "" | "roundrobin" | "rr" | "roundrobinassigner") => {
                Assignor::PlatformaticRoundRobin
            }
            ("platformatic", "cooperativesticky" | "cooperativestickyassigner") => {
                Assignor::PlatformaticCooperativeSticky
            }
            ("sarama", "sticky" | "balancestrategysticky") => Assignor::SaramaSticky,
            ("sarama", "cooperativesticky" | "balancestrategycooperativesticky") => {
                Assignor::SaramaCooperativeSticky
            }
            ("platformatic", _) => {
                return Err(crate::Error::Assign(AssignError::Refused {
                    spec: s.to_string(),
                    kind: RefusalKind::NotInClient,
                    reason: "@platformatic/kafka 2.12.1 ships two assigners, roundRobinAssigner \
                             (platformatic:roundrobin, the default) and cooperativeStickyAssigner \
                             (platformatic:cooperative-sticky); it has no other"
                        .into(),
                }))
            }
            _ => {
                return Err(crate::Error::Assign(AssignError::UnknownAssignor {
                    spec: s.to_string(),
                    known: Assignor::every()
                        .map(|a| a.spec())
                        .collect::<Vec<_>>()
                        .join(", "),
                }))
            }
        };
        Ok(a)
    }
}
