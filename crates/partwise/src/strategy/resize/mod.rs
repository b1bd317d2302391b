//! What changing a topic's partition count does to where keys land.
//!
//! This module owns the resize analysis: which keys move from `N` to `M`
//! partitions under a partitioner, the exact expected moved fraction for
//! uniformly hashed keys, the topics of a topology that must change with it
//! and how to make the change safe ([`plan`]), and counts to suggest near a
//! target that keep likely consumer counts dividing evenly. Over measured
//! keys with their weights (records per key), it says what moves of their
//! records ([`moved()`]), offers a multiple of the current count only when
//! those keys agree it moves less ([`plan_measured`]), and ranks counts by
//! what the busiest consumer carries ([`weigh`]): ten symbols are not ten
//! equal loads when one carries 45% of the traffic.
//!
//! Kafka never moves existing records: after a resize, old records of a key
//! stay on the old partition and new ones go to the new, so per-key order and
//! co-partitioning break for every key that moves.
//!
//! ```
//! use partwise::strategy::resize;
//! use partwise::{PartitionCount, Partitioner, Placement};
//! let java: Partitioner = "java".parse()?;
//! let (six, eight) = (PartitionCount::new(6)?, PartitionCount::new(8)?);
//! // The seeds' example: BBCA is partition 0 of 6, then 2 of 8.
//! let m = resize::key_move(java, Some(b"BBCA"), six, eight);
//! assert_eq!((m.from, m.to), (Placement::Partition(0), Placement::Partition(2)));
//! assert!(m.moved());
//! // Doubling keeps half of all keys where they were.
//! let f = resize::expected_moved_fraction(java, six, PartitionCount::new(12)?).unwrap();
//! assert_eq!((f.moved, f.period), (1, 2));
//! # Ok::<(), partwise::Error>(())
//! ```

use crate::count::PartitionCount;
use crate::encoding::KeyFormat;
use crate::partitioner::{KeyRule, Partitioner, Placement};
use crate::topology::{self, Topology};
use crate::Error;
use std::fmt;

pub mod joined;
pub mod moved;
pub mod ranked;

/// Where one key goes before and after a resize.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyMove {
    /// Its placement with the old count.
    pub from: Placement,
    /// Its placement with the new count.
    pub to: Placement,
}

impl KeyMove {
    /// Whether new records of the key go somewhere else than old ones. A key
    /// not placed by its bytes (a null key, a partitioner that ignores keys)
    /// has no fixed home before or after, so it counts as moved.
    pub fn moved(&self) -> bool {
        self.from.partition().is_none() || self.from != self.to
    }
}

/// Where `key` goes under `p` with `from` and with `to` partitions.
pub fn key_move(
    p: Partitioner,
    key: Option<&[u8]>,
    from: PartitionCount,
    to: PartitionCount,
) -> KeyMove {
    KeyMove {
        from: p.place(key, from),
        to: p.place(key, to),
    }
}

/// What a resize moves of measured keys: how many keys, and how many of
/// their records (each key weighs its count; 1 each when the keys were
/// given without counts, so records and keys agree).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Moved {
    /// Keys measured.
    pub keys: u64,
    /// Keys whose new records go elsewhere ([`KeyMove::moved`]).
    pub keys_moved: u64,
    /// Records of all the keys (the sum of their weights).
    pub records: u64,
    /// Records of the moved keys.
    pub records_moved: u64,
}

impl Moved {
    /// `records_moved / records`, `None` without records.
    pub fn records_share(&self) -> Option<f64> {
        (self.records > 0).then(|| self.records_moved as f64 / self.records as f64)
    }

    /// `keys_moved / keys`, `None` without keys.
    pub fn keys_share(&self) -> Option<f64> {
        (self.keys > 0).then(|| self.keys_moved as f64 / self.keys as f64)
    }
}

/// What a resize from `from` to `to` under `p` moves of `keys`, each with
/// its weight. Weights saturate (the readers refuse sums that overflow).
pub fn moved(
    p: Partitioner,
    keys: &[(&[u8], u64)],
    from: PartitionCount,
    to: PartitionCount,
) -> Moved {
    let mut m = Moved::default();
    for (k, w) in keys {
        m.keys += 1;
        m.records = m.records.saturating_add(*w);
        if key_move(p, Some(k), from, to).moved() {
            m.keys_moved += 1;
            m.records_moved = m.records_moved.saturating_add(*w);
        }
    }
    m
}

