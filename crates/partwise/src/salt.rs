//! Key salting: spreading one hot key over several partitions.
//!
//! A producer writes `KEY_1 .. KEY_S` instead of `KEY` (the seed article's
//! `Key + "_" + random(1, S)`); readers must merge the partitions those salted
//! keys land on. The trade-off: records of `KEY` are ordered only within each
//! salt, no longer across all of them.
//!
//! ```
//! use partwise::salt::{salted_key, partitions_spanned};
//! use partwise::{PartitionCount, Partitioner};
//! assert_eq!(salted_key(b"ID", 2), b"ID_2".to_vec());
//! let java: Partitioner = "java".parse()?;
//! let spans = partitions_spanned(java, b"ID", 3, PartitionCount::new(12)?);
//! assert!(!spans.is_empty() && spans.len() <= 3);
//! # Ok::<(), partwise::Error>(())
//! ```

use crate::count::PartitionCount;
use crate::partitioner::Partitioner;
use crate::Error;

/// The `i`-th salted form of `key` (1-based): `KEY_i`.
pub fn salted_key(key: &[u8], i: u32) -> Vec<u8> {
    let mut k = key.to_vec();
    k.push(b'_');
    k.extend_from_slice(i.to_string().as_bytes());
    k
}

/// How a producer picks the salt for each record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaltMode {
    /// A uniformly random salt per record (the seed's `random(1, S)`).
    Random,
    /// Salts in turn: 1, 2, ..., S, 1, ... (perfectly even).
    RoundRobin,
}

/// The producer-side helper: hands out salted keys for one hot key.
#[derive(Clone, Debug)]
pub struct Salter {
    key: Vec<u8>,
    range: u32,
    mode: SaltMode,
    next: u32,
    rng: u64,
}

impl Salter {
    /// A salter over `range` salts (`range >= 1`), seeded for reproducibility.
    pub fn new(key: &[u8], range: u32, mode: SaltMode, seed: u64) -> Result<Salter, Error> {
        if range == 0 {
            return Err(Error::Invalid {
                what: "salt range".into(),
                reason: "must be at least 1".into(),
            });
        }
        Ok(Salter {
            key: key.to_vec(),
            range,
            mode,
            next: 0,
            rng: seed | 1,
        })
    }

    /// The key for the next record.
    pub fn next_key(&mut self) -> Vec<u8> {
        let i = match self.mode {
            SaltMode::RoundRobin => {
                self.next = self.next % self.range + 1;
                self.next
            }
            SaltMode::Random => {
                // xorshift64*: cheap, and reproducible given the seed.
                self.rng ^= self.rng >> 12;
                self.rng ^= self.rng << 25;
                self.rng ^= self.rng >> 27;
                let r = self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d);
                ((r >> 32) % u64::from(self.range)) as u32 + 1
            }
        };
        salted_key(&self.key, i)
    }
}

