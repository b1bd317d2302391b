//! Key skew: load statistics per partition and streaming heavy hitters.
//!
//! [`SkewStats`] summarizes a load vector (max/mean, coefficient of variation,
//! Gini, hot partitions). [`HeavyHitters`] finds the keys that make a partition
//! hot in one pass and bounded memory, however large the input: it is the
//! Misra-Gries "frequent items" summary with batched decrements, which keeps at
//! most `10k` counters and guarantees, for every key, `true - error <= estimate
//! <= true` with `error <= N / (k + 1)` (N = total weight). Summaries from
//! several threads merge with the errors added.
//!
//! ```
//! use partwise::traffic::skew::SkewStats;
//! let s = SkewStats::of(&[95, 1, 1, 1, 1, 1]);
//! assert!(s.max_over_mean > 5.6 && s.hot_partitions == vec![0]);
//! ```

use rustc_hash::FxHashMap;
use std::hash::{BuildHasher, Hasher};

/// A partition counts as hot when its load exceeds this multiple of the mean.
pub const HOT_FACTOR: f64 = 1.5;

/// Statistics of a per-partition load vector (in JSON, beside the report
/// that gives the total of its own).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SkewStats {
    /// Sum of the loads.
    #[serde(skip)]
    pub total: u64,
    /// Mean load per partition.
    pub mean: f64,
    /// Largest load.
    pub max: u64,
    /// Largest load over the mean (1.0 is perfect balance).
    pub max_over_mean: f64,
    /// Standard deviation over the mean (population).
    pub cv: f64,
    /// Gini coefficient: 0 for equal loads, (n-1)/n when one partition has everything.
    pub gini: f64,
    /// Partitions whose load exceeds [`HOT_FACTOR`] x mean, hottest first.
    pub hot_partitions: Vec<u32>,
    /// Partitions with no load at all.
    pub idle_partitions: Vec<u32>,
}

impl SkewStats {
    /// The statistics of `loads` (indexed by partition).
    pub fn of(loads: &[u64]) -> SkewStats {
        let n = loads.len().max(1) as f64;
        let total: u64 = loads.iter().sum();
        let mean = total as f64 / n;
        let max = loads.iter().copied().max().unwrap_or(0);
        let var = loads
            .iter()
            .map(|&l| (l as f64 - mean).powi(2))
            .sum::<f64>()
            / n;
        let (max_over_mean, cv) = if total == 0 {
            (0.0, 0.0)
        } else {
            (max as f64 / mean, var.sqrt() / mean)
        };
        let mut sorted = loads.to_vec();
        sorted.sort_unstable();
        let gini = if total == 0 {
            0.0
        } else {
            let weighted: f64 = sorted
                .iter()
                .enumerate()
                .map(|(i, &x)| (i as f64 + 1.0) * x as f64)
                .sum();
            2.0 * weighted / (n * total as f64) - (n + 1.0) / n
        };
        let mut hot: Vec<u32> = (0..loads.len() as u32)
            .filter(|&p| total > 0 && loads[p as usize] as f64 > HOT_FACTOR * mean)
            .collect();
        hot.sort_by_key(|&p| std::cmp::Reverse(loads[p as usize]));
        let idle = (0..loads.len() as u32)
            .filter(|&p| loads[p as usize] == 0)
            .collect();
        SkewStats {
            total,
            mean,
            max,
            max_over_mean,
            cv,
            gini,
            hot_partitions: hot,
            idle_partitions: idle,
        }
    }
}

/// One occupied slot of the summary's table; `hash == 0` marks an empty slot.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    hash: u64,
    count: u64,
}

/// Streaming heavy hitters (Misra-Gries with batched decrements).
///
/// Counters live in a flat open-addressing table keyed by a 64-bit hash of
/// the key, so counting a key costs one hash and (almost always) one cache
/// line. Key bytes are kept only from a key's second occurrence on: on a long
/// tail most keys occur once and are evicted, so copying them would be waste.
#[derive(Clone, Debug)]
pub struct HeavyHitters {
    k: usize,
    slots: Vec<Slot>,
    shift: u32,
    len: usize,
    /// Entries allowed before a shrink back to `k`.
    limit: usize,
    keys: FxHashMap<u64, Box<[u8]>>,
    total: u64,
    error: u64,
    scratch: Vec<u64>,
    hashes: Vec<u64>,
    survivors: Vec<Slot>,
}

/// One heavy hitter: its key, estimated weight and the bound on the estimate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeavyHitter {
    /// The key bytes.
    pub key: Vec<u8>,
    /// Estimated weight, never above the true weight.
    pub estimate: u64,
    /// The true weight is at most `estimate + error`.
    pub error: u64,
}

fn key_hash(key: &[u8]) -> u64 {
    let mut h = rustc_hash::FxBuildHasher.build_hasher();
    h.write(key);
    h.write_usize(key.len());
    // 0 marks an empty slot.
    h.finish().max(1)
}

