//! The mixture forensics of `kafka audit` and `report -b` against topics no
//! known partitioner wrote: records placed at random, one key on every
//! partition, a partitioner partwise does not model (murmur2 reduced without
//! the sign mask, computed here from partwise's own murmur2). No family may
//! be credited with what chance explains; what none explains is an unknown
//! partitioner or explicit partitions. True mixtures are still found, also
//! beside such records.

use partwise::findings::Reason;
use partwise::hash::murmur2;
use partwise::inference::{
    analyze, candidates, log_chance, mixture_finding, Routing, SampledRecord,
};
use partwise::{PartitionCount, Partitioner};

/// Deterministic pseudo-random numbers (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u32) -> u32 {
        (self.next() % u64::from(n)) as u32
    }
}

/// Records in the order given, each at the next offset of its partition.
fn records(n: u32, placed: impl IntoIterator<Item = (String, u32)>) -> Vec<SampledRecord> {
    let mut next = vec![0i64; n as usize];
    placed
        .into_iter()
        .map(|(key, p)| {
            next[p as usize] += 1;
            SampledRecord {
                partition: p,
                offset: next[p as usize] - 1,
                key: Some(key.into_bytes()),
            }
        })
        .collect()
}

/// The audit's analysis with its default candidates: every client's.
fn audit(n: u32, recs: &[SampledRecord]) -> Routing {
    let all: Vec<Partitioner> = Partitioner::all().collect();
    analyze(
        PartitionCount::new(n).unwrap(),
        recs,
        &candidates(&all, &[]),
    )
}

fn place(spec: &str, key: &str, n: u32) -> u32 {
    let p: Partitioner = spec.parse().unwrap();
    p.place(Some(key.as_bytes()), PartitionCount::new(n).unwrap())
        .partition()
        .unwrap()
}

/// The topic's finding says the records are an unknown partitioner's or
/// explicit partitions, and its fix moves no producer to a known
/// partitioner as if that one had written them.
fn assert_unknown(topic: &str, r: &Routing) -> Reason {
    let f = mixture_finding(topic, r).expect("no one partitioner explains the records");
    assert_eq!(f.kind(), "records-unexplained", "{f}");
    let text = f.to_string();
    assert!(
        text.contains("an unknown partitioner, or explicit partitions"),
        "{text}"
    );
    let fix = f.fix();
    assert!(!fix.contains("set the "), "{fix}");
    assert!(fix.contains("unexplained records"), "{fix}");
    f
}

#[test]
fn a_topic_placed_at_random_credits_no_partitioner() {
    let mut rng = Rng(34);
    for n in [3u32, 6, 12, 64] {
        // Many keys with one to three records each, and a few keys with
        // many records spread over the partitions.
        let mut placed: Vec<(String, u32)> = Vec::new();
        for i in 0..3000 {
            for _ in 0..=rng.below(3) {
                placed.push((format!("user-{i}"), rng.below(n)));
            }
        }
        for s in ["BBCA", "TLKM", "ASII"] {
            for _ in 0..400 {
                placed.push((s.to_string(), rng.below(n)));
            }
        }
        let recs = records(n, placed);
        let r = audit(n, &recs);
        assert!(r.inferred.is_empty(), "{n}");
        let m = r.forensics.as_ref().unwrap().mixture.as_ref().unwrap();
        assert!(
            m.members.is_empty(),
            "{n} partitions: credited {:?}",
            m.members
                .iter()
                .map(|x| (x.primary().to_string(), x.share))
                .collect::<Vec<_>>()
        );
        assert_eq!((m.explained, m.unexplained), (0, r.keyed));
        assert_eq!(m.partitions, n);
        assert_eq!(m.unexplained_records.len(), 20);
        let f = assert_unknown("events", &r);
        let text = f.to_string();
        assert!(
            text.starts_with(&format!(
                "events: no known partitioner explains more of its keyed records than chance does (1 in {n} on {n} partitions; the best, "
            )),
            "{text}"
        );
        assert!(
            text.ends_with("placed them (100.0% of keyed records)"),
            "{text}"
        );
    }
}

