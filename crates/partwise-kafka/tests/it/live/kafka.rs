//! partwise-kafka against a real Kafka-API broker (PARTWISE_KAFKA_BOOTSTRAP;
//! `scripts/services` starts one): inference of the partitioner that wrote a
//! topic, co-partitioning verdicts, read-only audits, faults, producing with
//! partwise routing, and a real librdkafka consumer group.

use partwise::assign::{Assignor, Group, Member, Topic};
use partwise::inference::candidates;
use partwise::{PartitionCount, Partitioner};
use partwise_faults::live::{create_topics, kafka_bootstrap, keys, produce_with, unique};
use partwise_kafka::audit::{audit, AuditOptions, AuditReport, Progress};
use partwise_kafka::cluster::{list_groups, list_topics, watermarks};
use partwise_kafka::group::{describe_group, AssignmentData};
use partwise_kafka::produce::RoutedProducer;
use partwise_kafka::Connection;
use std::time::{Duration, Instant};

fn conn(bootstrap: &str, secs: u64) -> Connection {
    let mut c = Connection::new(Duration::from_secs(secs));
    c.bootstrap(bootstrap).unwrap();
    c
}

fn opts(topics: &[&str], sample: u64) -> AuditOptions {
    let all: Vec<Partitioner> = Partitioner::all().collect();
    AuditOptions {
        topics: topics.iter().map(|t| t.to_string()).collect(),
        sample,
        candidates: candidates(&all, &[]),
        window: Default::default(),
    }
}

fn run(c: &Connection, topics: &[&str], sample: u64) -> AuditReport {
    audit(c, &opts(topics, sample), &mut |_| {}).unwrap()
}

fn inferred(r: &AuditReport, topic: &str) -> Vec<String> {
    let t = r.topics.iter().find(|t| t.name == topic).unwrap();
    t.routing
        .as_ref()
        .unwrap()
        .inferred
        .iter()
        .map(|c| c.to_string())
        .collect()
}

#[test]
fn audit_infers_each_topics_partitioner_and_flags_the_pair_that_differs() {
    let b = kafka_bootstrap();
    let (java_a, crc, java_b) = (
        unique("pwk-java-a"),
        unique("pwk-crc"),
        unique("pwk-java-b"),
    );
    create_topics(&b, &[(&java_a, 6), (&crc, 6), (&java_b, 6)]);
    let mut ks = keys(240, "sym");
    ks.push(None);
    ks.push(None);
    let pa = produce_with(&b, &java_a, "murmur2_random", &ks);
    produce_with(&b, &crc, "consistent_random", &ks);
    produce_with(&b, &java_b, "murmur2_random", &keys(120, "sym"));
    // The oracle agrees with partwise for every keyed record.
    let java: Partitioner = "java".parse().unwrap();
    let six = PartitionCount::new(6).unwrap();
    for (k, p) in ks.iter().zip(&pa) {
        if let Some(k) = k {
            assert_eq!(
                java.place(Some(k.as_bytes()), six).partition(),
                Some(*p as u32)
            );
        }
    }
    let c = conn(&b, 10);
    let r = run(&c, &[&java_a, &crc, &java_b], 1000);
    let ia = inferred(&r, &java_a);
    assert!(
        ia.contains(&"java".to_string()) && ia.contains(&"librdkafka:murmur2_random".to_string()),
        "{ia:?}"
    );
    assert!(
        !ia.iter().any(|s| s.starts_with("librdkafka:consistent")),
        "{ia:?}"
    );
    let ic = inferred(&r, &crc);
    assert!(
        ic.contains(&"librdkafka:consistent_random".to_string()),
        "{ic:?}"
    );
    assert!(!ic.contains(&"java".to_string()), "{ic:?}");
    let ta = &r.topics[0];
    assert_eq!(ta.partitions.iter().map(|p| p.sampled).sum::<u64>(), 242);
    assert_eq!(ta.partitions.iter().map(|p| p.records).sum::<u64>(), 242);
    let ro = ta.routing.as_ref().unwrap();
    assert_eq!((ro.keyed, ro.keyless, ro.misrouted_total), (240, 2, 0));
    let v = r.verdict.as_ref().unwrap();
    assert!(!v.copartitioned);
    assert!(
        v.findings
            .iter()
            .any(|x| x.kind() == "partitioners-disagree"
                && x.to_string().starts_with("partitioners disagree")),
        "{:?}",
        v.findings
    );
    // The two murmur2 topics alone are co-partitioned.
    let r2 = run(&c, &[&java_a, &java_b], 1000);
    let v2 = r2.verdict.unwrap();
    assert!(v2.copartitioned, "{:?}", v2.findings);
    assert!(v2.common.iter().any(|c| c.partitioner.spec() == "java"));
}

