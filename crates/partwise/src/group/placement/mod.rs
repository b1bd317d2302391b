//! Placement: whether a declared consumer group keeps the units of its
//! co-partition groups whole.
//!
//! Layout is not placement. Two topics can be co-partitioned and a join still
//! fail, because the group's assignor gives partition `p` of one topic to one
//! member and partition `p` of the other to another. This module owns that
//! check: it runs a topology's `[[consumer_group]]` assignor over its members
//! and subscriptions (the declared count, or every count of a range) and
//! reports, for each co-partition group the consumer group reads, the member
//! counts that split a partition index, with the fix: the assignors and the
//! member counts that would not split, and what to set in that client.
//!
//! ```
//! use partwise::group::placement::placements;
//! use partwise::topology::Topology;
//!
//! let t = Topology::parse(r#"
//! [[topic]]
//! name = "market-updates"
//! partitions = 6
//! [[topic]]
//! name = "notifications"
//! partitions = 6
//! [[copartition]]
//! name = "ticker"
//! topics = ["market-updates", "notifications"]
//! [[consumer_group]]
//! name = "joiner"
//! assignor = "kafkajs:roundrobin"
//! members = 4
//! subscriptions = ["market-updates", "notifications"]
//! "#).unwrap();
//! let v = &placements(&t)[0];
//! assert_eq!(v.splitting_counts(), vec![4]);
//! let fix = v.fix.as_ref().unwrap();
//! assert!(fix.assignors.iter().any(|a| a.spec() == "copartitioned"));
//! assert!(fix.member_counts.contains(&3));
//! ```

mod fixes;
mod json;
#[cfg(test)]
pub(crate) use fixes::fix_of;
pub use fixes::units_fix;
use fixes::{fix, realign_fix};

use crate::assign::order::java_cmp;
use crate::assign::{colocation_of, member_names, Assignor, Group, Member, Topic};
use crate::strategy::resize::joined::{realign, realign_counts, Procedure, Realign};
use crate::topology::{ConsumerGroup, CopartitionGroup, Members, Topology};

/// The largest member count the fix searches: beyond the largest partition
/// count, more members only idle.
pub const MAX_FIX_MEMBERS: u32 = 64;

/// The member counts the report's sweep shows at least (`1..=N`, N the
/// partition indices plus two, at most this): past a couple dozen members
/// the pattern only repeats.
pub const MAX_SWEEP_MEMBERS: u32 = 24;

/// The simulation work of one topology file, in member-partition pairs
/// (members x partitions of each assignor run, summed over every run of
/// every consumer group, member count and assignor). Assignors whose
/// placement follows from the partition counts (range, round-robin) are
/// computed instead and cost nothing here; the others are simulated until
/// this is spent, shared fairly between the consumer groups, and a sweep
/// that it cuts short says so.
pub const MAX_SIMULATED_PAIRS: u64 = 20_000_000;

/// Split partition indices listed per member count (`split_count` has
/// them all): enough to name the first ones, and bounded however many
/// counts and partitions a file declares.
pub const MAX_LISTED_SPLIT: usize = 8;

/// One member count of a consumer group, under its assignor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CountResult {
    /// The member count.
    pub members: u32,
    /// The partition indices whose topics are not all owned by one member,
    /// ascending: the first [`MAX_LISTED_SPLIT`] of them.
    pub split: Vec<u32>,
    /// How many partition indices are split.
    pub split_count: u32,
    /// The partition indices the co-partition group has (its largest count).
    pub indices: u32,
    /// Why the assignor could not run, if it could not.
    pub error: Option<String>,
}

impl CountResult {
    /// Whether every unit stays whole at this count.
    pub fn ok(&self) -> bool {
        self.split_count == 0 && self.error.is_none()
    }

    fn of_split(members: u32, split: impl Iterator<Item = u32>, indices: u32) -> CountResult {
        let mut listed = Vec::new();
        let mut count = 0u32;
        for p in split {
            if listed.len() < MAX_LISTED_SPLIT {
                listed.push(p);
            }
            count += 1;
        }
        CountResult {
            members,
            split: listed,
            split_count: count,
            indices,
            error: None,
        }
    }
}

/// What would keep the units whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacementFix {
    /// Assignors that split no index at any of the checked member counts.
    pub assignors: Vec<Assignor>,
    /// Member counts (up to the largest partition count) at which the
    /// declared assignor splits nothing.
    pub member_counts: Vec<u32>,
    /// The change to make, in the client's own terms.
    pub advice: String,
    /// Set when the co-partitioned topics' partition counts differ: no
    /// assignor or member count keeps the join then (a key lands on
    /// different partition numbers), so the fix is one of its procedures,
    /// and `assignors` and `member_counts` are empty.
    pub realign: Option<Realign>,
}

