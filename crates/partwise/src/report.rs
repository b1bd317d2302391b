//! What a topology file comes to over sample keys, with no cluster asked:
//! the `check` report, a partition map per co-partition group, each
//! consumer group's co-location matrices and split sweep, the skew and the
//! resize impact per keyed topic, and the slots of each Redis family. One
//! call, [`topology`]; `partwise report` shows it (beside the live state,
//! with `-b` or `-c`) as a page and as JSON.

use crate::assign::{colocation_of, Assignor, Colocation};
use crate::check::{check, Report};
use crate::group::placement::{self, PlacementVerdict, Sweep, MAX_SWEEP_MEMBERS};
use crate::strategy::resize::{self, Plan};
use crate::topology::{partition_map, PartitionMap, Topology};
use crate::traffic::{self, ReportOptions, Tally};
use crate::{KeyFormat, PartitionCount, Partitioner};

/// Heavy hitters shown per topic.
const TOP: usize = 10;
/// Counters of each topic's heavy-hitter summary (as `skew`'s default).
const CAPACITY: usize = 1024;
/// Sample keys encoded at a time for a topic's tally.
const BATCH: usize = 4096;

/// What [`topology`] returns.
pub struct TopologyReport {
    /// The `check` report: findings and fixes.
    pub check: Report,
    /// One partition map per co-partition group, of the listed sample keys.
    pub maps: Vec<PartitionMap>,
    /// One entry per consumer group and co-partition group it reads.
    pub placements: Vec<Placement>,
    /// Skew of the sample keys, per topic with a keyed producer.
    pub skew: Vec<TopicSkew>,
    /// Resize impact for nearby counts, per topic with a keyed producer.
    pub resize: Vec<TopicResize>,
    /// Slots of the listed sample keys, per Redis family.
    pub redis: Vec<FamilySlots>,
}

/// `topology` over `samples`, each with its count when `weights` is given
/// (one per sample, in order): the check counts every key, the partition
/// maps and slot tables list the first `key_rows`.
pub fn topology(
    topology: &Topology,
    samples: &[&[u8]],
    weights: Option<&[u64]>,
    key_rows: usize,
) -> TopologyReport {
    let report = check(topology, samples);
    let listed = &samples[..samples.len().min(key_rows)];
    let maps = topology
        .copartition_groups
        .iter()
        .map(|g| partition_map(topology, g, listed))
        .collect();
    let placements = report
        .placements
        .iter()
        .filter_map(|v| placement_of(topology, v))
        .collect();
    let skew = if samples.is_empty() {
        Vec::new()
    } else {
        topology
            .topics
            .iter()
            .filter_map(|t| skew_of(topology, t, samples, weights))
            .collect()
    };
    let resize = topology
        .topics
        .iter()
        .filter_map(|t| resize_of(topology, t, samples, weights))
        .collect();
    let redis = topology
        .redis_families
        .iter()
        .map(|f| FamilySlots {
            name: f.name.clone(),
            patterns: f.patterns.clone(),
            rows: listed
                .iter()
                .map(|k| {
                    f.patterns
                        .iter()
                        .map(|p| crate::redis::slot::key_slot(&crate::redis::family::fill(p, k)))
                        .collect()
                })
                .collect(),
        })
        .collect();
    TopologyReport {
        check: report,
        maps,
        placements,
        skew,
        resize,
        redis,
    }
}

/// A consumer group on a co-partition group: its verdict, the co-location
/// matrix at one member count, and the split sweep for every assignor.
pub struct Placement {
    /// The verdict, as `check` gives it.
    pub verdict: PlacementVerdict,
    /// The group's subscribed topics with their partition counts (the matrix's columns).
    pub topics: Vec<(String, u32)>,
    /// Which of `topics` belong to the co-partition group.
    pub unit_topics: Vec<u32>,
    /// The co-location matrices: at the declared count (the first that
    /// splits, for a range), and when that keeps units whole, at the first
    /// count of the sweep where the declared assignor splits them.
    pub matrices: Vec<Matrix>,
    /// The member counts of the sweep.
    pub sweep_counts: Vec<u32>,
    /// One row per assignor, a cell per count of `sweep_counts` (`None`:
    /// not run, the simulation budget ran out).
    pub sweep: Vec<Sweep>,
}

