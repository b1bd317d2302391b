//! Sarama 1.61.1's sticky strategies (`sarama:sticky`,
//! `sarama:cooperative-sticky`) against the real library, called through
//! its public API (`BalanceStrategy.Plan`, the eager strategy's claims
//! written by its `AssignmentData`) on the 56 groups of
//! `tests/vectors/regen/go-groups` (`run`, `-sticky`): fresh members, owned
//! claims, mixed generations, unequal subscriptions, static members; 100
//! calls each, every distinct outcome kept as the owner of each partition.
//!
//! Sarama's answer follows Go's map order at many steps, so a group has up
//! to thousands of outcomes and 100 calls see a sample: exact equality of
//! outcome sets cannot be asked. What is checked, per group and strategy,
//! against `SEEDS` simulated runs:
//!
//! 1. no side errs, and no partition has two owners;
//! 2. where the simulation finds few outcomes (at most `ENUMERABLE`, so
//!    each was met about four times or more), every outcome the library
//!    gave is one of them: the model can produce each real answer;
//! 3. stickiness and balance: for every real outcome, the vector of each
//!    member's (partition count, partitions kept of its own claims) is one
//!    the simulation gives; and every such vector the simulation gives in
//!    at least `COMMON` of its runs the library gave too;
//! 4. whole units: the library splits some co-partitioned index in some
//!    run exactly when the simulation does, and in a share of its runs
//!    within `SHARE` of the simulation's.

use super::client_vectors::cases;
use partwise::assign::{group_file, Assignment, Assignor, Group};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

const SEEDS: u64 = 400;
const ENUMERABLE: usize = 100;
/// Share of simulated runs from which a (count, kept) vector must have
/// been met by the library too.
const COMMON: f64 = 0.05;
const SHARE: f64 = 0.15;

/// `owners[t][p]`: the member index owning partition `p` of topic `t`, -1
/// for nobody, -2 for more than one member.
type Owners = Vec<Vec<i64>>;

fn owners(group: &Group, a: &Assignment) -> Owners {
    let mut out: Owners = group
        .topics
        .iter()
        .map(|t| vec![-1; t.partitions as usize])
        .collect();
    for (m, list) in a.partitions.iter().enumerate() {
        for tp in list {
            if let Some(slot) = out[tp.topic as usize].get_mut(tp.partition as usize) {
                *slot = if *slot == -1 { m as i64 } else { -2 };
            }
        }
    }
    out
}

/// Per member: (partitions it gets, how many of them it claimed).
fn signature(group: &Group, o: &Owners) -> Vec<(usize, usize)> {
    let mut sig = vec![(0, 0); group.members.len()];
    for (t, row) in o.iter().enumerate() {
        for (p, &m) in row.iter().enumerate() {
            if m >= 0 {
                let m = m as usize;
                sig[m].0 += 1;
                let claimed = group.members[m]
                    .owned
                    .iter()
                    .any(|tp| tp.topic as usize == t && tp.partition as usize == p);
                if claimed {
                    sig[m].1 += 1;
                }
            }
        }
    }
    sig
}

/// Whether some partition index is not owned by one member in every topic
/// that has it (an unowned partition counts as split).
fn splits(o: &Owners) -> bool {
    let max = o.iter().map(Vec::len).max().unwrap_or(0);
    (0..max).any(|p| {
        let having: Vec<i64> = o.iter().filter_map(|r| r.get(p).copied()).collect();
        having.len() > 1 && (having[0] < 0 || having.iter().any(|&x| x != having[0]))
    })
}

