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
    tracker: Option<Tracker>,
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
        let tracker = (groups.len() <= FORENSICS_GROUPS).then(Tracker::default);
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
                forensics: None,
            },
            tracker,
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
        // Which groups put each record where it is: one bit per group.
        let mut fits: Vec<u128> = if self.tracker.is_some() {
            vec![0; keys.len()]
        } else {
            Vec::new()
        };
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
                    crate::partitioner::bulk::murmur2_many(&view_keys, &mut hashed);
                } else {
                    for (o, k) in hashed.iter_mut().zip(&view_keys) {
                        *o = h.hash(k);
                    }
                }
                table.push(hashed.clone());
            }
            for (gi, g) in self
                .groups
                .iter_mut()
                .enumerate()
                .filter(|(_, g)| g.view == vi)
            {
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
                let matched = if fits.is_empty() {
                    expect
                        .iter()
                        .zip(&stored)
                        .filter(|&(&e, &(p, _))| e == p)
                        .count()
                } else {
                    // Counted and noted in one pass, without branches.
                    let bit = 1u128 << gi;
                    let mut matched = 0usize;
                    for (f, (&e, &(p, _))) in fits.iter_mut().zip(expect.iter().zip(&stored)) {
                        let hit = e == p;
                        matched += usize::from(hit);
                        *f |= bit & 0u128.wrapping_sub(u128::from(hit));
                    }
                    matched
                };
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
        if let Some(t) = self.tracker.as_mut() {
            t.add(&keys, &stored, &fits);
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
        if r.keyed > 0 {
            if let Some(t) = self.tracker {
                let members: Vec<Vec<(usize, Candidate)>> = (0..self.groups.len())
                    .map(|g| {
                        self.cands
                            .iter()
                            .zip(&self.group_of)
                            .enumerate()
                            .filter(|(_, (c, &cg))| cg == g && !repeats_stored(c, r.encoding))
                            .map(|(i, (&c, _))| (i, c))
                            .collect()
                    })
                    .collect();
                r.forensics = Some(t.finish(&members, r.keyed, self.n, !r.inferred.is_empty()));
            }
        }
        r
    }
}

/// At most this many distinct placements (groups of equivalent candidates)
/// are followed record by record for [`Forensics`], one bit each; more (many
/// key formats times many priority specs) leave [`Routing::forensics`] out.
pub const FORENSICS_GROUPS: usize = 128;

/// At most this many keyed records (and [`KEY_BYTES_TRACKED`] bytes of their
/// keys) are noted for split keys and key shares; later ones are not
/// ([`Forensics::keys_capped`]).
pub const KEYS_TRACKED: usize = 1 << 21;

/// At most this many bytes of keys are noted (see [`KEYS_TRACKED`]).
pub const KEY_BYTES_TRACKED: usize = 64 << 20;

/// At most this many split keys are listed (all are counted).
pub const SPLIT_KEYS_KEPT: usize = 100;

/// Covers up to this many members are searched exhaustively, so a cover of
/// up to this size is the smallest there is; larger ones are found greedily.
pub const EXACT_COVER: usize = 3;

/// The forensics of a topic whose producers may differ.
#[derive(Clone, Debug, PartialEq)]
pub struct Forensics {
    /// The partitioner families that explain the keyed records clearly more
    /// than chance, and what none of them explains, when no one candidate
    /// explains them all.
    pub mixture: Option<Mixture>,
    /// Distinct non-empty keys, counted when no one candidate explains the
    /// records (`None` otherwise: then no key can be on two partitions).
    pub distinct_keys: Option<u64>,
    /// Whether more keyed records were read than [`KEYS_TRACKED`] (or their
    /// keys exceeded [`KEY_BYTES_TRACKED`]): the key figures are over the
    /// first ones.
    pub keys_capped: bool,
    /// Keys stored on more than one partition (the first
    /// [`SPLIT_KEYS_KEPT`], most records first): a join on them breaks.
    pub split_keys: Vec<SplitKey>,
    /// How many keys are on more than one partition, all of them.
    pub split_keys_total: u64,
    /// Partitions whose records switch from one partitioner to another at an
    /// offset, in partition order.
    pub switches: Vec<Switch>,
}

