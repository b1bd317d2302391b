//! The topology module's tests: parsing, locating errors, every reason.

use super::*;
use crate::check::{check, Report};
use crate::group::placement;
use proptest::prelude::*;

const TICKER: &str = include_str!("../../../../examples/ticker.toml");
const SYMBOLS: &str = include_str!("../../../../examples/symbols.txt");

fn symbols() -> Vec<&'static [u8]> {
    SYMBOLS.lines().map(str::as_bytes).collect()
}

/// The ticker with `from` replaced by `to` once, at the `nth` occurrence.
fn variant(from: &str, to: &str, nth: usize) -> String {
    let (i, _) = TICKER
        .match_indices(from)
        .nth(nth)
        .expect("pattern in ticker.toml");
    format!("{}{}{}", &TICKER[..i], to, &TICKER[i + from.len()..])
}

fn kinds(r: &Report) -> Vec<&'static str> {
    r.groups
        .iter()
        .flat_map(|g| g.reasons.iter().map(Reason::kind))
        .collect()
}

fn error(text: &str) -> TopologyError {
    Topology::parse(text)
        .expect_err("should be refused")
        .topology()
        .cloned()
        .expect("a located topology error")
}

#[test]
fn ticker_is_copartitioned() {
    let t: Topology = TICKER.parse().unwrap();
    assert_eq!(t.topics.len(), 2);
    assert_eq!(t.topics[1].partitions.get(), 6);
    assert_eq!(t.consumer_groups[0].members, Members::Count(3));
    let r = check(&t, &symbols());
    assert!(r.ok(), "{r:#?}");
    assert_eq!(
        r.groups[0].sample,
        Some(Alignment {
            keys: 10,
            aligned: 10
        })
    );
    let f = &r.families[0];
    assert!(f.shared_hash_tag);
    assert_eq!(
        f.hash_tags,
        vec![Some("%s".to_string()), Some("%s".to_string())]
    );
    assert_eq!(
        f.colocated,
        Some(Alignment {
            keys: 10,
            aligned: 10
        })
    );
    // Without keys the verdict is the same, with no figures.
    let r = check(&t, &[]);
    assert!(r.ok());
    assert_eq!(r.groups[0].sample, None);
}

#[test]
fn eight_partitions_break_it() {
    let t: Topology = variant("partitions = 6", "partitions = 8", 1)
        .parse()
        .unwrap();
    let r = check(&t, &symbols());
    assert!(!r.ok());
    assert_eq!(kinds(&r), ["partition-counts-differ"]);
    let Reason::PartitionCountsDiffer { counts, sample } = &r.groups[0].reasons[0] else {
        unreachable!()
    };
    assert_eq!(
        counts,
        &[
            ("market-updates".to_string(), 6),
            ("notifications".to_string(), 8)
        ]
    );
    // BBCA alone: 0 of 6 but 2 of 8 (the seed's example).
    let one = check(&t, &[b"BBCA"]);
    assert_eq!(one.groups[0].reasons[0].sample().unwrap().differ, 1);
    assert!(sample.unwrap().differ >= 1);
    assert!(r.groups[0].reasons[0]
        .to_string()
        .contains("market-updates 6, notifications 8"));
}

#[test]
fn librdkafka_default_disagrees() {
    let t: Topology = variant(
        "partitioner = \"kafkajs\"",
        "partitioner = \"librdkafka\"",
        1,
    )
    .parse()
    .unwrap();
    let r = check(&t, &symbols());
    assert_eq!(kinds(&r), ["partitioners-disagree"]);
    let reason = &r.groups[0].reasons[0];
    assert!(
        reason.to_string().contains("librdkafka:consistent_random"),
        "{reason}"
    );
    // crc32 vs murmur2 over 6 partitions: most of ten symbols differ.
    assert!(reason.sample().unwrap().differ > 0);
    // librdkafka's Java-compatible partitioner agrees.
    let ok: Topology = variant(
        "partitioner = \"kafkajs\"",
        "partitioner = \"librdkafka:murmur2_random\"",
        1,
    )
    .parse()
    .unwrap();
    assert!(check(&ok, &symbols()).ok());
}

