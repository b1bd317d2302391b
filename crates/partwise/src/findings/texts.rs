//! Every finding kind's message and fix, walked with inputs that make its
//! lists empty or single: no text may carry an empty list, a placeholder,
//! a dangling conjunction or a repeated line, and no fix may name a
//! partitioner change by partwise's spec alone.
//!
//! The `covered_*` functions match without a wildcard, so a new kind does
//! not compile until it is walked here.

use super::{Drift, FamilyReason, ObservedWriter, ProducerRef, Reason, SampleDiff};
use crate::assign::Assignor;
use crate::count::PartitionCount;
use crate::group::clients::Client;
use crate::group::placement::{fix_of, placements};
use crate::partitioner::compare::MigrationFix;
use crate::partitioner::Partitioner;
use crate::readiness::Refusal;
use crate::strategy::resize::joined::{realign, realign_counts, Procedure};
use crate::strategy::resize::{self, Fix, Fraction, Together};
use crate::topology::Topology;
use crate::KeyFormat;

/// What is wrong with `text`, if anything.
fn flaws(text: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    let t = text.trim_end();
    if t.trim().is_empty() {
        out.push("empty text");
    }
    // `copartitionedAssigner()` is a call in the client's words; a `()` after
    // a space or at the start is a list that came out empty.
    for (i, _) in text.match_indices("()") {
        let call = text[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        if !call {
            out.push("empty parentheses");
        }
    }
    for (bad, why) in [
        ("( )", "empty parentheses"),
        (", ,", "an empty list item"),
        (",,", "an empty list item"),
        ("  ", "a double space"),
        ("''", "empty quotes"),
        ("\"\"", "empty quotes"),
        (": ,", "an empty list"),
        (": ;", "an empty list"),
        (": )", "an empty list"),
        ("(, ", "an empty list item"),
        ("no number of", "a placeholder count"),
    ] {
        if text.contains(bad) {
            out.push(why);
        }
    }
    // Redis's empty hash tag is named as such; any other {} is a hole.
    for (i, _) in text.match_indices("{}") {
        let before = &text[..i];
        let in_pattern = before
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == ':');
        if !(in_pattern || before.ends_with("empty ") || before.ends_with("empty tag ")) {
            out.push("an unfilled {}");
        }
    }
    for end in [" and", " or", ":", ",", " today", " to", " by"] {
        if t.ends_with(end) {
            out.push("a dangling end");
        }
    }
    for mid in [
        " and;", " or;", " and)", " or)", " and.", " or.", " and ;", " or ;",
    ] {
        if text.contains(mid) {
            out.push("a dangling conjunction");
        }
    }
    // "none" standing where a name should be: `(best: none)`, `, none)`.
    for (i, _) in text.match_indices("none") {
        let before = text[..i].chars().next_back();
        let after = text[i + 4..].chars().next();
        let word =
            !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric);
        if word && matches!(after, None | Some(')' | ',' | ';')) {
            out.push("'none' used as a name");
        }
    }
    out
}

/// Partwise's spec standing where the client's setting belongs.
fn bare_spec(fix: &str) -> Option<String> {
    for p in Partitioner::all() {
        for verb in ["use", "set", "to", "with"] {
            let bare = format!("{verb} {} ", p.spec());
            let end = format!("{verb} {}", p.spec());
            if fix.contains(&bare) || fix.ends_with(&end) {
                // `set X to SETTING (SPEC)` names the setting first.
                return Some(format!("'{end}' without its setting ({})", p.setting()));
            }
        }
    }
    None
}

/// Checks one finding: its message, its fix lines (none repeated, none a
/// bare spec).
fn check(what: &str, message: Option<&str>, fix: &[String], failures: &mut Vec<String>) {
    if let Some(m) = message {
        for f in flaws(m) {
            failures.push(format!("{what}: message has {f}: {m}"));
        }
    }
    let mut seen = std::collections::HashSet::new();
    for line in fix {
        for f in flaws(line) {
            failures.push(format!("{what}: fix has {f}: {line}"));
        }
        if let Some(b) = bare_spec(line) {
            failures.push(format!("{what}: fix names {b}: {line}"));
        }
        // A fix is one line, or steps joined by "; ": none twice.
        for step in line.split("; ") {
            if !seen.insert(step.to_string()) {
                failures.push(format!("{what}: fix repeats '{step}'"));
            }
        }
    }
}

fn covered_reason(r: &Reason) -> &'static str {
    match r {
        Reason::PartitionCountsDiffer { .. } => "partition-counts-differ",
        Reason::KeysDiffer { .. } => "keys-differ",
        Reason::NoProducers { .. } => "no-producers",
        Reason::KeylessProducer { .. } => "keyless-producer",
        Reason::SampleKeysUnplaced { .. } => "sample-keys-unplaced",
        Reason::PartitionersDisagree { .. } => "partitioners-disagree",
        Reason::KeyEncodingsDiffer { .. } => "key-encodings-differ",
        Reason::TopicUnreadable { .. } => "topic-unreadable",
        Reason::NoKeyedRecords { .. } => "no-keyed-records",
        Reason::RecordsUnexplained { .. } => "records-unexplained",
        Reason::ObservedPartitionersDisagree { .. } => "observed_partitioners_disagree",
        Reason::ObservedKeyEncodingsDiffer { .. } => "observed_key_encodings_differ",
        Reason::MixedPartitioners { .. } => "mixed-partitioners",
    }
}

fn covered_family(r: &FamilyReason) -> &'static str {
    match r {
        FamilyReason::NoHashTag { .. } => "no-hash-tag",
        FamilyReason::EmptyTag { .. } => "empty-tag",
        FamilyReason::TagWithoutKey { .. } => "tag-without-key",
        FamilyReason::TagNotJustKey { .. } => "tag-not-just-key",
        FamilyReason::HashTagsDiffer { .. } => "hash-tags-differ",
        FamilyReason::SampleKeysSplit { .. } => "sample-keys-split",
    }
}

