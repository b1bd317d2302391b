//! Key salting: spreading one hot key over several partitions.
//!
//! A producer writes `KEY_1 .. KEY_S` instead of `KEY` (the seed article's
//! `Key + "_" + random(1, S)`); readers must merge the partitions those salted
//! keys land on. The trade-off: records of `KEY` are ordered only within each
//! salt, no longer across all of them.
//!
//! ```
//! use partwise::strategy::salt::{salted_key, partitions_spanned};
//! use partwise::{PartitionCount, Partitioner};
//! assert_eq!(salted_key(b"ID", b'_', 2), b"ID_2".to_vec());
//! let java: Partitioner = "java".parse()?;
//! let spans = partitions_spanned(java, b"ID", b'_', 3, PartitionCount::new(12)?);
//! assert!(!spans.is_empty() && spans.len() <= 3);
//! # Ok::<(), partwise::Error>(())
//! ```

mod group;
pub use group::{
    custom_partitioner_setting, recommend_group, GroupProducer, GroupSaltPlan, GroupTopic,
    Isolation, SubKeyPlacement,
};

use crate::count::PartitionCount;
use crate::encoding::KeyFormat;
use crate::partitioner::Partitioner;
use crate::topology::Topology;
use crate::Error;

pub mod report;

/// The `i`-th salted form of `key` (1-based): `KEY_i` with `sep` `_`.
pub fn salted_key(key: &[u8], sep: u8, i: u32) -> Vec<u8> {
    let mut k = key.to_vec();
    k.push(sep);
    k.extend_from_slice(i.to_string().as_bytes());
    k
}

/// The separators a sub-key may take, in order of preference: `_` is the
/// usual `KEY_i`; the others serve when the measured keys already hold
/// keys of that shape.
pub const SEPARATORS: [u8; 6] = [b'_', b'-', b'#', b'~', b'|', b'.'];

/// The keys of `keys` shaped like a sub-key of a key of `hot` with `sep`:
/// the hot key, `sep`, then digits only. A reader that strips the suffix
/// to merge a salted key's records would fold such a real key into the
/// hot one, and a producer's sub-key may be that real key itself.
fn sub_key_lookalikes(hot: &[&[u8]], keys: &[(&[u8], u64)], sep: u8) -> Vec<Vec<u8>> {
    let hot: std::collections::HashSet<&[u8]> = hot.iter().copied().collect();
    keys.iter()
        .filter_map(|&(k, _)| {
            let digits = k.iter().rev().take_while(|b| b.is_ascii_digit()).count();
            let stem = k.len() - digits;
            (digits > 0 && stem > 0 && k[stem - 1] == sep && hot.contains(&k[..stem - 1]))
                .then(|| k.to_vec())
        })
        .collect()
}

/// The first separator of [`SEPARATORS`] whose sub-keys of the keys marked
/// in `salt` match no key of `counts`, with the keys that ruled out `_`
/// (empty when `_` serves); an error naming the keys when every separator
/// is taken.
pub fn choose_separator(
    counts: &[(&[u8], u64)],
    salt: &[bool],
) -> Result<(u8, Vec<Vec<u8>>), Error> {
    let hot: Vec<&[u8]> = counts
        .iter()
        .zip(salt)
        .filter(|(_, s)| **s)
        .map(|((k, _), _)| *k)
        .collect();
    if hot.is_empty() {
        return Ok((SEPARATORS[0], Vec::new()));
    }
    let taken = sub_key_lookalikes(&hot, counts, SEPARATORS[0]);
    if taken.is_empty() {
        return Ok((SEPARATORS[0], taken));
    }
    for &sep in &SEPARATORS[1..] {
        if sub_key_lookalikes(&hot, counts, sep).is_empty() {
            return Ok((sep, taken));
        }
    }
    let named: Vec<String> = taken
        .iter()
        .take(5)
        .map(|k| String::from_utf8_lossy(k).into_owned())
        .collect();
    Err(Error::Invalid {
        what: "salt".into(),
        reason: format!(
            "the measured keys already hold keys shaped like the hot keys' sub-keys with every separator ({}): {}{}; salting would write into real keys",
            SEPARATORS.iter().map(|&b| char::from(b).to_string()).collect::<Vec<_>>().join(" "),
            named.join(", "),
            if taken.len() > 5 { format!(" and {} more", taken.len() - 5) } else { String::new() }
        ),
    })
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
        salted_key(&self.key, SEPARATORS[0], i)
    }
}