#[test]
fn key_encodings_break_it() {
    for fmt in ["int32", "int64", "avro-sr:1"] {
        let t: Topology = variant(
            "key_format = \"string\"",
            &format!("key_format = \"{fmt}\""),
            1,
        )
        .parse()
        .unwrap();
        let r = check(&t, &symbols());
        assert_eq!(kinds(&r), ["key-encodings-differ"], "{fmt}");
        let s = r.groups[0].reasons[0].sample().unwrap();
        if fmt == "avro-sr:1" {
            // Avro writes the symbol with a 6-byte prefix: encodable, but other bytes.
            assert_eq!(s.unencodable, 0);
            assert!(s.differ > 0);
        } else {
            // A symbol is not an integer: that producer cannot write these keys.
            assert_eq!((s.unencodable, s.differ), (10, 10));
        }
    }
    // utf8 and string write the same bytes.
    let t: Topology = variant("key_format = \"string\"", "key_format = \"utf8\"", 1)
        .parse()
        .unwrap();
    assert!(check(&t, &symbols()).ok());
}

#[test]
fn keyless_producers_break_it() {
    let t: Topology = variant("partitioner = \"kafkajs\"", "partitioner = \"kafka-go\"", 1)
        .parse()
        .unwrap();
    let r = check(&t, &symbols());
    assert_eq!(kinds(&r), ["keyless-producer"]);
    assert!(matches!(
        &r.groups[0].reasons[0],
        Reason::KeylessProducer {
            declared: false,
            behaviour: "round-robin",
            ..
        }
    ));
    let t: Topology = variant("key_format = \"string\"", "keyless = true", 1)
        .parse()
        .unwrap();
    let r = check(&t, &symbols());
    assert_eq!(kinds(&r), ["keyless-producer"]);
    assert!(matches!(
        &r.groups[0].reasons[0],
        Reason::KeylessProducer { declared: true, .. }
    ));
}

#[test]
fn every_reason_is_listed() {
    let text = TICKER.replacen("partitions = 6\nkey = \"symbol\"\n\n[[topic.producer]]\nname = \"alert-service\"\npartitioner = \"kafkajs\"\nkey_format = \"string\"",
        "partitions = 8\nkey = \"userId\"\n\n[[topic.producer]]\nname = \"alert-service\"\npartitioner = \"sarama\"\nkey_format = \"int32\"\n\n[[topic.producer]]\npartitioner = \"kafka-go\"", 1);
    let t: Topology = text.parse().unwrap();
    let r = check(&t, &symbols());
    assert_eq!(
        kinds(&r),
        [
            "partition-counts-differ",
            "keys-differ",
            "keyless-producer",
            "partitioners-disagree",
            "key-encodings-differ"
        ]
    );
}

#[test]
fn producers_of_one_topic_are_compared() {
    let text = TICKER.replacen(
        "name = \"market-feed\"",
        "name = \"backfill\"\npartitioner = \"sarama\"\n\n[[topic.producer]]\nname = \"market-feed\"",
        1,
    );
    let t: Topology = text.parse().unwrap();
    let r = check(&t, &symbols());
    let k = kinds(&r);
    assert_eq!(k, ["partitioners-disagree", "partitioners-disagree"]);
    assert!(r.groups[0].reasons[0]
        .to_string()
        .contains("market-updates producer 'backfill'"));
}

#[test]
fn topics_without_producers_are_unverified() {
    let t: Topology = "[[topic]]\nname = \"a\"\npartitions = 3\n[[topic]]\nname = \"b\"\npartitions = 3\n[[copartition]]\nname = \"g\"\ntopics = [\"a\", \"b\"]\n"
        .parse()
        .unwrap();
    assert_eq!(kinds(&check(&t, &[])), ["no-producers", "no-producers"]);
}