fn covered_drift(d: &Drift) -> &'static str {
    match d {
        Drift::Unreadable { .. }
        | Drift::PartitionCount { .. }
        | Drift::Partitioner { .. }
        | Drift::Mixed { .. }
        | Drift::Partial => d.kind(),
    }
}

/// Every drift, its lists empty or single where they can be.
fn drifts() -> Vec<Drift> {
    let java: Partitioner = "java".parse().unwrap();
    let t = || "orders".to_string();
    vec![
        Drift::Unreadable {
            topic: t(),
            error: "unknown topic".into(),
        },
        Drift::PartitionCount {
            topic: t(),
            declared: 6,
            live: 8,
        },
        Drift::Partitioner {
            topic: t(),
            declared: java,
            written: Vec::new(),
        },
        Drift::Partitioner {
            topic: t(),
            declared: java,
            written: vec!["librdkafka:consistent_random".into()],
        },
        Drift::Mixed {
            topic: t(),
            declared: java,
            written: vec![
                "java (60.0% of records)".into(),
                "librdkafka:consistent_random (40.0% of records)".into(),
            ],
        },
        Drift::Partial,
    ]
}

fn covered_fix(f: &Fix) -> &'static str {
    match f {
        Fix::Multiple { .. } => "multiple",
        Fix::Drain => "drain",
        Fix::Together { .. } => "together",
    }
}

fn covered_migration(f: &MigrationFix) -> &'static str {
    match f {
        MigrationFix::Use { .. } => "use",
        MigrationFix::NoneKeeps { .. } => "none_keeps",
    }
}

fn covered_refusal(r: Refusal) -> &'static str {
    match r {
        Refusal::Policy => "policy",
        Refusal::ProtocolType => "protocol_type",
        Refusal::TooLarge => "too_large",
        Refusal::CustomAssignor => "custom_assignor",
        Refusal::Full => "full",
        Refusal::Malformed => "malformed",
    }
}

fn producer(topic: &str, partitioner: Option<&str>) -> ProducerRef {
    ProducerRef {
        topic: topic.into(),
        index: 0,
        name: None,
        partitioner: partitioner.map(|p| p.parse().unwrap()),
        key_format: KeyFormat::String,
    }
}

fn reasons() -> Vec<Reason> {
    let sample = Some(SampleDiff {
        keys: 10,
        differ: 3,
        unencodable: 1,
    });
    let counts = |c: &[(&str, u32)]| c.iter().map(|(t, n)| (t.to_string(), *n)).collect();
    let mut out = vec![
        Reason::PartitionCountsDiffer {
            counts: vec![],
            sample: None,
        },
        Reason::PartitionCountsDiffer {
            counts: counts(&[("a", 6)]),
            sample: None,
        },
        Reason::PartitionCountsDiffer {
            counts: counts(&[("a", 6), ("b", 6)]),
            sample,
        },
        Reason::PartitionCountsDiffer {
            counts: counts(&[("a", 9), ("b", 6), ("c", 3)]),
            sample,
        },
        Reason::KeysDiffer { keys: vec![] },
        Reason::KeysDiffer {
            keys: vec![("a".into(), "symbol".into())],
        },
        Reason::KeysDiffer {
            keys: vec![("a".into(), "symbol".into()), ("b".into(), "user".into())],
        },
        Reason::NoProducers { topic: "a".into() },
        Reason::TopicUnreadable {
            topic: "a".into(),
            error: "UNKNOWN_TOPIC_OR_PART".into(),
        },
        Reason::NoKeyedRecords { topic: "a".into() },
        Reason::RecordsUnexplained {
            topic: "a".into(),
            misplaced: 3,
            best: None,
            found: None,
        },
        Reason::RecordsUnexplained {
            topic: "a".into(),
            misplaced: 3,
            best: Some("java".into()),
            found: None,
        },
        Reason::ObservedKeyEncodingsDiffer { encodings: vec![] },
        Reason::ObservedKeyEncodingsDiffer {
            encodings: vec![("a".into(), "string".into())],
        },
        Reason::ObservedKeyEncodingsDiffer {
            encodings: vec![("a".into(), "string".into()), ("b".into(), "int32".into())],
        },
    ];
    for why in ["rejected", "unencodable", "sticky", "random"] {
        out.push(Reason::SampleKeysUnplaced {
            producer: producer("a", Some("librdkafka")),
            unplaced: 1,
            keys: 2,
            example: "VIP_1".into(),
            why,
        });
    }
    let specs: Vec<Option<&str>> = std::iter::once(None)
        .chain(Partitioner::all().map(|p| Some(p.spec())))
        .collect();
    for &p in &specs {
        for declared in [false, true] {
            out.push(Reason::KeylessProducer {
                producer: producer("a", p),
                declared,
                behaviour: "round-robin",
            });
        }
    }
    for &a in &specs {
        for &b in &specs {
            out.push(Reason::PartitionersDisagree {
                a: producer("a", a),
                b: producer("b", b),
                sample,
            });
        }
    }
    out.push(Reason::KeyEncodingsDiffer {
        a: producer("a", Some("java")),
        b: producer("b", Some("java")),
        sample: None,
    });
    let writer = |topic: &str, p: Option<&str>| ObservedWriter {
        topic: topic.into(),
        candidates: p.map(|p| vec![p.to_string()]).unwrap_or_default(),
        partitioner: p.map(|p| p.parse().unwrap()),
        family: p.map(|p| vec![p.parse().unwrap()]).unwrap_or_default(),
    };
    out.push(Reason::ObservedPartitionersDisagree { topics: vec![] });
    out.push(Reason::ObservedPartitionersDisagree {
        topics: vec![writer("a", Some("java"))],
    });
    out.push(Reason::ObservedPartitionersDisagree {
        topics: vec![writer("a", None), writer("b", Some("sarama"))],
    });
    for &a in &specs[1..] {
        for &b in &specs[1..] {
            out.push(Reason::ObservedPartitionersDisagree {
                topics: vec![writer("a", a), writer("b", b), writer("c", b)],
            });
        }
    }
    // A topic several partitioners wrote: none, one or two of them known,
    // with and without unexplained records and split keys.
    let mixed = |specs: &[&str]| -> Vec<crate::findings::MixedWriter> {
        specs
            .iter()
            .map(|s| {
                let p: Partitioner = s.parse().unwrap();
                crate::findings::MixedWriter {
                    candidates: vec![s.to_string()],
                    partitioner: p,
                    family: vec![p],
                    share: 1.0 / specs.len() as f64,
                }
            })
            .collect()
    };
    for writers in [
        vec![],
        mixed(&["java"]),
        mixed(&["kafkajs", "sarama"]),
        mixed(&["sarama", "librdkafka:consistent_random"]),
    ] {
        // No record, a few, and most of them unexplained.
        for (unexplained, unexplained_share, split_keys, example) in [
            (0, 0.0, 0, None),
            (5, 0.05, 3, Some(("ADRO".to_string(), vec![1, 3]))),
            (70, 0.7, 0, None),
        ] {
            out.push(Reason::MixedPartitioners {
                topic: "notifications".into(),
                writers: writers.clone(),
                unexplained,
                unexplained_share,
                split_keys,
                example,
            });
        }
    }
    // A topic no set of known partitioners explains better than chance:
    // with and without a best candidate, one known partitioner that explains
    // part of it, with and without split keys.
    for (writer, best, split_keys) in [
        (None, None, 0),
        (None, Some("sarama"), 4),
        (mixed(&["java"]).pop(), Some("java"), 0),
        (mixed(&["sarama"]).pop(), Some("sarama"), 2),
    ] {
        out.push(Reason::RecordsUnexplained {
            topic: "notifications".into(),
            misplaced: 80,
            best: best.map(str::to_string),
            found: Some(crate::findings::Unexplained {
                share: if writer.is_some() { 0.4 } else { 1.0 },
                writer,
                records: 80,
                partitions: 6,
                split_keys,
            }),
        });
    }
    out
}

