//! `partwise salt --topology` against Apache Kafka: the sub-keys it proposes
//! for a joined key, written by a real producer (librdkafka's own
//! partitioner) to both topics of the group, land on one partition number in
//! each, where the plan says; the unsalted partner does not follow them.

use crate::common::{partwise, temp_file, text};
use partwise_faults::live::{create_topics, kafka_bootstrap, produce_with, unique};
use serde_json::Value;

#[test]
fn proposed_sub_keys_meet_in_both_topics_when_a_real_producer_writes_them() {
    let b = kafka_bootstrap();
    let (ticks, alerts) = (unique("pwc-salt-ticks"), unique("pwc-salt-alerts"));
    create_topics(&b, &[(&ticks, 6), (&alerts, 6)]);
    let topology = temp_file(format!(
        r#"
[[topic]]
name = "{ticks}"
partitions = 6
key = "symbol"
producer = [{{ name = "feed", partitioner = "librdkafka:murmur2_random" }}]

[[topic]]
name = "{alerts}"
partitions = 6
key = "symbol"
producer = [{{ name = "alerts", partitioner = "librdkafka:murmur2_random" }}]

[[copartition]]
name = "ticker"
topics = ["{ticks}", "{alerts}"]
"#
    ));
    let counts = temp_file(
        "BBCA,4500\nANTM,611\nASII,611\nUNVR,611\nTLKM,611\nBBRI,611\nBMRI,611\nGOTO,611\nADRO,611\nICBP,611\n",
    );
    let out = partwise()
        .args(["salt", "--topology"])
        .arg(topology.path())
        .args(["--topic", &ticks, "-i"])
        .arg(counts.path())
        .args(["--weighted", "--key", "BBCA", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["sub_keys"].as_array().unwrap();
    assert!(rows.len() > 1, "{v}");
    let subs: Vec<Option<String>> = rows
        .iter()
        .map(|r| Some(r["sub_key"].as_str().unwrap().to_string()))
        .collect();
    // The real producer writes the sub-keys to both topics.
    let in_ticks = produce_with(&b, &ticks, "murmur2_random", &subs);
    let in_alerts = produce_with(&b, &alerts, "murmur2_random", &subs);
    assert_eq!(in_ticks, in_alerts, "the sub-keys split between the topics");
    for (r, q) in rows.iter().zip(&in_ticks) {
        assert_eq!(r["partitions"][&ticks], *q, "{r}");
        assert_eq!(r["partitions"][&alerts], *q, "{r}");
    }
    // Salting the ticks alone: the alerts, still keyed BBCA, sit on one
    // partition, which some of the sub-keys' ticks never reach.
    let unsalted = produce_with(&b, &alerts, "murmur2_random", &[Some("BBCA".into())])[0];
    assert!(in_ticks.iter().any(|&q| q != unsalted), "{in_ticks:?}");
}