#[test]
fn the_batch_reader_returns_every_record_once_with_its_key_then_the_end() {
    use partwise_kafka::fetch::{Event, PartitionReader};
    use std::collections::BTreeMap;
    let b = kafka_bootstrap();
    let t = unique("pwk-reader");
    create_topics(&b, &[(&t, 3)]);
    // A null key must come back null and an empty one empty (both are
    // past any partition's first two records: 3 partitions, 500 keys).
    let mut ks = keys(500, "r");
    ks[70] = None;
    ks[300] = Some(String::new());
    let parts = produce_with(&b, &t, "murmur2_random", &ks);
    // What was written, per partition, in order.
    let mut want: BTreeMap<i32, Vec<Option<Vec<u8>>>> = BTreeMap::new();
    for (k, p) in ks.iter().zip(&parts) {
        want.entry(*p)
            .or_default()
            .push(k.as_ref().map(|k| k.clone().into_bytes()));
    }
    let c: rdkafka::consumer::BaseConsumer = rdkafka::config::ClientConfig::new()
        .set("bootstrap.servers", &b)
        .set("enable.partition.eof", "true")
        .create()
        .unwrap();
    let mut r = PartitionReader::new(&c, &t).unwrap();
    for p in 0..3 {
        // Partition 0 from its third record.
        r.start(p, if p == 0 { 2 } else { 0 }).unwrap();
    }
    type Read = Vec<(i64, Option<Vec<u8>>)>;
    let mut got: BTreeMap<i32, Read> = BTreeMap::new();
    let mut ended = std::collections::BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while ended.len() < 3 {
        assert!(Instant::now() < deadline, "ended {ended:?}, got {got:?}");
        let batch = r.next_batch(Duration::from_millis(100));
        for ev in batch.events() {
            match ev {
                Event::End { partition } => {
                    ended.insert(partition);
                }
                Event::Error { .. } => {}
                Event::Record {
                    partition,
                    offset,
                    key,
                    ..
                } => {
                    assert!(!ended.contains(&partition), "a record after the end");
                    got.entry(partition)
                        .or_default()
                        .push((offset, key.map(<[u8]>::to_vec)));
                }
            }
        }
    }
    drop(r);
    for (p, w) in &want {
        let skip = if *p == 0 { 2 } else { 0 };
        let g = &got[p];
        let offsets: Vec<i64> = g.iter().map(|(o, _)| *o).collect();
        let expect: Vec<i64> = (skip as i64..w.len() as i64).collect();
        assert_eq!(offsets, expect, "partition {p}");
        let keys: Vec<&Option<Vec<u8>>> = g.iter().map(|(_, k)| k).collect();
        let expect: Vec<&Option<Vec<u8>>> = w[skip..].iter().collect();
        assert_eq!(keys, expect, "partition {p}");
    }
}

#[test]
fn partition_counts_that_differ_are_a_reason() {
    let b = kafka_bootstrap();
    let (six, eight) = (unique("pwk-six"), unique("pwk-eight"));
    create_topics(&b, &[(&six, 6), (&eight, 8)]);
    produce_with(&b, &six, "murmur2_random", &keys(60, "k"));
    produce_with(&b, &eight, "murmur2_random", &keys(60, "k"));
    let r = run(&conn(&b, 10), &[&six, &eight], 100);
    let v = r.verdict.unwrap();
    assert!(
        v.findings
            .iter()
            .any(|x| x.kind() == "partition-counts-differ"
                && x.to_string().starts_with("partition counts differ")),
        "{:?}",
        v.findings
    );
}