#[test]
fn one_key_on_every_partition_credits_no_partitioner() {
    for n in [6u32, 12] {
        // Round robin, then at random: every partition holds the key.
        let mut rng = Rng(u64::from(n));
        for placed in [
            (0..600)
                .map(|i| ("BBCA".to_string(), i % n))
                .collect::<Vec<_>>(),
            (0..600)
                .map(|_| ("BBCA".to_string(), rng.below(n)))
                .collect::<Vec<_>>(),
        ] {
            let r = audit(n, &records(n, placed));
            let f = r.forensics.as_ref().unwrap();
            let m = f.mixture.as_ref().unwrap();
            assert!(m.members.is_empty(), "{n}: {:?}", m.members);
            assert_eq!(m.unexplained, 600);
            assert_eq!(f.split_keys_total, 1);
            assert_unknown("events", &r);
        }
    }
}

#[test]
fn a_topic_written_by_unsigned_murmur2_is_platformatic_not_a_mixture() {
    // @platformatic/kafka's default: (murmur2(key) >>> 0) % n. Java's
    // (murmur2(key) & 0x7fffffff) % n agrees only where the top bit is
    // clear; with the platformatic candidate the whole topic is one known
    // partitioner, not Java's half and an unknown rest, and no mixture.
    for n in [6u32, 12] {
        let mut rng = Rng(7);
        let placed: Vec<(String, u32)> = (0..6000)
            .map(|_| {
                let key = format!("order-{}", rng.below(2000));
                let p = murmur2(key.as_bytes()) % n;
                (key, p)
            })
            .collect();
        let r = audit(n, &records(n, placed));
        let specs: Vec<&str> = r.inferred.iter().map(|c| c.partitioner.spec()).collect();
        assert!(specs.contains(&"platformatic"), "{n}: {specs:?}");
        assert!(!specs.contains(&"java"), "{n}: {specs:?}");
        assert!(mixture_finding("orders", &r).is_none(), "{n}");
    }
}

#[test]
fn a_true_mixture_beside_records_placed_at_random_keeps_its_two_members() {
    let n = 6;
    let mut rng = Rng(3);
    // KafkaJS and Sarama write 45% each, a third producer sets partitions
    // at random for 10%.
    let placed: Vec<(String, u32)> = (0..6000)
        .map(|i| {
            let key = format!("user-{}", rng.below(1500));
            let p = match i % 20 {
                0..=8 => place("kafkajs", &key, n),
                9..=17 => place("sarama", &key, n),
                _ => rng.below(n),
            };
            (key, p)
        })
        .collect();
    let random = 0.1;
    let r = audit(n, &records(n, placed));
    let m = r.forensics.as_ref().unwrap().mixture.as_ref().unwrap();
    let mut names: Vec<&str> = m
        .members
        .iter()
        .map(|x| x.primary().partitioner.spec())
        .collect();
    names.sort();
    assert_eq!(names, ["java", "sarama"], "{m:?}");
    // Chance puts about 2 in 6 of the random records where a member does.
    let u = m.unexplained_share();
    assert!(u > random * 0.5 && u < random, "{u} of {random}");
    let f = mixture_finding("orders", &r).unwrap();
    assert_eq!(f.kind(), "mixed-partitioners");
    let text = f.to_string();
    assert!(
        text.starts_with("orders: written by 2 partitioners"),
        "{text}"
    );
    assert!(
        text.contains("no known partitioner explains: an unknown partitioner, or explicit partitions, placed them"),
        "{text}"
    );
    assert!(f.fix().contains("set the sarama producers"), "{}", f.fix());
}

