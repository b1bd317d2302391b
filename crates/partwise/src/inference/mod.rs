//! Which partitioner wrote a topic: every sampled record's partition
//! recomputed under each candidate partitioner and key encoding. Pure: it
//! works on records an adapter has already read (partwise-kafka's audit), so
//! it is tested without a broker.

mod analyzer;
use analyzer::BATCH;
mod forensics;
mod ser;
mod tracker;
pub use analyzer::{Analyzer, RecordRef};
pub use forensics::{
    distinct_partitioners, mixture_finding, primary, Forensics, Member, Mixture, SplitKey, Switch,
    EXACT_COVER, FORENSICS_GROUPS, KEYS_TRACKED, KEY_BYTES_TRACKED, SPLIT_KEYS_KEPT,
};
use tracker::Tracker;
pub use tracker::{log_chance, MEMBER_CHANCE};

use crate::encoding::{reencode, Detected, KeyFormat};
use crate::partitioner::{HashFn, KeyRule, Reduce};
use crate::{PartitionCount, Partitioner, Placement, NOT_FIXED};
use std::collections::HashMap;

/// One record as read from the topic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SampledRecord {
    /// The partition it was stored in.
    pub partition: u32,
    /// Its offset there.
    pub offset: i64,
    /// Its key; `None` for a null key.
    pub key: Option<Vec<u8>>,
}

/// A hypothesis about how producers placed records: a partitioner, hashing
/// either the stored key bytes (`format: None`, what every client does) or
/// the logical key re-serialized with `format` (a producer that partitions on
/// one encoding and writes another).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Candidate {
    /// The partitioner.
    pub partitioner: Partitioner,
    /// `None`: the stored bytes; `Some(f)`: the logical key encoded with `f`.
    pub format: Option<KeyFormat>,
}

impl std::fmt::Display for Candidate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.format {
            None => write!(f, "{}", self.partitioner),
            Some(k) => write!(f, "{} on {k}", self.partitioner),
        }
    }
}

/// How well one candidate explains the sample.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchRate {
    /// The hypothesis.
    pub candidate: Candidate,
    /// Keyed records it puts on the partition they are stored in.
    pub matched: u64,
    /// Keyed records it was tried on.
    pub keyed: u64,
}

impl MatchRate {
    /// `matched / keyed` (0 when nothing was keyed).
    pub fn rate(&self) -> f64 {
        if self.keyed == 0 {
            0.0
        } else {
            self.matched as f64 / self.keyed as f64
        }
    }
}

/// A keyed record that the best candidate would have put elsewhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Misrouted {
    /// The stored key bytes.
    pub key: Vec<u8>,
    /// Where it is.
    pub partition: u32,
    /// Its offset.
    pub offset: i64,
    /// Where the best candidate puts it (`None`: not a fixed partition).
    pub expected: Option<u32>,
}

/// At most this many misrouted records are kept (all are counted).
pub const MISROUTED_KEPT: usize = 20;

/// What the sample says about routing.
#[derive(Clone, Debug, PartialEq)]
pub struct Routing {
    /// Records examined.
    pub sampled: u64,
    /// Records with a null key: placed by a key-less strategy, not a hash.
    pub keyless: u64,
    /// Records with an empty key (some clients treat it like a null key);
    /// left out of the match rates.
    pub empty_keys: u64,
    /// Records with a non-empty key: the ones a partitioner must explain.
    pub keyed: u64,
    /// The encoding every non-empty key shares ([`Detected::Mixed`] when
    /// they differ); `None` when there are none.
    pub encoding: Option<Detected>,
    /// Every candidate's match rate, best first.
    pub rates: Vec<MatchRate>,
    /// The candidates that explain every keyed record (none when nothing is keyed).
    pub inferred: Vec<Candidate>,
    /// When no candidate explains everything: records the best one misplaces
    /// (the first [`MISROUTED_KEPT`]).
    pub misrouted: Vec<Misrouted>,
    /// How many records the best candidate misplaces, all of them.
    pub misrouted_total: u64,
    /// What the records say when producers differ: the partitioners that
    /// explain them clearly more than chance and what none explains, the
    /// keys on more than one partition,
    /// and switch points per partition. `None` when nothing is keyed, or when
    /// more than [`FORENSICS_GROUPS`] distinct placements are tested.
    pub forensics: Option<Forensics>,
}

