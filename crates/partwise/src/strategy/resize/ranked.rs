//! `partwise resize --suggest`'s report: the partition counts worth
//! resizing to ([`super::suggest`], ranked by their divisors), and with
//! measured keys the same counts ranked by the load they give the hottest
//! partition or the busiest consumer ([`super::weigh`]), each with what a
//! resize from the current count moves.

use super::{divisors, expected_moved_fraction, highly_composite, not_dividing, suggest, weigh};
use crate::assign::Assignor;
use crate::count::PartitionCount;
use crate::partitioner::Partitioner;
use crate::Error;
use serde::Serialize;

/// Key placements the ranking makes at most: each key is placed three
/// times per count (its load, and before and after for its move).
pub const MAX_RANK_PLACEMENTS: u64 = 100_000_000;

/// What [`suggest_report`] is asked.
#[derive(Clone, Debug)]
pub struct SuggestInput<'a> {
    /// The producers' partitioner.
    pub partitioner: Partitioner,
    /// The count the user has in mind.
    pub target: PartitionCount,
    /// Consumer counts that must get equal shares.
    pub consumers: &'a [PartitionCount],
    /// The topic's current count, when known.
    pub from: Option<PartitionCount>,
    /// Suggestions at most (without weights).
    pub limit: usize,
    /// Measured keys to rank by.
    pub weights: Option<SuggestWeights<'a>>,
}

/// Measured keys with their weights, and the group that reads the topic.
#[derive(Clone, Debug)]
pub struct SuggestWeights<'a> {
    /// Each key's bytes and its records.
    pub keys: &'a [(&'a [u8], u64)],
    /// All their records, as the file adds them up.
    pub records: u64,
    /// The assignor of the group that reads the topic.
    pub assignor: Assignor,
    /// Its sizes to weigh the busiest member of (none: the hottest partition).
    pub groups: Vec<u32>,
}

/// How the suggestions are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RankedBy {
    /// More divisors first: equal shares for more group sizes.
    Divisors,
    /// The hottest partition's share of the records.
    HottestPartition,
    /// What the busiest consumer carries against an even share.
    BusiestConsumer,
}

/// One suggested count.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SuggestionRow {
    /// The count.
    pub partitions: u32,
    /// Whether it is the topic's current count.
    pub current: bool,
    /// The consumer counts that get equal shares of it.
    pub divisors: Vec<u32>,
    /// Whether it has more divisors than every smaller count.
    pub highly_composite: bool,
    /// The share of keys a resize from the current count moves, in theory.
    pub expected_moved_fraction: Option<f64>,
    /// Whether every consumer count given divides it.
    pub divides_evenly: bool,
    /// Measured keys a resize from the current count moves.
    pub keys_moved: Option<u64>,
    /// Their records.
    pub records_moved: Option<u64>,
    /// Those records' share of all.
    pub records_moved_share: Option<f64>,
    /// The hottest partition's share of the records (with weights).
    pub hottest_partition_share: Option<f64>,
    /// For each group size, its busiest member's share (with weights).
    pub busiest_consumer: Option<Vec<BusiestShare>>,
    /// Measured keys (with weights and a current count): for "moved of".
    #[serde(skip)]
    pub keys: Option<u64>,
}

/// The busiest member of one group size.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BusiestShare {
    /// The group size.
    pub consumers: u32,
    /// Its busiest member's share of the records.
    pub share: f64,
}

/// The target, when no suggestion is it because a consumer count does
/// not divide it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LeftOut {
    /// The target.
    pub partitions: u32,
    /// The consumer counts that do not divide it.
    pub not_divided_by: Vec<u32>,
}

/// `resize --suggest`'s report (its JSON: the fields in this order).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SuggestReport {
    /// The count the user has in mind.
    pub target: u32,
    /// Consumer counts that must get equal shares.
    pub consumers: Vec<u32>,
    /// The current count.
    pub from: Option<u32>,
    /// How the suggestions are ordered.
    pub ranked_by: RankedBy,
    /// The assignor weighed (with weights).
    pub assignor: Option<Assignor>,
    /// Keys weighed.
    pub weighted_keys: Option<usize>,
    /// Their records.
    pub records: Option<u64>,
    /// The counts, best first.
    pub suggestions: Vec<SuggestionRow>,
    /// The target, when the consumer counts keep it out (without weights).
    pub target_left_out: Option<LeftOut>,
    /// The group sizes weighed.
    #[serde(skip)]
    pub groups: Vec<u32>,
    /// Counts shown though a consumer count does not divide them.
    #[serde(skip)]
    pub uneven: Vec<u32>,
}