/// One co-location matrix: who owns each partition index of each topic.
pub struct Matrix {
    /// The member ids.
    pub members: Vec<String>,
    /// Whether this count is one the file declares.
    pub declared: bool,
    /// The matrix, or why the assignor could not run.
    pub colocation: Result<Colocation, String>,
}

/// The skew of the sample keys over one topic.
pub struct TopicSkew {
    /// The topic.
    pub topic: String,
    /// Its first keyed producer's partitioner.
    pub partitioner: Partitioner,
    /// Its partition count.
    pub partitions: PartitionCount,
    /// The consumer group whose shares are shown (the first that subscribes).
    pub consumer_group: Option<String>,
    /// That group's assignor (`java:range` when none, unused then).
    pub assignor: Assignor,
    /// The tally of the sample keys.
    pub tally: Tally,
    /// Its report.
    pub report: traffic::Report,
    /// Whether the tally is of records (`--counts`) or of keys, each
    /// weighing one: then no partition is hot, the load being unknown.
    pub weighted: bool,
}

/// What nearby partition counts would do to one topic.
pub struct TopicResize {
    /// The topic.
    pub topic: String,
    /// Its first keyed producer's partitioner.
    pub partitioner: Partitioner,
    /// Its partition count.
    pub from: u32,
    /// One plan per nearby count: the count, the plan, and how many sample keys move.
    pub to: Vec<(u32, Plan, usize)>,
}

/// The slot of each sample key's family members.
pub struct FamilySlots {
    /// The family.
    pub name: String,
    /// Its patterns (the columns).
    pub patterns: Vec<String>,
    /// One row per listed sample key (the first `key_rows`): the slot
    /// of each pattern's key.
    pub rows: Vec<Vec<u16>>,
}

fn placement_of(t: &Topology, v: &PlacementVerdict) -> Option<Placement> {
    let cg = t
        .consumer_groups
        .iter()
        .find(|c| c.name == v.consumer_group)?;
    let g = t
        .copartition_groups
        .iter()
        .find(|g| g.name == v.copartition)?;
    // The first count that splits shows the split; otherwise the first declared.
    let at = v
        .counts
        .iter()
        .find(|c| !c.ok())
        .or(v.counts.first())
        .map_or_else(|| placement::declared_counts(&cg.members)[0], |c| c.members);
    let members = placement::members_at(cg, at);
    let group = placement::group_of(t, cg, &members);
    let (unit_topics, indices) = placement::unit_topics(&group, g);
    let matrix = |members: Vec<String>, declared: bool| {
        let group = placement::group_of(t, cg, &members);
        let colocation = v
            .assignor
            .assign(&group)
            .map(|a| colocation_of(&group, &a, &unit_topics))
            .map_err(|e| e.to_string());
        Matrix {
            members,
            declared,
            colocation,
        }
    };
    // The check's sweep, run once: the report shows its first counts (up to
    // the indices plus two) and the declared ones.
    let shown = indices.saturating_add(2).clamp(1, MAX_SWEEP_MEMBERS);
    let declared = placement::declared_counts(&cg.members);
    let keep: Vec<usize> = v
        .sweep_counts
        .iter()
        .enumerate()
        .filter(|(_, k)| **k <= shown || declared.binary_search(k).is_ok())
        .map(|(i, _)| i)
        .collect();
    let sweep_counts: Vec<u32> = keep.iter().map(|&i| v.sweep_counts[i]).collect();
    let sweep: Vec<Sweep> = v
        .sweep
        .iter()
        .map(|s| Sweep {
            assignor: s.assignor,
            counts: keep.iter().map(|&i| s.counts[i].clone()).collect(),
        })
        .collect();
    let mut matrices = vec![matrix(members, true)];
    if v.ok() {
        // Units whole as declared: show where the same assignor would split them.
        let mine = sweep.iter().find(|s| s.assignor == v.assignor);
        if let Some(c) = mine.and_then(|s| s.counts.iter().flatten().find(|c| c.split_count > 0)) {
            matrices.push(matrix(placement::members_at(cg, c.members), false));
        }
    }
    Some(Placement {
        verdict: v.clone(),
        topics: group
            .topics
            .iter()
            .map(|x| (x.name.clone(), x.partitions))
            .collect(),
        unit_topics,
        matrices,
        sweep_counts,
        sweep,
    })
}