/// Whether candidate `c` repeats the stored-bytes candidate of its
/// partitioner: a logical key re-encoded in the one encoding every key is
/// stored in has the stored bytes, so its figures are the same.
pub fn repeats_stored(c: &Candidate, stored: Option<Detected>) -> bool {
    c.format
        .is_some_and(|f| stored == Some(Detected::Format(f)))
}

/// The candidates for `partitioners` x (`stored bytes` + `formats`).
pub fn candidates(partitioners: &[Partitioner], formats: &[KeyFormat]) -> Vec<Candidate> {
    let mut out = Vec::new();
    for &p in partitioners {
        out.push(Candidate {
            partitioner: p,
            format: None,
        });
        for &f in formats {
            out.push(Candidate {
                partitioner: p,
                format: Some(f),
            });
        }
    }
    out
}

/// Recomputes every record of a topic with `n` partitions under every candidate.
pub fn analyze(n: PartitionCount, records: &[SampledRecord], cands: &[Candidate]) -> Routing {
    let mut a = Analyzer::new(n, cands);
    let mut refs = Vec::with_capacity(records.len().min(BATCH));
    for chunk in records.chunks(BATCH) {
        refs.clear();
        refs.extend(chunk.iter().map(|r| RecordRef {
            partition: r.partition,
            offset: r.offset,
            key: r.key.as_deref(),
        }));
        a.add_batch(&refs);
    }
    a.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    // The oracle: every candidate asked about every record, one at a time.
    fn expected(c: Candidate, key: &[u8], n: PartitionCount) -> Option<u32> {
        let bytes;
        let k: &[u8] = match c.format {
            None => key,
            Some(f) => {
                bytes = reencode(key, f)?;
                &bytes
            }
        };
        match c.partitioner.place(Some(k), n) {
            Placement::Partition(p) => Some(p),
            _ => None,
        }
    }

    fn naive(n: PartitionCount, records: &[SampledRecord], cands: &[Candidate]) -> Routing {
        let keyed: Vec<&SampledRecord> = records
            .iter()
            .filter(|r| r.key.as_ref().is_some_and(|k| !k.is_empty()))
            .collect();
        let mut encoding = None;
        for r in &keyed {
            let e = KeyFormat::detect(r.key.as_ref().unwrap());
            encoding = match encoding {
                None => Some(e),
                Some(prev) if prev == e => Some(e),
                Some(_) => Some(Detected::Mixed),
            };
        }
        let mut rates: Vec<MatchRate> = cands
            .iter()
            .filter(|c| !repeats_stored(c, encoding))
            .map(|&c| MatchRate {
                candidate: c,
                matched: keyed
                    .iter()
                    .filter(|r| expected(c, r.key.as_ref().unwrap(), n) == Some(r.partition))
                    .count() as u64,
                keyed: keyed.len() as u64,
            })
            .collect();
        rates.sort_by_key(|m| std::cmp::Reverse(m.matched));
        let inferred: Vec<Candidate> = if keyed.is_empty() {
            Vec::new()
        } else {
            rates
                .iter()
                .filter(|m| m.matched == keyed.len() as u64)
                .map(|m| m.candidate)
                .collect()
        };
        let mut misrouted = Vec::new();
        let mut misrouted_total = 0;
        if !keyed.is_empty() && inferred.is_empty() {
            if let Some(best) = rates.first() {
                for r in &keyed {
                    let k = r.key.as_ref().unwrap();
                    let e = expected(best.candidate, k, n);
                    if e != Some(r.partition) {
                        misrouted_total += 1;
                        if misrouted.len() < MISROUTED_KEPT {
                            misrouted.push(Misrouted {
                                key: k.clone(),
                                partition: r.partition,
                                offset: r.offset,
                                expected: e,
                            });
                        }
                    }
                }
            }
        }
        Routing {
            sampled: records.len() as u64,
            keyless: records.iter().filter(|r| r.key.is_none()).count() as u64,
            empty_keys: records
                .iter()
                .filter(|r| r.key.as_ref().is_some_and(|k| k.is_empty()))
                .count() as u64,
            keyed: keyed.len() as u64,
            encoding,
            rates,
            inferred,
            misrouted,
            misrouted_total,
            forensics: None,
        }
    }

    fn without_forensics(mut r: Routing) -> Routing {
        r.forensics = None;
        r
    }

    /// Deterministic pseudo-random numbers (no dependency for one test).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            self.0 >> 33
        }
    }

    #[test]
    fn the_batched_analysis_agrees_with_asking_every_candidate_about_every_record() {
        let mut parts: Vec<Partitioner> = Partitioner::all().collect();
        parts.push("priority:prefix=VIP_,reserved=0".parse().unwrap());
        parts.push(
            "priority:prefix=VIP_,reserved=1,hash=java-abs"
                .parse()
                .unwrap(),
        );
        let avro: KeyFormat = "avro-sr:3".parse().unwrap();
        let formats = [KeyFormat::String, KeyFormat::Int32, avro];
        let cands = candidates(&parts, &formats);
        let mut rng = Lcg(7);
        for round in 0..12u32 {
            let n = PartitionCount::new([1, 3, 6, 7, 12, 64][round as usize % 6]).unwrap();
            // The writer: a candidate, or noise when the round says so.
            let writer = cands[rng.next() as usize % cands.len()];
            let len = [0usize, 1, 9, 300, 5000][round as usize % 5];
            let recs: Vec<SampledRecord> = (0..len)
                .map(|i| {
                    let key: Option<Vec<u8>> = match rng.next() % 20 {
                        0 => None,
                        1 => Some(Vec::new()),
                        2 => Some(
                            avro.encode(format!("sym{}", rng.next() % 50).as_bytes())
                                .unwrap(),
                        ),
                        3 => Some(
                            KeyFormat::Int32
                                .encode(format!("{}", rng.next() % 1000).as_bytes())
                                .unwrap(),
                        ),
                        4 => Some(avro.encode(b"").unwrap()),
                        5 => Some(format!("VIP_{}", rng.next() % 9).into_bytes()),
                        6 => Some(vec![0xff, rng.next() as u8, 0]),
                        _ => Some(format!("user-{:08}", rng.next() % 100_000).into_bytes()),
                    };
                    let placed = key
                        .as_deref()
                        .filter(|k| !k.is_empty())
                        .and_then(|k| expected(writer, k, n));
                    // Rounds 0, 3, ...: exactly the writer's; 1, 4, ...: a
                    // few misplaced; 2, 5, ...: noise.
                    let partition = match placed {
                        Some(p)
                            if round.is_multiple_of(3)
                                || (round % 3 == 1 && !rng.next().is_multiple_of(97)) =>
                        {
                            p
                        }
                        _ => (rng.next() % n.get() as u64) as u32,
                    };
                    SampledRecord {
                        partition,
                        offset: i as i64,
                        key,
                    }
                })
                .collect();
            let want = naive(n, &recs, &cands);
            let fixed = recs.iter().all(|r| match r.key.as_deref() {
                Some(k) if !k.is_empty() => expected(writer, k, n).is_some(),
                _ => true,
            });
            if round % 3 == 0 && want.keyed > 0 && fixed {
                assert!(
                    want.inferred.contains(&writer) || repeats_stored(&writer, want.encoding),
                    "round {round}"
                );
            }
            let whole = analyze(n, &recs, &cands);
            assert_eq!(without_forensics(whole.clone()), want, "round {round}");
            // Fed in uneven batches, as a consumer delivers them.
            let mut a = Analyzer::new(n, &cands);
            let mut rest: &[SampledRecord] = &recs;
            while !rest.is_empty() {
                let take = (rng.next() as usize % 700 + 1).min(rest.len());
                let refs: Vec<RecordRef<'_>> = rest[..take]
                    .iter()
                    .map(|r| RecordRef {
                        partition: r.partition,
                        offset: r.offset,
                        key: r.key.as_deref(),
                    })
                    .collect();
                a.add_batch(&refs);
                rest = &rest[take..];
            }
            assert_eq!(a.finish(), whole, "round {round}, in batches");
        }
    }

    fn rec(p: u32, key: Option<&[u8]>) -> SampledRecord {
        SampledRecord {
            partition: p,
            offset: 0,
            key: key.map(<[u8]>::to_vec),
        }
    }

    fn place(spec: &str, key: &[u8], n: u32) -> u32 {
        let p: Partitioner = spec.parse().unwrap();
        p.place(Some(key), PartitionCount::new(n).unwrap())
            .partition()
            .unwrap()
    }

    #[test]
    fn infers_the_partitioner_that_wrote_the_sample() {
        let n = PartitionCount::new(12).unwrap();
        let keys: Vec<String> = (0..200).map(|i| format!("key-{i}")).collect();
        let recs: Vec<SampledRecord> = keys
            .iter()
            .map(|k| rec(place("librdkafka", k.as_bytes(), 12), Some(k.as_bytes())))
            .chain([rec(3, None), rec(5, Some(b""))])
            .collect();
        let all: Vec<Partitioner> = Partitioner::all().collect();
        let r = analyze(n, &recs, &candidates(&all, &[]));
        assert_eq!((r.keyed, r.keyless, r.empty_keys), (200, 1, 1));
        let specs: Vec<&str> = r.inferred.iter().map(|c| c.partitioner.spec()).collect();
        assert!(specs.contains(&"librdkafka:consistent_random"), "{specs:?}");
        assert!(!specs.contains(&"java"), "{specs:?}");
        assert!(r.misrouted.is_empty());
        assert_eq!(r.encoding, Some(Detected::Format(KeyFormat::String)));
    }

    #[test]
    fn misrouted_keys_are_named() {
        let n = PartitionCount::new(6).unwrap();
        let mut recs: Vec<SampledRecord> = (0..50)
            .map(|i| {
                let k = format!("k{i}");
                rec(place("java", k.as_bytes(), 6), Some(k.as_bytes()))
            })
            .collect();
        let wrong = (place("java", b"BBCA", 6) + 1) % 6;
        recs.push(rec(wrong, Some(b"BBCA")));
        let r = analyze(n, &recs, &candidates(&["java".parse().unwrap()], &[]));
        assert!(r.inferred.is_empty());
        assert_eq!(r.misrouted_total, 1);
        assert_eq!(r.misrouted[0].key, b"BBCA");
        assert_eq!(r.misrouted[0].expected, Some(0));
        assert_eq!(r.rates[0].matched, 50);
    }

    #[test]
    fn a_producer_hashing_the_logical_key_is_found_by_its_format() {
        let n = PartitionCount::new(8).unwrap();
        let avro: KeyFormat = "avro-sr:3".parse().unwrap();
        let recs: Vec<SampledRecord> = (0..40)
            .map(|i| {
                let k = format!("sym{i}");
                // Partitioned on the string, stored as Avro.
                rec(
                    place("java", k.as_bytes(), 8),
                    Some(&avro.encode(k.as_bytes()).unwrap()),
                )
            })
            .collect();
        let cands = candidates(&["java".parse().unwrap()], &[KeyFormat::String]);
        let r = analyze(n, &recs, &cands);
        assert_eq!(r.inferred, vec![cands[1]]);
        assert_eq!(r.encoding, Some(Detected::Format(avro)));
    }

    #[test]
    fn keyless_topics_infer_nothing() {
        let r = analyze(
            PartitionCount::new(3).unwrap(),
            &[rec(0, None), rec(1, None)],
            &candidates(&["java".parse().unwrap()], &[]),
        );
        assert!(r.inferred.is_empty() && r.misrouted.is_empty());
        assert_eq!((r.keyless, r.encoding), (2, None));
    }
    fn all_candidates() -> Vec<Candidate> {
        let all: Vec<Partitioner> = Partitioner::all().collect();
        candidates(&all, &[])
    }

    fn specs(cs: &[Candidate]) -> Vec<&'static str> {
        cs.iter().map(|c| c.partitioner.spec()).collect()
    }

    /// Records in the order written, each given the next offset of its
    /// partition.
    fn written(n: u32, writes: &[(&str, String)]) -> Vec<SampledRecord> {
        let mut next = vec![0i64; n as usize];
        writes
            .iter()
            .map(|(spec, key)| {
                let p = place(spec, key.as_bytes(), n);
                next[p as usize] += 1;
                SampledRecord {
                    partition: p,
                    offset: next[p as usize] - 1,
                    key: Some(key.clone().into_bytes()),
                }
            })
            .collect()
    }

    const SYMBOLS: [&str; 10] = [
        "BBCA", "BBRI", "TLKM", "ASII", "BMRI", "UNVR", "GOTO", "ANTM", "ICBP", "INDF",
    ];

    #[test]
    fn two_producers_that_hash_differently_are_a_mixture_with_exact_shares() {
        let n = 6;
        // KafkaJS (murmur2) and Sarama (FNV-1a) each write 150 records per
        // symbol, interleaved.
        let mut writes = Vec::new();
        for _ in 0..150 {
            for s in SYMBOLS {
                writes.push(("kafkajs", s.to_string()));
                writes.push(("sarama", s.to_string()));
            }
        }
        let recs = written(n, &writes);
        let r = analyze(PartitionCount::new(n).unwrap(), &recs, &all_candidates());
        assert!(r.inferred.is_empty());
        let f = r.forensics.expect("keyed records have forensics");
        let m = f.mixture.expect("no one partitioner explains them");
        assert_eq!(m.members.len(), 2);
        assert!(m.minimal);
        assert_eq!((m.explained, m.unexplained), (3000, 0));
        let differ: Vec<&str> = SYMBOLS
            .iter()
            .copied()
            .filter(|s| place("java", s.as_bytes(), n) != place("sarama", s.as_bytes(), n))
            .collect();
        assert!(differ.len() >= 3, "{differ:?}");
        let by = |spec: &str| {
            m.members
                .iter()
                .find(|x| specs(&x.family).contains(&spec))
                .unwrap_or_else(|| panic!("{spec} in {m:?}"))
        };
        let (mm, fnv) = (by("kafkajs"), by("sarama"));
        assert!(specs(&mm.family).contains(&"java"));
        assert!(!specs(&mm.family).contains(&"sarama"));
        assert!(specs(&fnv.family).contains(&"librdkafka:fnv1a"));
        assert_eq!(mm.primary().partitioner.spec(), "java");
        assert_eq!(fnv.primary().partitioner.spec(), "sarama");
        let shared = 300 * (SYMBOLS.len() - differ.len()) as u64;
        for x in [mm, fnv] {
            assert_eq!(x.records_only, 150 * differ.len() as u64);
            assert_eq!(x.records_shared, shared);
            assert_eq!(x.records, 1500);
            assert!((x.share - 0.5).abs() < 1e-12, "{}", x.share);
            assert_eq!(x.keys, differ.len() as u64);
            assert!((x.key_share - differ.len() as f64 / 10.0).abs() < 1e-12);
        }
        // The join's victims: every symbol whose two partitions differ.
        assert_eq!(f.distinct_keys, Some(10));
        assert_eq!(f.split_keys_total, differ.len() as u64);
        let mut split: Vec<&[u8]> = f.split_keys.iter().map(|k| k.key.as_slice()).collect();
        split.sort();
        let mut want: Vec<&[u8]> = differ.iter().map(|s| s.as_bytes()).collect();
        want.sort();
        assert_eq!(split, want);
        for k in &f.split_keys {
            let mut ps = vec![
                (place("java", &k.key, n), 150),
                (place("sarama", &k.key, n), 150),
            ];
            ps.sort();
            assert_eq!(k.partitions, ps);
        }
        // Interleaved writers are a mixture, not a switch.
        assert!(f.switches.is_empty(), "{:?}", f.switches);
    }

    #[test]
    fn the_mixture_finding_names_each_producers_setting_in_its_clients_words() {
        let n = 6;
        let mut writes = Vec::new();
        for _ in 0..20 {
            for s in SYMBOLS {
                writes.push(("sarama", s.to_string()));
                writes.push(("kafkajs", s.to_string()));
            }
        }
        let recs = written(n, &writes);
        let r = analyze(PartitionCount::new(n).unwrap(), &recs, &all_candidates());
        let f = mixture_finding("notifications", &r).unwrap();
        assert_eq!(f.kind(), "mixed-partitioners");
        let text = f.to_string();
        assert!(
            text.starts_with("notifications: written by 2 partitioners"),
            "{text}"
        );
        assert!(
            text.contains("so the join breaks for these keys (e.g. "),
            "{text}"
        );
        let fix = f.fix();
        let sarama: Partitioner = "sarama:murmur2".parse().unwrap();
        // The Sarama producers move to Sarama's murmur2 partitioner, named as
        // Sarama names it first; other clients of the family only after.
        assert!(
            fix.contains(&format!(
                "set the sarama producers (now {})",
                "sarama".parse::<Partitioner>().unwrap().setting()
            )),
            "{fix}"
        );
        assert!(fix.contains(&sarama.setting()), "{fix}");
        assert!(!fix.contains("librdkafka producers"), "{fix}");
        assert!(fix.contains("split keys stay on two partitions"), "{fix}");
        // The same words whichever producer wrote first.
        let mut swapped = writes.clone();
        for w in swapped.iter_mut() {
            w.0 = if w.0 == "sarama" { "kafkajs" } else { "sarama" };
        }
        let r2 = analyze(
            PartitionCount::new(n).unwrap(),
            &written(n, &swapped),
            &all_candidates(),
        );
        assert_eq!(mixture_finding("notifications", &r2).unwrap().fix(), fix);
        // One partitioner: no such finding.
        let one: Vec<(&str, String)> = writes.iter().map(|w| ("java", w.1.clone())).collect();
        let r3 = analyze(
            PartitionCount::new(n).unwrap(),
            &written(n, &one),
            &all_candidates(),
        );
        assert_eq!(mixture_finding("t", &r3), None);
    }

    #[test]
    fn a_producer_that_switched_partitioner_shows_the_offset_per_partition() {
        let n = 4u32;
        let keys: Vec<String> = (0..800).map(|i| format!("user-{i}")).collect();
        let writes: Vec<(&str, String)> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (if i < 400 { "java" } else { "sarama" }, k.clone()))
            .collect();
        let recs = written(n, &writes);
        let r = analyze(PartitionCount::new(n).unwrap(), &recs, &all_candidates());
        let f = r.forensics.unwrap();
        assert_eq!(f.switches.len(), n as usize, "{:?}", f.switches);
        for (p, sw) in (0..n).zip(&f.switches) {
            assert_eq!(sw.partition, p);
            let here: Vec<(usize, &SampledRecord)> = recs
                .iter()
                .enumerate()
                .filter(|(_, r)| r.partition == p)
                .collect();
            let fits = |spec: &str, r: &SampledRecord| place(spec, r.key.as_ref().unwrap(), n) == p;
            // The first record java does not explain...
            let first_bad = here.iter().find(|(_, r)| !fits("java", r)).unwrap().1;
            assert_eq!(sw.offset, first_bad.offset);
            // ...is at or after the first one Sarama wrote, and everything
            // from `earliest` on fits Sarama, one record earlier does not.
            let first_new = here.iter().find(|(i, _)| *i >= 400).unwrap().1.offset;
            assert!(sw.earliest <= first_new && first_new <= sw.offset);
            assert!(here
                .iter()
                .filter(|(_, r)| r.offset >= sw.earliest)
                .all(|(_, r)| fits("sarama", r)));
            if let Some((_, before)) = here.iter().rev().find(|(_, r)| r.offset < sw.earliest) {
                assert!(!fits("sarama", before));
            }
            assert!(specs(&sw.from).contains(&"java") && !specs(&sw.from).contains(&"sarama"));
            assert!(specs(&sw.to).contains(&"sarama") && !specs(&sw.to).contains(&"java"));
            let before = here.iter().filter(|(_, r)| r.offset < sw.offset).count() as u64;
            assert_eq!((sw.before, sw.after), (before, here.len() as u64 - before));
        }
        // New keys after the switch: none is on two partitions.
        assert_eq!(f.split_keys_total, 0);
        assert_eq!(f.mixture.unwrap().members.len(), 2);
    }

    #[test]
    fn three_producers_are_three_members() {
        let n = 12;
        let writes: Vec<(&str, String)> = (0..900)
            .map(|i| {
                let spec = ["java", "sarama", "librdkafka"][i % 3];
                (spec, format!("order-{}", i / 3))
            })
            .collect();
        let recs = written(n, &writes);
        let r = analyze(PartitionCount::new(n).unwrap(), &recs, &all_candidates());
        let f = r.forensics.unwrap();
        let m = f.mixture.unwrap();
        assert!(m.minimal);
        assert_eq!(m.unexplained, 0);
        let primaries: Vec<&str> = m
            .members
            .iter()
            .map(|x| x.primary().partitioner.spec())
            .collect();
        let mut sorted = primaries.clone();
        sorted.sort();
        assert_eq!(
            sorted,
            ["java", "librdkafka:consistent_random", "sarama"],
            "{primaries:?}"
        );
        assert_eq!(m.members.iter().map(|x| x.records).sum::<u64>(), 900);
        for x in &m.members {
            assert!((x.share - 1.0 / 3.0).abs() < 0.05, "{x:?}");
        }
        // Every order key was written three times, by three hashes.
        assert!(f.split_keys_total > 200, "{}", f.split_keys_total);
    }

    #[test]
    fn four_producers_are_found_greedily_and_still_known_to_be_fewest() {
        let n = 12;
        let specs4 = ["java", "sarama", "librdkafka", "kafkajs:legacy"];
        let writes: Vec<(&str, String)> = (0..1200)
            .map(|i| (specs4[i % 4], format!("order-{}", i / 4)))
            .collect();
        let recs = written(n, &writes);
        let r = analyze(PartitionCount::new(n).unwrap(), &recs, &all_candidates());
        let m = r.forensics.unwrap().mixture.unwrap();
        let mut primaries: Vec<&str> = m
            .members
            .iter()
            .map(|x| x.primary().partitioner.spec())
            .collect();
        primaries.sort();
        assert_eq!(
            primaries,
            [
                "java",
                "kafkajs:legacy",
                "librdkafka:consistent_random",
                "sarama"
            ]
        );
        // No set of three covers (searched exhaustively), so four is fewest.
        assert!(m.minimal);
        assert_eq!(m.members.iter().map(|x| x.records).sum::<u64>(), 1200);
    }

    #[test]
    fn one_partitioner_is_no_mixture_no_split_and_no_switch() {
        let n = 6;
        let writes: Vec<(&str, String)> = (0..3000)
            .map(|i| ("sarama", SYMBOLS[i % 10].to_string()))
            .collect();
        let recs = written(n, &writes);
        let r = analyze(PartitionCount::new(n).unwrap(), &recs, &all_candidates());
        assert!(specs(&r.inferred).contains(&"sarama"));
        let f = r.forensics.unwrap();
        assert_eq!(f.mixture, None);
        assert_eq!((f.split_keys_total, f.distinct_keys), (0, None));
        assert!(f.switches.is_empty());
    }

    #[test]
    fn records_no_partitioner_explains_are_the_unexplained_remainder() {
        let n = 12u32;
        let count = PartitionCount::new(n).unwrap();
        let mut writes: Vec<(&str, String)> = Vec::new();
        for i in 0..300 {
            writes.push((
                if i % 2 == 0 { "kafkajs" } else { "sarama" },
                format!("k{}", i % 40),
            ));
        }
        let mut recs = written(n, &writes);
        // Three records put by hand where no candidate puts their key.
        let mut odd = 0;
        for i in 0.. {
            let key = format!("manual-{i}");
            let taken: Vec<u32> = Partitioner::all()
                .filter_map(|p| p.place(Some(key.as_bytes()), count).partition())
                .collect();
            if let Some(free) = (0..n).find(|p| !taken.contains(p)) {
                recs.push(SampledRecord {
                    partition: free,
                    offset: 10_000 + i,
                    key: Some(key.into_bytes()),
                });
                odd += 1;
                if odd == 3 {
                    break;
                }
            }
        }
        let r = analyze(count, &recs, &all_candidates());
        let m = r.forensics.unwrap().mixture.unwrap();
        assert_eq!((m.explained, m.unexplained), (300, 3));
        assert_eq!(m.unexplained_records.len(), 3);
        assert!(m
            .unexplained_records
            .iter()
            .all(|u| u.key.starts_with(b"manual-")));
        assert_eq!(m.members.len(), 2);
        assert_eq!(m.members.iter().map(|x| x.records).sum::<u64>(), 300);
    }
}