fn real_outcomes(c: &Value) -> BTreeMap<Owners, u64> {
    c["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                serde_json::from_value(o["owners"].clone()).unwrap(),
                o["runs"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn sarama_sticky_strategies_match_the_library() {
    let lines = cases("sarama_sticky_cases.jsonl");
    assert_eq!(lines.len(), 112);
    let mut bad = Vec::new();
    let mut per_spec: BTreeMap<String, usize> = BTreeMap::new();
    let mut kinds: BTreeSet<String> = BTreeSet::new();
    let (mut enumerated, mut several) = (0, 0);
    for c in &lines {
        let spec = c["assignor"].as_str().unwrap();
        let assignor: Assignor = spec.parse().unwrap();
        assert!(!assignor.deterministic(), "{spec}");
        assert_eq!(c["version"], "v1.61.1");
        assert_eq!(assignor.library_version(), Some("Sarama 1.61.1"));
        let what = format!("{} {spec} ({})", c["case"], c["kind"]);
        assert!(c["error"].is_null(), "{what}: the library erred");
        let group = group_file::parse(&c["group"].to_string()).unwrap().group;
        let real = real_outcomes(c);
        let real_runs: u64 = real.values().sum();
        let mut sim: BTreeMap<Owners, u64> = BTreeMap::new();
        for seed in 0..SEEDS {
            match assignor.assign_seeded(&group, seed) {
                Ok(a) => *sim.entry(owners(&group, &a)).or_default() += 1,
                Err(e) => {
                    bad.push(format!("{what}: {e}"));
                    break;
                }
            }
        }
        if sim.is_empty() {
            continue;
        }
        // 1. One owner per partition, on both sides.
        if real
            .keys()
            .chain(sim.keys())
            .flatten()
            .flatten()
            .any(|&m| m == -2)
        {
            bad.push(format!("{what}: a partition with two owners"));
        }
        if real.len() > 1 {
            several += 1;
        }
        // 2. Every real outcome is one the simulation gives, where it
        // gives few.
        if sim.len() <= ENUMERABLE {
            enumerated += 1;
            let missing: Vec<&Owners> = real.keys().filter(|o| !sim.contains_key(*o)).collect();
            if !missing.is_empty() {
                bad.push(format!(
                    "{what}: {} of {} real outcomes never simulated, e.g. {:?}",
                    missing.len(),
                    real.len(),
                    missing[0]
                ));
            }
        }
        // 3. Balance and stickiness per member.
        let real_sigs: BTreeSet<_> = real.keys().map(|o| signature(&group, o)).collect();
        let mut sim_sigs: BTreeMap<Vec<(usize, usize)>, u64> = BTreeMap::new();
        for (o, n) in &sim {
            *sim_sigs.entry(signature(&group, o)).or_default() += n;
        }
        for s in &real_sigs {
            if !sim_sigs.contains_key(s) {
                bad.push(format!(
                    "{what}: real (count, kept) per member {s:?} never simulated"
                ));
            }
        }
        for (s, n) in &sim_sigs {
            if *n as f64 >= COMMON * SEEDS as f64 && !real_sigs.contains(s) {
                bad.push(format!(
                    "{what}: simulated (count, kept) per member {s:?} in {n} of {SEEDS} runs, never real"
                ));
            }
        }
        // 4. Whole units.
        let real_split: u64 = real.iter().filter(|(o, _)| splits(o)).map(|(_, n)| n).sum();
        let sim_split: u64 = sim.iter().filter(|(o, _)| splits(o)).map(|(_, n)| n).sum();
        if (real_split > 0) != (sim_split > 0) {
            bad.push(format!(
                "{what}: splits a unit in {real_split} of {real_runs} real runs, {sim_split} of {SEEDS} simulated"
            ));
        }
        let share = real_split as f64 / real_runs as f64 - sim_split as f64 / SEEDS as f64;
        if share.abs() > SHARE {
            bad.push(format!(
                "{what}: splits a unit in {real_split} of {real_runs} real runs, {sim_split} of {SEEDS} simulated"
            ));
        }
        *per_spec.entry(spec.to_string()).or_default() += 1;
        kinds.insert(c["kind"].as_str().unwrap().to_string());
    }
    assert!(
        bad.is_empty(),
        "{} differences over {} lines:\n{}",
        bad.len(),
        lines.len(),
        bad.join("\n")
    );
    for a in [Assignor::SaramaSticky, Assignor::SaramaCooperativeSticky] {
        let n = per_spec.get(a.spec()).copied().unwrap_or(0);
        assert!(n >= 40, "{a}: {n} groups checked");
    }
    assert_eq!(kinds.len(), 5, "{kinds:?}");
    assert!(enumerated >= 40, "{enumerated} groups enumerated");
    assert!(several >= 40, "{several} groups with several real outcomes");
}