/// The partitioner families that explain a topic's records clearly more
/// than chance does, together, and what none of them explains.
///
/// Members are found one at a time, each the family that puts the most of
/// the records the members before it leave where they are stored, and each
/// kept only if a placement unrelated to the records would match that many
/// with a chance below [`MEMBER_CHANCE`] (divided by the families tested;
/// [`log_chance`]). A family that matches records only at chance's rate (1
/// in `partitions` for a partitioner that did not write them) is no member,
/// however many records it happens to match: those records are unexplained.
/// So a topic placed at random has no member, and a topic written by one
/// partitioner partwise does not know has at most the known families that
/// agree with it on many keys.
#[derive(Clone, Debug, PartialEq)]
pub struct Mixture {
    /// The members, most records first (none, one, or several).
    pub members: Vec<Member>,
    /// Whether no smaller set of families explains the records the members
    /// explain (sets of up to [`EXACT_COVER`] families are searched
    /// exhaustively; beyond that, not known).
    pub minimal: bool,
    /// Keyed records some member explains.
    pub explained: u64,
    /// Keyed records no member explains: placed by a partitioner partwise
    /// does not know, or by a producer that sets partitions itself (some of
    /// them may be put where they are by a non-member family, by chance).
    pub unexplained: u64,
    /// The first [`MISROUTED_KEPT`] of those.
    pub unexplained_records: Vec<Misrouted>,
    /// The topic's partition count: a family that did not write a record
    /// matches it with chance 1 in this.
    pub partitions: u32,
}

impl Mixture {
    /// `unexplained` over the keyed records, in 0..=1.
    pub fn unexplained_share(&self) -> f64 {
        let all = self.explained + self.unexplained;
        if all == 0 {
            0.0
        } else {
            self.unexplained as f64 / all as f64
        }
    }
}

/// One member of a [`Mixture`].
///
/// A record that two members both put where it is stored (as 1 in N random
/// keys do) cannot be told apart: it is counted in `records_shared` of each,
/// and split between them in proportion to the records only each explains
/// for `records` and `share`.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    /// Candidates that placed every sampled record alike, in the order given.
    pub family: Vec<Candidate>,
    /// Keyed records only this member (of the mixture) explains.
    pub records_only: u64,
    /// Keyed records this member and another explain.
    pub records_shared: u64,
    /// Records attributed to it: its own and its part of the shared ones
    /// (the members' `records` add up to [`Mixture::explained`]).
    pub records: u64,
    /// Its attributed share of the keyed records, in 0..=1.
    pub share: f64,
    /// Distinct keys with a record only this member explains.
    pub keys: u64,
    /// `keys` over the distinct keys (members' key shares can add up to more
    /// than 1: a key both wrote counts for both).
    pub key_share: f64,
    /// The bound of [`log_chance`] when it was kept: the chance that a
    /// family that wrote none of the records it was tested on (those the
    /// members before it leave) matches as many of them.
    pub chance: f64,
}

impl Member {
    /// The partitioner the family is named by: its first client default
    /// (`sarama` for FNV-1a, `java` for murmur2), else its first candidate.
    pub fn primary(&self) -> Candidate {
        primary(&self.family).expect("a family has a candidate")
    }
}

/// A key stored on more than one partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitKey {
    /// The stored key bytes.
    pub key: Vec<u8>,
    /// Each partition it is on with its records there, by partition.
    pub partitions: Vec<(u32, u64)>,
}

impl SplitKey {
    /// Its records in all.
    pub fn records(&self) -> u64 {
        self.partitions.iter().map(|p| p.1).sum()
    }
}

/// A partition whose sampled records were placed by one partitioner up to an
/// offset and by another from it on: a producer migration.
///
/// Only a clean split is a switch: the records split into exactly two runs,
/// each explained by one candidate throughout. Writers that interleave
/// (records of both kinds alternating) are a mixture, not a switch, and a
/// partition with a record no candidate explains has no switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Switch {
    /// The partition.
    pub partition: u32,
    /// The first record the old partitioner does not explain.
    pub offset: i64,
    /// The earliest offset the switch can have happened at: records from
    /// here to `offset` fit both, so either may have written them.
    pub earliest: i64,
    /// The candidates that explain every record before `offset`.
    pub from: Vec<Candidate>,
    /// The candidates that explain every record from `earliest` on.
    pub to: Vec<Candidate>,
    /// Sampled records before `offset`.
    pub before: u64,
    /// Sampled records from `offset` on.
    pub after: u64,
}

