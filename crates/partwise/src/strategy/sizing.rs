//! Partition-count sizing: `P = max(TP / tp, TC / tc)`, then headroom, and the
//! costs that argue against going far beyond it; and ([`weigh`]) the plan
//! held against measured keys, whose hottest partition, not an even `1 / P`
//! share, must fit one partition.
//!
//! ```
//! use partwise::strategy::sizing::{plan, PlanInput, Binding};
//! // The seed's example: 50 MB/s in and out, 10 MB/s per partition to write,
//! // 2.5 MB/s per partition to consume: 20 partitions, 24 with 20% headroom.
//! let p = plan(&PlanInput { produce_mbps: 50.0, partition_produce_mbps: 10.0,
//!     consume_mbps: 50.0, partition_consume_mbps: 2.5, headroom: 0.2, ..Default::default() })?;
//! assert_eq!((p.required, p.with_headroom, p.binding), (20, 24, Binding::Consume));
//! # Ok::<(), partwise::Error>(())
//! ```

use crate::strategy::resize::divisors;
use crate::{Error, PartitionCount, Partitioner};
use serde::Serialize;

/// The inputs of [`plan`].
#[derive(Clone, Debug, PartialEq)]
pub struct PlanInput {
    /// Total produce throughput the topic must take (MB/s).
    pub produce_mbps: f64,
    /// What one producer can write to one partition (MB/s).
    pub partition_produce_mbps: f64,
    /// Total consume throughput the group must reach (MB/s).
    pub consume_mbps: f64,
    /// What one consumer can process from one partition (MB/s).
    pub partition_consume_mbps: f64,
    /// Extra capacity on top of the requirement, as a fraction (0.2 = 20%).
    pub headroom: f64,
    /// Replication factor, for the file-handle estimate.
    pub replication_factor: u32,
    /// Producer `batch.size` in bytes, for the memory estimate.
    pub batch_size: u64,
}

impl Default for PlanInput {
    fn default() -> PlanInput {
        PlanInput {
            produce_mbps: 0.0,
            partition_produce_mbps: 0.0,
            consume_mbps: 0.0,
            partition_consume_mbps: 0.0,
            headroom: 0.2,
            replication_factor: 3,
            batch_size: 16384,
        }
    }
}

/// Which side needs more partitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Binding {
    /// Producing needs more partitions than consuming.
    Produce,
    /// Consuming needs at least as many partitions as producing.
    Consume,
}

impl Binding {
    /// `produce` or `consume`.
    pub fn as_str(self) -> &'static str {
        match self {
            Binding::Produce => "produce",
            Binding::Consume => "consume",
        }
    }
}

/// A partition count near the plan, with the consumer counts that share it evenly.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Nearby {
    /// The partition count.
    pub partitions: u32,
    /// Group sizes (up to the count) that give every consumer the same number of partitions.
    pub even_consumer_counts: Vec<u32>,
}

/// The result of [`plan`] (its JSON: the fields in this order).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Plan {
    /// `ceil(max(TP / tp, TC / tc))`.
    pub required: u32,
    /// `ceil(required * (1 + headroom))`.
    pub with_headroom: u32,
    /// The side that sets the requirement.
    pub binding: Binding,
    /// `TP / tp`, unrounded.
    pub produce_partitions: f64,
    /// `TC / tc`, unrounded.
    pub consume_partitions: f64,
    /// The headroom the plan was made with (0.2 = 20%).
    pub headroom: f64,
    /// The most consumers one group can keep busy: one per partition.
    pub max_consumers: u32,
    /// Counts at or above `with_headroom` that divide evenly among more group sizes.
    pub nearby: Vec<Nearby>,
    /// Open files on the brokers for the active segments: partitions x replicas x 3
    /// (log, offset index, time index).
    pub open_files: u64,
    /// Producer memory for one open batch per partition (bytes); compare with
    /// `buffer.memory` (32 MiB by default).
    pub producer_batch_bytes: u64,
    /// Warnings about the cost of the count.
    pub warnings: Vec<String>,
}