/// The encoded keys of `samples` under `format`, those it can encode, each
/// with its count (`weights[i]` for `samples[i]`; 1 without counts).
fn encoded(samples: &[&[u8]], weights: Option<&[u64]>, format: KeyFormat) -> Vec<(Vec<u8>, u64)> {
    samples
        .iter()
        .enumerate()
        .filter_map(|(i, k)| {
            let w = weights.map_or(1, |w| w[i]);
            format.encode(k).ok().map(|b| (b, w))
        })
        .collect()
}

fn skew_of(
    t: &Topology,
    topic: &crate::topology::Topic,
    samples: &[&[u8]],
    weights: Option<&[u64]>,
) -> Option<TopicSkew> {
    let (p, format) = resize::producer_defaults(topic)?;
    let n = topic.partitions;
    let mut tally = Tally::new(n, CAPACITY);
    let mut lines = 0u64;
    // A batch at a time: the encoded keys of a whole file would be another
    // copy of it.
    for (at, batch) in samples.chunks(BATCH).enumerate() {
        let weights = weights.map(|w| &w[at * BATCH..]);
        let (keys, counts): (Vec<Vec<u8>>, Vec<u64>) =
            encoded(batch, weights, format).into_iter().unzip();
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        for &w in &counts {
            // The reader refused counts whose sum overflows.
            tally.weigh(w).ok()?;
        }
        tally.add(p, n, &refs, &counts);
        lines += refs.len() as u64;
    }
    if lines == 0 {
        return None;
    }
    // `add` tallies load; the lines are the reader's count, and here every key is one.
    tally.lines = lines;
    let reader = t
        .consumer_groups
        .iter()
        .find(|c| c.subscriptions.contains(&topic.name))
        .and_then(|c| {
            let a: Assignor = c.assignor.parse().ok()?;
            let m = *placement::declared_counts(&c.members).first()?;
            Some((c.name.clone(), a, m))
        });
    let opts = ReportOptions {
        top: TOP,
        consumers: reader.as_ref().map(|(_, a, m)| (*a, *m)),
        // The topology declares no rates, so there is no lag to forecast.
        lag: None,
    };
    let mut report = tally.report(p, n, &opts).ok()?;
    if weights.is_none() {
        // Keys per partition are not traffic: no partition is hot from them.
        report.stats.hot_partitions.clear();
    }
    Some(TopicSkew {
        weighted: weights.is_some(),
        topic: topic.name.clone(),
        partitioner: p,
        partitions: n,
        assignor: reader.as_ref().map_or(Assignor::JavaRange, |r| r.1),
        consumer_group: reader.map(|r| r.0),
        tally,
        report,
    })
}

fn resize_of(
    t: &Topology,
    topic: &crate::topology::Topic,
    samples: &[&[u8]],
    weights: Option<&[u64]>,
) -> Option<TopicResize> {
    let (p, format) = resize::producer_defaults(topic)?;
    let from = topic.partitions;
    let n = from.get();
    // Each encodable sample with its count (1 without counts): the plan's
    // fixes are judged on them, and with counts its records moved.
    let keys = encoded(samples, weights, format);
    let measured: Vec<(&[u8], u64)> = keys.iter().map(|(k, w)| (k.as_slice(), *w)).collect();
    let mut nearby = vec![
        n.saturating_sub(1),
        n.saturating_add(1),
        n.saturating_mul(2),
    ];
    nearby.dedup();
    let to = nearby
        .into_iter()
        .filter(|&m| m != n)
        .filter_map(|m| PartitionCount::new(m).ok())
        .map(|to| {
            let plan = resize::plan_measured(
                p,
                from,
                to,
                resize::change_together(t, &topic.name),
                (!measured.is_empty()).then_some(&measured[..]),
            );
            let moved = plan.measured.map_or(0, |m| m.keys_moved as usize);
            (to.get(), plan, moved)
        })
        .collect();
    Some(TopicResize {
        topic: topic.name.clone(),
        partitioner: p,
        from: n,
        to,
    })
}