#[test]
fn redis_families() {
    let untagged: Topology = variant("\"notif:{%s}\"", "\"notif:%s\"", 0)
        .parse()
        .unwrap();
    let r = check(&untagged, &symbols());
    let f = &r.families[0];
    assert!(!f.ok() && !f.shared_hash_tag);
    assert_eq!(f.reasons[0].kind(), "no-hash-tag");
    // The seed: 0 of 10 symbols co-locate without a tag.
    assert_eq!(
        f.colocated,
        Some(Alignment {
            keys: 10,
            aligned: 0
        })
    );
    assert!(r.groups[0].ok());

    let differ: Topology = variant("\"notif:{%s}\"", "\"notif:{n-%s}\"", 0)
        .parse()
        .unwrap();
    assert_eq!(
        check(&differ, &[]).families[0].reasons[0].kind(),
        "hash-tags-differ"
    );

    // An empty key leaves an empty tag, which Redis ignores: the whole key is hashed.
    let r = check(&TICKER.parse().unwrap(), &[b"BBCA", b""]);
    let f = &r.families[0];
    assert_eq!(
        f.colocated,
        Some(Alignment {
            keys: 2,
            aligned: 1
        })
    );
    assert_eq!(f.reasons[0].kind(), "sample-keys-split");
}

#[test]
fn errors_name_line_and_field() {
    let e = error(&variant("partitions = 6", "partitions = 0", 1));
    assert_eq!((e.line, e.field.as_str()), (19, "topic[1].partitions"));
    assert!(e.message.contains("at least 1 partition"), "{e}");

    let e = error(&variant("partitions = 6", "partitions = -3", 0));
    assert_eq!((e.line, e.field.as_str()), (9, "topic[0].partitions"));

    let e = error(&variant("partitions = 6", "partitions = \"six\"", 0));
    assert_eq!(
        (e.line, e.column, e.field.as_str()),
        (9, 14, "topic[0].partitions")
    );

    let e = error(&variant("key = \"symbol\"", "kee = \"symbol\"", 0));
    assert_eq!((e.line, e.field.as_str()), (10, "topic[0].kee"));
    assert!(e.message.contains("unknown field"), "{e}");

    let e = error(&variant(
        "partitioner = \"kafkajs\"",
        "partitioner = \"kafkajs2\"",
        1,
    ));
    assert_eq!(
        (e.line, e.field.as_str()),
        (24, "topic[1].producer[0].partitioner")
    );
    assert!(e.message.contains("unknown partitioner 'kafkajs2'"), "{e}");

    let e = error(&variant(
        "key_format = \"string\"",
        "key_format = \"strng\"",
        0,
    ));
    assert_eq!(e.field, "topic[0].producer[0].key_format");

    let e = error(&variant("\"notifications\"]", "\"notification\"]", 0));
    assert_eq!((e.line, e.field.as_str()), (31, "copartition[0].topics[1]"));
    assert!(e.message.contains("unknown topic 'notification'"), "{e}");

    let e = error(&format!(
        "{TICKER}\n[[topic]]\nname = \"notifications\"\npartitions = 3\n"
    ));
    assert_eq!(e.field, "topic[2].name");
    assert!(e.message.contains("duplicate topic"), "{e}");

    let e = error(&variant("members = 3", "members = 0", 0));
    assert_eq!(e.field, "consumer_group[0].members");
    let e = error(&variant("members = 3", "members = [\"a\", \"a\"]", 0));
    assert!(e.message.contains("listed twice"), "{e}");
    let t: Topology = variant("members = 3", "members = [\"pod-a\", \"pod-b\"]", 0)
        .parse()
        .unwrap();
    assert_eq!(
        t.consumer_groups[0].members,
        Members::Ids(vec!["pod-a".into(), "pod-b".into()])
    );

    let e = error(&variant("\"notif:{%s}\"", "\"notif\"", 0));
    assert_eq!(e.field, "redis_family[0].patterns[1]");

    let e = error("[[topic]]\nname = \"a\"\npartitions = 6 x\n");
    assert_eq!((e.line, e.field.as_str()), (3, "partitions"));
    assert!(e.message.starts_with("invalid TOML"), "{e}");

    let e = error("[[topic]]\npartitions = 6\n");
    assert_eq!(e.field, "topic[0].name");
    assert!(e.message.contains("missing field"), "{e}");

    let e = error("[[copartition]]\nname = \"g\"\ntopics = []\n");
    assert!(e.message.contains("at least two topics"), "{e}");
}