/// One assignor's results over the sweep's member counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sweep {
    /// The assignor.
    pub assignor: Assignor,
    /// One result per member count of [`PlacementVerdict::sweep_counts`];
    /// `None` where the simulation budget ran out before that count.
    pub counts: Vec<Option<CountResult>>,
}

impl Sweep {
    /// The result at `members`, when it was run.
    pub fn at(&self, members: u32) -> Option<&CountResult> {
        self.counts.iter().flatten().find(|c| c.members == members)
    }
}

/// A sweep the simulation budget ([`MAX_SIMULATED_PAIRS`]) cut short.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepCut {
    /// The first and last declared member count.
    pub declared: (u32, u32),
    /// How many declared counts there are, and how many were checked (the
    /// smallest ones) under the declared assignor.
    pub asked: usize,
    /// How many declared counts were checked.
    pub checked: usize,
    /// The assignors not run at every count of the sweep (the fix names an
    /// assignor only when it ran at every declared count).
    pub assignors: Vec<Assignor>,
}

impl SweepCut {
    /// Whether every declared count was checked under the declared assignor.
    pub fn verdict_complete(&self) -> bool {
        self.checked == self.asked
    }

    /// The note, in words: what was covered and why not more.
    pub fn note(&self) -> String {
        let range = |a: u32, b: u32| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}..{b}")
            }
        };
        let mut s = format!(
            "the simulation budget ({MAX_SIMULATED_PAIRS} member-partition pairs per file, shared by its consumer groups) ran out: "
        );
        if self.verdict_complete() {
            s.push_str(&format!(
                "every declared member count ({}) was checked",
                range(self.declared.0, self.declared.1)
            ));
        } else {
            s.push_str(&format!(
                "{} of the {} declared member counts ({}) were checked, the smallest first; the others were not",
                self.checked,
                self.asked,
                range(self.declared.0, self.declared.1)
            ));
        }
        if !self.assignors.is_empty() {
            let specs: Vec<&str> = self.assignors.iter().map(|a| a.spec()).collect();
            s.push_str(&format!(
                "; not run at every member count: {}",
                specs.join(", ")
            ));
        }
        s
    }
}

/// The placement verdict of one consumer group on one co-partition group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacementVerdict {
    /// The consumer group.
    pub consumer_group: String,
    /// Its assignor.
    pub assignor: Assignor,
    /// The co-partition group.
    pub copartition: String,
    /// The co-partition group's topics.
    pub topics: Vec<String>,
    /// Topics of the co-partition group that the consumer group does not
    /// subscribe to: their partitions are never in its members' hands.
    pub unsubscribed: Vec<String>,
    /// One result per checked member count, ascending.
    pub counts: Vec<CountResult>,
    /// The fix, when something splits.
    pub fix: Option<PlacementFix>,
    /// The member counts of the sweep: `1..=N` (N the partition indices, at
    /// least [`MAX_SWEEP_MEMBERS`] or the indices plus two, at most
    /// [`MAX_FIX_MEMBERS`]), then the declared counts past it.
    pub sweep_counts: Vec<u32>,
    /// Every assignor over `sweep_counts`: what `check` bases the fix on
    /// and `report` shows, run once.
    pub sweep: Vec<Sweep>,
    /// Set when the simulation budget cut the sweep short.
    pub cut: Option<SweepCut>,
}

impl PlacementVerdict {
    /// Whether every declared count was checked and keeps every unit whole.
    pub fn ok(&self) -> bool {
        self.unsubscribed.is_empty()
            && self.realign().is_none()
            && self.counts.iter().all(CountResult::ok)
            && self.cut.as_ref().is_none_or(SweepCut::verdict_complete)
    }

    /// The member counts that split some index.
    pub fn splitting_counts(&self) -> Vec<u32> {
        self.counts
            .iter()
            .filter(|c| !c.ok())
            .map(|c| c.members)
            .collect()
    }

    /// The procedures that make the co-partitioned topics' counts equal,
    /// when they differ.
    pub fn realign(&self) -> Option<&Realign> {
        self.fix.as_ref().and_then(|f| f.realign.as_ref())
    }

    /// A stable identifier of the finding: `unsubscribed-topics`,
    /// `counts-differ` (the co-partitioned topics' partition counts
    /// differ, so no assignor keeps the join), `units-split`, or
    /// `placement-unchecked` (nothing split at the counts checked, but the
    /// budget left declared counts unchecked).
    pub fn kind(&self) -> Option<&'static str> {
        if !self.unsubscribed.is_empty() {
            Some("unsubscribed-topics")
        } else if self.realign().is_some() {
            Some("counts-differ")
        } else if self.counts.iter().any(|c| !c.ok()) {
            Some("units-split")
        } else if !self.ok() {
            Some("placement-unchecked")
        } else {
            None
        }
    }
}

