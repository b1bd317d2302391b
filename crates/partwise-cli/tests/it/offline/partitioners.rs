//! `partwise partitioners`: every partitioner spec, with its client setting.

use crate::common::ndjson;

#[test]
fn partitioners_lists_every_spec() {
    let rows = ndjson(&["partitioners"]);
    let specs: Vec<&str> = rows.iter().map(|r| r["spec"].as_str().unwrap()).collect();
    for want in [
        "java",
        "java:round-robin",
        "librdkafka:consistent_random",
        "librdkafka:consistent",
        "librdkafka:murmur2",
        "librdkafka:murmur2_random",
        "librdkafka:fnv1a",
        "librdkafka:fnv1a_random",
        "librdkafka:random",
        "kafka-python",
        "kafkajs",
        "kafkajs:legacy",
        "sarama",
        "sarama:reference-hash",
        "sarama:consistent-crc",
        "sarama:murmur2",
        "kafka-go",
        "kafka-go:hash",
        "kafka-go:reference-hash",
        "kafka-go:crc32",
        "kafka-go:crc32-consistent",
        "kafka-go:murmur2",
        "kafka-go:murmur2-consistent",
        "franz-go",
        "franz-go:sarama-compat",
        "platformatic",
        "platformatic:compatibility",
        "confluent-kafka-javascript",
    ] {
        assert!(specs.contains(&want), "{want} missing");
    }
    // Each carries its setting in the client's words and the release that has it.
    let murmur = rows.iter().find(|r| r["spec"] == "sarama:murmur2").unwrap();
    assert_eq!(
        murmur["setting"],
        "Producer.Partitioner = sarama.NewMurmur2Partitioner"
    );
    assert_eq!(murmur["since"], "Sarama 1.50.0");
    let java = rows.iter().find(|r| r["spec"] == "java").unwrap();
    assert!(java["since"].is_null());
    let compat = rows
        .iter()
        .find(|r| r["spec"] == "platformatic:compatibility")
        .unwrap();
    assert_eq!(compat["since"], "@platformatic/kafka 1.32.0");
    assert!(compat["setting"]
        .as_str()
        .unwrap()
        .starts_with("partitioner: compatibilityPartitioner"));
    // The trap is in confluent-kafka-javascript's own row.
    let cfk = rows
        .iter()
        .find(|r| r["spec"] == "confluent-kafka-javascript")
        .unwrap();
    assert!(
        cfk["setting"]
            .as_str()
            .unwrap()
            .contains("consistent_random (CRC32)"),
        "{cfk}"
    );
}

/// The assignors follow the partitioners, one row per spec of the core's
/// registry, each with its client, whether deterministic and simulated.
#[test]
fn partitioners_lists_every_assignor_spec() {
    let rows = ndjson(&["partitioners"]);
    let assignors: Vec<&serde_json::Value> =
        rows.iter().filter(|r| r["kind"] == "assignor").collect();
    let catalog = partwise::assign::Assignor::catalog();
    assert_eq!(assignors.len(), catalog.len());
    for a in partwise::assign::Assignor::every() {
        let row = assignors
            .iter()
            .find(|r| r["spec"] == a.spec())
            .unwrap_or_else(|| panic!("{a} missing"));
        assert_eq!(row["client"], a.client());
        assert_eq!(row["deterministic"], a.deterministic());
        assert_eq!(row["simulated"], true);
    }
    let sticky = assignors
        .iter()
        .find(|r| r["spec"] == "sarama:sticky")
        .unwrap();
    assert_eq!(sticky["deterministic"], false);
    assert_eq!(sticky["release"], "Sarama 1.61.1");
    let refused = assignors
        .iter()
        .find(|r| r["spec"] == "aiokafka:cooperative-sticky")
        .unwrap();
    assert_eq!(refused["simulated"], false);
    assert_eq!(refused["refused"], "not-in-client");
    assert!(rows
        .iter()
        .filter(|r| r["kind"] != "assignor")
        .all(|r| r["kind"] == "partitioner"));
}

/// A null key's placement in the client's words: @platformatic/kafka's
/// compatibilityPartitioner sends it to partition 0, which is not the hash
/// of an empty key.
#[test]
fn a_null_key_sent_to_partition_0_is_not_called_hashed() {
    let rows = ndjson(&["partitioners"]);
    let row = |spec: &str| rows.iter().find(|r| r["spec"] == spec).unwrap().clone();
    let text = |spec: &str| row(spec).to_string();
    assert!(
        text("platformatic:compatibility").contains("\"partition 0\""),
        "{}",
        text("platformatic:compatibility")
    );
    assert!(
        text("librdkafka:murmur2").contains("hashed like an empty key"),
        "{}",
        text("librdkafka:murmur2")
    );
}
