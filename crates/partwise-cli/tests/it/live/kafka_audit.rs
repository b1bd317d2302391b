//! `kafka audit`'s forensics on topics written by two real producers: a
//! KafkaJS 2.x producer (`kafkajs_produce.js`, KafkaJS's DefaultPartitioner)
//! and a Sarama-default-partitioned one (`partwise kafka produce -P sarama`,
//! whose placement is held to a real Sarama producer's vectors). The known
//! answers are where KafkaJS's own partitioner and the produce command's
//! delivery reports put each record, never partwise's inference.

use crate::common::{partwise as pw, repo, text, unfolded, SYMBOLS};
use partwise_faults::live::{create_topics, kafka_bootstrap as bootstrap, unique};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};

/// Sends `keys` in order with KafkaJS; where its partitioner put each.
fn kafkajs(b: &str, topic: &str, keys: &[String]) -> Vec<u32> {
    let script = repo().join("crates/partwise-cli/tests/it/live/kafkajs_produce.js");
    let mut child = Command::new("node")
        .arg(script)
        .args([b, topic])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node runs (bash scripts/ensure kafkajs)");
    let input: String = keys.iter().map(|k| format!("{k}\n")).collect();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "KafkaJS producer failed (bash scripts/ensure kafkajs installs it): {}",
        text(&out.stderr)
    );
    let rows: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), keys.len());
    rows.iter()
        .zip(keys)
        .map(|(r, k)| {
            assert_eq!(r["key"], k.as_str());
            r["partition"].as_u64().unwrap() as u32
        })
        .collect()
}

/// Sends `keys` in order with Sarama's default partitioner; each record's
/// (key, partition, offset) from the broker's delivery reports (in the order
/// they arrive, not the order sent).
fn sarama(b: &str, topic: &str, keys: &[String]) -> Vec<(String, u32, i64)> {
    let input: String = keys.iter().map(|k| format!("{k}\tsarama\n")).collect();
    let out = pw()
        .args([
            "kafka", "produce", "-b", b, "-t", topic, "-P", "sarama", "--format", "ndjson",
        ])
        .write_stdin(input)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .map(|l| {
            let r: Value = serde_json::from_str(l).unwrap();
            (
                r["key"].as_str().unwrap().to_string(),
                r["partition"].as_u64().unwrap() as u32,
                r["offset"].as_i64().unwrap(),
            )
        })
        .collect()
}

fn audit(b: &str, topic: &str) -> (i32, Value) {
    let out = pw()
        .args(["kafka", "audit", "-b", b, "-t", topic, "--format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", text(&out.stdout), text(&out.stderr)));
    (out.status.code().unwrap(), v)
}

fn names(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect()
}