/// A plan and, when keys with their weights were given, the plan held
/// against them: what `partwise plan` reports.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlanReport {
    /// The plan from the throughput targets.
    #[serde(flatten)]
    pub plan: Plan,
    /// The plan held against the keys' weights ([`weigh`]).
    pub weights: Option<Weighed>,
}

/// Keys with their weights, and the partitioner that places them.
pub type PlacedKeys<'a> = (Partitioner, &'a [(&'a [u8], u64)]);

/// [`plan`] of `input`, held against `keys` placed by `p` when given.
pub fn plan_report(input: &PlanInput, keys: Option<PlacedKeys<'_>>) -> Result<PlanReport, Error> {
    let plan = plan(input)?;
    let weights = match keys {
        Some((p, keys)) => Some(weigh(input, &plan, p, keys)?),
        None => None,
    };
    Ok(PlanReport { plan, weights })
}

/// Floating-point results such as `20.0 * 1.2 = 24.000000000000004` must not
/// round up to the next partition. The result stays a float: a count above
/// what a topic can have is an error for [`plan`] to report with its
/// numbers, not an integer saturated by a cast.
fn ceil(x: f64) -> f64 {
    (x - 1e-9).ceil().max(1.0)
}

/// The most partitions one KRaft controller operation (CreateTopics or
/// CreatePartitions) can make: the controller refuses an operation that
/// would write more than 10,000 metadata records, one per partition.
pub const PARTITIONS_PER_OPERATION: u32 = 10_000;

/// The primes up to `n` (a sieve of Eratosthenes).
fn primes_to(n: u32) -> Vec<u32> {
    let n = n as usize;
    let mut composite = vec![false; n + 1];
    let mut primes = Vec::new();
    for i in 2..=n {
        if !composite[i] {
            primes.push(i as u32);
            let mut j = i * i;
            while j <= n {
                composite[j] = true;
                j += i;
            }
        }
    }
    primes
}

/// The number of divisors of every count in `lo..=hi`, by one segmented
/// factorization over the primes up to `sqrt(hi)`: the range is at most
/// a few thousand counts, but its counts reach `i32::MAX`, where trying
/// every divisor of every count takes minutes.
fn divisor_counts(lo: u32, hi: u32) -> Vec<u32> {
    let len = (hi - lo) as usize + 1;
    let mut rest: Vec<u32> = (lo..=hi).collect();
    let mut counts = vec![1u32; len];
    let root = (f64::from(hi).sqrt() as u32 + 1).min(65_535);
    for p in primes_to(root) {
        let first = lo.div_ceil(p).saturating_mul(p);
        let mut m = u64::from(first);
        while m <= u64::from(hi) {
            let i = (m - u64::from(lo)) as usize;
            let mut e = 0;
            while rest[i].is_multiple_of(p) {
                rest[i] /= p;
                e += 1;
            }
            counts[i] *= e + 1;
            m += u64::from(p);
        }
    }
    for (c, r) in counts.iter_mut().zip(&rest) {
        if *r > 1 {
            *c *= 2;
        }
    }
    counts
}

/// Sizes a topic from throughput targets.
pub fn plan(input: &PlanInput) -> Result<Plan, Error> {
    let check = |name: &str, v: f64, allow_zero: bool| -> Result<(), Error> {
        if !v.is_finite() || v < 0.0 || (!allow_zero && v == 0.0) {
            return Err(Error::Invalid {
                what: name.to_string(),
                reason: format!("{v} is not a positive number"),
            });
        }
        Ok(())
    };
    check("produce rate", input.produce_mbps, true)?;
    check(
        "per-partition produce rate",
        input.partition_produce_mbps,
        false,
    )?;
    check("consume rate", input.consume_mbps, true)?;
    check(
        "per-partition consume rate",
        input.partition_consume_mbps,
        false,
    )?;
    if input.produce_mbps == 0.0 && input.consume_mbps == 0.0 {
        return Err(Error::Invalid {
            what: "rates".into(),
            reason: "the produce and consume rates are both 0".into(),
        });
    }
    if !(0.0..=10.0).contains(&input.headroom) || !input.headroom.is_finite() {
        return Err(Error::Invalid {
            what: "headroom".into(),
            reason: format!("{} is not a fraction such as 0.2 (20%)", input.headroom),
        });
    }
    // Kafka's replication factor is an int16 and batch.size an int: larger
    // values are no configuration a cluster takes, and they would overflow
    // the estimates below.
    if input.replication_factor > i16::MAX as u32 {
        return Err(Error::Invalid {
            what: "replication factor".into(),
            reason: format!(
                "{} is above {} (a topic's replication factor is an int16)",
                input.replication_factor,
                i16::MAX
            ),
        });
    }
    if input.batch_size > i32::MAX as u64 {
        return Err(Error::Invalid {
            what: "batch size".into(),
            reason: format!(
                "{} bytes is above {} (the producer's batch.size is an int)",
                input.batch_size,
                i32::MAX
            ),
        });
    }
    let produce = input.produce_mbps / input.partition_produce_mbps;
    let consume = input.consume_mbps / input.partition_consume_mbps;
    let max = f64::from(crate::MAX_PARTITIONS);
    let required = ceil(produce.max(consume));
    let with_headroom = ceil(required * (1.0 + input.headroom));
    if with_headroom > max {
        let grown = if with_headroom > required {
            format!(
                ", {} with {}% headroom",
                with_headroom,
                input.headroom * 100.0
            )
        } else {
            String::new()
        };
        return Err(Error::Invalid {
            what: "rates".into(),
            reason: format!(
                "the plan needs max(TP/tp = {produce}, TC/tc = {consume}) = {required} partitions{grown}, above the {} a topic can have (partition ids are int32)",
                crate::MAX_PARTITIONS
            ),
        });
    }
    // Both fit a u32 now: checked against MAX_PARTITIONS above.
    let (required, with_headroom) = (required as u32, with_headroom as u32);
    let binding = if produce > consume {
        Binding::Produce
    } else {
        Binding::Consume
    };

    // Candidates from the plan up to +50% (at least +4, at most +5,000,
    // never past what a topic can have): keep those with more even group
    // sizes than any smaller candidate, so the list shows real trade-offs.
    let hi = with_headroom
        .saturating_add((with_headroom / 2).clamp(4, 5000))
        .min(crate::MAX_PARTITIONS);
    let counts = divisor_counts(with_headroom, hi);
    let mut nearby: Vec<Nearby> = Vec::new();
    let mut best = 0u32;
    for (p, &c) in (with_headroom..=hi).zip(&counts) {
        if p == with_headroom || c > best {
            best = best.max(c);
            nearby.push(Nearby {
                partitions: p,
                even_consumer_counts: Vec::new(),
            });
            if nearby.len() == 5 {
                break;
            }
        }
    }
    for n in &mut nearby {
        n.even_consumer_counts = divisors(n.partitions);
    }

    let rf = u64::from(input.replication_factor.max(1));
    let open_files = u64::from(with_headroom) * rf * 3;
    let producer_batch_bytes = u64::from(with_headroom) * input.batch_size;
    let mut warnings = Vec::new();
    if producer_batch_bytes > 32 << 20 {
        warnings.push(format!(
            "one {}-byte batch per partition needs {:.1} MiB of producer memory, above the 32 MiB default buffer.memory: producers will block or batch poorly",
            input.batch_size,
            producer_batch_bytes as f64 / f64::from(1 << 20)
        ));
    }
    if with_headroom > 1000 {
        warnings.push(format!(
            "{with_headroom} partitions x {rf} replicas = {} partition replicas: each is a directory with open segment and index files ({open_files} files for the active segments alone), and each needs a leader election when its broker fails, which lengthens recovery",
            u64::from(with_headroom) * rf
        ));
    }
    if with_headroom > PARTITIONS_PER_OPERATION {
        warnings.push(format!(
            "a KRaft controller makes at most {PARTITIONS_PER_OPERATION} partitions in one operation: create the topic with fewer and add the rest in steps (kafka-topics.sh --alter --partitions), each step moving keys as a resize does"
        ));
    }
    if f64::from(with_headroom) > 4.0 * f64::from(required) {
        warnings.push("headroom more than quadruples the requirement".into());
    }
    for (rate, what) in [
        (input.produce_mbps, "produce"),
        (input.consume_mbps, "consume"),
    ] {
        if rate == 0.0 {
            warnings.push(format!(
                "the {what} rate is 0, so the plan is sized by the other side alone; give the real {what} rate if the topic has one"
            ));
        }
    }
    Ok(Plan {
        required,
        with_headroom,
        binding,
        produce_partitions: produce,
        consume_partitions: consume,
        headroom: input.headroom,
        max_consumers: with_headroom,
        nearby,
        open_files,
        producer_batch_bytes,
        warnings,
    })
}

/// A plan held against measured keys with their weights ([`weigh`]): a
/// partition takes the records of its keys, not `1 / P` of them, so the
/// hottest partition must fit what one partition can produce and consume.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Weighed {
    /// The partitioner that placed the keys.
    pub partitioner: Partitioner,
    /// How many keys were weighed.
    pub keys: usize,
    /// Their records, summed.
    pub records: u64,
    /// The heaviest key.
    #[serde(serialize_with = "crate::ser::key_text")]
    pub heaviest_key: Vec<u8>,
    /// Its share of the records.
    pub heaviest_key_share: f64,
    /// What it puts on its one partition, produced and consumed (MB/s).
    pub heaviest_key_produce_mbps: f64,
    /// See `heaviest_key_produce_mbps`.
    pub heaviest_key_consume_mbps: f64,
    /// Whether the heaviest key alone needs more than one partition can
    /// take (with the headroom): then no partition count fits.
    pub key_too_hot: bool,
    /// The smallest count from the plan's `with_headroom` up to `searched`
    /// whose hottest partition fits; `None` when none does.
    pub required: Option<u32>,
    /// The largest count tried.
    #[serde(rename = "searched_to")]
    pub searched: u32,
    /// The hottest partition's share of the records at the plan's count
    /// and at each of its nearby counts, with whether it fits.
    pub nearby: Vec<WeighedCount>,
}

/// One partition count held against the keys ([`Weighed::nearby`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WeighedCount {
    /// The partition count.
    pub partitions: u32,
    /// Its hottest partition's share of the records.
    pub hottest_partition_share: f64,
    /// Whether that partition fits what one partition takes.
    pub fits: bool,
}

