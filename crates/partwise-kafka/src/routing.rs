//! Which partitioner wrote a topic: every sampled record's partition
//! recomputed under each candidate partitioner and key encoding. Pure: it
//! works on records already read, so it is tested without a broker.

use crate::keys::{classify, reencode, KeyEncoding};
use partwise::partitioner::KeyRule;
use partwise::{KeyFormat, PartitionCount, Partitioner, Placement};
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
    /// The encoding every non-empty key shares ([`KeyEncoding::Mixed`] when
    /// they differ); `None` when there are none.
    pub encoding: Option<KeyEncoding>,
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

/// Recomputes every record of a topic with `n` partitions under every candidate.
pub fn analyze(n: PartitionCount, records: &[SampledRecord], cands: &[Candidate]) -> Routing {
    let mut r = Routing {
        sampled: records.len() as u64,
        keyless: 0,
        empty_keys: 0,
        keyed: 0,
        encoding: None,
        rates: Vec::new(),
        inferred: Vec::new(),
        misrouted: Vec::new(),
        misrouted_total: 0,
    };
    let keyed: Vec<(&SampledRecord, &[u8])> = records
        .iter()
        .filter_map(|rec| match &rec.key {
            None => {
                r.keyless += 1;
                None
            }
            Some(k) if k.is_empty() => {
                r.empty_keys += 1;
                None
            }
            Some(k) => Some((rec, k.as_slice())),
        })
        .collect();
    r.keyed = keyed.len() as u64;
    for (_, k) in &keyed {
        let e = classify(k);
        r.encoding = match r.encoding {
            None => Some(e),
            Some(prev) if prev == e => Some(e),
            Some(_) => Some(KeyEncoding::Mixed),
        };
    }
    // Candidates that hash the stored bytes go through the batch path
    // (several murmur2 keys in flight); re-encoding ones key by key.
    let keys: Vec<&[u8]> = keyed.iter().map(|&(_, k)| k).collect();
    let mut parts = vec![0u32; keys.len()];
    // Client partitioners with the same key rule (nine clients hash with
    // masked murmur2) place every non-empty key alike: count each rule once.
    let mut by_rule: HashMap<(KeyRule, Option<KeyFormat>), usize> = HashMap::new();
    let mut rates: Vec<MatchRate> = cands
        .iter()
        .map(|&c| {
            let rule =
                (c.partitioner.priority().is_none()).then(|| (c.partitioner.key_rule(), c.format));
            if let Some(&m) = rule.as_ref().and_then(|r| by_rule.get(r)) {
                return MatchRate {
                    candidate: c,
                    matched: m as u64,
                    keyed: r.keyed,
                };
            }
            let matched = match c.format {
                None => {
                    c.partitioner.place_batch(&keys, n, &mut parts);
                    parts
                        .iter()
                        .zip(&keyed)
                        .filter(|&(&p, (rec, _))| p == rec.partition)
                        .count()
                }
                Some(_) => keyed
                    .iter()
                    .filter(|(rec, k)| expected(c, k, n) == Some(rec.partition))
                    .count(),
            };
            if let Some(rule) = rule {
                by_rule.insert(rule, matched);
            }
            MatchRate {
                candidate: c,
                matched: matched as u64,
                keyed: r.keyed,
            }
        })
        .collect();
    // Stable: among equals, the order the candidates were given.
    rates.sort_by_key(|m| std::cmp::Reverse(m.matched));
    if r.keyed > 0 {
        r.inferred = rates
            .iter()
            .filter(|m| m.matched == r.keyed)
            .map(|m| m.candidate)
            .collect();
        if r.inferred.is_empty() {
            if let Some(best) = rates.first() {
                for (rec, k) in &keyed {
                    let e = expected(best.candidate, k, n);
                    if e != Some(rec.partition) {
                        r.misrouted_total += 1;
                        if r.misrouted.len() < MISROUTED_KEPT {
                            r.misrouted.push(Misrouted {
                                key: k.to_vec(),
                                partition: rec.partition,
                                offset: rec.offset,
                                expected: e,
                            });
                        }
                    }
                }
            }
        }
    }
    r.rates = rates;
    r
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(r.encoding, Some(KeyEncoding::String));
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
        assert_eq!(r.encoding, Some(KeyEncoding::AvroSr(3)));
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
