//! The [`Analyzer`]: records fed in batches, each candidate's matches
//! counted at once for the candidates that place a key alike, and the
//! [`Routing`] it finishes with.

use super::*;

/// Records per batch when [`analyze`] feeds an [`Analyzer`].
pub(super) const BATCH: usize = 4096;

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