/// An exact fraction `moved / period`, in lowest terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fraction {
    /// The numerator.
    pub moved: u64,
    /// The denominator.
    pub period: u64,
}

impl Fraction {
    /// The fraction as a float.
    pub fn value(self) -> f64 {
        self.moved as f64 / self.period as f64
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The fraction of uniformly hashed keys whose partition changes from `from`
/// to `to` partitions, exactly; `None` when `p` ignores keys (nothing stays).
///
/// Every keyed partitioner computes `h % n` on a reduced hash `h`. Over one
/// period `L = lcm(N, M)` of hash values, a value stays where it was when
/// `h mod N == h mod M = r`; by the Chinese remainder theorem that is one
/// `h` per residue `r < min(N, M)`. So `min(N, M)` of every `L` values stay,
/// and `1 - min(N, M) / L` move: half when doubling, none when `N == M`.
pub fn expected_moved_fraction(
    p: Partitioner,
    from: PartitionCount,
    to: PartitionCount,
) -> Option<Fraction> {
    if !matches!(p.key_rule(), KeyRule::Hash(..)) {
        return None;
    }
    let (n, m) = (u64::from(from.get()), u64::from(to.get()));
    // n, m < 2^31, so lcm < 2^62 fits.
    let period = n / gcd(n, m) * m;
    let moved = period - n.min(m);
    let g = gcd(moved, period);
    Some(Fraction {
        moved: moved / g,
        period: period / g,
    })
}

/// The partitioner and key format of the first producer of `topic` that
/// writes keys: what a resize of that topic is about, unless told otherwise.
pub fn producer_defaults(topic: &topology::Topic) -> Option<(Partitioner, KeyFormat)> {
    topic
        .producers
        .iter()
        .find_map(|p| p.keyed_partitioner().map(|k| (k, p.key_format)))
}

/// A co-partition group of the resized topic: its other topics must be
/// resized with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Together {
    /// The co-partition group.
    pub group: String,
    /// Its other topics with their partition counts, in the file's order.
    pub topics: Vec<(String, u32)>,
}

/// The co-partition groups of topic `name` in `t`, each with its other topics.
pub fn change_together(t: &Topology, name: &str) -> Vec<Together> {
    t.groups_of(name)
        .map(|g| Together {
            group: g.name.clone(),
            topics: g
                .topics
                .iter()
                .filter(|other| *other != name)
                .filter_map(|other| t.topic(other))
                .map(|other| (other.name.clone(), other.partitions.get()))
                .collect(),
        })
        .collect()
}

/// One step that makes a resize safe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fix {
    /// A multiple of the current count moves fewer keys than the count asked for.
    Multiple {
        /// The multiple.
        partitions: u32,
        /// The current count.
        of: u32,
        /// What the multiple moves.
        moves: Fraction,
        /// What the count asked for moves.
        instead: Fraction,
        /// What each moves of the measured keys: the multiple, then the
        /// count asked for (`None`: no keys were given).
        measured: Option<(Moved, Moved)>,
    },
    /// Drain before resizing, so each key's records stay in order.
    Drain,
    /// The other topics of a co-partition group must be resized in the same window.
    Together {
        /// The co-partition group.
        group: String,
        /// Its other topics.
        topics: Vec<String>,
        /// The new count.
        to: u32,
    },
}

impl fmt::Display for Fix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fix::Multiple {
                partitions,
                of,
                moves,
                instead,
                measured: None,
            } => write!(
                f,
                "{partitions} partitions (a multiple of {of}) would move {}/{} = {:.4} of keys instead of {:.4}",
                moves.moved,
                moves.period,
                moves.value(),
                instead.value()
            ),
            Fix::Multiple {
                partitions,
                of,
                measured: Some((mine, asked)),
                ..
            } => {
                write!(
                    f,
                    "{partitions} partitions (a multiple of {of}) would move {} of the {} given keys instead of {}",
                    mine.keys_moved, mine.keys, asked.keys_moved
                )?;
                if mine.records != mine.keys {
                    write!(
                        f,
                        ", {:.1}% of their records instead of {:.1}%",
                        mine.records_share().unwrap_or(0.0) * 100.0,
                        asked.records_share().unwrap_or(0.0) * 100.0
                    )?;
                }
                Ok(())
            }
            Fix::Drain => f.write_str(
                "to keep each key's records in order, drain first: stop the producers, let every consumer reach the end of every partition, resize, then restart the producers",
            ),
            Fix::Together { group, topics, to } if topics.is_empty() => write!(
                f,
                "resize every topic of co-partition group {group} to {to} in the same window, or the join breaks for the moved keys"
            ),
            Fix::Together { group, topics, to } => write!(
                f,
                "resize {} to {to} in the same window (co-partition group {group}), or the join breaks for the moved keys",
                topics.join(", ")
            ),
        }
    }
}