fn families() -> Vec<FamilyReason> {
    vec![
        FamilyReason::NoHashTag { patterns: vec![] },
        FamilyReason::NoHashTag {
            patterns: vec!["market:%s".into()],
        },
        FamilyReason::NoHashTag {
            patterns: vec!["market:%s".into(), "notif:%s".into()],
        },
        FamilyReason::EmptyTag {
            pattern: "b:{}%s".into(),
        },
        FamilyReason::TagWithoutKey {
            pattern: "m:{x}%s".into(),
            tag: "x".into(),
            slot: 16287,
        },
        FamilyReason::TagNotJustKey {
            pattern: "m:{m:%s}".into(),
            tag: "m:%s".into(),
        },
        FamilyReason::HashTagsDiffer { tags: vec![] },
        FamilyReason::HashTagsDiffer {
            tags: vec![("m:{%s}".into(), "%s".into())],
        },
        FamilyReason::HashTagsDiffer {
            tags: vec![
                ("m:{%s}".into(), "%s".into()),
                ("n:{n-%s}".into(), "n-%s".into()),
            ],
        },
        FamilyReason::SampleKeysSplit { split: 1, keys: 10 },
    ]
}

fn pair(a: u32, b: u32, members: &str, assignor: &str) -> Topology {
    Topology::parse(&format!(
        "[[topic]]\nname = \"a\"\npartitions = {a}\n[[topic.producer]]\npartitioner = \"sarama\"\n\
         [[topic]]\nname = \"b\"\npartitions = {b}\n\
         [[copartition]]\nname = \"ab\"\ntopics = [\"a\", \"b\"]\n\
         [[consumer_group]]\nname = \"g\"\nassignor = \"{assignor}\"\nmembers = {members}\nsubscriptions = [\"a\", \"b\"]\n"
    ))
    .unwrap()
}