#[test]
fn hand_built_topologies_do_not_panic() {
    let t = Topology {
        topics: Vec::new(),
        copartition_groups: vec![CopartitionGroup {
            name: "g".into(),
            topics: vec!["missing".into()],
        }],
        consumer_groups: Vec::new(),
        redis_families: vec![RedisFamily {
            name: "f".into(),
            patterns: Vec::new(),
        }],
    };
    let r = check(&t, &[b"BBCA"]);
    assert_eq!(r.groups.len(), 1);
    assert!(!r.families[0].shared_hash_tag);
}

proptest! {
    #[test]
    fn arbitrary_text_never_panics(s in "\\PC{0,200}") {
        if let Ok(t) = Topology::parse(&s) {
            let _ = check(&t, &[b"BBCA"]);
        }
    }

    /// Edits of a valid file reach the validator and checker, not just the parser.
    #[test]
    fn edited_ticker_never_panics(at in 0usize..2000, cut in 0usize..8, insert in "[\\[\\]{}=\"%s0-9a-z.,\n -]{0,6}") {
        let mut at = at.min(TICKER.len());
        while !TICKER.is_char_boundary(at) { at -= 1; }
        let mut end = (at + cut).min(TICKER.len());
        while !TICKER.is_char_boundary(end) { end -= 1; }
        let text = format!("{}{}{}", &TICKER[..at], insert, &TICKER[end..]);
        match Topology::parse(&text) {
            Ok(t) => { let _ = check(&t, &[b"BBCA", b"", b"{", b"42"]); }
            Err(e) => {
                let e = e.topology().expect("a located topology error");
                prop_assert!(e.line >= 1 && e.column >= 1);
                prop_assert!(e.line <= text.lines().count() + 1);
            }
        }
    }
}

#[test]
fn a_bad_spec_is_the_cause_under_its_location() {
    use std::error::Error as _;
    let text = variant("partitioner = \"kafkajs\"", "partitioner = \"kafkajs2\"", 1);
    let e = Topology::parse(&text).unwrap_err();
    let located = e.topology().expect("located");
    // The message is the cause's text, and the cause is the typed core error.
    let cause = e.source().expect("a cause");
    assert_eq!(cause.to_string(), located.message);
    assert!(matches!(
        cause.downcast_ref::<crate::Error>(),
        Some(crate::Error::UnknownPartitioner { spec, .. }) if spec == "kafkajs2"
    ));
    assert!(e.to_string().starts_with("line 24, column 15: field 'topic[1].producer[0].partitioner': unknown partitioner 'kafkajs2'"), "{e}");

    let text = variant("kafkajs:roundrobin", "kafkajs:sticky", 0);
    let e = Topology::parse(&text).unwrap_err();
    let cause = e.source().and_then(|c| c.downcast_ref::<crate::Error>());
    assert!(cause.is_some_and(crate::Error::is_unknown_spec), "{e}");

    // A value serde or the validator refuses has no cause beneath it.
    let e = error(&variant("partitions = 6", "partitions = 0", 1));
    assert!(std::error::Error::source(&e).is_none());
}

