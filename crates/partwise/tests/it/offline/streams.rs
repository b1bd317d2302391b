//! Kafka Streams descriptions: the co-partition groups read from the text
//! `Topology#describe()` printed are the ones kafka-streams itself records
//! (`tests/vectors/streams/`, by `tests/vectors/regen/streams/run`).

use partwise::streams::Application;
use std::path::Path;

#[test]
fn describe_texts_give_the_groups_kafka_streams_enforces() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/streams");
    let known: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("copartition.json")).unwrap())
            .unwrap();
    let cases = known["cases"].as_object().unwrap();
    assert!(cases.len() >= 10, "{cases:?}");
    let mut joined = 0;
    for (case, groups) in cases {
        let text = std::fs::read_to_string(dir.join(format!("{case}.txt"))).unwrap();
        let app = Application::parse(&text).unwrap_or_else(|e| panic!("{case}: {e}"));
        let mut ours: Vec<Vec<String>> = app
            .copartition_groups()
            .into_iter()
            .map(|g| {
                let mut all = g.external.clone();
                all.extend(g.internal);
                all.sort();
                all
            })
            .collect();
        ours.sort();
        let theirs: Vec<Vec<String>> = serde_json::from_value(groups.clone()).unwrap();
        assert_eq!(ours, theirs, "{case}");
        joined += theirs.len();
    }
    assert!(joined >= 8, "{joined}");
}

#[test]
fn internal_topics_are_told_from_the_ones_others_write() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/streams");
    let text = std::fs::read_to_string(dir.join("repartition.txt")).unwrap();
    let groups = Application::parse(&text).unwrap().copartition_groups();
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0].external, ["payments"]);
    assert_eq!(
        groups[0].internal,
        ["KSTREAM-KEY-SELECT-0000000001-repartition"]
    );
    assert_eq!(groups[0].sub_topology, 1);
    let text = std::fs::read_to_string(dir.join("stream-stream.txt")).unwrap();
    let g = &Application::parse(&text).unwrap().copartition_groups()[0];
    assert_eq!(g.external, ["market-updates", "notifications"]);
    assert!(g.internal.is_empty());
}

#[test]
fn the_readmes_example_is_kafka_streams_own_description() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    assert_eq!(
        std::fs::read_to_string(root.join("examples/ticker-streams.txt")).unwrap(),
        std::fs::read_to_string(root.join("tests/vectors/streams/stream-stream.txt")).unwrap()
    );
}

#[test]
fn what_the_cluster_says_replaces_the_count_and_adds_the_writer() {
    use partwise::inference::Candidate;
    use partwise::streams::{observe, Observed, OBSERVED_PRODUCER};
    use partwise::topology::Topology;
    use partwise::{PartitionCount, Partitioner};
    let mut t = Topology {
        topics: Vec::new(),
        copartition_groups: Vec::new(),
        consumer_groups: Vec::new(),
        redis_families: Vec::new(),
    };
    let crc: Partitioner = "librdkafka:consistent_random".parse().unwrap();
    let six = PartitionCount::new(6).unwrap();
    let eight = PartitionCount::new(8).unwrap();
    let seen = Observed {
        topic: "notifications".into(),
        partitions: six,
        writer: Some(Candidate {
            partitioner: crc,
            format: None,
        }),
    };
    assert_eq!(observe(&mut t, &seen), None);
    let topic = t.topic("notifications").unwrap();
    assert_eq!(topic.partitions, six);
    assert_eq!(topic.producers.len(), 1);
    assert_eq!(topic.producers[0].partitioner, Some(crc));
    assert_eq!(topic.producers[0].name.as_deref(), Some(OBSERVED_PRODUCER));
    // A declared topic keeps its producers, takes the live count, and the
    // count it declared is handed back.
    let again = Observed {
        partitions: eight,
        writer: None,
        ..seen
    };
    assert_eq!(observe(&mut t, &again), Some(six));
    let topic = t.topic("notifications").unwrap();
    assert_eq!(topic.partitions, eight);
    assert_eq!(topic.producers.len(), 1);
}