/// The candidate a family of equivalent ones is named by: the first that is
/// a client's default partitioner (so an FNV-1a family reads as `sarama`,
/// not `librdkafka:fnv1a`), else the first.
pub fn primary(family: &[Candidate]) -> Option<Candidate> {
    family
        .iter()
        .find(|c| is_client_default(c.partitioner))
        .or(family.first())
        .copied()
}

/// The finding for a topic named `topic` whose sampled keyed records no one
/// candidate explains, when the audit looked for several producers: a set of
/// two or more partitioners that explains them clearly more than chance
/// ([`crate::findings::Reason::MixedPartitioners`]), else what at most one
/// known partitioner explains and the share no known one does
/// ([`crate::findings::Reason::RecordsUnexplained`]).
pub fn mixture_finding(topic: &str, r: &Routing) -> Option<crate::findings::Reason> {
    let f = r.forensics.as_ref()?;
    let m = f.mixture.as_ref()?;
    let writer = |x: &Member| crate::findings::MixedWriter {
        // The name it goes by first.
        candidates: std::iter::once(x.primary())
            .chain(x.family.iter().copied().filter(|&c| c != x.primary()))
            .map(|c| c.to_string())
            .collect(),
        partitioner: x.primary().partitioner,
        family: distinct_partitioners(&x.family),
        share: x.share,
    };
    if m.members.len() < 2 {
        return Some(crate::findings::Reason::RecordsUnexplained {
            topic: topic.to_string(),
            misplaced: r.misrouted_total,
            best: r.rates.first().map(|b| b.candidate.to_string()),
            found: Some(crate::findings::Unexplained {
                writer: m.members.first().map(writer),
                records: m.unexplained,
                share: m.unexplained_share(),
                partitions: m.partitions,
                split_keys: f.split_keys_total,
            }),
        });
    }
    Some(crate::findings::Reason::MixedPartitioners {
        topic: topic.to_string(),
        writers: m.members.iter().map(writer).collect(),
        unexplained: m.unexplained,
        unexplained_share: m.unexplained_share(),
        split_keys: f.split_keys_total,
        example: f.split_keys.first().map(|k| {
            let text = match std::str::from_utf8(&k.key) {
                Ok(t) => t.to_string(),
                Err(_) => k.key.escape_ascii().to_string(),
            };
            (text, k.partitions.iter().map(|p| p.0).collect())
        }),
    })
}

/// The partitioners of `cands`, each once, in order.
pub fn distinct_partitioners(cands: &[Candidate]) -> Vec<Partitioner> {
    let mut out: Vec<Partitioner> = Vec::new();
    for c in cands {
        if !out.contains(&c.partitioner) {
            out.push(c.partitioner);
        }
    }
    out
}

fn is_client_default(p: Partitioner) -> bool {
    if p.priority().is_some() {
        return false;
    }
    let client = p.client();
    !p.spec().contains(':')
        || p.aliases()
            .iter()
            .any(|a| *a == client || a.strip_suffix(":default") == Some(client))
}

/// How a partition's records split into runs that one candidate explains,
/// greedily (which gives the fewest runs): only two runs is a switch.
#[derive(Clone, Debug, Default)]
struct Runs {
    /// Runs so far: 0, 1, 2, or 3 for more than two.
    n: u8,
    /// A record no candidate explains was seen.
    broken: bool,
    first: u128,
    first_records: u64,
    /// The intersections of the first run's suffixes, earliest start first,
    /// each distinct (a chain of growing sets, so at most one per group).
    tail: Vec<(i64, u128)>,
    second: u128,
    second_start: i64,
    second_records: u64,
}

impl Runs {
    fn add(&mut self, offset: i64, sig: u128) {
        if self.broken || self.n > 2 {
            return;
        }
        if sig == 0 {
            self.broken = true;
            self.tail = Vec::new();
            return;
        }
        match self.n {
            0 => {
                self.n = 1;
                self.first = sig;
                self.first_records = 1;
                self.tail = vec![(offset, sig)];
            }
            1 if self.first & sig != 0 => {
                self.first &= sig;
                self.first_records += 1;
                // Every suffix contains the whole run's intersection, which
                // meets `sig`: none becomes empty.
                for e in &mut self.tail {
                    e.1 &= sig;
                }
                self.tail.push((offset, sig));
                self.tail.dedup_by(|later, earlier| later.1 == earlier.1);
            }
            1 => {
                self.n = 2;
                self.second = sig;
                self.second_start = offset;
                self.second_records = 1;
            }
            2 if self.second & sig != 0 => {
                self.second &= sig;
                self.second_records += 1;
            }
            _ => {
                self.n = 3;
                self.tail = Vec::new();
            }
        }
    }
}

