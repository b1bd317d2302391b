//! Which partitioner wrote a topic: every sampled record's partition
//! recomputed under each candidate partitioner and key encoding. Pure: it
//! works on records an adapter has already read (partwise-kafka's audit), so
//! it is tested without a broker.

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

/// Records per batch when [`analyze`] feeds an [`Analyzer`].
const BATCH: usize = 4096;

/// One record as read, its key borrowed from wherever the reader keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordRef<'a> {
    /// The partition it was stored in.
    pub partition: u32,
    /// Its offset there.
    pub offset: i64,
    /// Its key; `None` for a null key.
    pub key: Option<&'a [u8]>,
}

/// How one group of equivalent candidates places a keyed record.
#[derive(Clone, Copy, Debug)]
enum How {
    /// `reduce(hash(key))`, the hash shared by every group of the view.
    Hash { slot: usize, reduce: Reduce },
    /// The key is ignored.
    Fixed(Placement),
    /// Key by key (priority partitioners look at more than one hash).
    Each(Partitioner),
}

/// Candidates that place every keyed record alike, counted once.
#[derive(Clone, Debug)]
struct Group {
    view: usize,
    how: How,
    /// Where a key that re-encodes to no bytes goes (only re-encoding views
    /// meet such keys; partitioners differ on empty keys).
    empty: Placement,
    matched: u64,
    misrouted: Vec<Misrouted>,
}

/// The key bytes the candidates of one format hash: the stored bytes
/// (`format: None`), or the logical key re-encoded.
#[derive(Clone, Debug)]
struct View {
    format: Option<KeyFormat>,
    /// Distinct hash functions its groups use, each computed once per key.
    hashes: Vec<HashFn>,
}

/// The analysis of [`analyze`], fed batch by batch while records are still
/// being read, so that it overlaps the wait for the broker and keeps no
/// record: only counts, and the first [`MISROUTED_KEPT`] misplaced records
/// of each group of equivalent candidates (the best one's are reported).
///
/// Candidates that place every non-empty key alike (nine clients hash with
/// masked murmur2) are counted once, and each hash function is computed once
/// per key for all the reductions that use it.
#[derive(Clone, Debug)]
pub struct Analyzer {
    n: PartitionCount,
    cands: Vec<Candidate>,
    group_of: Vec<usize>,
    groups: Vec<Group>,
    views: Vec<View>,
    r: Routing,
}

impl Analyzer {
    /// An analysis of a topic with `n` partitions against `cands`.
    pub fn new(n: PartitionCount, cands: &[Candidate]) -> Analyzer {
        let mut views: Vec<View> = Vec::new();
        let mut groups: Vec<Group> = Vec::new();
        let mut by_key: HashMap<(KeyRule, Option<KeyFormat>, Option<Placement>), usize> =
            HashMap::new();
        let mut group_of = Vec::with_capacity(cands.len());
        for &c in cands {
            let view = match views.iter().position(|v| v.format == c.format) {
                Some(v) => v,
                None => {
                    views.push(View {
                        format: c.format,
                        hashes: Vec::new(),
                    });
                    views.len() - 1
                }
            };
            let empty = c.partitioner.place(Some(&[]), n);
            if c.partitioner.priority().is_some() {
                groups.push(Group {
                    view,
                    how: How::Each(c.partitioner),
                    empty,
                    matched: 0,
                    misrouted: Vec::new(),
                });
                group_of.push(groups.len() - 1);
                continue;
            }
            let rule = c.partitioner.key_rule();
            // Stored keys are never empty here, so the empty-key placement
            // only separates groups that re-encode.
            let key = (rule, c.format, c.format.map(|_| empty));
            if let Some(&g) = by_key.get(&key) {
                group_of.push(g);
                continue;
            }
            let how = match rule {
                KeyRule::Hash(h, reduce) => {
                    let hashes = &mut views[view].hashes;
                    let slot = hashes.iter().position(|&x| x == h).unwrap_or_else(|| {
                        hashes.push(h);
                        hashes.len() - 1
                    });
                    How::Hash { slot, reduce }
                }
                KeyRule::Ignore(p) => How::Fixed(p),
            };
            groups.push(Group {
                view,
                how,
                empty,
                matched: 0,
                misrouted: Vec::new(),
            });
            by_key.insert(key, groups.len() - 1);
            group_of.push(groups.len() - 1);
        }
        Analyzer {
            n,
            cands: cands.to_vec(),
            group_of,
            groups,
            views,
            r: Routing {
                sampled: 0,
                keyless: 0,
                empty_keys: 0,
                keyed: 0,
                encoding: None,
                rates: Vec::new(),
                inferred: Vec::new(),
                misrouted: Vec::new(),
                misrouted_total: 0,
            },
        }
    }