/// What a resize from `from` to `to` partitions does under a partitioner,
/// beyond the keys one gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The fraction of uniformly hashed keys that move (`None`: the
    /// partitioner ignores keys).
    pub expected: Option<Fraction>,
    /// The co-partition groups whose other topics must change with it.
    pub together: Vec<Together>,
    /// How to make the resize safe (empty when nothing moves).
    pub fixes: Vec<Fix>,
    /// What the resize moves of the measured keys (`None`: none given).
    pub measured: Option<Moved>,
    /// The multiple of the current count that uniformly hashed keys favour,
    /// with what it moves of the measured keys, when those keys say it
    /// moves more records (or, as many records, more keys) than the count
    /// asked for (so it is no fix).
    pub multiple_no_better: Option<(u32, Moved)>,
}

/// The plan of a resize of a topic written with `p` from `from` to `to`
/// partitions, in the co-partition groups `together`.
pub fn plan(
    p: Partitioner,
    from: PartitionCount,
    to: PartitionCount,
    together: Vec<Together>,
) -> Plan {
    plan_measured(p, from, to, together, None)
}

/// [`plan`], judged on measured keys with their weights when `keys` is
/// given: a multiple of the current count is not offered when it moves
/// more of their records (then more keys, when the records tie) than the
/// count asked for, and its fix counts them when it moves fewer. The fraction for uniformly hashed keys says nothing of
/// a handful of symbols, one of which may carry half the traffic.
pub fn plan_measured(
    p: Partitioner,
    from: PartitionCount,
    to: PartitionCount,
    together: Vec<Together>,
    keys: Option<&[(&[u8], u64)]>,
) -> Plan {
    let expected = expected_moved_fraction(p, from, to);
    let measured = keys.map(|k| moved(p, k, from, to));
    let mut fixes = Vec::new();
    let mut multiple_no_better = None;
    let (f, t) = (from.get(), to.get());
    if f != t && expected.is_some_and(|e| e.moved != 0) {
        // N -> kN keeps every key of partition p on p or p + N, j*N: the fewest moves.
        if t > f && !t.is_multiple_of(f) {
            let k = (t + f / 2) / f;
            let m = (k.max(2)).saturating_mul(f);
            if let (Ok(mc), Some(e)) = (PartitionCount::new(m), expected) {
                if let Some(me) = expected_moved_fraction(p, from, mc) {
                    if me.value() < e.value() {
                        let mine = keys.map(|k| moved(p, k, from, mc));
                        // The measured keys overrule the uniform figure only
                        // when they disagree: on a tie it still holds for the
                        // keys not measured.
                        let rank = |m: Moved| (m.records_moved, m.keys_moved);
                        match (mine, measured) {
                            (Some(a), Some(b)) if rank(a) > rank(b) => {
                                multiple_no_better = Some((m, a));
                            }
                            (a, b) => fixes.push(Fix::Multiple {
                                partitions: m,
                                of: f,
                                moves: me,
                                instead: e,
                                measured: a.zip(b).filter(|(a, b)| rank(*a) < rank(*b)),
                            }),
                        }
                    }
                }
            }
        }
        fixes.push(Fix::Drain);
        // A group with no other topic has nothing to move with this one.
        for g in together.iter().filter(|g| !g.topics.is_empty()) {
            fixes.push(Fix::Together {
                group: g.group.clone(),
                topics: g.topics.iter().map(|(t, _)| t.clone()).collect(),
                to: t,
            });
        }
    }
    Plan {
        expected,
        together,
        fixes,
        measured,
        multiple_no_better,
    }
}

/// The consumer counts among `consumers` that do not divide `target`:
/// [`suggest`] leaves the target out when there are any, so say why.
pub fn not_dividing(target: PartitionCount, consumers: &[PartitionCount]) -> Vec<u32> {
    consumers
        .iter()
        .map(|c| c.get())
        .filter(|c| !target.get().is_multiple_of(*c))
        .collect()
}