/// One keyed record as noted: where its key's bytes are in
/// [`Tracker::bytes`], its partition and its fit set.
#[derive(Clone, Copy, Debug)]
struct Noted {
    at: u32,
    len: u32,
    partition: u32,
    sig: u32,
}

/// Keys are told apart by a 64-bit hash (as [`crate::traffic::skew`] does): two of a
/// million keys share one with a chance of about 1 in 30 million.
fn key_hash(key: &[u8]) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = rustc_hash::FxBuildHasher.build_hasher();
    h.write(key);
    h.write_usize(key.len());
    h.finish()
}

/// What [`Forensics`] needs, kept while records stream by: each distinct
/// set of groups that fits a record with its count, each partition's runs,
/// and a log of the keyed records (key hash, partition, fit set, key bytes
/// appended to one buffer). The log is only read when no one candidate
/// explains the sample: writing it is sequential and cheap, where a map of
/// keys updated per record would miss the cache on every distinct key.
#[derive(Clone, Debug, Default)]
struct Tracker {
    sig_ids: rustc_hash::FxHashMap<u128, u32>,
    sigs: Vec<(u128, u64)>,
    log: Vec<Noted>,
    bytes: Vec<u8>,
    keys_capped: bool,
    runs: rustc_hash::FxHashMap<u32, Runs>,
    /// The first records of each fit set (at most [`MISROUTED_KEPT`] each,
    /// [`EXAMPLES_KEPT`] in all), in the order read, with their fit set's
    /// id: the unexplained records are those of the fit sets no member of
    /// the mixture is in, known only at the end.
    examples: Vec<(u32, Misrouted)>,
    /// How many records of each fit set `examples` holds.
    example_counts: Vec<u8>,
}

/// At most this many records are kept as examples of unexplained records
/// while the sample is read (see [`Tracker::examples`]).
const EXAMPLES_KEPT: usize = 4096;

impl Tracker {
    fn add(&mut self, keys: &[&[u8]], stored: &[(u32, i64)], fits: &[u128]) {
        // Recent fit sets, direct-mapped: most records repeat one of a few.
        let mut recent: [(u128, u32); 16] = [(u128::MAX, 0); 16];
        let mut last_runs: Option<(u32, &mut Runs)> = None;
        self.log
            .reserve(keys.len().min(KEYS_TRACKED.saturating_sub(self.log.len())));
        for ((&key, &(partition, offset)), &sig) in keys.iter().zip(stored).zip(fits) {
            let slot = &mut recent[((sig ^ (sig >> 61) ^ (sig >> 64)) as usize) & 15];
            let sid = if slot.0 == sig {
                slot.1
            } else {
                let next = self.sigs.len() as u32;
                let id = *self.sig_ids.entry(sig).or_insert(next);
                if id == next {
                    self.sigs.push((sig, 0));
                }
                *slot = (sig, id);
                id
            };
            self.sigs[sid as usize].1 += 1;
            if self.example_counts.len() <= sid as usize {
                self.example_counts.resize(sid as usize + 1, 0);
            }
            let kept = &mut self.example_counts[sid as usize];
            if usize::from(*kept) < MISROUTED_KEPT && self.examples.len() < EXAMPLES_KEPT {
                *kept += 1;
                self.examples.push((
                    sid,
                    Misrouted {
                        key: key.to_vec(),
                        partition,
                        offset,
                        expected: None,
                    },
                ));
            }
            match &mut last_runs {
                Some((p, r)) if *p == partition => r.add(offset, sig),
                _ => {
                    let r = self.runs.entry(partition).or_default();
                    r.add(offset, sig);
                    last_runs = Some((partition, r));
                }
            }
            if self.log.len() < KEYS_TRACKED && self.bytes.len() + key.len() <= KEY_BYTES_TRACKED {
                self.log.push(Noted {
                    at: self.bytes.len() as u32,
                    len: key.len() as u32,
                    partition,
                    sig: sid,
                });
                self.bytes.extend_from_slice(key);
            } else {
                self.keys_capped = true;
            }
        }
    }