/// The messages serde would have worded badly are made by the schema, not
/// rewritten from serde's text: the exact words, at the value at fault.
#[test]
fn messages_the_schema_makes() {
    let e = error(&variant("partitions = 6", "partitions = \"six\"", 0));
    assert_eq!(
        e.message,
        "invalid type: string \"six\", expected an integer"
    );
    let e = error(&variant("partitions = 6", "partitions = 1.5", 0));
    assert_eq!(
        e.message,
        "invalid type: floating point `1.5`, expected an integer"
    );

    for members in ["1.5", "true", "[\"a\", 2]", "{ a = 1 }", "1979-05-27"] {
        let e = error(&variant("members = 3", &format!("members = {members}"), 0));
        assert_eq!(
            (e.line, e.column, e.field.as_str(), e.message.as_str()),
            (
                41,
                11,
                "consumer_group[0].members",
                "expected a member count, a list of member ids or a range such as \"1..8\""
            ),
            "{members}"
        );
    }

    let e = error("[[copartition]]\nname = \"g\"\n");
    assert_eq!(
        (e.field.as_str(), e.message.as_str()),
        ("copartition[0].topics", "missing field `topics`")
    );
    // A key that merely reads like the payload is an unknown field, not a
    // missing one.
    let e = error("[[topic]]\nname = \"a\"\npartitions = 1\n\"missing field `x`\" = 1\n");
    assert!(
        e.message.starts_with("unknown field `missing field `x``"),
        "{e}"
    );
}

/// Two topics written by one producer spec and key format each.
fn pair(partitioner: &str, key_format: &str) -> Topology {
    format!(
        "[[topic]]\nname = \"a\"\npartitions = 6\n[[topic.producer]]\npartitioner = \"{partitioner}\"\nkey_format = \"{key_format}\"\n\
         [[topic]]\nname = \"b\"\npartitions = 6\n[[topic.producer]]\npartitioner = \"{partitioner}\"\nkey_format = \"{key_format}\"\n\
         [[copartition]]\nname = \"x\"\ntopics = [\"a\", \"b\"]\n"
    )
    .parse()
    .unwrap()
}

#[test]
fn sample_keys_a_producer_cannot_place_are_a_finding() {
    // Reserved partition 9 does not exist in 6: the VIP key is rejected.
    let t = pair("priority:prefix=VIP_,reserved=9", "string");
    let r = check(&t, &[b"VIP_1", b"BBCA"]);
    assert!(!r.ok());
    assert_eq!(kinds(&r), ["sample-keys-unplaced", "sample-keys-unplaced"]);
    assert!(matches!(
        &r.groups[0].reasons[0],
        Reason::SampleKeysUnplaced { unplaced: 1, keys: 2, why: "rejected", example, .. } if example == "VIP_1"
    ));
    // A key that is not UTF-8 cannot be written as a string.
    let t = pair("java", "string");
    let r = check(&t, &[b"BBCA", b"\xff\xfe"]);
    assert!(!r.ok());
    assert!(matches!(
        &r.groups[0].reasons[0],
        Reason::SampleKeysUnplaced { why: "unencodable", example, .. } if example == "\\xff\\xfe"
    ));
    // librdkafka's default places an empty key sticky (random), not by key.
    let t = pair("librdkafka", "string");
    let r = check(&t, &[b"BBCA", b""]);
    assert!(matches!(
        &r.groups[0].reasons[0],
        Reason::SampleKeysUnplaced { why: "sticky", .. }
    ));
    // Keys every producer places: no finding.
    assert!(check(&pair("java", "string"), &[b"BBCA", b"VIP_1"]).ok());
}