/// The seeds' `notifications`: a KafkaJS service and a Go service with
/// Sarama write the same symbols, 1,500 records each, interleaved. The audit
/// names both families with half the records each, and every symbol the two
/// put on different partitions as split, with its records per partition.
#[test]
fn a_topic_kafkajs_and_sarama_both_write_is_reported_as_that_mixture() {
    let b = bootstrap();
    let t = unique("pwc-mixed");
    create_topics(&b, &[(&t, 6)]);
    // Three rounds each, so that neither looks like a switch.
    let round: Vec<String> = (0..50)
        .flat_map(|_| SYMBOLS.iter().map(|s| s.to_string()))
        .collect();
    let mut js: BTreeMap<String, u32> = BTreeMap::new();
    let mut go: BTreeMap<String, u32> = BTreeMap::new();
    for _ in 0..3 {
        for (k, p) in round.iter().zip(kafkajs(&b, &t, &round)) {
            assert_eq!(*js.entry(k.clone()).or_insert(p), p);
        }
        for (k, p, _) in sarama(&b, &t, &round) {
            assert_eq!(*go.entry(k).or_insert(p), p);
        }
    }
    let split: Vec<&str> = SYMBOLS
        .iter()
        .copied()
        .filter(|s| js[*s] != go[*s])
        .collect();
    assert!(!split.is_empty());

    let (code, v) = audit(&b, &t);
    assert_eq!(code, 1, "{v}");
    let f = &v["topics"][0]["routing"]["forensics"];
    let m = &f["mixture"];
    assert_eq!(m["minimal"], true, "{m}");
    assert_eq!(
        (m["explained"].as_u64(), m["unexplained"].as_u64()),
        (Some(3000), Some(0))
    );
    let members = m["members"].as_array().unwrap();
    assert_eq!(members.len(), 2, "{m}");
    let of = |spec: &str| {
        members
            .iter()
            .find(|x| names(&x["partitioners"]).contains(&spec))
            .unwrap_or_else(|| panic!("no member is {spec}: {m}"))
    };
    let (murmur, fnv) = (of("kafkajs"), of("sarama"));
    assert_eq!(fnv["partitioner"], "sarama");
    assert!(!names(&murmur["partitioners"]).contains(&"sarama"));
    for x in [murmur, fnv] {
        assert_eq!(x["records"], 1500, "{x}");
        assert_eq!(x["records_only"], 150 * split.len() as u64, "{x}");
        assert!((x["share"].as_f64().unwrap() - 0.5).abs() < 1e-9, "{x}");
        assert_eq!(x["keys"], split.len() as u64, "{x}");
    }
    assert_eq!(f["split_keys_total"], split.len() as u64);
    let got: BTreeMap<String, Vec<(u64, u64)>> = f["split_keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            let ps = k["partitions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| {
                    (
                        p["partition"].as_u64().unwrap(),
                        p["records"].as_u64().unwrap(),
                    )
                })
                .collect();
            (k["key"].as_str().unwrap().to_string(), ps)
        })
        .collect();
    let want: BTreeMap<String, Vec<(u64, u64)>> = split
        .iter()
        .map(|s| {
            let mut ps = vec![(js[*s] as u64, 150), (go[*s] as u64, 150)];
            ps.sort();
            (s.to_string(), ps)
        })
        .collect();
    assert_eq!(got, want);
    assert_eq!(
        f["switches"],
        serde_json::json!([]),
        "interleaved writers are no switch"
    );
    let finding = &v["topics"][0]["findings"][0];
    assert_eq!(finding["kind"], "mixed-partitioners", "{finding}");
    let fix = finding["fix"].as_str().unwrap();
    assert!(fix.contains("sarama.NewMurmur2Partitioner"), "{fix}");
    assert!(!fix.contains("librdkafka producers"), "{fix}");

    // The table says it in words.
    let out = pw()
        .args(["kafka", "audit", "-b", &b, "-t", &t])
        .output()
        .unwrap();
    let table = unfolded(&text(&out.stdout));
    assert!(
        table.contains("mixture: 2 partitioners together explain 3000 of 3000 keyed records"),
        "{table}"
    );
    assert!(table.contains("the join breaks for these keys"), "{table}");
    assert!(
        table.contains(&format!("{} on partitions", split[0])),
        "{table}"
    );
}