#[test]
fn a_mixture_whose_records_are_mostly_unexplained_moves_no_one_to_a_member() {
    let n = 12;
    let mut rng = Rng(11);
    // KafkaJS and Sarama write 15% each; 70% land at random.
    let placed: Vec<(String, u32)> = (0..8000)
        .map(|i| {
            let key = format!("user-{}", rng.below(4000));
            let p = match i % 20 {
                0..=2 => place("kafkajs", &key, n),
                3..=5 => place("sarama", &key, n),
                _ => rng.below(n),
            };
            (key, p)
        })
        .collect();
    let r = audit(n, &records(n, placed));
    let f = mixture_finding("orders", &r).unwrap();
    assert_eq!(f.kind(), "mixed-partitioners", "{f}");
    let Reason::MixedPartitioners {
        unexplained_share, ..
    } = &f
    else {
        unreachable!()
    };
    assert!(*unexplained_share > 0.5, "{unexplained_share}");
    let fix = f.fix();
    assert!(!fix.contains("set the "), "{fix}");
    assert!(fix.starts_with("find the producer of the "), "{fix}");
}

#[test]
fn the_chance_bound_holds_and_a_handful_of_keys_proves_nothing() {
    // Three keys of 100 records, all matched: the chance is exactly that
    // of guessing each key's partition, (1/6)^3, whatever the records.
    let three = [(vec![100u64], 3u64)];
    let exact = 3.0 * (1.0f64 / 6.0).ln();
    assert!((log_chance(&three, 6, 300) - exact).abs() < 1e-9);
    // No more than the mean is no evidence.
    assert_eq!(log_chance(&three, 6, 50), 0.0);
    assert_eq!(log_chance(&[], 6, 0), 0.0);
    // One key on every partition: whichever partition is guessed.
    assert!(log_chance(&[(vec![100; 6], 1)], 6, 100) == 0.0);

    // The bound is at least the chance a simulation finds, at every level.
    let profiles: Vec<(Vec<u64>, u64)> = vec![
        (vec![1], 60),
        (vec![2, 3], 12),
        (vec![1, 1, 4], 5),
        (vec![9], 4),
    ];
    let n = 6u32;
    let mut rng = Rng(5);
    let runs = 40_000;
    let mut sums: Vec<u64> = (0..runs)
        .map(|_| {
            let mut m = 0;
            for (c, k) in &profiles {
                for _ in 0..*k {
                    let p = rng.below(n) as usize;
                    m += c.get(p).copied().unwrap_or(0);
                }
            }
            m
        })
        .collect();
    sums.sort_unstable();
    let mean: f64 = sums.iter().sum::<u64>() as f64 / runs as f64;
    for m in (mean.ceil() as u64)..=sums[runs - 1] {
        let seen = sums.iter().filter(|&&s| s >= m).count() as f64 / runs as f64;
        let bound = log_chance(&profiles, n, m).exp();
        // Three standard errors of the simulation's own estimate.
        let slack = 3.0 * (seen * (1.0 - seen) / runs as f64).sqrt() + 1.0 / runs as f64;
        assert!(bound + slack >= seen, "m {m}: bound {bound}, seen {seen}");
    }
}

/// `report -b` reads the same forensics: a topic declared with Java's
/// partitioner whose records were placed at random is written by an
/// unknown partitioner or explicit partitions, not by a list of known ones.
#[test]
fn report_b_says_a_randomly_placed_topic_was_written_by_an_unknown_partitioner() {
    let declared: partwise::topology::Topology = "[[topic]]\nname = \"orders\"\npartitions = 6\nkey = \"id\"\n\n[[topic.producer]]\nname = \"app\"\npartitioner = \"java\"\nkey_format = \"string\"\n"
        .parse()
        .unwrap();
    let mut rng = Rng(9);
    let placed: Vec<(String, u32)> = (0..3000)
        .map(|i| (format!("user-{}", i % 1000), rng.below(6)))
        .collect();
    let r = audit(6, &records(6, placed));
    let d = partwise::check::topic_drift(&declared, "orders", None, Some(6), Some(&r));
    assert_eq!(
        d.inferred,
        ["an unknown partitioner, or explicit partitions (100.0% of records)"]
    );
    assert_eq!(d.drifts.len(), 1, "{:?}", d.drifts);
    assert_eq!(d.drifts[0].kind(), "partitioner-drift");
    assert_eq!(
        d.drifts[0].to_string(),
        "orders: declared java, but its records were written by an unknown partitioner, or explicit partitions (100.0% of records)"
    );
}
