//! What an assignment gives: the distinct outcomes of a simulated
//! assignor over its runs ([`Simulation`]) and the co-location of
//! co-partitioned topics' partition indices ([`Colocation`]).

use super::*;

/// How many runs [`Assignor::assign`] simulates of an assignor whose answer
/// follows Go's randomised map order; enough to meet every topic order of
/// up to four topics many times over.
pub const SIMULATED_RUNS: usize = 64;

/// One distinct answer of a simulated assignor and how many runs gave it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The assignment.
    pub assignment: Assignment,
    /// The runs that gave it.
    pub runs: usize,
}

/// The outcomes of [`Assignor::simulate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Simulation {
    /// Whether the real assignor gives one answer for the group's input
    /// (when `false`, `outcomes` may still hold one).
    pub deterministic: bool,
    /// Runs simulated.
    pub runs: usize,
    /// Distinct outcomes, the most frequent first.
    pub outcomes: Vec<Outcome>,
}

impl Simulation {
    /// The outcome that splits most indices over every topic of `group`
    /// (the most frequent among those): what the group can come to.
    pub fn worst(&self, group: &Group) -> &Assignment {
        let mut best = &self.outcomes[0];
        let mut most = colocation(group, &best.assignment).split_count();
        for o in &self.outcomes[1..] {
            let n = colocation(group, &o.assignment).split_count();
            if n > most {
                best = o;
                most = n;
            }
        }
        &best.assignment
    }

    /// Runs whose outcome splits some index over `topics` (indices).
    pub fn split_runs(&self, group: &Group, topics: &[u32]) -> usize {
        self.outcomes
            .iter()
            .filter(|o| colocation_of(group, &o.assignment, topics).split_count() > 0)
            .map(|o| o.runs)
            .sum()
    }
}

/// Where each partition index lives: one row per index `p` below the largest
/// partition count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Colocation {
    /// `owners[p][t]`: owner of partition `p` of topic `t`; `None` when the
    /// topic has no partition `p` or nobody owns it.
    pub owners: Vec<Vec<Option<usize>>>,
    /// The indices that are split: the topics that have the index are not all
    /// owned by one member (an unowned partition, e.g. withheld by a
    /// cooperative assignor, counts as a different owner).
    pub split: Vec<u32>,
}

impl Colocation {
    /// Number of split indices.
    pub fn split_count(&self) -> usize {
        self.split.len()
    }
}

/// The co-location analysis of `assignment` over all topics of `group`.
pub fn colocation(group: &Group, assignment: &Assignment) -> Colocation {
    let all: Vec<u32> = (0..group.topics.len() as u32).collect();
    colocation_of(group, assignment, &all)
}

/// The co-location analysis over the topics `topics` (indices) only.
pub fn colocation_of(group: &Group, assignment: &Assignment, topics: &[u32]) -> Colocation {
    let owner = assignment.owners(group);
    let max = topics
        .iter()
        .map(|&t| group.topics[t as usize].partitions)
        .max()
        .unwrap_or(0);
    let mut owners = Vec::with_capacity(max as usize);
    let mut split = Vec::new();
    for p in 0..max {
        let row: Vec<Option<usize>> = (0..group.topics.len())
            .map(|t| owner[t].get(p as usize).copied().flatten())
            .collect();
        let having: Vec<Option<usize>> = topics
            .iter()
            .filter(|&&t| p < group.topics[t as usize].partitions)
            .map(|&t| row[t as usize])
            .collect();
        let together =
            having.first().is_some_and(|f| f.is_some()) && having.iter().all(|o| *o == having[0]);
        if !together {
            split.push(p);
        }
        owners.push(row);
    }
    Colocation { owners, split }
}