/// Simulation work left, in member-partition pairs.
struct Budget {
    left: u64,
}

impl Budget {
    fn take(&mut self, cost: u64) -> bool {
        if cost <= self.left {
            self.left -= cost;
            true
        } else {
            false
        }
    }

    /// A fair share of what is left for one of `ways` consumers; what it
    /// does not spend comes back with [`Budget::give_back`].
    fn share(&mut self, ways: usize) -> Budget {
        let part = self.left / ways.max(1) as u64;
        self.left -= part;
        Budget { left: part }
    }

    fn give_back(&mut self, b: Budget) {
        self.left += b.left;
    }
}

/// Placement verdicts of every consumer group of `t` on every co-partition
/// group it reads (subscribes to at least one of its topics), in file order,
/// within [`MAX_SIMULATED_PAIRS`].
pub fn placements(t: &Topology) -> Vec<PlacementVerdict> {
    placements_within(t, MAX_SIMULATED_PAIRS)
}

/// [`placements`] with sample keys (logical keys, as [`check`](crate::check::check)
/// takes them) and, when given, one record count per key: what a group
/// whose counts differ moves when they are made equal is counted on them.
pub fn placements_keyed(
    t: &Topology,
    samples: &[&[u8]],
    weights: Option<&[u64]>,
) -> Vec<PlacementVerdict> {
    placements_inner(t, MAX_SIMULATED_PAIRS, samples, weights)
}

/// [`placements`] with a simulation budget of `pairs` member-partition pairs.
pub fn placements_within(t: &Topology, pairs: u64) -> Vec<PlacementVerdict> {
    placements_inner(t, pairs, &[], None)
}

fn placements_inner(
    t: &Topology,
    pairs: u64,
    samples: &[&[u8]],
    weights: Option<&[u64]>,
) -> Vec<PlacementVerdict> {
    let mut todo = Vec::new();
    for cg in &t.consumer_groups {
        // Validation parsed the spec; a file built by hand may still hold junk.
        let Ok(assignor) = cg.assignor.parse::<Assignor>() else {
            continue;
        };
        for g in &t.copartition_groups {
            if g.topics.iter().any(|x| cg.subscriptions.contains(x)) {
                todo.push((cg, assignor, g));
            }
        }
    }
    let mut budget = Budget { left: pairs };
    let n = todo.len();
    todo.into_iter()
        .enumerate()
        .map(|(i, (cg, assignor, g))| {
            let mut mine = budget.share(n - i);
            let mut v = verdict(t, cg, assignor, g, &mut mine);
            // Counts that differ decide the fix whatever the assignor does
            // with partition indices; a single member holds every
            // partition, so its join holds anyway.
            let several = declared_counts(&cg.members).iter().any(|&k| k > 1);
            if v.unsubscribed.is_empty() && several {
                if let Some(r) = realign(t, g, samples, weights) {
                    v.fix = Some(realign_fix(r));
                }
            }
            budget.give_back(mine);
            v
        })
        .collect()
}

/// The member counts of a declared member list: the count of a list of
/// ids, the count, or every count of a range.
pub fn declared_counts(m: &Members) -> Vec<u32> {
    match m {
        Members::Count(n) => vec![*n],
        Members::Ids(ids) => vec![ids.len() as u32],
        Members::Range(lo, hi) => (*lo..=*hi).collect(),
    }
}

/// The member id lists to check: the declared ones, or every count of a range.
pub fn member_sets(m: &Members) -> Vec<Vec<String>> {
    match m {
        Members::Count(n) => vec![member_names(*n as usize)],
        Members::Ids(ids) => vec![ids.clone()],
        Members::Range(lo, hi) => (*lo..=*hi).map(|k| member_names(k as usize)).collect(),
    }
}

/// The member ids of `cg` at `k` members: the declared ids when the file
/// lists `k` of them, anonymous ones otherwise.
pub fn members_at(cg: &ConsumerGroup, k: u32) -> Vec<String> {
    match &cg.members {
        Members::Ids(ids) if ids.len() == k as usize => ids.clone(),
        _ => member_names(k as usize),
    }
}

/// The group the assignor simulations run for `cg` with members `ids`: its
/// subscribed topics (declared ones only) and every member subscribing to all.
pub fn group_of(t: &Topology, cg: &ConsumerGroup, ids: &[String]) -> Group {
    let members = ids
        .iter()
        .map(|id| Member::new(id.clone(), cg.subscriptions.iter().cloned()))
        .collect();
    Group::new(members, topics_of(t, cg))
}

