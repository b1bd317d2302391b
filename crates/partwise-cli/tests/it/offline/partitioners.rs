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
