//! Which KIP-848 server assignor model a broker runs, told from the API
//! versions it advertises ([`kip848_model_for_broker`]).

use super::*;

/// Which KIP-848 server assignor model a broker runs, from the highest
/// version of each API it advertises (ApiVersions). The API versions tell the
/// release line apart (4.0, 4.1, 4.2, 4.3, 4.4) but not patch releases, and
/// Kafka 4.0.0's `uniform` differs from 4.0.1's: for a 4.0 broker `uniform`
/// is left undecided and both models are named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokerModel {
    /// The newest release line the APIs prove (`"4.1"`); `None` below 4.0.
    pub line: Option<&'static str>,
    /// The model of `name` for that line, when the line decides it.
    pub assignor: Option<Assignor>,
    /// The API versions the line was read from, e.g. `"Produce v13"`, and
    /// why the model is undecided when it is.
    pub evidence: String,
}

/// Its JSON: the model's spec and the Kafka releases that run it (`null`
/// when undecided), the release line, and the evidence.
impl serde::Serialize for BrokerModel {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(serde::Serialize)]
        struct Json<'a> {
            model: Option<&'static str>,
            kafka_versions: Option<&'static str>,
            broker_release_line: Option<&'static str>,
            evidence: &'a str,
        }
        Json {
            model: self.assignor.map(|a| a.spec()),
            kafka_versions: self.assignor.and_then(|a| a.kafka_versions()),
            broker_release_line: self.line,
            evidence: &self.evidence,
        }
        .serialize(s)
    }
}

/// The release lines and the first API version each introduced (from the
/// kafka-clients jars' message schemas, `tests/vectors/kip848/api_versions.json`):
/// (line, API key, API name, version).
const KIP848_LINES: [(&str, i16, &str, i16); 4] = [
    ("4.4", 42, "DeleteGroups", 3),
    ("4.3", 35, "DescribeLogDirs", 5),
    ("4.2", 8, "OffsetCommit", 10),
    ("4.1", 0, "Produce", 13),
];

/// The model of the KIP-848 server assignor `name` (`uniform` or `range`) on
/// a broker advertising `api_max` (API key, highest version), with the
/// evidence; see [`BrokerModel`].
pub fn kip848_model_for_broker(name: &str, api_max: &[(i16, i16)]) -> BrokerModel {
    let max = |key: i16| {
        api_max
            .iter()
            .filter(|(k, _)| *k == key)
            .map(|&(_, v)| v)
            .max()
    };
    for (line, key, api, version) in KIP848_LINES {
        if let Some(v) = max(key).filter(|&v| v >= version) {
            return BrokerModel {
                line: Some(line),
                assignor: Assignor::kip848_for_version(name, line).ok(),
                evidence: format!("{api} v{v} (Kafka {line} or later)"),
            };
        }
    }
    // ConsumerGroupHeartbeat (68) v1: every 4.x release's schema has it.
    match max(68) {
        Some(v) if v >= 1 => BrokerModel {
            line: Some("4.0"),
            assignor: if name == "range" {
                Some(Assignor::Kip848Range)
            } else {
                None
            },
            evidence: format!(
                "ConsumerGroupHeartbeat v{v}, Produce below v13 (Kafka 4.0); the API versions do not \
                 tell 4.0.0 (kip848:uniform@4.0.0) from 4.0.1 and 4.0.2 (kip848:uniform)"
            ),
        },
        _ => BrokerModel {
            line: None,
            assignor: None,
            evidence: "no ConsumerGroupHeartbeat v1 (older than Kafka 4.0: no known answers)".into(),
        },
    }
}