fn topics_of(t: &Topology, cg: &ConsumerGroup) -> Vec<Topic> {
    cg.subscriptions
        .iter()
        .filter_map(|n| t.topic(n))
        .map(|x| Topic::new(x.name.clone(), x.partitions.get()))
        .collect()
}

/// The topics of `group` (indices into its topics) that belong to the
/// co-partition group `g`, and the partition indices `g` has (its largest count).
pub fn unit_topics(group: &Group, g: &CopartitionGroup) -> (Vec<u32>, u32) {
    units_of(&group.topics, g)
}

fn units_of(topics: &[Topic], g: &CopartitionGroup) -> (Vec<u32>, u32) {
    // Validation guarantees subscriptions name declared topics.
    let unit_topics: Vec<u32> = topics
        .iter()
        .enumerate()
        .filter(|(_, x)| g.topics.contains(&x.name))
        .map(|(i, _)| i as u32)
        .collect();
    let indices = unit_topics
        .iter()
        .map(|&i| topics[i as usize].partitions)
        .max()
        .unwrap_or(0);
    (unit_topics, indices)
}

/// What `assignor` splits at `members` members, computed from the partition
/// counts alone, for the assignors whose placement follows from them when
/// every member subscribes to every topic (as in a declared group): range
/// gives member `i` of the sorted members the `i`-th contiguous run of each
/// topic, round-robin deals the partitions of the topics in its order (by
/// name for Java and librdkafka, as given for KafkaJS) to the members in
/// turn. `None` for the others, which are simulated. Held to the simulation
/// by a property test.
fn predicted(
    topics: &[Topic],
    assignor: Assignor,
    members: u32,
    unit_topics: &[u32],
    indices: u32,
) -> Option<CountResult> {
    if members == 0 {
        return None;
    }
    let m = u64::from(members);
    let units: Vec<&Topic> = unit_topics.iter().map(|&t| &topics[t as usize]).collect();
    let equal = units.windows(2).all(|w| w[0].partitions == w[1].partitions);
    match assignor {
        Assignor::JavaRange | Assignor::Kip848Range | Assignor::LibrdkafkaRange => {
            if equal {
                return Some(CountResult::of_split(members, std::iter::empty(), indices));
            }
            // The position (in sorted order) of the member owning partition p
            // of a topic of n partitions.
            let owner = |n: u32, p: u32| -> u64 {
                let (quota, extra) = (u64::from(n) / m, u64::from(n) % m);
                let long = extra * (quota + 1);
                let p = u64::from(p);
                if p < long {
                    p / (quota + 1)
                } else {
                    extra + (p - long) / quota
                }
            };
            let split = (0..indices).filter(move |&p| {
                let mut it = units
                    .iter()
                    .filter(|t| p < t.partitions)
                    .map(|t| owner(t.partitions, p));
                let first = it.next();
                it.any(|o| Some(o) != first)
            });
            Some(CountResult::of_split(members, split, indices))
        }
        Assignor::JavaRoundRobin | Assignor::LibrdkafkaRoundRobin | Assignor::KafkajsRoundRobin => {
            let mut order: Vec<usize> = (0..topics.len()).collect();
            match assignor {
                Assignor::JavaRoundRobin => {
                    order.sort_by(|&a, &b| java_cmp(&topics[a].name, &topics[b].name))
                }
                Assignor::LibrdkafkaRoundRobin => {
                    order.sort_by(|&a, &b| topics[a].name.as_bytes().cmp(topics[b].name.as_bytes()))
                }
                _ => {}
            }
            // Where each topic's partition 0 falls in the deal.
            let mut offset = vec![0u64; topics.len()];
            let mut at = 0u64;
            for &t in &order {
                offset[t] = at;
                at += u64::from(topics[t].partitions);
            }
            let shift: Vec<(u32, u64)> = unit_topics
                .iter()
                .map(|&t| (topics[t as usize].partitions, offset[t as usize] % m))
                .collect();
            if equal {
                // Partition p of each unit topic goes to (offset + p) mod m:
                // every index is whole, or every index is split.
                let whole = shift.windows(2).all(|w| w[0].1 == w[1].1);
                let split = if whole { 0 } else { indices };
                return Some(CountResult {
                    members,
                    split: (0..split.min(MAX_LISTED_SPLIT as u32)).collect(),
                    split_count: split,
                    indices,
                    error: None,
                });
            }
            let split = (0..indices).filter(move |&p| {
                let mut it = shift
                    .iter()
                    .filter(|(n, _)| p < *n)
                    .map(|(_, s)| (s + u64::from(p)) % m);
                let first = it.next();
                it.any(|o| Some(o) != first)
            });
            Some(CountResult::of_split(members, split, indices))
        }
        _ => None,
    }
}