    /// Calls `f` with every key of the log, its partitions with their
    /// records, and its records by partition and fit set (`(partition, fit
    /// set id, records)`; buffers reused from key to key).
    fn each_key(&self, mut f: impl FnMut(&[u8], &[(u32, u64)], &[(u32, u32, u64)])) {
        let key = |n: &Noted| &self.bytes[n.at as usize..(n.at + n.len) as usize];
        let mut order: Vec<(u64, u32)> = self
            .log
            .iter()
            .enumerate()
            .map(|(i, n)| (key_hash(key(n)), i as u32))
            .collect();
        order.sort_unstable();
        let mut parts: Vec<(u32, u64)> = Vec::new();
        let mut cells: Vec<(u32, u32, u64)> = Vec::new();
        let mut i = 0;
        while i < order.len() {
            let h = order[i].0;
            let first = &self.log[order[i].1 as usize];
            parts.clear();
            cells.clear();
            while i < order.len() && order[i].0 == h {
                let n = &self.log[order[i].1 as usize];
                match parts.iter_mut().find(|p| p.0 == n.partition) {
                    Some(p) => p.1 += 1,
                    None => parts.push((n.partition, 1)),
                }
                match cells
                    .iter_mut()
                    .find(|c| c.0 == n.partition && c.1 == n.sig)
                {
                    Some(c) => c.2 += 1,
                    None => cells.push((n.partition, n.sig, 1)),
                }
                i += 1;
            }
            f(key(first), &parts, &cells);
        }
    }

    /// `members[g]`: the candidates of group `g` with their place in the
    /// order given.
    fn finish(
        self,
        members: &[Vec<(usize, Candidate)>],
        keyed: u64,
        n: PartitionCount,
        one_explains: bool,
    ) -> Forensics {
        let in_mask = |mask: u128| -> Vec<Candidate> {
            // Candidates in the order given, across groups.
            let mut out: Vec<(usize, Candidate)> = Vec::new();
            for (g, cs) in members.iter().enumerate() {
                if mask >> g & 1 == 1 {
                    out.extend(cs.iter().copied());
                }
            }
            out.sort_by_key(|c| c.0);
            out.into_iter().map(|(_, c)| c).collect()
        };
        let (mixture, distinct_keys, mut split) = if one_explains {
            (None, None, Vec::new())
        } else {
            let (m, d, s) = self.mixture(members, keyed, n, &in_mask);
            (Some(m), Some(d), s)
        };
        split.sort_by(|a, b| {
            b.records()
                .cmp(&a.records())
                .then_with(|| a.key.cmp(&b.key))
        });
        let split_keys_total = split.len() as u64;
        split.truncate(SPLIT_KEYS_KEPT);

        let mut parts: Vec<(&u32, &Runs)> = self.runs.iter().collect();
        parts.sort_unstable_by_key(|p| *p.0);
        let switches: Vec<Switch> = parts
            .into_iter()
            .filter(|(_, r)| r.n == 2 && !r.broken)
            .map(|(&partition, r)| {
                let (earliest, to) = r
                    .tail
                    .iter()
                    .find(|e| e.1 & r.second != 0)
                    .map_or((r.second_start, r.second), |e| (e.0, e.1 & r.second));
                Switch {
                    partition,
                    offset: r.second_start,
                    earliest,
                    from: in_mask(r.first),
                    to: in_mask(to),
                    before: r.first_records,
                    after: r.second_records,
                }
            })
            .collect();

        Forensics {
            mixture,
            distinct_keys,
            keys_capped: self.keys_capped,
            split_keys: split,
            split_keys_total,
            switches,
        }
    }