/// The consumer-side helper: the partitions that `KEY_1 .. KEY_range` land on,
/// sorted and distinct, so readers know which ones to merge.
pub fn partitions_spanned(p: Partitioner, key: &[u8], range: u32, n: PartitionCount) -> Vec<u32> {
    let mut v: Vec<u32> = (1..=range)
        .filter_map(|i| p.place(Some(&salted_key(key, i)), n).partition())
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The load per partition when `share` of the traffic carries `key`, salted over
/// `range` salts evenly, and the rest is spread evenly over all partitions.
/// Loads are fractions of the total (they sum to 1).
pub fn salted_loads(
    p: Partitioner,
    key: &[u8],
    share: f64,
    range: u32,
    n: PartitionCount,
) -> Vec<f64> {
    let parts = n.get() as usize;
    let mut loads = vec![(1.0 - share) / parts as f64; parts];
    for i in 1..=range {
        if let Some(q) = p.place(Some(&salted_key(key, i)), n).partition() {
            loads[q as usize] += share / f64::from(range);
        }
    }
    loads
}

/// A salting recommendation.
#[derive(Clone, Debug, PartialEq)]
pub struct SaltPlan {
    /// The smallest salt range that meets the target, if any up to the limit does.
    pub range: Option<u32>,
    /// The hottest partition over the mean, without salting.
    pub before_max_over_mean: f64,
    /// The hottest partition over the mean, with the recommended (or largest tried) range.
    pub after_max_over_mean: f64,
    /// Loads (fractions of the total) without salting.
    pub before: Vec<f64>,
    /// Loads with the recommended (or largest tried) range.
    pub after: Vec<f64>,
    /// The partitions the salted key spans.
    pub spans: Vec<u32>,
}

/// The smallest salt range `S <= max_range` that brings the hottest partition
/// under `target_ratio` x mean.
pub fn recommend(
    p: Partitioner,
    key: &[u8],
    share: f64,
    n: PartitionCount,
    target_ratio: f64,
    max_range: u32,
) -> Result<SaltPlan, Error> {
    if !(0.0..=1.0).contains(&share) {
        return Err(Error::Invalid {
            what: "share".into(),
            reason: format!("{share} is not a fraction between 0 and 1"),
        });
    }
    if !target_ratio.is_finite() || target_ratio < 1.0 {
        return Err(Error::Invalid {
            what: "target ratio".into(),
            reason: format!("{target_ratio}: the hottest partition is at least the mean, so the target must be >= 1"),
        });
    }
    let ratio = |loads: &[f64]| loads.iter().cloned().fold(0.0, f64::max) * f64::from(n.get());
    // Before salting the key is written as it is, not as KEY_1.
    let parts = n.get() as usize;
    let mut before = vec![(1.0 - share) / parts as f64; parts];
    if let Some(q) = p.place(Some(key), n).partition() {
        before[q as usize] += share;
    }
    let mut after = before.clone();
    let mut range = None;
    for s in 1..=max_range.max(1) {
        after = salted_loads(p, key, share, s, n);
        if ratio(&after) <= target_ratio + 1e-12 {
            range = Some(s);
            break;
        }
    }
    let used = range.unwrap_or(max_range.max(1));
    Ok(SaltPlan {
        range,
        before_max_over_mean: ratio(&before),
        after_max_over_mean: ratio(&after),
        before,
        after,
        spans: partitions_spanned(p, key, used, n),
    })
}

/// A salting plan for a measured key distribution (`key,count` pairs).
#[derive(Clone, Debug, PartialEq)]
pub struct CountsPlan {
    /// The smallest common salt range that meets the target, if any does.
    pub range: Option<u32>,
    /// The range the `after` loads use: `range`, or the best one tried.
    pub used: u32,
    /// Loads per partition (fractions of the total) as the keys are now.
    pub before: Vec<f64>,
    /// Loads per partition with the chosen keys salted over `used` salts.
    pub after: Vec<f64>,
    /// The busiest partition (or consumer) over the mean, before.
    pub before_max_over_mean: f64,
    /// The busiest partition (or consumer) over the mean, after.
    pub after_max_over_mean: f64,
}

/// The smallest salt range `S <= max_range`, the same for every key marked
/// in `salt`, that brings the busiest of `groups` (the partitions each
/// consumer owns; empty: every partition alone) of the measured distribution
/// `counts` under `target_ratio` x the mean; when none does, the `S` with the
/// coolest busiest group. Unsalted keys stay where the partitioner puts them
/// now (keys it does not place by key are left out: they follow no key).
pub fn recommend_counts(
    p: Partitioner,
    n: PartitionCount,
    counts: &[(&[u8], u64)],
    salt: &[bool],
    groups: &[Vec<u32>],
    target_ratio: f64,
    max_range: u32,
) -> Result<CountsPlan, Error> {
    if !target_ratio.is_finite() || target_ratio < 1.0 {
        return Err(Error::Invalid {
            what: "target ratio".into(),
            reason: format!("{target_ratio}: the hottest partition is at least the mean, so the target must be >= 1"),
        });
    }
    let parts = n.get() as usize;
    let mut base = vec![0u64; parts];
    let mut hot: Vec<(&[u8], u64)> = Vec::new();
    let mut before = vec![0u64; parts];
    for (i, &(key, c)) in counts.iter().enumerate() {
        let Some(q) = p.place(Some(key), n).partition() else {
            continue;
        };
        before[q as usize] += c;
        if salt.get(i).copied().unwrap_or(false) {
            hot.push((key, c));
        } else {
            base[q as usize] += c;
        }
    }
    let total: u64 = before.iter().sum();
    let frac = |v: &[f64]| -> Vec<f64> {
        v.iter()
            .map(|x| if total == 0 { 0.0 } else { x / total as f64 })
            .collect()
    };
    let ratio = |v: &[f64]| {
        let loads: Vec<f64> = if groups.is_empty() {
            v.to_vec()
        } else {
            groups
                .iter()
                .map(|g| {
                    g.iter()
                        .map(|&q| v.get(q as usize).copied().unwrap_or(0.0))
                        .sum()
                })
                .collect()
        };
        let mean = loads.iter().sum::<f64>() / loads.len().max(1) as f64;
        if mean == 0.0 {
            0.0
        } else {
            loads.iter().cloned().fold(0.0, f64::max) / mean
        }
    };
    let spread = |s: u32| -> Vec<f64> {
        let mut loads: Vec<f64> = base.iter().map(|&x| x as f64).collect();
        for &(key, c) in &hot {
            for i in 1..=s {
                if let Some(q) = p.place(Some(&salted_key(key, i)), n).partition() {
                    loads[q as usize] += c as f64 / f64::from(s);
                }
            }
        }
        loads
    };
    let before: Vec<f64> = before.iter().map(|&x| x as f64).collect();
    let mut best = (ratio(&before), 1u32, before.clone());
    let mut range = None;
    if !hot.is_empty() {
        for s in 1..=max_range.max(1) {
            let loads = spread(s);
            let r = ratio(&loads);
            if r < best.0 - 1e-12 {
                best = (r, s, loads);
            }
            if r <= target_ratio + 1e-12 {
                range = Some(s);
                best = (r, s, spread(s));
                break;
            }
        }
    } else if best.0 <= target_ratio + 1e-12 {
        range = Some(1);
    }
    Ok(CountsPlan {
        range,
        used: best.1,
        before_max_over_mean: ratio(&before),
        after_max_over_mean: best.0,
        before: frac(&before),
        after: frac(&best.2),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn java() -> Partitioner {
        "java".parse().unwrap()
    }

    #[test]
    fn seed_95_percent_on_id() {
        // 95% of traffic on key ID: one partition takes ~95%, the rest idle-ish.
        let n = PartitionCount::new(12).unwrap();
        let before = salted_loads(java(), b"ID", 0.95, 1, n);
        let hot = before.iter().cloned().fold(0.0, f64::max);
        assert!((hot - (0.95 + 0.05 / 12.0)).abs() < 1e-12);
        // Salting over 3 spreads it over up to 3 partitions.
        let spans = partitions_spanned(java(), b"ID", 3, n);
        assert!((1..=3).contains(&spans.len()));
        let after = salted_loads(java(), b"ID", 0.95, 3, n);
        assert!(after.iter().cloned().fold(0.0, f64::max) < hot);
        assert!((after.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn recommend_meets_target() {
        let n = PartitionCount::new(6).unwrap();
        let plan = recommend(java(), b"ID", 0.95, n, 2.0, 200).unwrap();
        let s = plan.range.unwrap();
        assert!(plan.after_max_over_mean <= 2.0);
        if s > 1 {
            let worse = salted_loads(java(), b"ID", 0.95, s - 1, n);
            assert!(worse.iter().cloned().fold(0.0, f64::max) * 6.0 > 2.0);
        }
        assert!(recommend(java(), b"ID", 1.5, n, 2.0, 10).is_err());
        assert!(recommend(java(), b"ID", 0.5, n, 0.5, 10).is_err());
    }

    #[test]
    fn salters() {
        let mut rr = Salter::new(b"ID", 3, SaltMode::RoundRobin, 1).unwrap();
        let keys: Vec<Vec<u8>> = (0..4).map(|_| rr.next_key()).collect();
        assert_eq!(
            keys,
            [
                b"ID_1".to_vec(),
                b"ID_2".to_vec(),
                b"ID_3".to_vec(),
                b"ID_1".to_vec()
            ]
        );
        let mut r = Salter::new(b"ID", 3, SaltMode::Random, 7).unwrap();
        let mut seen = [0; 4];
        for _ in 0..3000 {
            let k = r.next_key();
            seen[(k[3] - b'0') as usize] += 1;
        }
        assert!(seen[0] == 0 && seen[1..].iter().all(|&c| c > 800));
        assert!(Salter::new(b"ID", 0, SaltMode::Random, 1).is_err());
    }
}