/// What a count costs against the budget: nothing when the answer follows
/// from the counts at once (units of equal counts under range or
/// round-robin), a pass over the indices when it follows from them one by
/// one, members x partitions when the assignor is simulated.
fn cost(
    topics: &[Topic],
    assignor: Assignor,
    members: u32,
    unit_topics: &[u32],
    indices: u32,
) -> u64 {
    let computed = matches!(
        assignor,
        Assignor::JavaRange
            | Assignor::Kip848Range
            | Assignor::LibrdkafkaRange
            | Assignor::JavaRoundRobin
            | Assignor::LibrdkafkaRoundRobin
            | Assignor::KafkajsRoundRobin
    );
    let mut counts = unit_topics.iter().map(|&t| topics[t as usize].partitions);
    let first = counts.next();
    if computed && counts.all(|n| Some(n) == first) {
        0
    } else if computed {
        u64::from(indices) * unit_topics.len() as u64
    } else {
        let partitions: u64 = topics.iter().map(|x| u64::from(x.partitions)).sum();
        let once = partitions.max(1).saturating_mul(u64::from(members.max(1)));
        // One whose real code follows Go's map order is simulated several times.
        if assignor.deterministic() {
            once
        } else {
            once.saturating_mul(crate::assign::SIMULATED_RUNS as u64)
        }
    }
}

fn simulate(group: &Group, assignor: Assignor, unit_topics: &[u32], indices: u32) -> CountResult {
    let members = group.members.len() as u32;
    match assignor.assign(group) {
        Ok(a) => {
            let split = colocation_of(group, &a, unit_topics).split;
            CountResult::of_split(members, split.into_iter(), indices)
        }
        Err(e) => CountResult {
            members,
            split: Vec::new(),
            split_count: 0,
            indices,
            error: Some(e.to_string()),
        },
    }
}

/// One assignor at the member counts `at` (indices into `counts`), in that
/// order, until `budget` runs out: computed when the counts tell, simulated
/// otherwise. Stops at the first count it cannot afford.
#[allow(clippy::too_many_arguments)]
fn fill(
    t: &Topology,
    cg: &ConsumerGroup,
    topics: &[Topic],
    assignor: Assignor,
    counts: &[u32],
    at: &[usize],
    row: &mut [Option<CountResult>],
    unit_topics: &[u32],
    indices: u32,
    budget: &mut Budget,
) {
    for &i in at {
        if row[i].is_some() {
            continue;
        }
        let k = counts[i];
        if !budget.take(cost(topics, assignor, k, unit_topics, indices)) {
            return;
        }
        if let Some(r) = predicted(topics, assignor, k, unit_topics, indices) {
            row[i] = Some(r);
            continue;
        }
        let group = group_of(t, cg, &members_at(cg, k));
        row[i] = Some(simulate(&group, assignor, unit_topics, indices));
    }
}