/// Placements [`weigh`] computes at most (keys x counts tried).
pub const MAX_WEIGH_PLACEMENTS: u64 = 50_000_000;

/// Holds `plan` (made from `input`) against `keys` with their weights,
/// placed by `p`. A count fits when its hottest partition, with the plan's
/// headroom, takes no more than one partition produces and one consumer
/// processes: `share x TP x (1 + h) <= tp` and `share x TC x (1 + h) <= tc`.
/// Uniform keys (share `1 / P`) give back the plan's own count.
pub fn weigh(
    input: &PlanInput,
    plan: &Plan,
    p: Partitioner,
    keys: &[(&[u8], u64)],
) -> Result<Weighed, Error> {
    let total: u64 = keys.iter().fold(0u64, |a, (_, w)| a.saturating_add(*w));
    if total == 0 {
        return Err(Error::Invalid {
            what: "counts".into(),
            reason: "every count is 0".into(),
        });
    }
    let grow = 1.0 + input.headroom;
    let fits = |share: f64| {
        share * input.produce_mbps * grow <= input.partition_produce_mbps * (1.0 + 1e-9)
            && share * input.consume_mbps * grow <= input.partition_consume_mbps * (1.0 + 1e-9)
    };
    let share_at = |n: u32| -> Result<f64, Error> {
        Ok(hottest_load(p, PartitionCount::new(n)?, keys) as f64 / total as f64)
    };
    let (key, w) = keys
        .iter()
        .max_by_key(|(_, w)| *w)
        .map(|(k, w)| (k.to_vec(), *w))
        .unwrap_or_default();
    let share = w as f64 / total as f64;
    let key_too_hot = !fits(share);
    let mut nearby = Vec::new();
    for n in plan.nearby.iter().map(|n| n.partitions) {
        let s = share_at(n)?;
        nearby.push(WeighedCount {
            partitions: n,
            hottest_partition_share: s,
            fits: fits(s),
        });
    }
    let from = plan.with_headroom;
    let budget = (MAX_WEIGH_PLACEMENTS / (keys.len() as u64).max(1)).max(1);
    let searched = u64::from(from)
        .saturating_mul(4)
        .min(u64::from(from) + budget)
        .min(u64::from(crate::MAX_PARTITIONS)) as u32;
    let mut required = None;
    if !key_too_hot {
        for n in from..=searched {
            if fits(share_at(n)?) {
                required = Some(n);
                break;
            }
        }
    }
    Ok(Weighed {
        partitioner: p,
        keys: keys.len(),
        records: total,
        heaviest_key: key,
        heaviest_key_share: share,
        heaviest_key_produce_mbps: share * input.produce_mbps,
        heaviest_key_consume_mbps: share * input.consume_mbps,
        key_too_hot,
        required,
        searched,
        nearby,
    })
}