    /// The mixture, the distinct keys, and the keys on more than one
    /// partition (unsorted).
    ///
    /// Members are chosen one at a time: the family that puts the most of
    /// the records no member explains yet where they are stored, kept only
    /// when chance does not explain that many (see [`MEMBER_CHANCE`] and
    /// [`log_chance`]). What no member explains is left unexplained, never
    /// spread over families that match it at the rate a random placement
    /// would.
    fn mixture(
        &self,
        members: &[Vec<(usize, Candidate)>],
        keyed: u64,
        n: PartitionCount,
        in_mask: &dyn Fn(u128) -> Vec<Candidate>,
    ) -> (Mixture, u64, Vec<SplitKey>) {
        // Families: groups that fit exactly the same records (equal columns
        // over the distinct fit sets), named by their candidates.
        let col = |g: usize| -> Vec<bool> { self.sigs.iter().map(|s| s.0 >> g & 1 == 1).collect() };
        let mut families: Vec<(u128, Vec<bool>)> = Vec::new();
        for (g, cs) in members.iter().enumerate() {
            if cs.is_empty() {
                continue;
            }
            let c = col(g);
            if !c.contains(&true) {
                continue;
            }
            match families.iter_mut().find(|f| f.1 == c) {
                Some(f) => f.0 |= 1u128 << g,
                None => families.push((1u128 << g, c)),
            }
        }
        // In the order of their first candidate.
        let first_of = |mask: u128| {
            (0..members.len())
                .filter(|g| mask >> g & 1 == 1)
                .filter_map(|g| members[g].first().map(|c| c.0))
                .min()
        };
        families.sort_by_key(|f| first_of(f.0));
        let fam: Vec<u128> = families.iter().map(|f| f.0).collect();
        let f = fam.len();
        // The families each fit set has, one bit per family (there are no
        // more families than groups).
        let fam_of: Vec<u128> = self
            .sigs
            .iter()
            .map(|s| {
                (0..f)
                    .filter(|&i| s.0 & fam[i] != 0)
                    .fold(0u128, |a, i| a | 1u128 << i)
            })
            .collect();

        // Every key's records by partition and fit set, from the log.
        let mut distinct = 0u64;
        let mut split: Vec<SplitKey> = Vec::new();
        let mut cells: Vec<(u32, u32, u64)> = Vec::new();
        let mut ends: Vec<usize> = Vec::new();
        self.each_key(|key, parts, key_cells| {
            distinct += 1;
            if parts.len() > 1 {
                let mut partitions = parts.to_vec();
                partitions.sort_unstable();
                split.push(SplitKey {
                    key: key.to_vec(),
                    partitions,
                });
            }
            cells.extend_from_slice(key_cells);
            ends.push(cells.len());
        });

        // Members, one at a time, each tested against chance on what the
        // members before it leave.
        let mut chosen: Vec<usize> = Vec::new();
        let mut chances: Vec<f64> = Vec::new();
        let mut taken = 0u128;
        let mut per_key: Vec<(u32, u64)> = Vec::new();
        let mut profile: Vec<u64> = Vec::new();
        while chosen.len() < f {
            let mut left_by_sig = vec![0u64; self.sigs.len()];
            let mut profiles: std::collections::BTreeMap<Vec<u64>, u64> =
                std::collections::BTreeMap::new();
            let mut start = 0;
            for &end in &ends {
                per_key.clear();
                for &(p, sid, c) in &cells[start..end] {
                    if fam_of[sid as usize] & taken != 0 {
                        continue;
                    }
                    left_by_sig[sid as usize] += c;
                    match per_key.iter_mut().find(|x| x.0 == p) {
                        Some(x) => x.1 += c,
                        None => per_key.push((p, c)),
                    }
                }
                start = end;
                if per_key.is_empty() {
                    continue;
                }
                profile.clear();
                profile.extend(per_key.iter().map(|x| x.1));
                profile.sort_unstable();
                match profiles.get_mut(profile.as_slice()) {
                    Some(k) => *k += 1,
                    None => {
                        profiles.insert(profile.clone(), 1);
                    }
                }
            }
            let tested = f - chosen.len();
            let best = (0..f)
                .filter(|i| taken >> i & 1 == 0)
                .map(|i| {
                    let m: u64 = left_by_sig
                        .iter()
                        .zip(&fam_of)
                        .filter(|(_, &fs)| fs >> i & 1 == 1)
                        .map(|(&c, _)| c)
                        .sum();
                    (i, m)
                })
                .max_by_key(|&(i, m)| (m, std::cmp::Reverse(i)));
            let Some((best, m)) = best.filter(|b| b.1 > 0) else {
                break;
            };
            let profiles: Vec<(Vec<u64>, u64)> = profiles.into_iter().collect();
            let log_p = log_chance(&profiles, n.get(), m);
            if log_p > MEMBER_CHANCE.ln() - (tested as f64).ln() {
                break;
            }
            chosen.push(best);
            chances.push(log_p.exp());
            taken |= 1u128 << best;
        }

        // Records the members explain, over the whole sample.
        let universe: Vec<(u128, u64)> = self
            .sigs
            .iter()
            .zip(&fam_of)
            .filter(|(_, &fs)| fs & taken != 0)
            .map(|(s, _)| *s)
            .collect();
        let explained: u64 = universe.iter().map(|s| s.1).sum();
        let unexplained: u64 = self.sigs.iter().map(|s| s.1).sum::<u64>() - explained;
        // Whether a smaller set of families explains the same records:
        // sizes up to EXACT_COVER are searched exhaustively.
        let covers = |sel: &[usize]| {
            let m = sel.iter().fold(0u128, |a, &i| a | fam[i]);
            universe.iter().all(|s| s.0 & m != 0)
        };
        let k = chosen.len();
        let mut minimal = k <= EXACT_COVER + 1;
        'sizes: for size in 1..k.min(EXACT_COVER + 1) {
            let mut idx: Vec<usize> = (0..size).collect();
            let mut tried = 0u64;
            loop {
                tried += 1;
                if tried > 200_000 {
                    minimal = false;
                    break 'sizes;
                }
                if covers(&idx) {
                    minimal = false;
                    break 'sizes;
                }
                // Next combination.
                let mut i = size;
                while i > 0 && idx[i - 1] == f - size + i - 1 {
                    i -= 1;
                }
                if i == 0 {
                    break;
                }
                idx[i - 1] += 1;
                for j in i..size {
                    idx[j] = idx[j - 1] + 1;
                }
            }
        }