impl HeavyHitters {
    /// The largest `k`: the table has 16 slots of 16 bytes per counter, so
    /// this is 16 MiB.
    pub const MAX_CAPACITY: usize = 1 << 16;

    /// Bytes of the counter table of a summary of `k` counters.
    pub fn table_bytes(k: usize) -> u64 {
        let k = k.clamp(1, Self::MAX_CAPACITY);
        (16 * k).next_power_of_two() as u64 * std::mem::size_of::<Slot>() as u64
    }

    /// A summary that tracks the `k` heaviest keys (error at most N / (k + 1)),
    /// `k` at most [`MAX_CAPACITY`](Self::MAX_CAPACITY) (a larger one is
    /// clamped to it).
    pub fn new(k: usize) -> HeavyHitters {
        let k = k.clamp(1, Self::MAX_CAPACITY);
        // Shrinking costs O(table); letting the summary grow to about 10k
        // entries before cutting it back to k makes that a small constant per
        // key even on a long tail of distinct keys. Linear probing stays fast
        // below 5/8 occupancy.
        let cap = (16 * k).next_power_of_two();
        let limit = cap * 5 / 8;
        HeavyHitters {
            k,
            slots: vec![Slot::default(); cap],
            shift: 64 - cap.trailing_zeros(),
            len: 0,
            limit,
            keys: FxHashMap::default(),
            total: 0,
            error: 0,
            scratch: Vec::new(),
            hashes: Vec::new(),
            survivors: Vec::new(),
        }
    }