#[test]
fn audits_are_read_only() {
    let b = kafka_bootstrap();
    let t = unique("pwk-ro");
    create_topics(&b, &[(&t, 4)]);
    produce_with(&b, &t, "murmur2_random", &keys(100, "ro"));
    let c = conn(&b, 10);
    let before = watermarks(&c, &t).unwrap();
    let groups_before = list_groups(&c).unwrap();
    let topics_before: Vec<String> = list_topics(&c)
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    // Even a group.id passed by the user must not make the audit join or commit.
    let user_group = unique("pwk-should-not-exist");
    let mut with_group = c.clone();
    with_group.set("group.id", &user_group).unwrap();
    let r = run(&with_group, &[&t], 1000);
    assert_eq!(r.topics[0].routing.as_ref().unwrap().sampled, 100);
    assert_eq!(watermarks(&c, &t).unwrap(), before);
    // Other tests of this binary make groups and topics meanwhile, all named
    // `pwk-...` by `unique`; the audit knows only `t` and the user's group,
    // so anything else new is not its doing, and the user's group must not
    // appear.
    let groups_after = list_groups(&c).unwrap();
    let new_groups: Vec<_> = groups_after
        .iter()
        .filter(|g| !groups_before.contains(g))
        .collect();
    assert!(
        !new_groups.iter().any(|g| **g == user_group),
        "the audit made its group: {new_groups:?}"
    );
    // The user's group has no members and no committed offsets.
    let d = describe_group(&c, &user_group).unwrap();
    assert!(d.members.is_empty(), "{d:?}");
    {
        use rdkafka::consumer::{BaseConsumer, Consumer};
        use rdkafka::{Offset, TopicPartitionList};
        let probe: BaseConsumer = rdkafka::config::ClientConfig::new()
            .set("bootstrap.servers", &b)
            .set("group.id", &user_group)
            .set("enable.auto.commit", "false")
            .create()
            .unwrap();
        let mut tpl = TopicPartitionList::new();
        for p in 0..4 {
            tpl.add_partition(&t, p);
        }
        let committed = probe
            .committed_offsets(tpl, Duration::from_secs(10))
            .unwrap();
        for e in committed.elements() {
            assert_eq!(e.offset(), Offset::Invalid, "partition {}", e.partition());
        }
    }
    let topics_after: Vec<String> = list_topics(&c)
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    let new_topics: Vec<&String> = topics_after
        .iter()
        .filter(|n| !topics_before.contains(n))
        .collect();
    assert!(
        new_topics
            .iter()
            .all(|n| n.starts_with("pwk-") && !n.starts_with("pwk-should-not-exist")),
        "the audit created topics: {new_topics:?}"
    );
}

#[test]
fn a_missing_topic_is_named_and_the_rest_is_audited() {
    let b = kafka_bootstrap();
    let (t, missing) = (unique("pwk-present"), unique("pwk-missing"));
    create_topics(&b, &[(&t, 3)]);
    produce_with(&b, &t, "murmur2_random", &keys(30, "m"));
    let c = conn(&b, 10);
    let r = run(&c, &[&missing, &t], 100);
    assert_eq!(r.topics[0].name, missing);
    let e = r.topics[0].error.as_deref().unwrap();
    assert!(e.contains("does not exist"), "{e}");
    assert_eq!(r.topics[1].routing.as_ref().unwrap().sampled, 30);
    assert!(r
        .verdict
        .unwrap()
        .findings
        .iter()
        .any(|x| x.to_string().contains(&missing)));
    // Auditing it did not create it.
    assert!(!list_topics(&c).unwrap().iter().any(|x| x.name == missing));
}