/// The consumer-side helper: the partitions that `KEY_1 .. KEY_range` land on,
/// sorted and distinct, so readers know which ones to merge.
pub fn partitions_spanned(
    p: Partitioner,
    key: &[u8],
    sep: u8,
    range: u32,
    n: PartitionCount,
) -> Vec<u32> {
    let mut v: Vec<u32> = (1..=range)
        .filter_map(|i| p.place(Some(&salted_key(key, sep, i)), n).partition())
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
        if let Some(q) = p
            .place(Some(&salted_key(key, SEPARATORS[0], i)), n)
            .partition()
        {
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
        spans: partitions_spanned(p, key, SEPARATORS[0], used, n),
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
    /// The byte between a key and its salt (`KEY_i` with `_`): the first
    /// of [`SEPARATORS`] whose sub-keys are no measured key.
    pub separator: u8,
    /// The measured keys shaped like sub-keys with `_` (why the separator
    /// is another); empty when it is `_`.
    pub lookalikes: Vec<Vec<u8>>,
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
    let place = |key: &[u8]| p.place(Some(key), n).partition();
    recommend_placed(&place, n, counts, salt, groups, target_ratio, max_range)
}

/// [`recommend_counts`] with the placement given: `place` puts a key (as the
/// user wrote it) on a partition; the sub-keys take the separator
/// [`choose_separator`] finds free among the measured keys.
fn recommend_placed(
    place: &impl Fn(&[u8]) -> Option<u32>,
    n: PartitionCount,
    counts: &[(&[u8], u64)],
    salt: &[bool],
    groups: &[Vec<u32>],
    target_ratio: f64,
    max_range: u32,
) -> Result<CountsPlan, Error> {
    let (sep, lookalikes) = choose_separator(counts, salt)?;
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
        let Some(q) = place(key) else {
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
    let ratio = |v: &[f64]| over_mean(v, groups);
    let spread = |s: u32| -> Vec<f64> {
        let mut loads: Vec<f64> = base.iter().map(|&x| x as f64).collect();
        for &(key, c) in &hot {
            for i in 1..=s {
                if let Some(q) = place(&salted_key(key, sep, i)) {
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
        separator: sep,
        lookalikes,
    })
}

/// The busiest of `groups` (empty: every partition alone) over the mean.
fn over_mean(v: &[f64], groups: &[Vec<u32>]) -> f64 {
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
        let spans = partitions_spanned(java(), b"ID", b'_', 3, n);
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

    const SYMBOLS: [&str; 10] = [
        "BBCA", "ANTM", "ASII", "UNVR", "TLKM", "BBRI", "BMRI", "GOTO", "ADRO", "ICBP",
    ];

    /// The seeds' ticker with the notifications producer given, and BBCA at
    /// 45% of the ticks.
    fn ticker(notif_producer: &str, notif_partitions: u32) -> (Topology, Vec<(Vec<u8>, u64)>) {
        let t: Topology = format!(
            r#"
[[topic]]
name = "market-updates"
partitions = 6
key = "symbol"
producer = [{{ name = "market-feed", partitioner = "kafkajs", key_format = "string" }}]

[[topic]]
name = "notifications"
partitions = {notif_partitions}
key = "symbol"
producer = [{notif_producer}]

[[topic]]
name = "audit-log"
partitions = 3
producer = [{{ partitioner = "java" }}]

[[copartition]]
name = "ticker"
topics = ["market-updates", "notifications"]
"#
        )
        .parse()
        .unwrap();
        let counts = SYMBOLS
            .iter()
            .map(|s| (s.as_bytes().to_vec(), if *s == "BBCA" { 4500 } else { 611 }))
            .collect();
        (t, counts)
    }

    fn group_plan(t: &Topology, counts: &[(Vec<u8>, u64)]) -> GroupSaltPlan {
        let refs: Vec<(&[u8], u64)> = counts.iter().map(|(k, c)| (k.as_slice(), *c)).collect();
        let salt: Vec<bool> = counts.iter().map(|(k, _)| k == b"BBCA").collect();
        recommend_group(t, "market-updates", &refs, &salt, &[], 1.5, 64)
            .unwrap()
            .expect("market-updates is joined")
    }

    const ALERTS: &str =
        r#"{ name = "alert-service", partitioner = "kafkajs", key_format = "string" }"#;

    #[test]
    fn salting_a_joined_key_salts_every_topic_alike_and_the_join_holds() {
        let (t, counts) = ticker(ALERTS, 6);
        let plan = group_plan(&t, &counts);
        assert!(plan.feasible(), "{:?}", plan.refusals);
        assert!(plan.already_split.is_empty());
        assert_eq!(plan.groups, ["ticker"]);
        let names: Vec<&str> = plan.topics.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["market-updates", "notifications"]);
        assert!(plan.plan.range.is_some() && plan.plan.used > 1);
        let six = PartitionCount::new(6).unwrap();
        let kafkajs: Partitioner = "kafkajs".parse().unwrap();
        let (_, subs) = &plan.placements[0];
        assert_eq!(subs.len() as u32, plan.plan.used);
        for s in subs {
            // Routed by each topic's own producer: one partition number in both.
            let want = kafkajs.place(Some(&s.sub_key), six).partition();
            assert_eq!(
                s.partitions,
                [want, want],
                "{}",
                String::from_utf8_lossy(&s.sub_key)
            );
        }
        // Salting market-updates alone (the old advice) sends some of BBCA's
        // ticks where its alerts, still keyed BBCA, are not.
        let alerts_at = kafkajs.place(Some(b"BBCA"), six).partition();
        assert!(subs.iter().any(|s| s.partitions[0] != alerts_at));
        assert!(plan.spans[0].1.len() > 1);
    }

    #[test]
    fn isolation_keeps_the_key_whole_on_its_own_partition() {
        let (t, counts) = ticker(ALERTS, 6);
        let plan = group_plan(&t, &counts);
        let iso = plan.isolation.as_ref().unwrap();
        let six = PartitionCount::new(6).unwrap();
        let kafkajs: Partitioner = "kafkajs".parse().unwrap();
        let home = kafkajs.place(Some(b"BBCA"), six).partition().unwrap();
        assert_eq!(iso.reserved, [(b"BBCA".to_vec(), home)]);
        let prio: Partitioner = iso.spec.parse().unwrap();
        // Alone there: its partition carries exactly its own share.
        let total: u64 = counts.iter().map(|(_, c)| c).sum();
        assert!((iso.loads[home as usize] - 4500.0 / total as f64).abs() < 1e-12);
        for (k, _) in &counts {
            let q = prio.place(Some(k), six).partition().unwrap();
            assert_eq!(q == home, k == b"BBCA", "{}", String::from_utf8_lossy(k));
        }
        assert!(iso.moved > 0.0 && iso.moved < 1.0);
    }

    #[test]
    fn refused_with_the_reason_when_the_partners_cannot_follow() {
        let kinds = |producer: &str, parts: u32| -> Vec<&'static str> {
            let (t, counts) = ticker(producer, parts);
            group_plan(&t, &counts)
                .refusals
                .iter()
                .map(|r| r.kind)
                .collect()
        };
        // Sarama's default hash (FNV-1a) puts the sub-keys elsewhere.
        assert_eq!(
            kinds(r#"{ name = "go-alerts", partitioner = "sarama" }"#, 6),
            ["sub-keys-land-apart"]
        );
        assert_eq!(
            kinds(
                r#"{ name = "batch", partitioner = "kafkajs", keyless = true }"#,
                6
            ),
            ["keyless-producer"]
        );
        assert!(kinds(ALERTS, 9).contains(&"partition-counts-differ"));
        assert_eq!(kinds("", 6), ["no-producer"]);
        assert_eq!(
            kinds(
                r#"{ name = "ids", partitioner = "kafkajs", key_format = "int32" }"#,
                6
            ),
            ["key-format-cannot-salt"]
        );
        let (t, counts) = ticker(r#"{ name = "go-alerts", partitioner = "sarama" }"#, 6);
        let plan = group_plan(&t, &counts);
        let m = &plan.refusals[0].message;
        assert!(
            m.contains("go-alerts") && m.contains("sarama.NewHashPartitioner"),
            "{m}"
        );
    }

    #[test]
    fn a_topic_in_no_group_has_no_group_plan() {
        let (t, counts) = ticker(ALERTS, 6);
        let refs: Vec<(&[u8], u64)> = counts.iter().map(|(k, c)| (k.as_slice(), *c)).collect();
        let salt = vec![true; refs.len()];
        assert!(recommend_group(&t, "audit-log", &refs, &salt, &[], 1.5, 8)
            .unwrap()
            .is_none());
        assert!(recommend_group(&t, "nope", &refs, &salt, &[], 1.5, 8).is_err());
    }

    #[test]
    fn sub_keys_avoid_the_measured_keys() {
        let counts: Vec<(&[u8], u64)> = vec![
            (b"BBCA", 90),
            (b"BBCA_1", 5),
            (b"BBCA_x2", 5),
            (b"UNVR_1", 5),
            (b"BBCA_", 1),
        ];
        let salt = [true, false, false, false, false];
        // BBCA_1 is shaped like a sub-key; BBCA_x2, BBCA_ and UNVR_1 are not.
        let (sep, taken) = choose_separator(&counts, &salt).unwrap();
        assert_eq!((sep, taken), (b'-', vec![b"BBCA_1".to_vec()]));
        let plan = recommend_counts(
            java(),
            PartitionCount::new(6).unwrap(),
            &counts,
            &salt,
            &[],
            1.5,
            50,
        )
        .unwrap();
        assert_eq!(plan.separator, b'-');
        // A salted key's own lookalike counts too: salting BBCA and BBCA_1
        // would make BBCA's sub-key BBCA_1 the other hot key.
        let both = [true, true, false, false, false];
        assert_eq!(choose_separator(&counts, &both).unwrap().0, b'-');
        // Nothing shaped like a sub-key: the usual `_`.
        assert_eq!(
            choose_separator(&counts[..1], &salt[..1]).unwrap(),
            (b'_', vec![])
        );
    }
}