fn verdict(
    t: &Topology,
    cg: &ConsumerGroup,
    assignor: Assignor,
    g: &CopartitionGroup,
    budget: &mut Budget,
) -> PlacementVerdict {
    let unsubscribed: Vec<String> = g
        .topics
        .iter()
        .filter(|x| !cg.subscriptions.contains(x))
        .cloned()
        .collect();
    let topics = topics_of(t, cg);
    let (unit_topics, indices) = units_of(&topics, g);
    let declared = declared_counts(&cg.members);
    // The counts the fix searches and the report shows, then the declared
    // ones past them.
    let upto = indices
        .clamp(1, MAX_FIX_MEMBERS)
        .max(indices.saturating_add(2).clamp(1, MAX_SWEEP_MEMBERS));
    let mut sweep_counts: Vec<u32> = (1..=upto).collect();
    for &k in &declared {
        if k > upto {
            sweep_counts.push(k);
        }
    }
    let index = |k: u32| -> usize {
        if k <= upto {
            k as usize - 1
        } else {
            upto as usize + sweep_counts[upto as usize..].partition_point(|&c| c < k)
        }
    };
    let declared_at: Vec<usize> = declared.iter().map(|&k| index(k)).collect();
    let all_at: Vec<usize> = (0..sweep_counts.len()).collect();
    let mut rows: Vec<Sweep> = assignor
        .alternatives()
        .into_iter()
        .map(|assignor| Sweep {
            assignor,
            counts: vec![None; sweep_counts.len()],
        })
        .collect();
    let me = rows
        .iter()
        .map(|r| &r.assignor)
        .position(|a| *a == assignor)
        .unwrap_or_default();
    // The verdict first (the declared assignor at the declared counts),
    // then every other assignor at the declared counts (the fix needs
    // them), then every assignor over the rest of the sweep; in each pass
    // each assignor has a fair share of what is left.
    let rows_n = rows.len();
    let mut order: Vec<usize> = vec![me];
    order.extend((0..rows_n).filter(|&r| r != me));
    for at in [&declared_at, &all_at] {
        for (n, &r) in order.iter().enumerate() {
            let mut share = budget.share(rows_n - n);
            let a = rows[r].assignor;
            fill(
                t,
                cg,
                &topics,
                a,
                &sweep_counts,
                at,
                &mut rows[r].counts,
                &unit_topics,
                indices,
                &mut share,
            );
            budget.give_back(share);
        }
    }
    let counts: Vec<CountResult> = declared_at
        .iter()
        .map_while(|&i| rows[me].counts[i].clone())
        .collect();
    let incomplete: Vec<Assignor> = rows
        .iter()
        .filter(|r| r.counts.iter().any(Option::is_none))
        .map(|r| r.assignor)
        .collect();
    let cut = (counts.len() < declared.len() || !incomplete.is_empty()).then(|| SweepCut {
        declared: (declared[0], declared[declared.len() - 1]),
        asked: declared.len(),
        checked: counts.len(),
        assignors: incomplete,
    });
    let mut v = PlacementVerdict {
        consumer_group: cg.name.clone(),
        assignor,
        copartition: g.name.clone(),
        topics: g.topics.clone(),
        unsubscribed,
        counts,
        fix: None,
        sweep_counts,
        sweep: rows,
        cut,
    };
    if !v.ok() {
        v.fix = Some(fix(cg, &v, &declared_at, indices));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topology(assignor: &str, members: &str, subs: &str) -> Topology {
        Topology::parse(&format!(
            r#"
[[topic]]
name = "a"
partitions = 6
[[topic]]
name = "b"
partitions = 6
[[topic]]
name = "c"
partitions = 4
[[copartition]]
name = "ab"
topics = ["a", "b"]
[[consumer_group]]
name = "g"
assignor = "{assignor}"
members = {members}
subscriptions = {subs}
"#
        ))
        .unwrap()
    }

    #[test]
    fn kafkajs_round_robin_splits_at_counts_that_do_not_divide_the_partitions() {
        let t = topology("kafkajs:roundrobin", "\"1..6\"", r#"["a", "b"]"#);
        let v = placements(&t);
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].splitting_counts(), vec![4, 5]);
        assert_eq!(v[0].kind(), Some("units-split"));
        let fix = v[0].fix.as_ref().unwrap();
        assert_eq!(fix.member_counts, vec![1, 2, 3, 6]);
        let specs: Vec<&str> = fix.assignors.iter().map(|a| a.spec()).collect();
        assert!(specs.contains(&"copartitioned") && specs.contains(&"java:range"));
        assert!(!specs.contains(&"kafkajs:roundrobin"));
        assert!(fix.advice.contains("custom assigner"), "{}", fix.advice);
        assert!(fix.advice.contains("1, 2, 3 or 6"), "{}", fix.advice);
    }

    #[test]
    fn range_and_copartitioned_hold_at_every_count() {
        for a in ["java:range", "copartitioned", "librdkafka:range"] {
            let t = topology(a, "\"1..9\"", r#"["a", "b"]"#);
            let v = placements(&t);
            assert!(v[0].ok(), "{a}: {:?}", v[0].splitting_counts());
            assert_eq!(v[0].counts.len(), 9);
            assert!(v[0].fix.is_none());
        }
    }

    #[test]
    fn another_subscribed_topic_can_make_range_hold_and_roundrobin_split() {
        // With c in the subscription, Java round-robin deals c's partitions
        // in between and splits a/b units even at 2 members.
        let t = topology("java:roundrobin", "[\"x\", \"y\"]", r#"["a", "b", "c"]"#);
        let v = placements(&t);
        assert_eq!(v[0].counts[0].members, 2);
        let rr_split = !v[0].ok();
        let t = topology("java:range", "[\"x\", \"y\"]", r#"["a", "b", "c"]"#);
        assert!(placements(&t)[0].ok());
        // Whatever round-robin does here, the verdict agrees with `assign`.
        let g = group_of(&t, &t.consumer_groups[0], &["x".into(), "y".into()]);
        let a = Assignor::JavaRoundRobin.assign(&g).unwrap();
        assert_eq!(colocation_of(&g, &a, &[0, 1]).split_count() > 0, rr_split);
    }

    #[test]
    fn a_topic_of_the_unit_left_out_of_the_subscription_is_named() {
        let t = topology("copartitioned", "3", r#"["a"]"#);
        let v = placements(&t);
        assert_eq!(v[0].unsubscribed, vec!["b".to_string()]);
        assert_eq!(v[0].kind(), Some("unsubscribed-topics"));
        assert!(v[0].fix.as_ref().unwrap().advice.contains("subscribe"));
    }

    #[test]
    fn a_group_that_reads_none_of_the_topics_is_not_judged() {
        let t = topology("copartitioned", "3", r#"["c"]"#);
        assert!(placements(&t).is_empty());
    }

    use proptest::prelude::*;

    proptest! {
        // The counts-only answer for range and round-robin is what running
        // the assignor gives, whatever the topics' names, order and counts.
        #[test]
        fn predicted_is_what_the_simulation_gives(
            parts in proptest::collection::vec(1u32..13, 2..5),
            names in proptest::collection::vec("[a-cA-C\u{e9}]{1,3}", 5),
            unit_mask in 1u32..16,
            members in 1u32..16,
        ) {
            let mut seen = std::collections::HashSet::new();
            let topics: Vec<Topic> = parts
                .iter()
                .enumerate()
                .map(|(i, &n)| {
                    let mut name = names[i].clone();
                    if !seen.insert(name.clone()) {
                        name = format!("{name}{i}");
                        seen.insert(name.clone());
                    }
                    Topic::new(name, n)
                })
                .collect();
            let mut unit: Vec<u32> = (0..topics.len() as u32)
                .filter(|i| unit_mask & (1 << i) != 0)
                .collect();
            if unit.len() < 2 {
                unit = vec![0, 1];
            }
            let indices = unit.iter().map(|&t| topics[t as usize].partitions).max().unwrap();
            let subs: Vec<String> = topics.iter().map(|x| x.name.clone()).collect();
            let group = Group::new(
                member_names(members as usize)
                    .into_iter()
                    .map(|id| Member::new(id, subs.iter().cloned()))
                    .collect(),
                topics.clone(),
            );
            let mut computed = 0;
            for a in Assignor::ALL {
                if let Some(p) = predicted(&topics, a, members, &unit, indices) {
                    computed += 1;
                    prop_assert_eq!(p, simulate(&group, a, &unit, indices), "{}", a.spec());
                }
            }
            prop_assert_eq!(computed, 6);
        }
    }

    fn wide(groups: usize, assignor: &str, partitions: u32, members: &str) -> Topology {
        let mut s = format!(
            "[[topic]]\nname = \"a\"\npartitions = {partitions}\n[[topic]]\nname = \"b\"\npartitions = {partitions}\n[[copartition]]\nname = \"ab\"\ntopics = [\"a\", \"b\"]\n"
        );
        for i in 0..groups {
            s.push_str(&format!(
                "[[consumer_group]]\nname = \"g{i}\"\nassignor = \"{assignor}\"\nmembers = {members}\nsubscriptions = [\"a\", \"b\"]\n"
            ));
        }
        Topology::parse(&s).unwrap()
    }

    #[test]
    fn the_budget_bounds_the_work_of_the_whole_file_and_says_what_it_covered() {
        // The co-partitioned assignor is simulated: each group gets a share, none the whole budget.
        let t = wide(4, "copartitioned", 100, "\"1..50\"");
        let budget = 200_000;
        let v = placements_within(&t, budget);
        let spent: u64 = v
            .iter()
            .flat_map(|v| &v.sweep)
            .filter(|s| {
                predicted(
                    &[Topic::new("a", 100), Topic::new("b", 100)],
                    s.assignor,
                    1,
                    &[0, 1],
                    100,
                )
                .is_none()
            })
            .flat_map(|s| s.counts.iter().flatten())
            .map(|c| 200 * u64::from(c.members))
            .sum();
        assert!(spent <= budget, "{spent}");
        for p in &v {
            let cut = p.cut.as_ref().expect("cut short");
            assert_eq!((cut.declared, cut.asked), ((1, 50), 50));
            assert!(cut.checked >= 1 && cut.checked < 50, "{cut:?}");
            assert_eq!(p.counts.len(), cut.checked);
            assert_eq!(p.counts.last().unwrap().members, cut.checked as u32);
            // Not every count checked: not a pass.
            assert!(!p.ok());
            assert_eq!(p.kind(), Some("placement-unchecked"));
            assert!(
                cut.note().contains(&format!(
                    "{} of the 50 declared member counts (1..50)",
                    cut.checked
                )),
                "{}",
                cut.note()
            );
        }
        // The groups shared it: the last got as much as the first.
        assert_eq!(v[0].counts.len(), v[3].counts.len());
    }

    #[test]
    fn range_and_round_robin_sweeps_are_whole_without_simulating() {
        // 1..1000 members on 2 x 10,000 partitions: computed, so even a
        // budget of nothing checks every declared count.
        let t = wide(2, "java:roundrobin", 10_000, "\"1..1000\"");
        let v = placements_within(&t, 0);
        for p in &v {
            assert_eq!(p.counts.len(), 1000);
            let cut = p.cut.as_ref().unwrap();
            assert!(cut.verdict_complete());
            // 10,000 divides by m exactly when round-robin keeps units whole.
            let expect: Vec<u32> = (1..=1000).filter(|m| 10_000 % m != 0).collect();
            assert_eq!(p.splitting_counts(), expect);
            assert_eq!(p.counts[2].split_count, 10_000);
            assert_eq!(p.counts[2].split.len(), MAX_LISTED_SPLIT);
            assert_eq!(p.kind(), Some("units-split"));
            let fix = p.fix.as_ref().unwrap();
            let specs: Vec<&str> = fix.assignors.iter().map(|a| a.spec()).collect();
            assert_eq!(specs, ["java:range", "kip848:range", "librdkafka:range"]);
            assert!(cut.assignors.contains(&Assignor::Copartitioned));
            assert!(
                cut.note()
                    .contains("every declared member count (1..1000) was checked"),
                "{}",
                cut.note()
            );
        }
    }

    #[test]
    fn counts_that_differ_get_the_procedures_under_every_assignor() {
        // A pair caught mid-resize: 9 vs 6, four members.
        for a in [
            "copartitioned",
            "java:range",
            "kafkajs:roundrobin",
            "java:sticky",
        ] {
            let t = Topology::parse(&format!(
                "[[topic]]\nname = \"a\"\npartitions = 9\n[[topic]]\nname = \"b\"\npartitions = 6\n[[copartition]]\nname = \"ab\"\ntopics = [\"a\", \"b\"]\n[[consumer_group]]\nname = \"g\"\nassignor = \"{a}\"\nmembers = 4\nsubscriptions = [\"a\", \"b\"]\n"
            ))
            .unwrap();
            let v = &placements(&t)[0];
            assert_eq!(v.kind(), Some("counts-differ"), "{a}");
            assert!(!v.ok());
            let fix = v.fix.as_ref().unwrap();
            assert!(
                fix.assignors.is_empty() && fix.member_counts.is_empty(),
                "{a}"
            );
            assert!(
                fix.advice.contains("no assignor keeps the join"),
                "{}",
                fix.advice
            );
            let lines = fix.lines();
            assert_eq!(lines.len(), 3, "{lines:?}");
            assert!(lines[1].starts_with("drain and resize"), "{}", lines[1]);
            assert!(
                lines[2].starts_with("new topics at 9 partitions"),
                "{}",
                lines[2]
            );
            for l in &lines {
                assert!(!l.contains("()") && !l.contains("or run"), "{l}");
            }
        }
    }

    #[test]
    fn a_single_member_holds_the_join_whatever_the_counts() {
        let t = Topology::parse(
            "[[topic]]\nname = \"a\"\npartitions = 9\n[[topic]]\nname = \"b\"\npartitions = 6\n[[copartition]]\nname = \"ab\"\ntopics = [\"a\", \"b\"]\n[[consumer_group]]\nname = \"g\"\nassignor = \"copartitioned\"\nmembers = 1\nsubscriptions = [\"a\", \"b\"]\n",
        )
        .unwrap();
        let v = &placements(&t)[0];
        assert_ne!(v.kind(), Some("counts-differ"));
        assert!(v.realign().is_none());
    }

    #[test]
    fn no_member_count_that_keeps_units_whole_is_not_an_empty_list() {
        let f = fix_of(
            Assignor::KafkajsRoundRobin,
            vec![Assignor::Copartitioned],
            vec![],
        );
        assert!(!f.advice.contains("or run"), "{}", f.advice);
        let f = fix_of(Assignor::JavaSticky, vec![], vec![]);
        assert!(
            !f.advice.contains("()") && !f.advice.contains("no number"),
            "{}",
            f.advice
        );
        let f = fix_of(Assignor::JavaSticky, vec![], vec![3]);
        assert!(f.advice.ends_with("run 3 members"), "{}", f.advice);
    }

    #[test]
    fn a_small_file_is_not_cut() {
        let t = topology("java:sticky", "\"1..9\"", r#"["a", "b"]"#);
        let v = placements(&t);
        assert!(v[0].cut.is_none());
        assert!(v[0]
            .sweep
            .iter()
            .all(|s| s.counts.iter().all(Option::is_some)));
    }
}