/// The largest target [`suggest`] accepts: far above any real topic, small
/// enough to count divisors of the whole window at once.
pub const MAX_SUGGEST_TARGET: u32 = 1_000_000;

/// A partition count proposed by [`suggest`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suggestion {
    /// The count.
    pub partitions: u32,
    /// Its divisors: the consumer counts that get equal shares.
    pub divisors: Vec<u32>,
    /// Whether it has more divisors than every smaller count (12, 24, 36, 48, 60, ...).
    pub highly_composite: bool,
}

/// The divisors of `n`, ascending.
pub fn divisors(n: u32) -> Vec<u32> {
    let mut low = Vec::new();
    let mut high = Vec::new();
    let mut d = 1u32;
    while u64::from(d) * u64::from(d) <= u64::from(n) {
        if n.is_multiple_of(d) {
            low.push(d);
            if d != n / d {
                high.push(n / d);
            }
        }
        d += 1;
    }
    low.extend(high.into_iter().rev());
    low
}

/// Whether `n` has more divisors than every smaller count (1, 2, 4, 6, 12,
/// 24, 36, 48, 60, ...), as [`Suggestion::highly_composite`] says.
pub fn highly_composite(n: u32) -> bool {
    if n == 0 || n > MAX_SUGGEST_TARGET.saturating_mul(2) {
        return false;
    }
    let mut d = vec![0u32; n as usize + 1];
    for i in 1..=n as usize {
        for j in (i..=n as usize).step_by(i) {
            d[j] += 1;
        }
    }
    d[1..n as usize].iter().all(|&x| x < d[n as usize])
}

/// Up to `limit` partition counts near `target` (within a factor of 1.5 either
/// way) that every count in `consumers` divides, with the most divisors first
/// (ties: nearest to the target, then smaller). When no count in the window is
/// divisible by every consumer count, the multiples of their least common
/// multiple nearest to the target are offered instead.
pub fn suggest(
    target: PartitionCount,
    consumers: &[PartitionCount],
    limit: usize,
) -> Result<Vec<Suggestion>, Error> {
    let t = target.get();
    if t > MAX_SUGGEST_TARGET {
        return Err(Error::PartitionCount {
            input: t.to_string(),
            reason: format!("suggestions go up to a target of {MAX_SUGGEST_TARGET} partitions"),
        });
    }
    let mut step = 1u64;
    for c in consumers {
        let c = u64::from(c.get());
        step = step / gcd(step, c) * c;
        if step > u64::from(MAX_SUGGEST_TARGET) * 2 {
            return Err(Error::PartitionCount {
                input: c.to_string(),
                reason: format!(
                    "the consumer counts' least common multiple exceeds {} partitions",
                    MAX_SUGGEST_TARGET * 2
                ),
            });
        }
    }
    let step = step as u32;
    let lo = (t * 2).div_ceil(3).max(1);
    let hi = t + t / 2;
    let mut candidates: Vec<u32> = (lo..=hi).filter(|c| c % step == 0).collect();
    if candidates.is_empty() {
        let below = t / step * step;
        candidates = [below, below + step]
            .into_iter()
            .filter(|&c| c >= 1)
            .collect();
    }
    let top = candidates.iter().copied().max().unwrap_or(1);
    // Divisor counts of every number up to the window, for the record test.
    let mut d = vec![0u32; top as usize + 1];
    for i in 1..=top as usize {
        for j in (i..=top as usize).step_by(i) {
            d[j] += 1;
        }
    }
    let mut best_below = vec![0u32; top as usize + 1];
    for i in 1..=top as usize {
        best_below[i] = best_below[i - 1].max(d[i - 1]);
    }
    candidates.sort_by_key(|&c| (std::cmp::Reverse(d[c as usize]), c.abs_diff(t), c));
    candidates.truncate(limit);
    Ok(candidates
        .into_iter()
        .map(|c| Suggestion {
            partitions: c,
            divisors: divisors(c),
            highly_composite: d[c as usize] > best_below[c as usize],
        })
        .collect())
}

/// A partition count judged on measured keys with their weights: what a
/// resize to it moves, and what the hottest partition and the busiest
/// consumer carry after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Weighed {
    /// The count.
    pub partitions: u32,
    /// Whether every consumer count given to [`suggest`] divides it.
    pub divides: bool,
    /// What a resize from the current count moves (`None`: no current count).
    pub moved: Option<Moved>,
    /// All the records of the keys.
    pub records: u64,
    /// The load of the hottest partition.
    pub hottest_partition: u64,
    /// For each group size, the load of its busiest member.
    pub busiest_consumer: Vec<(u32, u64)>,
}