/// A producer that moved from KafkaJS to Sarama's default: every partition
/// shows the offset of the switch, where the delivery reports put it.
#[test]
fn a_producer_that_switched_partitioner_is_reported_with_the_offset_per_partition() {
    let b = bootstrap();
    let t = unique("pwc-switch");
    create_topics(&b, &[(&t, 3)]);
    let old: Vec<String> = (0..300).map(|i| format!("user-{i}")).collect();
    let new: Vec<String> = (300..600).map(|i| format!("user-{i}")).collect();
    let placed_old = kafkajs(&b, &t, &old);
    let placed_new = sarama(&b, &t, &new);
    // Where KafkaJS would have put the new keys: the first record of each
    // partition it would not have put there is where the switch shows.
    let js_new: BTreeMap<&String, u32> = new.iter().zip(kafkajs_places(&new, 3)).collect();
    let (code, v) = audit(&b, &t);
    assert_eq!(code, 1, "{v}");
    let sw = v["topics"][0]["routing"]["forensics"]["switches"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(sw.len(), 3, "{v}");
    for (p, s) in (0..3u32).zip(&sw) {
        assert_eq!(s["partition"], p);
        let before = placed_old.iter().filter(|&&x| x == p).count() as i64;
        let first_new = placed_new
            .iter()
            .filter(|x| x.1 == p)
            .map(|x| x.2)
            .min()
            .unwrap();
        assert_eq!(first_new, before, "the new producer's first offset in {p}");
        let shows = placed_new
            .iter()
            .filter(|(k, q, _)| *q == p && js_new[k] != p)
            .map(|x| x.2)
            .min()
            .unwrap();
        assert_eq!(s["offset"], shows, "{s}");
        let earliest = s["earliest"].as_i64().unwrap();
        assert!(earliest <= first_new, "{s}");
        assert!(names(&s["from"]).contains(&"kafkajs"), "{s}");
        assert!(names(&s["to"]).contains(&"sarama"), "{s}");
        assert!(!names(&s["from"]).contains(&"sarama"), "{s}");
    }
}

/// Where KafkaJS's partitioner puts `keys` on a topic of `n` partitions,
/// asked of KafkaJS itself without producing.
fn kafkajs_places(keys: &[String], n: u32) -> Vec<u32> {
    let script = format!(
        "const path=require('path');const {{Partitioners}}=require(require.resolve('kafkajs',{{paths:[{:?}]}}));\
         const p=Partitioners.DefaultPartitioner();const md=[...Array({n}).keys()].map(i=>({{partitionId:i,leader:0}}));\
         for (const k of process.argv.slice(1)) console.log(p({{topic:'t',partitionMetadata:md,message:{{key:Buffer.from(k)}}}}))",
        repo().join("bindings/kafkajs").to_str().unwrap()
    );
    let out = Command::new("node")
        .args(["-e", &script])
        .args(keys)
        .output()
        .expect("node runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

/// `report -b` reads the same forensics: a co-partitioned pair whose first
/// topic two producers write is a live difference, the mixture named with
/// its shares, its finding and fix in the verdict, and the split keys in
/// the JSON twin. (Both halves through `partwise kafka produce -P`, whose
/// placements are held to the real clients' vectors, to keep this fast.)
#[test]
fn report_b_shows_the_mixture_of_a_joined_topic() {
    let b = bootstrap();
    let (m, k) = (unique("pwr-mix"), unique("pwr-js"));
    create_topics(&b, &[(&m, 6), (&k, 6)]);
    let lines: String = (0..30)
        .flat_map(|_| SYMBOLS.iter().map(|s| format!("{s}\tv\n")))
        .collect();
    let produce = |topic: &str, spec: &str| {
        let out = pw()
            .args(["kafka", "produce", "-b", &b, "-t", topic, "-P", spec])
            .write_stdin(lines.clone())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    };
    for _ in 0..2 {
        produce(&m, "kafkajs");
        produce(&m, "sarama");
    }
    produce(&k, "kafkajs");
    let file = crate::common::temp_file(format!(
        r#"
[[topic]]
name = "{m}"
partitions = 6
producer = [{{ partitioner = "kafkajs", key_format = "string" }}]
[[topic]]
name = "{k}"
partitions = 6
producer = [{{ partitioner = "kafkajs", key_format = "string" }}]
[[copartition]]
name = "pair"
topics = ["{m}", "{k}"]
"#
    ));
    let out = pw()
        .args([
            "report",
            file.path().to_str().unwrap(),
            "-b",
            &b,
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let audit = &v["live"]["kafka"]["audits"][0];
    let t0 = &audit["topics"][0];
    let inferred = names(&t0["inferred"]);
    assert_eq!(inferred.len(), 2, "{t0}");
    assert!(
        inferred
            .iter()
            .any(|x| x.starts_with("sarama (50.0% of records")),
        "{t0}"
    );
    assert!(
        t0["differences"][0]
            .as_str()
            .unwrap()
            .contains("written by several partitioners"),
        "{t0}"
    );
    let findings = audit["audit"]["copartitioning"]["findings"]
        .as_array()
        .unwrap();
    assert_eq!(findings[0]["kind"], "mixed-partitioners", "{findings:?}");
    let split = &audit["audit"]["topics"][0]["routing"]["forensics"]["split_keys_total"];
    assert!(split.as_u64().unwrap() > 0, "{audit}");
    let live = v["verdict"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["area"] == "live")
        .unwrap();
    assert!(
        live["text"]
            .as_str()
            .unwrap()
            .contains("so the join breaks for these keys"),
        "{live}"
    );
}

/// Sends each `(key, partition)` to that partition explicitly, as a
/// producer that sets partitions itself does.
fn explicit(b: &str, topic: &str, records: &[(String, i32)]) {
    use rdkafka::config::ClientConfig;
    use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
    use std::time::Duration;
    let p: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", b)
        .set("linger.ms", "5")
        .create()
        .unwrap();
    for (k, part) in records {
        let r: BaseRecord<'_, str, str> = BaseRecord::to(topic)
            .key(k.as_str())
            .payload("v")
            .partition(*part);
        p.send(r).map_err(|(e, _)| e).unwrap();
        p.poll(Duration::ZERO);
    }
    p.flush(Duration::from_secs(60)).unwrap();
}

/// Deterministic pseudo-random partitions (splitmix64).
fn random_partitions(seed: u64, n: i32) -> impl FnMut() -> i32 {
    let mut s = seed;
    move || {
        s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) % n as u64) as i32
    }
}

/// The topic's own finding in the audit's JSON, and its table output.
fn audit_both(b: &str, topic: &str) -> (Value, String) {
    let (code, v) = audit(b, topic);
    assert_eq!(code, 1, "{v}");
    let out = pw()
        .args(["kafka", "audit", "-b", b, "-t", topic])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    (v, unfolded(&text(&out.stdout)))
}

/// Records a producer put on random partitions, and one key put on every
/// partition: no partitioner is credited with what chance explains, and the
/// audit says the records are an unknown partitioner's or explicit
/// partitions, with a fix that moves no producer to a known partitioner.
#[test]
fn a_topic_placed_at_random_credits_no_partitioner() {
    let b = bootstrap();
    let t = unique("pwc-random");
    create_topics(&b, &[(&t, 6)]);
    let mut next = random_partitions(34, 6);
    let mut records: Vec<(String, i32)> = (0..1500)
        .map(|i| (format!("user-{}", i % 600), next()))
        .collect();
    records.extend((0..300).map(|i| ("BBCA".to_string(), i % 6)));
    explicit(&b, &t, &records);

    let (v, table) = audit_both(&b, &t);
    let m = &v["topics"][0]["routing"]["forensics"]["mixture"];
    assert_eq!(m["members"].as_array().unwrap().len(), 0, "{m}");
    assert_eq!(m["unexplained"].as_u64(), Some(1800), "{m}");
    assert_eq!(m["unexplained_share"].as_f64(), Some(1.0), "{m}");
    let f = &v["topics"][0]["findings"][0];
    assert_eq!(f["kind"], "records-unexplained", "{f}");
    assert!(f["writer"].is_null(), "{f}");
    let message = f["message"].as_str().unwrap();
    assert!(
        message.contains("no known partitioner explains more of its keyed records than chance does (1 in 6 on 6 partitions")
            && message.contains("an unknown partitioner, or explicit partitions, placed them (100.0% of keyed records)"),
        "{message}"
    );
    assert!(!f["fix"].as_str().unwrap().contains("set the "), "{f}");
    assert!(
        table.contains(
            "mixture: no known partitioner explains more of the keyed records than chance does (1 in 6)"
        ) && table.contains("unexplained: 1800 keyed records (100.0%)"),
        "{table}"
    );
    assert!(
        !table.contains("partitioners that hash keys differently"),
        "{table}"
    );
    // No record is listed as where a chance-level partitioner expected it.
    assert!(!table.contains(", expected "), "{table}");
}

/// One producer reducing murmur2 as an unsigned number,
/// `(murmur2(key) >>> 0) % n` (@platformatic/kafka's default), computed
/// from partwise's own murmur2: the audit names that one partitioner, not Java's half of
/// the records beside an unknown rest, and never six known ones.
#[test]
fn a_topic_written_by_unsigned_murmur2_is_platformatic() {
    let b = bootstrap();
    let t = unique("pwc-unsigned");
    create_topics(&b, &[(&t, 6)]);
    let records: Vec<(String, i32)> = (0..1800)
        .map(|i| {
            let k = format!("order-{}", i % 700);
            let p = (partwise::hash::murmur2(k.as_bytes()) % 6) as i32;
            (k, p)
        })
        .collect();
    explicit(&b, &t, &records);

    // One known partitioner explains every record: nothing to report.
    let (code, v) = audit(&b, &t);
    assert_eq!(code, 0, "{v}");
    let topic = &v["topics"][0];
    let inferred: Vec<&str> = topic["routing"]["inferred"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert_eq!(inferred.len(), 1, "{topic}");
    assert!(inferred[0].starts_with("platformatic"), "{topic}");
    let kinds = topic["findings"].to_string();
    assert!(
        !kinds.contains("records-unexplained") && !kinds.contains("mixed-partitioners"),
        "{topic}"
    );
}