        // Attribution: records one member alone explains are its own; shared
        // ones are split in proportion to the members' own.
        let m = k;
        let mut only = vec![0u64; m];
        let mut shared = vec![0u64; m];
        let fits =
            |sig: u128| -> Vec<usize> { (0..m).filter(|&j| sig & fam[chosen[j]] != 0).collect() };
        for s in &universe {
            let inn = fits(s.0);
            if inn.len() == 1 {
                only[inn[0]] += s.1;
            }
        }
        let mut part: Vec<f64> = only.iter().map(|&o| o as f64).collect();
        for s in &universe {
            let inn = fits(s.0);
            if inn.len() < 2 {
                continue;
            }
            let total: u64 = inn.iter().map(|&j| only[j]).sum();
            for &j in &inn {
                shared[j] += s.1;
                part[j] += if total == 0 {
                    s.1 as f64 / inn.len() as f64
                } else {
                    s.1 as f64 * only[j] as f64 / total as f64
                };
            }
        }
        // Whole records adding up to `explained`: floors, then the largest
        // remainders.
        let mut records: Vec<u64> = part.iter().map(|p| p.floor() as u64).collect();
        let mut rest = explained.saturating_sub(records.iter().sum());
        let mut order: Vec<usize> = (0..m).collect();
        order.sort_by(|&a, &b| {
            let (fa, fb) = (part[a] - part[a].floor(), part[b] - part[b].floor());
            fb.partial_cmp(&fa)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.cmp(&b))
        });
        for &j in order.iter().cycle().take(m * 2) {
            if rest == 0 {
                break;
            }
            records[j] += 1;
            rest -= 1;
        }
        // The one member that alone explains a fit set, if one does.
        let alone: Vec<Option<usize>> = self
            .sigs
            .iter()
            .map(|s| match fits(s.0)[..] {
                [j] => Some(j),
                _ => None,
            })
            .collect();
        let mut keys = vec![0u64; m];
        let mut own = vec![false; m];
        let mut start = 0;
        for &end in &ends {
            own.iter_mut().for_each(|o| *o = false);
            for &(_, sid, _) in &cells[start..end] {
                if let Some(j) = alone[sid as usize] {
                    own[j] = true;
                }
            }
            start = end;
            for (n, &o) in keys.iter_mut().zip(&own) {
                *n += u64::from(o);
            }
        }
        let mut out: Vec<Member> = (0..m)
            .map(|j| Member {
                family: in_mask(fam[chosen[j]]),
                records_only: only[j],
                records_shared: shared[j],
                records: records[j],
                share: if keyed == 0 {
                    0.0
                } else {
                    part[j] / keyed as f64
                },
                keys: keys[j],
                key_share: if distinct == 0 {
                    0.0
                } else {
                    keys[j] as f64 / distinct as f64
                },
                chance: chances[j],
            })
            .collect();
        // Most records first; among equals, family order (stable sort).
        out.sort_by_key(|x| std::cmp::Reverse(x.records));
        let unexplained_records: Vec<Misrouted> = self
            .examples
            .iter()
            .filter(|(sid, _)| fam_of[*sid as usize] & taken == 0)
            .take(MISROUTED_KEPT)
            .map(|(_, r)| r.clone())
            .collect();
        let mixture = Mixture {
            members: out,
            minimal,
            explained,
            unexplained,
            unexplained_records,
            partitions: n.get(),
        };
        (mixture, distinct, split)
    }
}