impl Weighed {
    /// How much more than an even share the busiest member carries, at the
    /// worst of the group sizes: its load x the group size / all the
    /// records (1 is even; the hottest partition against `1 / partitions`
    /// without group sizes). A group of one always carries everything, so
    /// the ratio, not the share, compares group sizes.
    pub fn worst_ratio(&self) -> f64 {
        let records = self.records.max(1) as f64;
        if self.busiest_consumer.is_empty() {
            return self.hottest_partition as f64 * f64::from(self.partitions) / records;
        }
        self.busiest_consumer
            .iter()
            .map(|&(m, load)| load as f64 * f64::from(m) / records)
            .fold(0.0, f64::max)
    }
}

/// Judges each count of `counts` on `keys` with their weights, placed by
/// `p`: the moves from `from`, the hottest partition, and the busiest of
/// each of `groups` (group sizes reading the topic under `assignor`); then
/// orders them by [`Weighed::worst_ratio`] (what the busiest consumer
/// carries against an even share; the hottest partition without groups),
/// then by the records moved, keeping the given order among ties. Even partition shares (the divisors [`suggest`] ranks by)
/// are not even loads when one key carries much of the traffic: this is
/// the ranking by load.
pub fn weigh(
    p: Partitioner,
    keys: &[(&[u8], u64)],
    from: Option<PartitionCount>,
    counts: &[(u32, bool)],
    assignor: crate::assign::Assignor,
    groups: &[u32],
) -> Result<Vec<Weighed>, Error> {
    let mut out = Vec::with_capacity(counts.len());
    for &(c, divides) in counts {
        let n = PartitionCount::new(c)?;
        let (loads, not_fixed) = crate::traffic::weighted_loads(p, n, keys);
        let records = loads.iter().fold(not_fixed, |a, b| a.saturating_add(*b));
        let mut busiest = Vec::with_capacity(groups.len());
        for &m in groups {
            let b = crate::traffic::busiest_consumer(assignor, &loads, m)?;
            busiest.push((m, b.map_or(0, |b| b.load)));
        }
        out.push(Weighed {
            partitions: c,
            divides,
            moved: from.map(|f| moved(p, keys, f, n)),
            records,
            hottest_partition: loads.iter().copied().max().unwrap_or(0),
            busiest_consumer: busiest,
        });
    }
    out.sort_by(|a, b| {
        a.worst_ratio().total_cmp(&b.worst_ratio()).then_with(|| {
            let moved = |w: &Weighed| w.moved.map_or(0, |m| m.records_moved);
            moved(a).cmp(&moved(b))
        })
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_names_the_topics_to_move_with_and_a_cheaper_count() {
        let t = Topology::parse(
            r#"
[[topic]]
name = "a"
partitions = 6
[[topic.producer]]
partitioner = "librdkafka"
key_format = "int32"
[[topic]]
name = "b"
partitions = 6
[[topic]]
name = "c"
partitions = 3
[[copartition]]
name = "ab"
topics = ["a", "b"]
"#,
        )
        .unwrap();
        let (p, f) = producer_defaults(t.topic("a").unwrap()).unwrap();
        assert_eq!(
            (p.spec(), f),
            ("librdkafka:consistent_random", KeyFormat::Int32)
        );
        assert_eq!(producer_defaults(t.topic("b").unwrap()), None);
        let together = change_together(&t, "a");
        assert_eq!(
            together,
            vec![Together {
                group: "ab".into(),
                topics: vec![("b".into(), 6)]
            }]
        );
        assert!(change_together(&t, "c").is_empty());
        let plan = plan(p, n(6), n(9), together);
        let fixes: Vec<String> = plan.fixes.iter().map(ToString::to_string).collect();
        assert_eq!(
            fixes,
            [
                "12 partitions (a multiple of 6) would move 1/2 = 0.5000 of keys instead of 0.6667",
                "to keep each key's records in order, drain first: stop the producers, let every consumer reach the end of every partition, resize, then restart the producers",
                "resize b to 9 in the same window (co-partition group ab), or the join breaks for the moved keys",
            ]
        );
        // Nothing moves: nothing to fix.
        assert!(super::plan(p, n(6), n(6), Vec::new()).fixes.is_empty());
        let rr: Partitioner = "java:round-robin".parse().unwrap();
        let none = super::plan(rr, n(6), n(9), Vec::new());
        assert_eq!((none.expected, none.fixes.len()), (None, 0));
        assert_eq!(not_dividing(n(12), &[n(4), n(5), n(7)]), vec![5, 7]);
    }

    fn n(x: u32) -> PartitionCount {
        PartitionCount::new(x).unwrap()
    }

    /// Brute force over one full period, as the definition reads.
    fn by_counting(a: u32, b: u32) -> f64 {
        let l = (a as u64 / gcd(a as u64, b as u64)) * b as u64;
        let moved = (0..l).filter(|h| h % a as u64 != h % b as u64).count();
        moved as f64 / l as f64
    }

    #[test]
    fn expected_fraction_matches_counting() {
        let java: Partitioner = "java".parse().unwrap();
        for a in 1..=24 {
            for b in 1..=24 {
                let f = expected_moved_fraction(java, n(a), n(b)).unwrap();
                assert!((f.value() - by_counting(a, b)).abs() < 1e-12, "{a} -> {b}");
            }
        }
    }

    #[test]
    fn fractions_are_in_lowest_terms() {
        let java: Partitioner = "java".parse().unwrap();
        // 6 -> 8: lcm 24, 6 residues stay: 18/24 = 3/4.
        assert_eq!(
            expected_moved_fraction(java, n(6), n(8)),
            Some(Fraction {
                moved: 3,
                period: 4
            })
        );
        assert_eq!(
            expected_moved_fraction(java, n(7), n(7)),
            Some(Fraction {
                moved: 0,
                period: 1
            })
        );
        let big =
            expected_moved_fraction(java, n(i32::MAX as u32), n(i32::MAX as u32 - 1)).unwrap();
        assert!(big.value() > 0.999_999);
    }

    #[test]
    fn key_ignoring_partitioner_has_no_expectation() {
        let rr: Partitioner = "kafka-go".parse().unwrap();
        assert_eq!(expected_moved_fraction(rr, n(6), n(12)), None);
        assert!(key_move(rr, Some(b"BBCA"), n(6), n(6)).moved());
    }

    #[test]
    fn divisors_and_records() {
        assert_eq!(divisors(12), vec![1, 2, 3, 4, 6, 12]);
        assert_eq!(divisors(1), vec![1]);
        assert_eq!(divisors(49), vec![1, 7, 49]);
        let s = suggest(n(10), &[], 5).unwrap();
        assert_eq!(s[0].partitions, 12);
        assert!(s[0].highly_composite);
        assert!(!s.iter().any(|x| x.partitions == 10 && x.highly_composite));
        for c in 1..=60 {
            let listed = [1, 2, 4, 6, 12, 24, 36, 48, 60].contains(&c);
            assert_eq!(highly_composite(c), listed, "{c}");
        }
        let s = suggest(n(50), &[], 3).unwrap();
        assert_eq!(s[0].partitions, 60);
        assert!(s[0].highly_composite);
    }

    #[test]
    fn consumers_must_divide() {
        let s = suggest(n(20), &[n(4), n(6)], 10).unwrap();
        assert!(!s.is_empty());
        assert!(s.iter().all(|x| x.partitions % 12 == 0), "{s:?}");
        // No multiple of 7*11 near 10: the nearest multiples instead.
        let s = suggest(n(10), &[n(7), n(11)], 10).unwrap();
        assert_eq!(s.iter().map(|x| x.partitions).collect::<Vec<_>>(), vec![77]);
        assert!(suggest(n(MAX_SUGGEST_TARGET + 1), &[], 3).is_err());
    }

    /// The ten symbols of examples/ticker.toml, BBCA with 45% of the records.
    fn ten() -> Vec<(&'static [u8], u64)> {
        let mut v: Vec<(&[u8], u64)> = vec![(b"BBCA", 81)];
        for k in [
            "ANTM", "ASII", "UNVR", "TLKM", "BBRI", "BMRI", "GOTO", "ADRO", "ICBP",
        ] {
            v.push((k.as_bytes(), 11));
        }
        v
    }

    #[test]
    fn measured_keys_decide_the_multiple() {
        let kafkajs: Partitioner = "kafkajs".parse().unwrap();
        let keys = ten();
        // Independent count: the placements at 6, 9 and 12, compared by hand.
        let at = |k: &[u8], c: u32| kafkajs.place(Some(k), n(c)).partition().unwrap();
        let moves = |c: u32| keys.iter().filter(|(k, _)| at(k, 6) != at(k, c)).count() as u64;
        assert_eq!((moves(9), moves(12)), (6, 7));
        let ones: Vec<(&[u8], u64)> = keys.iter().map(|(k, _)| (*k, 1)).collect();
        let uniform = plan(kafkajs, n(6), n(9), Vec::new());
        assert!(matches!(
            uniform.fixes[0],
            Fix::Multiple { partitions: 12, .. }
        ));
        let measured = plan_measured(kafkajs, n(6), n(9), Vec::new(), Some(&ones));
        assert!(!measured
            .fixes
            .iter()
            .any(|f| matches!(f, Fix::Multiple { .. })));
        assert_eq!(measured.measured.unwrap().keys_moved, 6);
        assert_eq!(measured.multiple_no_better.unwrap().0, 12);
        assert_eq!(measured.multiple_no_better.unwrap().1.keys_moved, 7);
        // 6 -> 8 moves more of them than 12 does: the fix counts them.
        assert_eq!(moves(8), 9);
        let eight = plan_measured(kafkajs, n(6), n(8), Vec::new(), Some(&keys));
        assert_eq!(
            eight.fixes[0].to_string(),
            format!(
                "12 partitions (a multiple of 6) would move 7 of the 10 given keys instead of 9, {:.1}% of their records instead of {:.1}%",
                keys.iter().filter(|(k, _)| at(k, 6) != at(k, 12)).map(|(_, w)| *w as f64).sum::<f64>() / 1.8,
                keys.iter().filter(|(k, _)| at(k, 6) != at(k, 8)).map(|(_, w)| *w as f64).sum::<f64>() / 1.8,
            )
        );
        // One key that moves either way: a tie, and the uniform figure stands.
        let one: Vec<(&[u8], u64)> = vec![(b"BBCA", 1)];
        let tie = plan_measured(kafkajs, n(6), n(8), Vec::new(), Some(&one));
        assert!(tie.fixes[0]
            .to_string()
            .contains("would move 1/2 = 0.5000 of keys"));
        let weighted = plan_measured(kafkajs, n(6), n(9), Vec::new(), Some(&keys)).measured;
        let w = weighted.unwrap();
        let by_hand: u64 = keys
            .iter()
            .filter(|(k, _)| at(k, 6) != at(k, 9))
            .map(|(_, w)| w)
            .sum();
        assert_eq!((w.records, w.records_moved), (180, by_hand));
    }

    #[test]
    fn weights_rank_nine_above_twelve_for_four_workers() {
        let kafkajs: Partitioner = "kafkajs".parse().unwrap();
        let rr: crate::assign::Assignor = "kafkajs:roundrobin".parse().unwrap();
        let keys = ten();
        let w = weigh(
            kafkajs,
            &keys,
            Some(n(6)),
            &[(12, true), (9, false)],
            rr,
            &[4],
        )
        .unwrap();
        assert_eq!(
            w.iter().map(|x| x.partitions).collect::<Vec<_>>(),
            vec![9, 12]
        );
        // Round robin over one topic gives partition q to member q % 4.
        let busiest = |c: u32| {
            let mut m = [0u64; 4];
            for (k, wt) in &keys {
                m[(kafkajs.place(Some(k), n(c)).partition().unwrap() % 4) as usize] += wt;
            }
            *m.iter().max().unwrap()
        };
        assert_eq!(w[0].busiest_consumer, vec![(4, busiest(9))]);
        assert_eq!(w[1].busiest_consumer, vec![(4, busiest(12))]);
        assert_eq!((busiest(9), busiest(12)), (92, 114));
        assert!((w[0].worst_ratio() - 4.0 * 92.0 / 180.0).abs() < 1e-12);
        // A group of one carries everything at every count: it does not
        // decide the order, the group of four does.
        let w = weigh(
            kafkajs,
            &keys,
            Some(n(6)),
            &[(12, true), (9, false)],
            rr,
            &[1, 4],
        )
        .unwrap();
        assert_eq!(
            w.iter().map(|x| x.partitions).collect::<Vec<_>>(),
            vec![9, 12]
        );
        assert_eq!(w[0].busiest_consumer[0], (1, 180));
    }
}