/// The load of the hottest partition of `n` when `keys` are placed by `p`.
/// A plan may reach millions of partitions for a few keys: past a table of
/// one counter per partition for each key, the placed keys are sorted
/// instead, so memory follows the keys, not the count.
fn hottest_load(p: Partitioner, n: PartitionCount, keys: &[(&[u8], u64)]) -> u64 {
    if u64::from(n.get()) <= 4 * keys.len() as u64 + 1024 {
        let (loads, _) = crate::traffic::weighted_loads(p, n, keys);
        return loads.iter().copied().max().unwrap_or(0);
    }
    let mut placed: Vec<(u32, u64)> = keys
        .iter()
        .filter_map(|(k, w)| p.place(Some(k), n).partition().map(|q| (q, *w)))
        .collect();
    placed.sort_unstable_by_key(|&(q, _)| q);
    placed
        .chunk_by(|a, b| a.0 == b.0)
        .map(|run| run.iter().fold(0u64, |a, (_, w)| a.saturating_add(*w)))
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(tp: f64, pp: f64, tc: f64, pc: f64, h: f64) -> PlanInput {
        PlanInput {
            produce_mbps: tp,
            partition_produce_mbps: pp,
            consume_mbps: tc,
            partition_consume_mbps: pc,
            headroom: h,
            ..Default::default()
        }
    }

    #[test]
    fn seed_example() {
        let p = plan(&input(50.0, 10.0, 50.0, 2.5, 0.2)).unwrap();
        assert_eq!(
            (p.required, p.with_headroom, p.binding),
            (20, 24, Binding::Consume)
        );
        assert_eq!(p.produce_partitions, 5.0);
        let p = plan(&input(50.0, 10.0, 50.0, 2.5, 0.3)).unwrap();
        assert_eq!(p.with_headroom, 26);
        assert_eq!(p.nearby[0].partitions, 26);
        assert!(p.nearby.iter().any(|n| n.partitions == 36));
    }

    #[test]
    fn produce_can_bind() {
        let p = plan(&input(100.0, 10.0, 10.0, 5.0, 0.0)).unwrap();
        assert_eq!((p.required, p.binding), (10, Binding::Produce));
        assert_eq!(
            plan(&input(1.0, 10.0, 1.0, 10.0, 0.25))
                .unwrap()
                .with_headroom,
            2
        );
    }

    #[test]
    fn bad_inputs() {
        assert!(plan(&input(-1.0, 10.0, 50.0, 2.5, 0.2)).is_err());
        assert!(plan(&input(50.0, 0.0, 50.0, 2.5, 0.2)).is_err());
        assert!(plan(&input(50.0, 10.0, 50.0, f64::NAN, 0.2)).is_err());
        assert!(plan(&input(0.0, 10.0, 0.0, 2.5, 0.2)).is_err());
        assert!(plan(&input(50.0, 10.0, 50.0, 2.5, -0.1)).is_err());
        assert!(plan(&input(1e12, 1e-3, 1.0, 1.0, 0.2)).is_err());
    }

    #[test]
    fn warns_about_huge_counts() {
        let p = plan(&input(5000.0, 1.0, 10.0, 1.0, 0.2)).unwrap();
        assert!(p.warnings.iter().any(|w| w.contains("buffer.memory")));
        assert!(p.warnings.iter().any(|w| w.contains("leader election")));
        let zero = plan(&PlanInput {
            produce_mbps: 0.0,
            partition_produce_mbps: 10.0,
            consume_mbps: 50.0,
            partition_consume_mbps: 2.0,
            ..Default::default()
        })
        .unwrap();
        assert!(zero
            .warnings
            .iter()
            .any(|w| w.contains("produce rate is 0")));
    }

    #[test]
    fn counts_past_a_topic_are_an_error_with_their_numbers() {
        // 2147483647 x 11 saturated to 4294967295 when cast to a u32.
        let e = plan(&input(2147483647.0, 1.0, 1.0, 1.0, 10.0))
            .unwrap_err()
            .to_string();
        assert!(e.contains("2147483647 partitions"), "{e}");
        assert!(e.contains("23622320117 with 1000% headroom"), "{e}");
        assert!(e.contains("int32"), "{e}");
        // The largest count a topic can have is still a plan.
        let p = plan(&input(2147483647.0, 1.0, 1.0, 1.0, 0.0)).unwrap();
        assert_eq!(
            (p.required, p.with_headroom),
            (i32::MAX as u32, i32::MAX as u32)
        );
        assert_eq!(p.nearby[0].partitions, i32::MAX as u32);
        assert!(p.nearby.iter().all(|n| n.partitions <= i32::MAX as u32));
        assert!(p
            .warnings
            .iter()
            .any(|w| w.contains("10000 partitions in one operation")));
        assert!(plan(&PlanInput {
            replication_factor: 40_000,
            ..input(1.0, 1.0, 1.0, 1.0, 0.2)
        })
        .is_err());
        assert!(plan(&PlanInput {
            batch_size: u64::MAX,
            ..input(1.0, 1.0, 1.0, 1.0, 0.2)
        })
        .is_err());
    }

    #[test]
    fn the_divisor_sieve_agrees_with_trial_division() {
        for (lo, hi) in [
            (1, 400),
            (720, 1500),
            (i32::MAX as u32 - 300, i32::MAX as u32),
        ] {
            let counts = divisor_counts(lo, hi);
            for (n, c) in (lo..=hi).zip(counts) {
                assert_eq!(c as usize, divisors(n).len(), "{n}");
            }
        }
        assert_eq!(divisors(36), vec![1, 2, 3, 4, 6, 9, 12, 18, 36]);
    }

    #[test]
    fn a_million_partitions_come_in_milliseconds() {
        for tp in [1e6, 1e7, 1.7e9] {
            let t = std::time::Instant::now();
            let p = plan(&input(tp, 1.0, 1.0, 1.0, 0.2)).unwrap();
            assert!(t.elapsed().as_secs_f64() < 1.0, "{tp}: {:?}", t.elapsed());
            assert!(p.with_headroom >= p.required);
            for n in &p.nearby {
                assert_eq!(*n.even_consumer_counts.last().unwrap(), n.partitions);
                assert!(n.even_consumer_counts.iter().all(|d| n.partitions % d == 0));
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// Any rates the flags take: an answer within a second, a count a
        /// topic can have, or an error; never a saturated or wrapped count.
        #[test]
        fn any_rates_answer_fast_and_never_saturate(
            tp in proptest::prelude::prop_oneof![0.0..1e3f64, 0.0..1e12f64, proptest::num::f64::POSITIVE],
            pp in proptest::prelude::prop_oneof![1e-3..1e3f64, proptest::num::f64::POSITIVE],
            tc in proptest::prelude::prop_oneof![0.0..1e3f64, 0.0..1e12f64, proptest::num::f64::POSITIVE],
            pc in proptest::prelude::prop_oneof![1e-3..1e3f64, proptest::num::f64::POSITIVE],
            h in 0.0..=10.0f64,
        ) {
            let t = std::time::Instant::now();
            let r = plan(&input(tp, pp, tc, pc, h));
            proptest::prop_assert!(t.elapsed().as_secs_f64() < 1.0, "{:?}", t.elapsed());
            if let Ok(p) = r {
                proptest::prop_assert!(p.required >= 1 && p.required <= p.with_headroom);
                proptest::prop_assert!(p.with_headroom <= crate::MAX_PARTITIONS);
                proptest::prop_assert!(f64::from(p.with_headroom) >= (tp / pp).max(tc / pc) - 1e-6 * (tp / pp).max(tc / pc));
                proptest::prop_assert!(p.nearby.iter().all(|n| n.partitions >= p.with_headroom && n.partitions <= crate::MAX_PARTITIONS));
            }
        }
    }

    #[test]
    fn weighing_a_huge_plan_holds_the_keys_not_the_count() {
        let java: Partitioner = "java".parse().unwrap();
        let input = input(1e9, 1.0, 1.0, 1.0, 0.2);
        let p = plan(&input).unwrap();
        let names: Vec<String> = (0..1000).map(|i| format!("k{i}")).collect();
        let keys: Vec<(&[u8], u64)> = names.iter().map(|k| (k.as_bytes(), 1)).collect();
        // Each key is 1e6 MB/s: too hot for any count, but the nearby
        // counts (over a billion partitions) are weighed in the keys' memory.
        let w = weigh(&input, &p, java, &keys).unwrap();
        assert!(w.key_too_hot);
        assert_eq!(w.nearby.len(), p.nearby.len());
        assert!(w
            .nearby
            .iter()
            .all(|n| (n.hottest_partition_share - 0.001).abs() < 1e-12));
        let n = PartitionCount::new(6).unwrap();
        let (loads, _) = crate::traffic::weighted_loads(java, n, &keys);
        let dense = loads.into_iter().max().unwrap();
        let big = PartitionCount::new(1 << 30).unwrap();
        assert_eq!(hottest_load(java, n, &keys), dense);
        assert_eq!(hottest_load(java, big, &keys), 1);
    }

    #[test]
    fn weights_raise_the_count_or_say_none_fits() {
        let java: Partitioner = "java".parse().unwrap();
        let input = input(50.0, 10.0, 50.0, 2.5, 0.2);
        let p = plan(&input).unwrap();
        // Many keys of one weight: near uniform, the plan's count or a little more.
        let names: Vec<String> = (0..20_000).map(|i| format!("user-{i}")).collect();
        let even: Vec<(&[u8], u64)> = names.iter().map(|k| (k.as_bytes(), 1)).collect();
        let w = weigh(&input, &p, java, &even).unwrap();
        assert!(!w.key_too_hot);
        let r = w.required.unwrap();
        assert!(r >= p.with_headroom && r < p.with_headroom * 2, "{r}");
        // One key with 45% of the records: 22.5 MB/s into one consumer that
        // processes 2.5 MB/s, whatever the count.
        let mut hot = even.clone();
        hot.push((b"BBCA", 16_364));
        let w = weigh(&input, &p, java, &hot).unwrap();
        assert!((w.heaviest_key_share - 16_364.0 / 36_364.0).abs() < 1e-12);
        assert_eq!(w.heaviest_key, b"BBCA".to_vec());
        assert!(w.key_too_hot);
        assert_eq!(w.required, None);
        assert!(w
            .nearby
            .iter()
            .all(|n| n.hottest_partition_share >= w.heaviest_key_share && !n.fits));
    }
}