    /// Adds records, in the order they were read.
    pub fn add_batch(&mut self, records: &[RecordRef<'_>]) {
        let n = self.n;
        self.r.sampled += records.len() as u64;
        let mut keys: Vec<&[u8]> = Vec::with_capacity(records.len());
        let mut stored: Vec<(u32, i64)> = Vec::with_capacity(records.len());
        for rec in records {
            match rec.key {
                None => self.r.keyless += 1,
                Some([]) => self.r.empty_keys += 1,
                Some(k) => {
                    keys.push(k);
                    stored.push((rec.partition, rec.offset));
                }
            }
        }
        if keys.is_empty() {
            return;
        }
        self.r.keyed += keys.len() as u64;
        for k in &keys {
            if self.r.encoding == Some(Detected::Mixed) {
                break;
            }
            let e = KeyFormat::detect(k);
            self.r.encoding = Some(self.r.encoding.map_or(e, |prev| prev.and(e)));
        }
        let mut hashed: Vec<u32> = vec![0; keys.len()];
        let mut expect: Vec<u32> = Vec::with_capacity(keys.len());
        let mut table: Vec<Vec<u32>> = Vec::new();
        for (vi, view) in self.views.iter().enumerate() {
            // A re-encoding view: `None` where the key has no logical key or
            // the format cannot encode it.
            let reencoded: Option<Vec<Option<Vec<u8>>>> = view
                .format
                .map(|f| keys.iter().map(|k| reencode(k, f)).collect());
            let view_keys: Vec<&[u8]> = match &reencoded {
                None => keys.clone(),
                Some(r) => r.iter().map(|k| k.as_deref().unwrap_or(&[])).collect(),
            };
            table.clear();
            for &h in &view.hashes {
                if h == HashFn::Murmur2 {
                    crate::batch::murmur2_many(&view_keys, &mut hashed);
                } else {
                    for (o, k) in hashed.iter_mut().zip(&view_keys) {
                        *o = h.hash(k);
                    }
                }
                table.push(hashed.clone());
            }
            for g in self.groups.iter_mut().filter(|g| g.view == vi) {
                // Where the group puts each key (NOT_FIXED: nowhere fixed),
                // then one tight comparison with where the keys are.
                expect.clear();
                match g.how {
                    How::Hash { slot, reduce } => {
                        expect.extend(table[slot].iter().map(|&h| reduce.apply(h, n)))
                    }
                    How::Fixed(p) => expect.resize(keys.len(), p.partition().unwrap_or(NOT_FIXED)),
                    How::Each(p) => expect.extend(
                        view_keys
                            .iter()
                            .map(|k| p.place(Some(k), n).partition().unwrap_or(NOT_FIXED)),
                    ),
                }
                if let Some(r) = &reencoded {
                    for (e, k) in expect.iter_mut().zip(r) {
                        match k {
                            None => *e = NOT_FIXED,
                            // Re-encoded to nothing: what the partitioner does
                            // with an empty key, not a hash of it.
                            Some(k) if k.is_empty() => {
                                *e = g.empty.partition().unwrap_or(NOT_FIXED)
                            }
                            Some(_) => {}
                        }
                    }
                }
                let matched = expect
                    .iter()
                    .zip(&stored)
                    .filter(|&(&e, &(p, _))| e == p)
                    .count();
                g.matched += matched as u64;
                if matched < keys.len() && g.misrouted.len() < MISROUTED_KEPT {
                    for (i, (&e, &(partition, offset))) in expect.iter().zip(&stored).enumerate() {
                        if g.misrouted.len() == MISROUTED_KEPT {
                            break;
                        }
                        if e != partition {
                            g.misrouted.push(Misrouted {
                                key: keys[i].to_vec(),
                                partition,
                                offset,
                                expected: (e != NOT_FIXED).then_some(e),
                            });
                        }
                    }
                }
            }
        }
    }

    /// The routing of every record added.
    pub fn finish(self) -> Routing {
        let mut r = self.r;
        let mut rates: Vec<(MatchRate, usize)> = self
            .cands
            .iter()
            .zip(&self.group_of)
            .filter(|(c, _)| !repeats_stored(c, r.encoding))
            .map(|(&c, &g)| {
                (
                    MatchRate {
                        candidate: c,
                        matched: self.groups[g].matched,
                        keyed: r.keyed,
                    },
                    g,
                )
            })
            .collect();
        // Stable: among equals, the order the candidates were given.
        rates.sort_by_key(|(m, _)| std::cmp::Reverse(m.matched));
        if r.keyed > 0 {
            r.inferred = rates
                .iter()
                .filter(|(m, _)| m.matched == r.keyed)
                .map(|(m, _)| m.candidate)
                .collect();
            if r.inferred.is_empty() {
                if let Some((best, g)) = rates.first() {
                    r.misrouted_total = r.keyed - best.matched;
                    r.misrouted = self.groups[*g].misrouted.clone();
                }
            }
        }
        r.rates = rates.into_iter().map(|(m, _)| m).collect();
        r
    }
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
        }
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
            assert_eq!(analyze(n, &recs, &cands), want, "round {round}");
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
            assert_eq!(a.finish(), want, "round {round}, in batches");
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
}
