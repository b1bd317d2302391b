//! `partwise check --streams`: a Kafka Streams application's own
//! `Topology#describe()` text (from kafka-streams 4.4.0, in
//! `tests/vectors/streams/`) read as the co-partition groups Streams
//! enforces, and checked as declared ones, producers included: Streams
//! compares partition counts only.

use crate::common::{example, fails_with as fails, json_doc as json, output, temp_file};

fn described(case: &str) -> String {
    format!(
        "{}/../../tests/vectors/streams/{case}.txt",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn ticker() -> String {
    std::fs::read_to_string(example("ticker.toml")).unwrap()
}

#[test]
fn a_join_of_co_partitioned_topics_passes() {
    let topology = example("ticker.toml");
    let join = described("stream-stream");
    let args = ["check", &topology, "--streams", &join];
    let v = json(&args, 0);
    let names: Vec<&str> = v["copartition_groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"stream-stream:0"), "{names:?}");
}

#[test]
fn different_counts_are_named() {
    let join = described("stream-stream");
    let out = output(
        &[
            "check",
            "--streams",
            &join,
            "-t",
            "market-updates:6",
            "-t",
            "notifications:8",
        ],
        1,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("stream-stream:0"), "{text}");
    assert!(text.contains("market-updates 6, notifications 8"), "{text}");
}

#[test]
fn a_source_written_with_librdkafkas_default_is_named() {
    // notifications written by a librdkafka producer left at its default
    // partitioner (consistent_random: CRC32), which Streams never checks.
    let t = ticker();
    let i = t
        .match_indices("partitioner = \"kafkajs\"")
        .nth(1)
        .unwrap()
        .0;
    let file = temp_file(format!(
        "{}partitioner = \"librdkafka\"{}",
        &t[..i],
        &t[i + "partitioner = \"kafkajs\"".len()..]
    ));
    let join = described("stream-table");
    let out = output(
        &["check", file.path().to_str().unwrap(), "--streams", &join],
        1,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("stream-table:0"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("NOT CO-PARTITIONED"), "{text}");
    assert!(text.contains("librdkafka"), "{text}");
}

#[test]
fn a_repartition_topic_is_written_by_streams_itself() {
    // orders is re-keyed, so Streams writes a repartition topic with the
    // Java client's partitioner and joins it with payments: a payments
    // producer on librdkafka's default breaks the join.
    let file = temp_file(
        "[[topic]]\nname = \"payments\"\npartitions = 6\n[[topic.producer]]\npartitioner = \"librdkafka\"\nkey_format = \"string\"\n",
    );
    let join = described("repartition");
    let v = json(
        &[
            "check",
            file.path().to_str().unwrap(),
            "--streams",
            &join,
            "-t",
            "orders:6",
        ],
        1,
    );
    let g = &v["copartition_groups"][0];
    assert_eq!(g["name"], "repartition:1", "{v}");
    assert_eq!(
        g["topics"],
        serde_json::json!(["payments", "KSTREAM-KEY-SELECT-0000000001-repartition"])
    );
    assert!(v.to_string().contains("Kafka Streams"), "{v}");
    // The same with a Java-compatible payments producer holds.
    let file = temp_file(
        "[[topic]]\nname = \"payments\"\npartitions = 6\n[[topic.producer]]\npartitioner = \"librdkafka:murmur2_random\"\nkey_format = \"string\"\n",
    );
    json(
        &["check", file.path().to_str().unwrap(), "--streams", &join],
        0,
    );
}

#[test]
fn unusable_descriptions_and_unknown_counts_are_errors() {
    let log = temp_file("INFO starting the application\nTopologies:\n");
    fails(
        &["check", "--streams", log.path().to_str().unwrap()],
        "line 1",
    );
    let join = described("stream-stream");
    fails(
        &["check", "--streams", &join, "-t", "market-updates:6"],
        "'notifications', whose partition count is not known",
    );
    // The cluster's flags read a Streams application's sources.
    fails(
        &["check", &example("ticker.toml"), "-b", "127.0.0.1:9"],
        "give --streams",
    );
    // A topology that joins nothing checks nothing, and says so.
    let merge = described("merge-no-join");
    let out = output(&["check", "--streams", &merge, "-t", "eu-ticks:3"], 0);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("joins no topics"),
        "{out:?}"
    );
}

/// `report --streams`: the application's co-partition groups are the
/// report's, in JSON and on the page, judged as check judges them.
#[test]
fn report_streams_shows_the_joins_groups() {
    let topology = example("ticker.toml");
    let join = described("stream-stream");
    let v = json(&["report", &topology, "--streams", &join], 0);
    let names: Vec<&str> = v["check"]["copartition_groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"stream-stream:0"), "{names:?}");
    let page = output(&["report", &topology, "--streams", &join], 0);
    let page = String::from_utf8_lossy(&page.stdout);
    assert!(page.contains("stream-stream:0"), "page lacks the group");
    // Without a topology file, with counts that differ: exit 1, both named.
    let out = output(
        &[
            "report",
            "--streams",
            &join,
            "-t",
            "market-updates:6",
            "-t",
            "notifications:8",
            "--format",
            "json",
        ],
        1,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("market-updates 6, notifications 8"), "{text}");
    // A count not given: exit 2, the topic named.
    fails(&["report", "--streams", &join], "'market-updates'");
}