    #[inline(always)]
    fn index(&self, hash: u64) -> usize {
        // Multiply-shift: the hash's low bits alone are not well mixed.
        (hash.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    /// Adds `weight` occurrences of `key`.
    #[inline]
    pub fn add(&mut self, key: &[u8], weight: u64) {
        if weight == 0 {
            return;
        }
        self.total += weight;
        let hash = key_hash(key);
        let count = self.bump(hash, weight);
        if count > 1 && count - weight < 2 || self.k == 1 {
            self.keys.entry(hash).or_insert_with(|| key.into());
        }
        if self.len > self.limit {
            self.shrink();
        }
    }

    /// Adds one occurrence of each key: the same as calling [`add`](Self::add)
    /// for each, but faster on large streams, because the table slots of keys
    /// further ahead are fetched into cache while the current one is counted
    /// (a lookup is otherwise mostly a wait on memory).
    pub fn add_each(&mut self, keys: &[&[u8]]) {
        const AHEAD: usize = 8;
        let mut hashes = std::mem::take(&mut self.hashes);
        hashes.clear();
        hashes.extend(keys.iter().map(|k| key_hash(k)));
        let keep_first = self.k == 1;
        let mut i = 0;
        while i < keys.len() {
            // Each key adds at most one entry, so this many keys can be
            // counted before the table can pass its limit; checking once per
            // run rather than per key keeps the loop tight.
            let end = keys.len().min(i + (self.limit + 1 - self.len));
            for j in i..end {
                if let Some(&next) = hashes.get(j + AHEAD) {
                    self.prefetch(next);
                }
                let count = self.bump(hashes[j], 1);
                if count == 2 || keep_first {
                    self.keys.entry(hashes[j]).or_insert_with(|| keys[j].into());
                }
            }
            self.total += (end - i) as u64;
            i = end;
            if self.len > self.limit {
                self.shrink();
            }
        }
        self.hashes = hashes;
    }

    #[inline(always)]
    fn prefetch(&self, hash: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let slot: *const Slot = &self.slots[self.index(hash)];
            // SAFETY: a prefetch is a hint; the pointer is in bounds anyway.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(slot.cast());
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = hash;
    }

    /// Adds `weight` to the counter of `hash`, returning the new count.
    #[inline(always)]
    fn bump(&mut self, hash: u64, weight: u64) -> u64 {
        let mask = self.slots.len() - 1;
        let mut i = self.index(hash);
        loop {
            let slot = &mut self.slots[i];
            if slot.hash == hash {
                slot.count += weight;
                return slot.count;
            }
            if slot.hash == 0 {
                *slot = Slot {
                    hash,
                    count: weight,
                };
                self.len += 1;
                return weight;
            }
            i = (i + 1) & mask;
        }
    }

    /// Subtracts the (k+1)-th largest count from every counter and drops the
    /// non-positive ones: at least k+1 distinct keys pay for each unit taken,
    /// which is what bounds the error by N / (k + 1).
    fn shrink(&mut self) {
        if self.len <= self.k {
            return;
        }
        // On a long tail most counters are 1; when at most k exceed 1, the
        // (k+1)-th largest is 1 and no selection is needed.
        let mut survivors = std::mem::take(&mut self.survivors);
        survivors.clear();
        survivors.extend(self.slots.iter().filter(|s| s.count > 1).copied());
        let cut = if survivors.len() <= self.k {
            1
        } else {
            self.scratch.clear();
            self.scratch
                .extend(self.slots.iter().filter(|s| s.hash != 0).map(|s| s.count));
            let cut = *self
                .scratch
                .select_nth_unstable_by(self.k, |a, b| b.cmp(a))
                .1;
            survivors.retain(|s| s.count > cut);
            cut
        };
        self.error += cut;
        self.slots.fill(Slot::default());
        self.len = 0;
        for s in &survivors {
            self.bump(s.hash, s.count - cut);
        }
        if !self.keys.is_empty() {
            let live: rustc_hash::FxHashSet<u64> = survivors.iter().map(|s| s.hash).collect();
            self.keys.retain(|h, _| live.contains(h));
        }
        self.survivors = survivors;
    }

    /// Merges another summary (from another thread) into this one.
    pub fn merge(&mut self, mut other: HeavyHitters) {
        self.total += other.total;
        self.error += other.error;
        for s in other.slots.iter().filter(|s| s.hash != 0) {
            self.bump(s.hash, s.count);
            if let Some(k) = other.keys.remove(&s.hash) {
                self.keys.entry(s.hash).or_insert(k);
            }
            if self.len > self.limit {
                self.shrink();
            }
        }
        self.shrink();
    }

    /// Total weight seen.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The bound on every estimate's error (at most N / (k + 1)).
    pub fn error_bound(&self) -> u64 {
        self.error
    }

    /// The heaviest keys, heaviest first, at most `k` of them. Keys seen only
    /// once (estimate 1, key bytes not kept) are left out.
    pub fn top(&self) -> Vec<HeavyHitter> {
        let mut v: Vec<HeavyHitter> = self
            .slots
            .iter()
            .filter(|s| s.hash != 0)
            .filter_map(|s| {
                self.keys.get(&s.hash).map(|k| HeavyHitter {
                    key: k.to_vec(),
                    estimate: s.count,
                    error: self.error,
                })
            })
            .collect();
        v.sort_by(|a, b| b.estimate.cmp(&a.estimate).then_with(|| a.key.cmp(&b.key)));
        v.truncate(self.k);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `16 * k` overflowed to a table of 0 slots for a huge `k`, and the
    /// first key indexed it (issue 15): a huge capacity is clamped.
    #[test]
    fn any_capacity_gives_a_working_summary() {
        for k in [
            0,
            1,
            HeavyHitters::MAX_CAPACITY + 1,
            usize::MAX / 8,
            usize::MAX,
        ] {
            let mut h = HeavyHitters::new(k);
            h.add(b"a", 3);
            h.add_each(&[b"a", b"b"]);
            assert_eq!(h.total(), 5);
        }
        assert_eq!(HeavyHitters::table_bytes(usize::MAX), 16 << 20);
    }
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[test]
    fn stats() {
        let even = SkewStats::of(&[10, 10, 10, 10]);
        assert_eq!((even.max_over_mean, even.cv, even.gini), (1.0, 0.0, 0.0));
        assert!(even.hot_partitions.is_empty());
        let one = SkewStats::of(&[0, 0, 0, 40]);
        assert!((one.gini - 0.75).abs() < 1e-12);
        assert_eq!(one.hot_partitions, vec![3]);
        assert_eq!(one.idle_partitions, vec![0, 1, 2]);
        assert_eq!(SkewStats::of(&[]).total, 0);
    }

    proptest! {
        #[test]
        fn add_each_equals_add(stream in proptest::collection::vec(0u8..60, 0..3000), k in 1usize..6) {
            let keys: Vec<[u8; 1]> = stream.iter().map(|&b| [b]).collect();
            let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
            let mut one = HeavyHitters::new(k);
            for r in &refs {
                one.add(r, 1);
            }
            let mut many = HeavyHitters::new(k);
            for chunk in refs.chunks(97) {
                many.add_each(chunk);
            }
            prop_assert_eq!(one.top(), many.top());
            prop_assert_eq!(one.error_bound(), many.error_bound());
        }

        #[test]
        fn misra_gries_bounds(stream in proptest::collection::vec((0u8..40, 1u64..5), 0..600), k in 1usize..12, split in 0usize..600) {
            let mut exact: HashMap<u8, u64> = HashMap::new();
            let mut a = HeavyHitters::new(k);
            let mut b = HeavyHitters::new(k);
            for (i, &(key, w)) in stream.iter().enumerate() {
                *exact.entry(key).or_default() += w;
                if i < split { a.add(&[key], w) } else { b.add(&[key], w) }
            }
            a.merge(b);
            let n: u64 = exact.values().sum();
            prop_assert_eq!(a.total(), n);
            prop_assert!(a.error_bound() <= n / (k as u64 + 1));
            let top = a.top();
            for h in &top {
                let t = exact[&h.key[0]];
                prop_assert!(h.estimate <= t && t <= h.estimate + h.error);
            }
            // Every key heavier than the bound is reported.
            for (&key, &t) in &exact {
                // (A key seen once in each of two halves has no bytes kept.)
                if t > a.error_bound() && t > 2 {
                    prop_assert!(top.iter().any(|h| h.key == [key]), "missing {} ({} > {})", key, t, a.error_bound());
                }
            }
        }
    }
}