#[test]
fn partition_map_agrees_with_the_check() {
    // The ticker: both producers put every symbol on one partition (BBCA on 0).
    let t: Topology = TICKER.parse().unwrap();
    let m = partition_map(&t, &t.copartition_groups[0], &symbols());
    assert_eq!(m.producers.len(), 2);
    assert_eq!(m.partitions, vec![6, 6]);
    assert_eq!(m.rows[0], vec![Some(0), Some(0)]);
    assert!((0..m.rows.len()).all(|r| m.aligned(r)));
    // Eight partitions in one topic: the keys the map shows apart are the
    // ones the check counts as differing.
    let t: Topology = variant("partitions = 6", "partitions = 8", 1)
        .parse()
        .unwrap();
    let m = partition_map(&t, &t.copartition_groups[0], &symbols());
    let apart = (0..m.rows.len()).filter(|&r| !m.aligned(r)).count();
    let r = check(&t, &symbols());
    assert_eq!(
        Some(apart),
        r.groups[0].reasons[0].sample().map(|s| s.differ)
    );
    assert_eq!(m.rows[0], vec![Some(0), Some(2)]);
    // Weighed: the records of the keys shown together, and of all.
    let weights: Vec<u64> = (1..=m.rows.len() as u64).collect();
    let together: u64 = (0..m.rows.len())
        .filter(|&r| m.aligned(r))
        .map(|r| weights[r])
        .sum();
    assert_eq!(
        m.aligned_records(&weights),
        Some((together, weights.iter().sum()))
    );
    assert!(together < weights.iter().sum());
    assert_eq!(m.aligned_records(&weights[1..]), None);
    // A keyless producer has no column.
    let t: Topology = variant("key_format = \"string\"", "keyless = true", 1)
        .parse()
        .unwrap();
    let m = partition_map(&t, &t.copartition_groups[0], &symbols());
    assert_eq!(m.producers.len(), 1);
}

#[test]
fn sweep_matches_the_placement_verdict() {
    let t: Topology = variant("members = 3", "members = \"1..8\"", 0)
        .parse()
        .unwrap();
    let declared = &placement::placements(&t)[0];
    let s = &declared.sweep;
    assert_eq!(s.len(), crate::assign::Assignor::ALL.len());
    assert!(declared.cut.is_none());
    assert_eq!(
        &declared.sweep_counts[..8],
        &(1..=8).collect::<Vec<u32>>()[..]
    );
    let rr = s.iter().find(|x| x.assignor == declared.assignor).unwrap();
    // The sweep of the declared assignor is the verdict's own result per count.
    let row: Vec<_> = rr.counts[..8].iter().cloned().map(Option::unwrap).collect();
    assert_eq!(row, declared.counts);
    let splitting: Vec<u32> = row.iter().filter(|c| !c.ok()).map(|c| c.members).collect();
    assert_eq!(splitting, vec![4, 5, 7, 8]);
    let co = s
        .iter()
        .find(|x| x.assignor.spec() == "copartitioned")
        .unwrap();
    assert!(co.counts.iter().all(|c| c.as_ref().unwrap().ok()));
}

#[test]
fn a_name_longer_than_the_bound_is_refused_naming_its_field() {
    use crate::topology::MAX_NAME_BYTES;
    let long = "n".repeat(MAX_NAME_BYTES + 1);
    let just = "n".repeat(MAX_NAME_BYTES);
    let file = |topic: &str, member: &str, producer: &str, key: &str| {
        format!(
            "[[topic]]\nname = \"{topic}\"\npartitions = 6\nkey = \"{key}\"\n[[topic.producer]]\nname = \"{producer}\"\npartitioner = \"java\"\n\
             [[topic]]\nname = \"b\"\npartitions = 6\n\
             [[copartition]]\nname = \"x\"\ntopics = [\"{topic}\", \"b\"]\n\
             [[consumer_group]]\nname = \"g\"\nassignor = \"java:range\"\nmembers = [\"m\", \"{member}\"]\nsubscriptions = [\"b\"]\n"
        )
    };
    assert!(Topology::parse(&file(&just, &just, &just, &just)).is_ok());
    for (text, field) in [
        (file(&long, "m2", "p", "k"), "topic[0].name"),
        (file("a", &long, "p", "k"), "consumer_group[0].members[1]"),
        (file("a", "m2", &long, "k"), "topic[0].producer[0].name"),
        (file("a", "m2", "p", &long), "topic[0].key"),
    ] {
        let e = error(&text);
        assert_eq!(e.field, field, "{e}");
        assert!(
            e.message.contains("a name of 250 bytes; at most 249"),
            "{e}"
        );
        // The message does not echo the name.
        assert!(e.to_string().len() < 200, "{e}");
    }
}