/// A member of a mixture is kept only when the chance that a partitioner
/// that wrote none of the records it is tested on puts as many of them
/// where they are stored is below this, divided by the number of families
/// tested at that step (see [`log_chance`]).
pub const MEMBER_CHANCE: f64 = 1e-3;

/// The natural log of an upper bound on the chance that a placement
/// unrelated to the records puts at least `m` of them on the partition they
/// are stored in: each key sent to one of the `n` partitions at random,
/// independently of the other keys (a partitioner that did not write the
/// records hashes the key to a partition unrelated to where it is), so a
/// key with `c_p` records on partition `p` has `c_p` of them matched with
/// chance 1/n each. Keys are the unit: a key's records are matched all
/// together or not at all, so one key on every partition, or a handful of
/// keys, never adds up to more than chance.
///
/// The bound is Chernoff's, `min over θ ≥ 0 of E[exp(θ M)] / exp(θ m)`,
/// computed exactly over the keys' counts (no normal approximation, which
/// few keys would defeat). `profiles`: each distinct list of a key's
/// non-zero record counts per partition, ascending, with how many keys
/// have it. 0 (a chance of 1) when `m` is no more than chance's mean.
pub fn log_chance(profiles: &[(Vec<u64>, u64)], n: u32, m: u64) -> f64 {
    let slots = |c: &[u64]| (n as usize).max(c.len()) as f64;
    let mean: f64 = profiles
        .iter()
        .map(|(c, k)| *k as f64 * c.iter().sum::<u64>() as f64 / slots(c))
        .sum();
    let m = m as f64;
    if profiles.is_empty() || m <= mean {
        return 0.0;
    }
    let largest = |c: &[u64]| c.iter().copied().max().unwrap_or(0);
    let top: f64 = profiles
        .iter()
        .map(|(c, k)| *k as f64 * largest(c) as f64)
        .sum();
    if m >= top {
        // Only every key sent to a partition with its most records gets
        // there.
        return profiles
            .iter()
            .map(|(c, k)| {
                let mx = largest(c);
                let ways = c.iter().filter(|&&x| x == mx).count() as f64;
                *k as f64 * (ways / slots(c)).ln()
            })
            .sum();
    }
    // log E[exp(θ M)] and its derivative, the mean of M tilted by θ.
    let eval = |t: f64| -> (f64, f64) {
        let (mut lg, mut d) = (0.0, 0.0);
        for (c, k) in profiles {
            let mx = largest(c) as f64;
            let mut s = (slots(c) - c.len() as f64) * (-t * mx).exp();
            let mut sc = 0.0;
            for &x in c {
                let e = (t * (x as f64 - mx)).exp();
                s += e;
                sc += x as f64 * e;
            }
            lg += *k as f64 * (t * mx + (s / slots(c)).ln());
            d += *k as f64 * sc / s;
        }
        (lg, d)
    };
    let biggest = profiles
        .iter()
        .map(|(c, _)| largest(c))
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    // The θ whose tilted mean is m minimizes the bound (it is convex in θ);
    // any θ gives a bound, so an approximate one is still one.
    let (mut lo, mut hi) = (0.0, 1.0 / biggest);
    for _ in 0..200 {
        if eval(hi).1 >= m {
            break;
        }
        lo = hi;
        hi *= 2.0;
    }
    for _ in 0..64 {
        let mid = 0.5 * (lo + hi);
        if eval(mid).1 < m {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let t = 0.5 * (lo + hi);
    let bound = eval(t).0 - t * m;
    if bound.is_nan() {
        0.0
    } else {
        bound.min(0.0)
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
        assert_eq!(f.kind(), "mixed_partitioners");
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
