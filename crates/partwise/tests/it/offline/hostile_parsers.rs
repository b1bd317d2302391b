//! Hostile input for the parsers every command runs on user text: partition
//! counts, partitioner and assignor specs, key formats and the keys they
//! decode, topology files. Each answers Ok or Err and never panics; what
//! parses behaves (a placement within the count, a spec that parses back to
//! itself). Property tests, run by every `cargo test`; raise
//! `PROPTEST_CASES` for a longer run by hand.

use partwise::assign::Assignor;
use partwise::topology::Topology;
use partwise::{KeyFormat, PartitionCount, Partitioner};
use proptest::prelude::*;

/// Text near the specs' grammar, so cases reach past the first check.
const SPECISH: &str = "[a-z0-9:=,;_+^$.*(){}\\[\\]|-]{0,48}";

proptest! {
    #[test]
    fn partition_counts_never_panic(s in "\\PC{0,24}") {
        if let Ok(n) = s.parse::<PartitionCount>() {
            prop_assert!(n.get() >= 1);
        }
    }

    #[test]
    fn partitioner_specs_never_panic(s in "\\PC{0,64}", near in SPECISH, client in "(java|librdkafka|sarama|kafka-go|kafkajs|franz-go|kafka-python|priority)") {
        for spec in [s, near.clone(), format!("{client}:{near}")] {
            if let Ok(p) = spec.parse::<Partitioner>() {
                let n = PartitionCount::new(7).unwrap();
                for key in [&b""[..], b"BBCA", b"VIP_1", &[0xff, 0]] {
                    prop_assert!(p.place(Some(key), n).partition().is_none_or(|q| q < 7));
                }
                let _ = p.place(None, n);
                let again: Partitioner = p.spec().parse().unwrap();
                prop_assert_eq!(again.spec(), p.spec());
            }
        }
    }

    #[test]
    fn assignor_specs_never_panic(s in "\\PC{0,40}", near in SPECISH) {
        for spec in [s, near] {
            if let Ok(a) = spec.parse::<Assignor>() {
                let again: Assignor = a.spec().parse().unwrap();
                prop_assert_eq!(again.spec(), a.spec());
            }
        }
    }

    #[test]
    fn key_formats_and_keys_never_panic(f in "\\PC{0,24}", id in "[0-9-]{0,12}", key in proptest::collection::vec(any::<u8>(), 0..64)) {
        for spec in [f, format!("avro-sr:{id}")] {
            if let Ok(fmt) = spec.parse::<KeyFormat>() {
                let _ = fmt.encode(&key);
            }
        }
        for fmt in ["utf8", "hex", "base64", "string", "int32", "int64", "avro-sr:1"] {
            let fmt: KeyFormat = fmt.parse().unwrap();
            let _ = fmt.encode(&key);
        }
    }

    #[test]
    fn topology_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        if let Ok(text) = std::str::from_utf8(&bytes) {
            let _ = text.parse::<Topology>();
        }
    }
}

/// A group as a hostile `assign --owned` file or topology can make it: any
/// subscriptions (unknown topics included), owned partitions that are out of
/// range, owned twice, of unsubscribed or missing topics, any generation.
fn hostile_group() -> impl Strategy<Value = partwise::assign::Group> {
    use partwise::assign::{Group, Member, Topic, Tp};
    let topics = proptest::collection::vec(0u32..7, 1..4);
    (topics, 1usize..6).prop_flat_map(|(counts, members)| {
        let t = counts.len() as u32;
        let member = (
            proptest::collection::vec(0..t + 1, 0..4),
            proptest::collection::vec((0..t + 1, 0u32..9), 0..8),
            proptest::option::of(-2i32..3),
            any::<bool>(),
        );
        proptest::collection::vec(member, members).prop_map(move |ms| {
            let topics: Vec<Topic> = counts
                .iter()
                .enumerate()
                .map(|(i, &n)| Topic::new(format!("t{i}"), n))
                .collect();
            let members = ms
                .into_iter()
                .enumerate()
                .map(|(i, (subs, owned, generation, fixed))| {
                    let mut m = Member::new(
                        format!("m{i}"),
                        subs.iter().map(|s| format!("t{s}")).collect::<Vec<_>>(),
                    );
                    m.instance_id = fixed.then(|| format!("i{}", i % 2));
                    m.owned = owned
                        .into_iter()
                        .map(|(topic, partition)| Tp { topic, partition })
                        .collect();
                    m.generation = generation;
                    m
                })
                .collect();
            Group::new(members, topics)
        })
    })
}

proptest! {
    #[test]
    fn every_assignor_answers_any_group_without_panicking(group in hostile_group()) {
        let claimed: Vec<_> = group.stale_claims().into_iter().map(|(_, tp)| tp).collect();
        for a in Assignor::ALL {
            // Java's sticky assignors keep claims past a topic's count, as
            // kafka-clients does; no assignor invents a partition.
            let keeps_claims = matches!(a, Assignor::JavaSticky | Assignor::JavaCooperativeSticky);
            if let Ok(out) = a.assign(&group) {
                for tps in &out.partitions {
                    for tp in tps {
                        let t = &group.topics[tp.topic as usize];
                        prop_assert!(
                            tp.partition < t.partitions || (keeps_claims && claimed.contains(tp)),
                            "{a:?}: {tp:?} of {t:?}"
                        );
                    }
                }
            }
        }
    }
}
