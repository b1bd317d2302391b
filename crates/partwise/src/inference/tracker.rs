//! The per-record bookkeeping behind [`Forensics`]: runs per partition,
//! the keys noted for split keys and key shares within their caps, and the
//! chance test (`log_chance`, [`MEMBER_CHANCE`]) that keeps a family in a
//! mixture only when it explains records clearly more than chance.

use super::*;

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
pub(super) struct Tracker {
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
    pub(super) fn add(&mut self, keys: &[&[u8]], stored: &[(u32, i64)], fits: &[u128]) {
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
    pub(super) fn finish(
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