/// The suggestions for `input`: by divisors, or with weights by load.
pub fn suggest_report(input: &SuggestInput<'_>) -> Result<SuggestReport, Error> {
    let SuggestInput {
        partitioner,
        target,
        consumers,
        from,
        limit,
        ..
    } = *input;
    let list = suggest(target, consumers, limit.max(1))?;
    let share = |x: u64, records: u64| x as f64 / records.max(1) as f64;
    let expected = |n: u32| -> Option<f64> {
        let from = from?;
        expected_moved_fraction(partitioner, from, PartitionCount::new(n).ok()?).map(|f| f.value())
    };
    let current = |n: u32| from.is_some_and(|f| f.get() == n);
    let not_divided_by = not_dividing(target, consumers);
    let mut report = SuggestReport {
        target: target.get(),
        consumers: consumers.iter().map(|c| c.get()).collect(),
        from: from.map(PartitionCount::get),
        ranked_by: RankedBy::Divisors,
        assignor: None,
        weighted_keys: None,
        records: None,
        suggestions: Vec::new(),
        target_left_out: None,
        groups: Vec::new(),
        uneven: Vec::new(),
    };
    let Some(w) = &input.weights else {
        if !list.iter().any(|x| x.partitions == target.get()) && !not_divided_by.is_empty() {
            report.target_left_out = Some(LeftOut {
                partitions: target.get(),
                not_divided_by,
            });
        }
        report.suggestions = list
            .into_iter()
            .map(|s| SuggestionRow {
                current: current(s.partitions),
                expected_moved_fraction: expected(s.partitions),
                partitions: s.partitions,
                divisors: s.divisors,
                highly_composite: s.highly_composite,
                divides_evenly: true,
                keys_moved: None,
                records_moved: None,
                records_moved_share: None,
                hottest_partition_share: None,
                busiest_consumer: None,
                keys: None,
            })
            .collect();
        return Ok(report);
    };
    let mut counts: Vec<(u32, bool)> = list.iter().map(|s| (s.partitions, true)).collect();
    // The target and the current count are judged too: even partition
    // shares are not even loads, so the weights may favour either.
    for c in [Some(target), from].into_iter().flatten() {
        if !counts.iter().any(|x| x.0 == c.get()) {
            counts.push((c.get(), not_dividing(c, consumers).is_empty()));
        }
    }
    let place = (w.keys.len() as u64).saturating_mul(counts.len() as u64 * 3);
    if place > MAX_RANK_PLACEMENTS {
        return Err(Error::Invalid {
            what: "counts".into(),
            reason: format!(
                "{} keys over {} counts: the ranking places each key three times per count, at most {MAX_RANK_PLACEMENTS} placements (ask for fewer suggestions)",
                w.keys.len(),
                counts.len()
            ),
        });
    }
    let judged = weigh(partitioner, w.keys, from, &counts, w.assignor, &w.groups)?;
    report.ranked_by = if w.groups.is_empty() {
        RankedBy::HottestPartition
    } else {
        RankedBy::BusiestConsumer
    };
    report.assignor = Some(w.assignor);
    report.weighted_keys = Some(w.keys.len());
    report.records = Some(w.records);
    report.groups = w.groups.clone();
    report.uneven = judged
        .iter()
        .filter(|c| !c.divides)
        .map(|c| c.partitions)
        .collect();
    report.suggestions = judged
        .iter()
        .map(|j| SuggestionRow {
            partitions: j.partitions,
            current: current(j.partitions),
            divisors: divisors(j.partitions),
            highly_composite: highly_composite(j.partitions),
            expected_moved_fraction: expected(j.partitions),
            divides_evenly: j.divides,
            keys_moved: j.moved.map(|m| m.keys_moved),
            records_moved: j.moved.map(|m| m.records_moved),
            records_moved_share: j.moved.and_then(|m| m.records_share()),
            hottest_partition_share: Some(share(j.hottest_partition, w.records)),
            busiest_consumer: Some(
                j.busiest_consumer
                    .iter()
                    .map(|&(m, l)| BusiestShare {
                        consumers: m,
                        share: share(l, w.records),
                    })
                    .collect(),
            ),
            keys: j.moved.map(|m| m.keys),
        })
        .collect();
    Ok(report)
}