#[test]
fn an_unreachable_broker_is_a_clear_error_within_the_timeout() {
    // A port nothing listens on: bind, read the port, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let c = conn(&format!("127.0.0.1:{port}"), 2);
    let t0 = Instant::now();
    let e = list_topics(&c).unwrap_err().to_string();
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    assert!(
        e.contains("no answer from the Kafka cluster") && e.contains(&port.to_string()),
        "{e}"
    );
    let t0 = Instant::now();
    let e = audit(&c, &opts(&["x"], 10), &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(t0.elapsed() < Duration::from_secs(5));
    assert!(e.contains("no answer"), "{e}");
}

#[test]
fn a_broker_killed_mid_audit_ends_within_the_timeout_marked_partial() {
    // A broker of the test's own: the shared one must survive.
    let kafka = partwise_faults::KafkaCluster::start(1).unwrap();
    let b = kafka.bootstrap().to_string();
    let (t1, t2, t3) = (unique("pwk-k1"), unique("pwk-k2"), unique("pwk-k3"));
    create_topics(&b, &[(&t1, 2), (&t2, 2), (&t3, 2)]);
    produce_with(&b, &t1, "murmur2_random", &keys(20, "a"));
    produce_with(&b, &t2, "murmur2_random", &keys(20, "b"));
    let c = conn(&b, 3);
    let mut killed_at: Option<Instant> = None;
    let r = audit(&c, &opts(&[&t1, &t2, &t3], 100), &mut |p| {
        if let Progress::Start { topic, .. } = p {
            if topic == t2 && killed_at.is_none() {
                kafka.kill(1).unwrap();
                killed_at = Some(Instant::now());
            }
        }
    })
    .unwrap();
    let after = killed_at.expect("the broker was killed").elapsed();
    // The idle limit is the 3 s timeout; the rest is margin for a loaded machine.
    assert!(
        after < Duration::from_secs(3 + 3),
        "took {after:?} after the kill"
    );
    assert!(r.partial());
    assert!(r.topics[0].partial.is_none());
    assert_eq!(r.topics[0].routing.as_ref().unwrap().sampled, 20);
    assert!(r.topics[1]
        .partial
        .as_deref()
        .unwrap()
        .contains("stopped answering"));
    assert!(r.topics[2].partial.is_some());
}

#[test]
fn routed_producer_puts_records_where_the_partwise_partitioner_says() {
    let b = kafka_bootstrap();
    let t = unique("pwk-routed");
    create_topics(&b, &[(&t, 12)]);
    let c = conn(&b, 10);
    for spec in ["sarama", "kafkajs:legacy"] {
        let p: Partitioner = spec.parse().unwrap();
        let mut prod = RoutedProducer::new(&c, p).unwrap();
        let ks: Vec<String> = (0..60).map(|i| format!("{spec}-{i}")).collect();
        for (i, k) in ks.iter().enumerate() {
            prod.send(&t, Some(k.as_bytes()), Some(b"v"), &[], i)
                .unwrap();
        }
        let mut d = prod.flush().unwrap();
        d.sort_by_key(|d| d.id);
        assert_eq!(d.len(), 60);
        let twelve = PartitionCount::new(12).unwrap();
        for (d, k) in d.iter().zip(&ks) {
            assert_eq!(d.error, None);
            assert_eq!(
                Some(d.partition as u32),
                p.place(Some(k.as_bytes()), twelve).partition()
            );
        }
    }
    // Producing never creates a topic.
    let missing = unique("pwk-nope");
    let mut prod = RoutedProducer::new(&c, "java".parse().unwrap()).unwrap();
    let e = prod
        .send(&missing, Some(b"k"), None, &[], 0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("does not exist"), "{e}");
    assert!(!list_topics(&c).unwrap().iter().any(|x| x.name == missing));
}

/// Polls `consumers` until every one has an assignment, they cover every
/// partition once, and nothing changed for `stable`.
fn settle(
    consumers: &[rdkafka::consumer::BaseConsumer],
    total: usize,
    stable: Duration,
) -> Vec<Vec<(String, u32)>> {
    use rdkafka::consumer::Consumer;
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut last: Option<Vec<Vec<(String, u32)>>> = None;
    let mut since = Instant::now();
    while Instant::now() < deadline {
        for c in consumers {
            let _ = c.poll(Duration::from_millis(50));
        }
        let snap: Vec<Vec<(String, u32)>> = consumers
            .iter()
            .map(|c| {
                let mut v: Vec<(String, u32)> = c
                    .assignment()
                    .map(|tpl| {
                        tpl.elements()
                            .iter()
                            .map(|e| (e.topic().to_string(), e.partition() as u32))
                            .collect()
                    })
                    .unwrap_or_default();
                v.sort();
                v
            })
            .collect();
        if last.as_ref() != Some(&snap) {
            last = Some(snap);
            since = Instant::now();
            continue;
        }
        let owned: std::collections::BTreeSet<&(String, u32)> = snap.iter().flatten().collect();
        let count: usize = snap.iter().map(Vec::len).sum();
        if count == total && owned.len() == total && since.elapsed() >= stable {
            return snap;
        }
    }
    panic!("group did not settle: {last:?}");
}

#[test]
fn a_librdkafka_group_gets_the_assignment_partwise_predicts() {
    use rdkafka::config::ClientConfig;
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let b = kafka_bootstrap();
    let (left, right) = (unique("pwk-left"), unique("pwk-right"));
    create_topics(&b, &[(&left, 3), (&right, 5)]);
    for strategy in ["range", "roundrobin"] {
        let group = unique(&format!("pwk-group-{strategy}"));
        let members = 3;
        let consumers: Vec<BaseConsumer> = (0..members)
            .map(|i| {
                let c: BaseConsumer = ClientConfig::new()
                    .set("bootstrap.servers", &b)
                    .set("group.id", &group)
                    .set("client.id", format!("m{i}"))
                    .set("partition.assignment.strategy", strategy)
                    .set("enable.auto.commit", "false")
                    .set("session.timeout.ms", "30000")
                    .set("heartbeat.interval.ms", "500")
                    .create()
                    .unwrap();
                c.subscribe(&[&left, &right]).unwrap();
                c
            })
            .collect();
        let views = settle(&consumers, 8, Duration::from_secs(4));
        // Broker member ids are client.id + "-" + a UUID, so they sort as the
        // client ids do: the prediction can use the client ids.
        let g = Group::new(
            (0..members)
                .map(|i| Member::new(format!("m{i}"), [&left, &right]))
                .collect(),
            vec![Topic::new(&left, 3), Topic::new(&right, 5)],
        );
        let a: Assignor = format!("librdkafka:{strategy}").parse().unwrap();
        let predicted = a.assign(&g).unwrap();
        for (m, view) in views.iter().enumerate() {
            let mut want: Vec<(String, u32)> = predicted.partitions[m]
                .iter()
                .map(|tp| (g.topics[tp.topic as usize].name.clone(), tp.partition))
                .collect();
            want.sort();
            assert_eq!(view, &want, "{strategy}: member m{m}");
        }
        // DescribeGroups: either the real assignments, or said to be missing.
        let d = describe_group(&conn(&b, 10), &group).unwrap();
        assert_eq!(d.members.len(), members);
        let all_views: std::collections::BTreeSet<&(String, u32)> =
            views.iter().flatten().collect();
        for m in &d.members {
            match &m.assignment {
                AssignmentData::NotReturned => {}
                AssignmentData::Assigned(a) => {
                    for (t, ps) in a {
                        for p in ps {
                            assert!(all_views.contains(&(t.clone(), *p)));
                        }
                    }
                }
            }
        }
        drop(consumers);
    }
}

/// The shared broker's own API versions pick its release line (the version
/// its server.log names) and, from 4.1 on, the `uniform` model of that line.
#[test]
fn kip848_server_assignor_model_from_the_brokers_api_versions() {
    let dir = partwise_faults::live::env("PARTWISE_KAFKA_DIR");
    let log = std::fs::read_to_string(format!("{dir}/node-1/server.log")).unwrap();
    let version = log
        .split("Kafka version: ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .expect("server.log names the Kafka version")
        .to_string();
    let line = version.splitn(3, '.').take(2).collect::<Vec<_>>().join(".");
    let c = conn(&kafka_bootstrap(), 10);
    let m = partwise_kafka::group::server_assignor_model(&c, "uniform").unwrap();
    assert_eq!(
        m.line,
        Some(line.as_str()),
        "Kafka {version}: {}",
        m.evidence
    );
    // A 4.0 broker's API versions do not tell 4.0.0 from 4.0.1: undecided.
    let want = (line != "4.0")
        .then(|| Assignor::kip848_for_version("uniform", &version).ok())
        .flatten();
    assert_eq!(m.assignor, want, "Kafka {version}: {}", m.evidence);
    let r = partwise_kafka::group::server_assignor_model(&c, "range").unwrap();
    assert_eq!(r.assignor, Some(Assignor::Kip848Range));
}