#[test]
fn every_finding_kind_says_its_fix_without_holes() {
    let mut failures = Vec::new();
    let mut kinds = std::collections::BTreeSet::new();

    for r in reasons() {
        kinds.insert(covered_reason(&r));
        check(r.kind(), Some(&r.to_string()), &[r.fix()], &mut failures);
    }
    for d in drifts() {
        kinds.insert(covered_drift(&d));
        check(d.kind(), Some(&d.to_string()), &[d.fix()], &mut failures);
    }
    for r in families() {
        kinds.insert(covered_family(&r));
        check(r.kind(), Some(&r.to_string()), &[r.fix()], &mut failures);
    }

    // Placement: every assignor's words, with no, one and several
    // assignors and member counts that keep units whole.
    for a in Assignor::ALL {
        for assignors in [
            vec![],
            vec![Assignor::Copartitioned],
            Assignor::ALL.to_vec(),
        ] {
            for counts in [vec![], vec![3], vec![1, 2, 3, 6]] {
                let f = fix_of(a, assignors.clone(), counts);
                check(
                    &format!("placement {}", a.spec()),
                    None,
                    &f.lines(),
                    &mut failures,
                );
            }
        }
    }
    // And from whole files: split, half-subscribed, and counts that differ.
    for (a, b) in [(6, 6), (9, 6), (12, 6), (3, 1)] {
        for assignor in [
            "kafkajs:roundrobin",
            "copartitioned",
            "java:range",
            "java:sticky",
        ] {
            for members in ["1", "4", "\"1..8\""] {
                for v in placements(&pair(a, b, members, assignor)) {
                    if let Some(f) = &v.fix {
                        kinds.insert(v.kind().unwrap_or("none"));
                        check(
                            &format!("placement {a}/{b} {assignor} x{members}"),
                            None,
                            &f.lines(),
                            &mut failures,
                        );
                    }
                }
            }
        }
    }

    // Resize: every step a plan can print, with no, one and several
    // topics to move with it.
    let n = |x: u32| PartitionCount::new(x).unwrap();
    for p in Partitioner::all() {
        for (from, to) in [(6, 9), (6, 12), (6, 6), (9, 6), (1, 7)] {
            for together in [
                vec![],
                vec![Together {
                    group: "g".into(),
                    topics: vec![],
                }],
                vec![Together {
                    group: "g".into(),
                    topics: vec![("b".into(), 6)],
                }],
                vec![Together {
                    group: "g".into(),
                    topics: vec![("b".into(), 6), ("c".into(), 6)],
                }],
            ] {
                let plan = resize::plan(p, n(from), n(to), together);
                for f in &plan.fixes {
                    kinds.insert(covered_fix(f));
                }
                let lines: Vec<String> = plan.fixes.iter().map(ToString::to_string).collect();
                check(
                    &format!("resize {} {from}->{to}", p.spec()),
                    None,
                    &lines,
                    &mut failures,
                );
            }
        }
    }
    kinds.insert(covered_fix(&Fix::Together {
        group: "g".into(),
        topics: vec![],
        to: 9,
    }));
    check(
        "resize together, no topics",
        None,
        &[Fix::Together {
            group: "g".into(),
            topics: vec![],
            to: 9,
        }
        .to_string()],
        &mut failures,
    );
    // The multiple beside the count asked for, with and without measured
    // keys (none of them weighted, or some).
    let moved = |keys_moved, records, records_moved| crate::strategy::resize::Moved {
        keys: 10,
        keys_moved,
        records,
        records_moved,
    };
    for measured in [
        None,
        Some((moved(6, 0, 0), moved(7, 0, 0))),
        Some((moved(6, 100, 37), moved(7, 100, 82))),
    ] {
        let f = Fix::Multiple {
            partitions: 12,
            of: 6,
            moves: Fraction {
                moved: 1,
                period: 2,
            },
            instead: Fraction {
                moved: 2,
                period: 3,
            },
            measured,
        };
        kinds.insert(covered_fix(&f));
        check("resize multiple", None, &[f.to_string()], &mut failures);
    }

    // A group caught mid-resize: one, two topics to raise, a key-ignoring
    // producer, sample keys with and without weights.
    for counts in [
        vec![("a".to_string(), 9), ("b".to_string(), 6)],
        vec![
            ("a".to_string(), 6),
            ("b".to_string(), 3),
            ("c".to_string(), 2),
        ],
    ] {
        let r = realign_counts("g", &counts).unwrap();
        let mut lines = vec![r.why()];
        lines.extend(Procedure::ALL.iter().map(|&p| r.procedure(p)));
        check("realign by counts", None, &lines, &mut failures);
    }
    let t = pair(9, 6, "4", "copartitioned");
    let keys: [&[u8]; 2] = [b"BBCA", b"ANTM"];
    for (samples, weights) in [
        (&keys[..0], None),
        (&keys[..], None),
        (&keys[..], Some(&[3u64, 1][..])),
    ] {
        let r = realign(&t, &t.copartition_groups[0], samples, weights).unwrap();
        let mut lines = vec![r.why()];
        lines.extend(Procedure::ALL.iter().map(|&p| r.procedure(p)));
        check("realign", None, &lines, &mut failures);
    }
    let ignoring = Topology::parse(
        "[[topic]]\nname = \"a\"\npartitions = 9\n[[topic]]\nname = \"b\"\npartitions = 6\n[[topic.producer]]\npartitioner = \"kafka-go\"\n[[copartition]]\nname = \"ab\"\ntopics = [\"a\", \"b\"]\n",
    )
    .unwrap();
    let r = realign(&ignoring, &ignoring.copartition_groups[0], &keys, None).unwrap();
    check(
        "realign, key-ignoring producer",
        None,
        &[r.procedure(Procedure::DrainAndResize)],
        &mut failures,
    );

    // Moving a producer to another partitioner.
    for from in Partitioner::all() {
        for to in Partitioner::all() {
            for f in [
                MigrationFix::Use { partitioner: to },
                MigrationFix::NoneKeeps { from, to },
            ] {
                kinds.insert(covered_migration(&f));
                check("migration", None, &[f.to_string()], &mut failures);
            }
        }
    }

    // The coordinator's refusals, and a member whose bytes do not decode.
    for r in [
        Refusal::Policy,
        Refusal::ProtocolType,
        Refusal::TooLarge,
        Refusal::CustomAssignor,
        Refusal::Full,
    ] {
        kinds.insert(covered_refusal(r));
        for configs in [Vec::new(), vec![crate::readiness::BrokerConfig::default()]] {
            let advice = crate::readiness::copartitioned_advice(&configs);
            check(r.kind(), None, &[r.fix(&advice)], &mut failures);
        }
    }
    let member = crate::group::described::DescribedMember {
        id: "m-1".into(),
        subscription: None,
        assignment: None,
        undecodable: Some("subscription could not be decoded: bad UTF-8".into()),
    };
    for f in crate::group::described::undecodable_findings(&[member]) {
        check(f.kind, Some(&f.message), &[f.fix], &mut failures);
    }

    // A streams group: NOT_READY with each kind of reason, a split task and
    // a task of an undescribed sub-topology, with one and two topics named.
    for f in streams_group_findings() {
        kinds.insert(f.kind);
        check(f.kind, Some(&f.message), &[f.fix], &mut failures);
    }

    // Readiness over a grid of groups and brokers: every finding it
    // makes, with lists of members, topics and assignors empty or single.
    for (_, kind, message, fix) in readiness_findings() {
        kinds.insert(kind);
        check(kind, Some(&message), &[fix], &mut failures);
    }

    assert!(
        failures.is_empty(),
        "{} flaws:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Every placement, resize and readiness finding looked for was reached.
    for k in [
        "units-split",
        "counts-differ",
        "multiple",
        "drain",
        "together",
        "no-remote-assignor-keeps-units",
        "target-splits",
    ] {
        assert!(kinds.contains(k), "{k} not walked: {kinds:?}");
    }
}

fn streams_group_findings() -> Vec<crate::findings::Finding> {
    use crate::streams::group::{analyze, StreamsGroup, StreamsMember, SubTopology, Task, Tasks};
    use std::collections::BTreeMap;
    let sub = |sources: &[&str]| SubTopology {
        id: "0".into(),
        source_topics: sources.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    let member = |sub: &str, p: i32| StreamsMember {
        member_id: "m-1".into(),
        assignment: Tasks {
            active: vec![Task {
                subtopology: sub.into(),
                partition: p,
            }],
            ..Default::default()
        },
        ..Default::default()
    };
    let counts = BTreeMap::from([("a".to_string(), 6), ("b".to_string(), 8)]);
    let mut out = Vec::new();
    for (state, subs, error, members) in [
        ("NotReady", None, None, vec![]),
        ("NotReady", None, Some("topics differ"), vec![]),
        ("NotReady", Some(vec![sub(&["a", "b"])]), None, vec![]),
        ("NotReady", Some(vec![sub(&["a", "x"])]), None, vec![]),
        ("NotReady", Some(vec![sub(&["a"])]), None, vec![]),
        (
            "Stable",
            Some(vec![sub(&["a", "b"])]),
            None,
            vec![member("0", 7)],
        ),
        (
            "Stable",
            Some(vec![sub(&["a", "b", "x"])]),
            None,
            vec![member("0", 7)],
        ),
        (
            "Stable",
            Some(vec![sub(&["a"])]),
            None,
            vec![member("1", 0)],
        ),
    ] {
        let g = StreamsGroup {
            group: "app".into(),
            state: state.into(),
            subtopologies: subs,
            error_message: error.map(String::from),
            members,
            ..Default::default()
        };
        out.extend(analyze(g, &counts, &[vec!["a".into(), "b".into(), "x".into()]]).findings);
    }
    // A classic-protocol Streams group: a task holding one or two joined
    // sources without the third, and a member whose user data is unknown.
    use crate::streams::group::{analyze_classic, ClassicStreamsMember, TaskHolding};
    let holding = |tps: &[(&str, i32)]| TaskHolding {
        task: Task {
            subtopology: "0".into(),
            partition: 1,
        },
        partitions: tps.iter().map(|(t, p)| (t.to_string(), *p)).collect(),
    };
    let classic = vec![
        ClassicStreamsMember {
            member_id: "m-1".into(),
            client_id: "app-StreamThread-1-consumer".into(),
            active: vec![holding(&[("a", 1)])],
            standby: vec![holding(&[("a", 1), ("b", 1), ("x", 1)])],
            ..Default::default()
        },
        ClassicStreamsMember {
            member_id: "m-2".into(),
            active: vec![holding(&[("a", 1), ("b", 1)])],
            ..Default::default()
        },
        ClassicStreamsMember {
            member_id: "m-3".into(),
            client_id: "app-StreamThread-2-consumer".into(),
            unknown: Some("version 12 (versions 1 to 11 are read)".into()),
            ..Default::default()
        },
    ];
    out.extend(
        analyze_classic("app", classic, &[vec!["a".into(), "b".into(), "x".into()]]).findings,
    );
    out
}

/// A protocol name and what a member of every client shows: its default
/// client id, or for @platformatic/kafka (whose client id is the user's) its
/// subscription's shape; `None`: nothing but the protocol.
fn clients_seen() -> Vec<(&'static str, Option<crate::readiness::ClientSeen>)> {
    let seen = |id: &str, body: Option<i16>| {
        Some(crate::readiness::ClientSeen {
            client_id: id.into(),
            metadata_version: Some(if body.is_some() { 1 } else { 0 }),
            body_version: body,
        })
    };
    vec![
        ("range", None),
        ("range", seen("consumer-g-1", None)),
        ("range", seen("rdkafka", None)),
        ("RoundRobinAssigner", seen("kafkajs", None)),
        ("range", seen("sarama", None)),
        ("cooperative-sticky", seen("kgo", None)),
        (
            "range",
            seen("svc@host (github.com/segmentio/kafka-go)", None),
        ),
        ("range", seen("kafka-python-3.0.12", None)),
        ("roundrobin", seen("aiokafka-0.14.0", None)),
        ("roundrobin", seen("orders-svc", Some(0))),
        ("stream", seen("app-StreamThread-1-consumer", None)),
        ("copartitioned", seen("partwise", None)),
        ("roundrobin", seen("orders-svc", None)),
    ]
}

/// Every client x every readiness finding: a client that is not Java's (nor
/// on it) is never told a Java setting or class name, and each client with
/// no consumer protocol, or unknown, is never ready.
#[test]
fn every_client_is_told_in_its_own_words() {
    let java_words = [
        "partition.assignment.strategy",
        "org.apache.kafka.clients",
        "KafkaConsumer.class",
    ];
    let mut seen = std::collections::BTreeSet::new();
    let mut failures = Vec::new();
    for (client, kind, message, fix) in readiness_findings() {
        seen.insert((client, kind));
        let java_ok = matches!(
            client,
            Client::Java | Client::Librdkafka | Client::KafkaStreams
        );
        for w in java_words {
            if !java_ok && (fix.contains(w) || message.contains(w)) {
                failures.push(format!("{client:?} {kind}: Java's {w}: {fix}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    for c in Client::ALL.into_iter().chain([Client::Unknown]) {
        let kinds: Vec<&str> = seen
            .iter()
            .filter(|(k, _)| *k == c)
            .map(|(_, f)| *f)
            .collect();
        let need = match c {
            Client::Unknown => Some("client-unknown"),
            Client::KafkaStreams => Some("streams-group"),
            c if c.facts().consumer_protocol.is_none() => Some("client-without-consumer-protocol"),
            _ => None,
        };
        if let Some(k) = need {
            assert!(kinds.contains(&k), "{c:?} never got {k}: {kinds:?}");
        }
        assert!(!kinds.is_empty(), "{c:?} walked no finding");
    }
    assert!(seen.contains(&(
        Client::Platformatic,
        "upgrade-refused-malformed-subscription"
    )));
    assert!(seen.iter().any(|(_, k)| *k == "splits-now"));
}

fn readiness_findings() -> Vec<(Client, &'static str, String, String)> {
    use crate::group::described::{ClusterTopic, DescribedMember};
    use crate::readiness::{classic, consumer, BrokerConfig, ClassicGroup};
    let topic = |name: &str, partitions| ClusterTopic {
        name: name.into(),
        partitions,
        healthy: true,
    };
    let member = |id: &str, sub: &[&str], parts: &[(&str, &[u32])]| DescribedMember {
        id: id.into(),
        subscription: Some(sub.iter().map(|t| t.to_string()).collect()),
        assignment: Some(
            parts
                .iter()
                .map(|(t, p)| (t.to_string(), p.to_vec()))
                .collect(),
        ),
        undecodable: None,
    };
    let memberships: Vec<Vec<DescribedMember>> = vec![
        vec![],
        vec![member("m1", &["a", "b"], &[("a", &[0, 1]), ("b", &[0, 1])])],
        vec![
            member("m1", &["a", "b"], &[("a", &[0]), ("b", &[1])]),
            member("m2", &["a"], &[("a", &[1])]),
        ],
        // Mid-rebalance: the broker returned neither subscription nor
        // assignment.
        vec![DescribedMember {
            id: "m1".into(),
            subscription: None,
            assignment: None,
            undecodable: None,
        }],
    ];
    let topic_sets = [
        vec![topic("a", 2), topic("b", 2)],
        vec![topic("a", 2), topic("b", 3)],
    ];
    let brokers: Vec<Vec<BrokerConfig>> = vec![
        vec![],
        vec![BrokerConfig::default()],
        vec![BrokerConfig {
            migration_policy: Some("disabled".into()),
            consumer_max_size: Some(1),
            assignors: Some(vec![]),
            ..BrokerConfig::default()
        }],
        vec![
            BrokerConfig {
                assignors: Some(vec!["uniform".into()]),
                ..BrokerConfig::default()
            },
            BrokerConfig {
                broker: 2,
                assignors: Some(vec!["com.example.Custom".into(), "copartitioned".into()]),
                rebalance_protocols: Some(vec!["classic".into()]),
                ..BrokerConfig::default()
            },
        ],
    ];
    let mut out = Vec::new();
    for members in &memberships {
        for topics in &topic_sets {
            for configs in &brokers {
                for (state, protocol_type) in [
                    ("Stable", "consumer"),
                    ("Empty", "consumer"),
                    ("PreparingRebalance", "consumer"),
                    ("Stable", "connect"),
                ] {
                    // Members named by nothing but the protocol, and every
                    // client's members by its default client id (or shape).
                    for (protocol, client) in clients_seen() {
                        let clients: Vec<crate::readiness::ClientSeen> = match &client {
                            Some(c) => members.iter().map(|_| c.clone()).collect(),
                            None => Vec::new(),
                        };
                        for data in [None, Some(b"pwu\x00x".to_vec()), Some(vec![1, 2, 3])] {
                            let g = ClassicGroup {
                                name: "g".into(),
                                state: state.into(),
                                protocol_type: protocol_type.into(),
                                protocol: protocol.into(),
                                members: members.clone(),
                                assignment_user_data: members
                                    .iter()
                                    .map(|_| data.clone())
                                    .collect(),
                                clients: clients.clone(),
                            };
                            let r = classic(&g, configs, topics);
                            let who = r.clients.first().map_or(Client::Unknown, |c| c.client);
                            out.extend(
                                r.findings
                                    .into_iter()
                                    .map(|f| (who, f.kind, f.message, f.fix)),
                            );
                        }
                    }
                }
                for assignor in ["uniform", "range", "copartitioned"] {
                    let r = consumer(assignor, members, members, configs, topics);
                    out.extend(
                        r.findings
                            .into_iter()
                            .map(|f| (Client::Unknown, f.kind, f.message, f.fix)),
                    );
                    // Consumer-protocol members told by their client ids:
                    // a default one, and one of the user's own (unknown).
                    for id in ["consumer-g-1", "worker-7"] {
                        let seen: Vec<crate::readiness::ClientSeen> = members
                            .iter()
                            .map(|_| crate::readiness::ClientSeen {
                                client_id: id.into(),
                                ..Default::default()
                            })
                            .collect();
                        let r = crate::readiness::consumer_with(
                            assignor,
                            members,
                            members,
                            configs,
                            topics,
                            crate::assign::Assignor::Kip848Range,
                            false,
                            &seen,
                        );
                        let who = r.clients.first().map_or(Client::Unknown, |c| c.client);
                        out.extend(
                            r.findings
                                .into_iter()
                                .map(|f| (who, f.kind, f.message, f.fix)),
                        );
                    }
                }
            }
        }
    }
    // A consumer-protocol group mid-rebalance: members reconciling toward a
    // target that keeps units whole, no target returned, and the
    // coordinator computing a new one.
    let whole = vec![
        member("m1", &["a", "b"], &[("a", &[0]), ("b", &[0])]),
        member("m2", &["a", "b"], &[("a", &[1]), ("b", &[1])]),
    ];
    let split = vec![
        member("m1", &["a", "b"], &[("a", &[0]), ("b", &[1])]),
        member("m2", &["a", "b"], &[("a", &[1]), ("b", &[0])]),
    ];
    let unassigned: Vec<DescribedMember> = whole
        .iter()
        .map(|m| DescribedMember {
            assignment: None,
            ..m.clone()
        })
        .collect();
    for (current, target, assigning) in [
        (&split, &whole, false),
        (&whole, &unassigned, false),
        (&whole, &whole, true),
    ] {
        let r = crate::readiness::consumer_with(
            "uniform",
            current,
            target,
            &brokers[1],
            &topic_sets[0],
            crate::assign::Assignor::Kip848Range,
            assigning,
            &[],
        );
        out.extend(
            r.findings
                .into_iter()
                .map(|f| (Client::Unknown, f.kind, f.message, f.fix)),
        );
    }
    out
}

#[test]
fn the_checker_sees_the_holes_it_is_for() {
    assert!(flaws("partitionAssigners: [copartitionedAssigner()]").is_empty());
    assert!(!flaws("use an assignor that keeps units whole (), or run 3 members").is_empty());
    assert!(!flaws("or run no number of members").is_empty());
    assert!(!flaws("raise  to 9 partitions").is_empty());
    assert!(!flaws("key every topic by the same field ()").is_empty());
    assert!(!flaws("best, none)").is_empty());
    assert!(!flaws("today").is_empty() || flaws("x today").contains(&"a dangling end"));
    assert!(!flaws("hashed: ").is_empty());
    assert!(flaws("remove the empty {} from 'b:{}%s'").is_empty());
    assert!(!flaws("held by {}").is_empty());
    assert!(flaws("an empty tag {}, which Redis ignores").is_empty());
    assert!(bare_spec("use sarama:murmur2 in the sarama producer and no key moves").is_some());
    assert!(bare_spec(
        "set b to Producer.Partitioner = sarama.NewMurmur2Partitioner (Sarama 1.50.0 or later) (sarama:murmur2)"
    )
    .is_none());
    let mut f = Vec::new();
    check("x", None, &["a; b; a".to_string()], &mut f);
    assert_eq!(f.len(), 1, "{f:?}");
}

/// Every client's findings in its own words: each assignor's placement fix
/// (with no, its own and its team's alternatives as the assignors that keep
/// units whole), what its client's facts tell the team, and the leader
/// findings of the clients partwise simulates a leader for. A Python team is
/// told its consumer's `partition_assignment_strategy`, never a Java class
/// or property, nor a bare spec.
#[test]
fn every_client_is_told_its_own_settings() {
    let mut failures = Vec::new();
    let foreign = [
        "org.apache.kafka",
        "partition.assignment.strategy=",
        "RangeAssignor",
    ];
    let own = |a: Assignor| -> Option<&'static str> {
        match a.client() {
            "kafka-python" => Some("KafkaConsumer(partition_assignment_strategy="),
            "aiokafka" => Some("AIOKafkaConsumer(partition_assignment_strategy="),
            _ => None,
        }
    };
    for a in Assignor::every() {
        let mut texts: Vec<String> = Vec::new();
        for assignors in [vec![], vec![a], a.alternatives()] {
            for counts in [vec![], vec![3]] {
                texts.extend(fix_of(a, assignors.clone(), counts).lines());
            }
        }
        let findings = leader_findings(a);
        if a.python_setting().is_some() {
            for f in &findings {
                assert!(f.kind().starts_with("python-leader"), "{a}: {}", f.kind());
                assert!(f.to_string().contains(a.library_version().unwrap()), "{f}");
                check(f.kind(), Some(&f.to_string()), &[f.fix()], &mut failures);
                texts.push(f.to_string());
                texts.push(f.fix());
            }
        }
        let java_words = matches!(a.client(), "java" | "librdkafka" | "kip848");
        for t in &texts {
            if !java_words {
                for w in foreign {
                    if t.contains(w) {
                        failures.push(format!("{a}: names {w}: {t}"));
                    }
                }
            }
        }
        if let Some(want) = own(a) {
            // Every fix that names an assignor names it in the client's option.
            let named: Vec<&String> = texts
                .iter()
                .filter(|t| t.contains("Assignor") || t.contains(':'))
                .collect();
            if !named.iter().any(|t| t.contains(want)) {
                failures.push(format!("{a}: no text names {want}: {texts:?}"));
            }
            for t in &texts {
                for b in Assignor::every() {
                    if t.contains(&format!("({}", b.spec()))
                        || t.contains(&format!(", {}", b.spec()))
                    {
                        failures.push(format!("{a}: names the spec {}: {t}", b.spec()));
                    }
                }
            }
        }
    }
    for c in Client::ALL {
        let f = c.facts();
        let want = match c {
            Client::KafkaPython => Some("KafkaConsumer(partition_assignment_strategy="),
            Client::AioKafka => Some("AIOKafkaConsumer(partition_assignment_strategy="),
            _ => None,
        };
        if let Some(w) = want {
            for t in [f.keep_units, f.alternative] {
                if !t.contains(w) {
                    failures.push(format!("{c:?}: does not name {w}: {t}"));
                }
                for x in foreign {
                    if t.contains(x) {
                        failures.push(format!("{c:?}: names {x}: {t}"));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// One finding of each kind `a`'s leader can make with stale claims.
fn leader_findings(a: Assignor) -> [super::leader::LeaderFinding; 4] {
    use super::leader::LeaderFinding;
    [
        LeaderFinding::Throws {
            assignor: a,
            exception: "KeyError".into(),
            message: "(None, 'm1')".into(),
            stale: None,
        },
        LeaderFinding::AssignedTwice {
            assignor: a,
            topic: "t".into(),
            partition: 1,
            members: vec!["m0".into(), "m1".into()],
        },
        LeaderFinding::Unsubscribed {
            assignor: a,
            member: "m1".into(),
            topic: "t".into(),
            partition: 0,
        },
        LeaderFinding::MissingPartition {
            assignor: a,
            member: "m1".into(),
            topic: "t".into(),
            partition: 6,
            partitions: 6,
        },
    ]
}

/// Every finding kind a check reports, walked above, is in the registry,
/// and every registered kind is one a check reports: the registry is the
/// list of ids, not a wish list.
#[test]
fn the_registry_is_every_kind_reported() {
    use super::leader::LeaderFinding;
    use super::KINDS;
    let mut seen = std::collections::BTreeSet::new();
    seen.extend(reasons().iter().map(Reason::kind));
    seen.extend(drifts().iter().map(Drift::kind));
    seen.extend(families().iter().map(FamilyReason::kind));
    for (a, b) in [(6, 6), (9, 6), (12, 6), (3, 1)] {
        for assignor in ["kafkajs:roundrobin", "copartitioned", "java:range"] {
            for members in ["1", "4", "\"1..8\""] {
                seen.extend(
                    placements(&pair(a, b, members, assignor))
                        .iter()
                        .filter_map(|v| v.kind()),
                );
            }
        }
    }
    // A group subscribed to one topic of its pair.
    let t: Topology = "[[topic]]\nname = \"a\"\npartitions = 6\n[[topic]]\nname = \"b\"\npartitions = 6\n\
         [[copartition]]\nname = \"ab\"\ntopics = [\"a\", \"b\"]\n\
         [[consumer_group]]\nname = \"g\"\nassignor = \"java:range\"\nmembers = 2\nsubscriptions = [\"a\"]\n"
        .parse()
        .unwrap();
    seen.extend(placements(&t).iter().filter_map(|v| v.kind()));
    // A sweep the simulation budget cuts short.
    let wide = pair(100, 100, "\"1..50\"", "copartitioned");
    seen.extend(
        crate::group::placement::placements_within(&wide, 20_000)
            .iter()
            .filter_map(|v| v.kind()),
    );
    seen.extend(
        [
            Refusal::Policy,
            Refusal::ProtocolType,
            Refusal::TooLarge,
            Refusal::CustomAssignor,
            Refusal::Full,
            Refusal::Malformed,
        ]
        .map(Refusal::kind),
    );
    let member = crate::group::described::DescribedMember {
        id: "m-1".into(),
        subscription: None,
        assignment: None,
        undecodable: Some("bad".into()),
    };
    seen.extend(
        crate::group::described::undecodable_findings(&[member])
            .iter()
            .map(|f| f.kind),
    );
    seen.extend(streams_group_findings().iter().map(|f| f.kind));
    seen.extend(readiness_findings().iter().map(|(_, k, _, _)| *k));
    for a in [Assignor::JavaSticky, Assignor::KafkaPythonSticky] {
        seen.extend(leader_findings(a).iter().map(LeaderFinding::kind));
    }
    seen.extend(salt_refusals().iter().map(|f| f.kind));
    let registered: std::collections::BTreeSet<&str> = KINDS.iter().map(|k| k.id).collect();
    let unregistered: Vec<&&str> = seen.difference(&registered).collect();
    let unreported: Vec<&&str> = registered.difference(&seen).collect();
    assert!(
        unregistered.is_empty(),
        "reported but not in KINDS: {unregistered:?}"
    );
    assert!(
        unreported.is_empty(),
        "in KINDS but never reported here: {unreported:?}"
    );
}

/// Why a hot key of the ticker's pair cannot be salted, for each way the
/// partner topic can refuse: every refusal `salt` reports.
fn salt_refusals() -> Vec<crate::findings::Finding> {
    let ticker = |key: &str, producer: &str, partitions: u32| -> Topology {
        format!(
            "[[topic]]\nname = \"market-updates\"\npartitions = 6\nkey = \"symbol\"\n\
             producer = [{{ name = \"market-feed\", partitioner = \"kafkajs\" }}]\n\
             [[topic]]\nname = \"notifications\"\npartitions = {partitions}\nkey = \"{key}\"\n\
             producer = [{producer}]\n\
             [[copartition]]\nname = \"ticker\"\ntopics = [\"market-updates\", \"notifications\"]\n"
        )
        .parse()
        .unwrap()
    };
    let keys: [(&[u8], u64); 4] = [
        (b"BBCA", 4500),
        (b"TLKM", 600),
        (b"ASII", 611),
        (b"BMRI", 590),
    ];
    let hot = [true, false, false, false];
    let mut out = Vec::new();
    for t in [
        ticker(
            "symbol",
            r#"{ name = "go-alerts", partitioner = "sarama" }"#,
            6,
        ),
        ticker(
            "symbol",
            r#"{ name = "batch", partitioner = "kafkajs", keyless = true }"#,
            6,
        ),
        ticker(
            "symbol",
            r#"{ name = "alerts", partitioner = "kafkajs" }"#,
            9,
        ),
        ticker("symbol", "", 6),
        ticker(
            "userId",
            r#"{ name = "alerts", partitioner = "kafkajs" }"#,
            6,
        ),
        ticker(
            "symbol",
            r#"{ name = "ids", partitioner = "kafkajs", key_format = "int32" }"#,
            6,
        ),
    ] {
        let plan =
            crate::strategy::salt::recommend_group(&t, "market-updates", &keys, &hot, &[], 1.5, 64)
                .unwrap()
                .expect("market-updates is joined");
        out.extend(plan.refusals);
    }
    out
}

#[test]
fn every_salt_refusal_says_its_fix_without_holes() {
    let mut failures = Vec::new();
    for f in salt_refusals() {
        check(f.kind, Some(&f.message), &[f.fix], &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
