//! A group simulated under one assignor, no cluster asked (`partwise
//! assign`): the assignment, which partition indices it splits, what would
//! keep them whole, the simulated leader's findings and, for an assignor
//! whose real code follows Go's map order, the outcomes of its simulated
//! runs. [`simulate`] is one group, [`sweep_row`] one member count of a
//! sweep; each returns a report that serializes as the command's JSON and
//! holds what its table needs.

use crate::assign::{
    colocation, member_names, AssignError, Assignment, Assignor, Colocation, Group, Member,
    Simulation, Tp, SIMULATED_RUNS,
};
use crate::findings::{leader_findings, LeaderFinding};
use crate::group::placement::{units_fix, PlacementFix};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

/// A partition as the JSON names it: `[topic, partition]`.
pub type TopicPartition = (String, u32);

/// What one group comes to under the assignor.
#[derive(Serialize)]
#[serde(untagged)]
pub enum Simulated {
    /// The leader assigned.
    Assigned(Box<Assigned>),
    /// The simulated leader throws, as the real one does: that is the
    /// answer, reported as a finding.
    Thrown(Thrown),
}

/// An assignment and what it does to the group's indices.
#[derive(Serialize)]
pub struct Assigned {
    /// The assignor (its spec in JSON).
    #[serde(serialize_with = "spec")]
    pub assignor: Assignor,
    /// The Kafka releases whose server assignor this is, for a KIP-848 one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kafka_versions: Option<&'static str>,
    /// The client library release modelled, where it matters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub library: Option<&'static str>,
    /// Whether the real assignor gives one answer for this input.
    pub deterministic: bool,
    /// The member that leads: the group file's `leader`, else the first.
    pub leader: String,
    /// The members in the order the assignor sorted them.
    pub members: Vec<String>,
    /// Each member's partitions, in that order.
    #[serde(serialize_with = "owners")]
    pub assignment: Vec<(String, Vec<TopicPartition>)>,
    /// Partitions a cooperative assignor withholds this round.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub withheld: Vec<TopicPartition>,
    /// The indices split between members.
    pub split_indices: Vec<u32>,
    /// How many indices are split.
    pub split_count: usize,
    /// What would keep every index whole, when some is split: the same
    /// answer `check` gives for a declared consumer group.
    pub fix: Option<PlacementFix>,
    /// The simulated leader's findings (each as a finding in JSON).
    #[serde(serialize_with = "findings")]
    pub findings: Vec<LeaderFinding>,
    /// The simulated runs, for an assignor that is not deterministic.
    #[serde(flatten)]
    pub simulation: Option<Outcomes>,
    /// The group's topics and partition counts, in its order (for tables).
    #[serde(skip)]
    pub topics: Vec<(String, u32)>,
    /// Who owns each index of each topic (for tables): indices into
    /// `group_members`.
    #[serde(skip)]
    pub colocation: Colocation,
    /// The member ids in the group's order (for tables).
    #[serde(skip)]
    pub group_members: Vec<String>,
}

/// The outcomes of the simulated runs; the assignment shown is the one that
/// splits most.
#[derive(Serialize)]
pub struct Outcomes {
    /// Runs simulated (or that gave this outcome).
    pub runs: usize,
    /// Runs that split some index.
    pub split_runs: usize,
    /// Each distinct outcome, the most frequent first.
    pub outcomes: Vec<OutcomeReport>,
}

/// One distinct outcome of the simulated runs.
#[derive(Serialize)]
pub struct OutcomeReport {
    /// Runs simulated (or that gave this outcome).
    pub runs: usize,
    /// The indices split between members.
    pub split_indices: Vec<u32>,
    /// How many indices are split.
    pub split_count: usize,
    /// Each member's partitions.
    #[serde(serialize_with = "owners")]
    pub assignment: Vec<(String, Vec<TopicPartition>)>,
}

/// A leader that throws, with the findings that say so.
#[derive(Serialize)]
pub struct Thrown {
    /// The assignor (its spec in JSON).
    #[serde(serialize_with = "spec")]
    pub assignor: Assignor,
    /// The members, in the group's order.
    pub members: Vec<String>,
    /// Always `null`: no assignment.
    pub assignment: (),
    /// What the leader raises.
    pub exception: Exception,
    /// The findings that say so.
    #[serde(serialize_with = "findings")]
    pub findings: Vec<LeaderFinding>,
}

/// The exception the real leader raises.
#[derive(Serialize)]
pub struct Exception {
    /// The exception's class, in the client's language.
    pub class: String,
    /// Its message.
    pub message: String,
}

impl Simulated {
    /// Split indices plus findings: 0 when the group keeps every index whole.
    pub fn problems(&self) -> usize {
        match self {
            Simulated::Assigned(a) => a.split_count + a.findings.len(),
            Simulated::Thrown(t) => t.findings.len().max(1),
        }
    }
}

/// `group` under `assignor`. An assignor that is not deterministic is run
/// [`SIMULATED_RUNS`] times and the outcome that splits most is shown.
pub fn simulate(assignor: Assignor, group: &Group) -> Result<Simulated, crate::Error> {
    let sim = simulation(assignor, group)?;
    let result = match &sim {
        Some(s) => Ok(s.worst(group).clone()),
        None => assignor.assign(group),
    };
    let a = match result {
        Ok(a) => a,
        Err(e) => match e.assign() {
            Some(
                err @ AssignError::LeaderThrows {
                    exception, message, ..
                },
            ) => {
                return Ok(Simulated::Thrown(Thrown {
                    assignor,
                    members: group.members.iter().map(|m| m.id.clone()).collect(),
                    assignment: (),
                    exception: Exception {
                        class: exception.to_string(),
                        message: message.to_string(),
                    },
                    findings: leader_findings(assignor, group, Err(err)),
                }))
            }
            _ => return Err(e),
        },
    };
    let findings = leader_findings(assignor, group, Ok(&a));
    let co = colocation(group, &a);
    let fix = fix(assignor, group, &co);
    let all: Vec<u32> = (0..group.topics.len() as u32).collect();
    let simulation = sim.as_ref().map(|sim| Outcomes {
        runs: sim.runs,
        split_runs: sim.split_runs(group, &all),
        outcomes: sim
            .outcomes
            .iter()
            .map(|o| {
                let co = colocation(group, &o.assignment);
                OutcomeReport {
                    runs: o.runs,
                    split_count: co.split_count(),
                    split_indices: co.split,
                    assignment: owned(group, &o.assignment),
                }
            })
            .collect(),
    });
    Ok(Simulated::Assigned(Box::new(Assigned {
        assignor,
        kafka_versions: assignor.kafka_versions(),
        library: assignor.library_version(),
        deterministic: assignor.deterministic(),
        leader: group.members[group.leader.unwrap_or(0)].id.clone(),
        members: a
            .order
            .iter()
            .map(|&m| group.members[m].id.clone())
            .collect(),
        assignment: owned(group, &a),
        withheld: a.withheld.iter().map(|tp| named(group, tp)).collect(),
        split_indices: co.split.clone(),
        split_count: co.split_count(),
        fix,
        findings,
        simulation,
        topics: group
            .topics
            .iter()
            .map(|t| (t.name.clone(), t.partitions))
            .collect(),
        colocation: co,
        group_members: group.members.iter().map(|m| m.id.clone()).collect(),
    })))
}

/// One row of a sweep: the group of `members` members.
#[derive(Serialize)]
pub struct SweepRow {
    /// The assignor (its spec in JSON).
    #[serde(serialize_with = "spec")]
    pub assignor: Assignor,
    /// How many members.
    pub members: usize,
    /// Whether the real assignor gives one answer for this input.
    pub deterministic: bool,
    /// The indices split between members.
    pub split_indices: Vec<u32>,
    /// How many indices are split.
    pub split_count: usize,
    /// Simulated runs, for an assignor that is not deterministic.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<usize>,
    /// Of those, the runs that split some index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split_runs: Option<usize>,
    /// Who owns each index (for tables).
    #[serde(skip)]
    pub colocation: Colocation,
}

/// One row of a sweep: `group` (its members named by [`member_names`])
/// under `assignor`, the outcome that splits most for an assignor that is
/// not deterministic.
pub fn sweep_row(assignor: Assignor, group: &Group) -> Result<SweepRow, crate::Error> {
    let sim = simulation(assignor, group)?;
    let a = match &sim {
        Some(s) => s.worst(group).clone(),
        None => assignor.assign(group)?,
    };
    let co = colocation(group, &a);
    let all: Vec<u32> = (0..group.topics.len() as u32).collect();
    Ok(SweepRow {
        assignor,
        members: group.members.len(),
        deterministic: assignor.deterministic(),
        split_indices: co.split.clone(),
        split_count: co.split_count(),
        runs: sim.as_ref().map(|s| s.runs),
        split_runs: sim.as_ref().map(|s| s.split_runs(group, &all)),
        colocation: co,
    })
}

/// The runs of an assignor whose real code follows Go's map order, when it
/// is one: `None` for a deterministic assignor.
fn simulation(assignor: Assignor, group: &Group) -> Result<Option<Simulation>, crate::Error> {
    if assignor.deterministic() {
        return Ok(None);
    }
    match assignor.simulate(group, SIMULATED_RUNS) {
        Ok(sim) => Ok(Some(sim)),
        // The simulated leader raises (the Python sticky executors): the
        // caller's run meets the same and reports it as a finding.
        Err(e) if matches!(e.assign(), Some(AssignError::LeaderThrows { .. })) => Ok(None),
        Err(e) => Err(e),
    }
}

/// What would keep every index whole, when `group` splits some: the fix
/// over groups of the same topics, each member subscribing to all.
fn fix(assignor: Assignor, group: &Group, co: &Colocation) -> Option<PlacementFix> {
    if co.split.is_empty() {
        return None;
    }
    let names: Vec<&str> = group.topics.iter().map(|t| t.name.as_str()).collect();
    let make = |k: u32| {
        let members = member_names(k as usize)
            .into_iter()
            .map(|id| Member::new(id, names.iter().copied()))
            .collect();
        Group::new(members, group.topics.clone())
    };
    let all: Vec<u32> = (0..group.topics.len() as u32).collect();
    let indices = group.topics.iter().map(|t| t.partitions).max().unwrap_or(0);
    Some(units_fix(
        assignor,
        std::slice::from_ref(group),
        &make,
        &all,
        indices,
    ))
}

fn named(group: &Group, tp: &Tp) -> TopicPartition {
    (group.topics[tp.topic as usize].name.clone(), tp.partition)
}

/// Each member's partitions, in the assignor's member order.
fn owned(group: &Group, a: &Assignment) -> Vec<(String, Vec<TopicPartition>)> {
    a.order
        .iter()
        .map(|&m| {
            (
                group.members[m].id.clone(),
                a.partitions[m].iter().map(|tp| named(group, tp)).collect(),
            )
        })
        .collect()
}

fn spec<S: Serializer>(a: &Assignor, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(a.spec())
}

/// Member id to its partitions, as a JSON object in member order.
fn owners<S: Serializer>(o: &[(String, Vec<TopicPartition>)], s: S) -> Result<S::Ok, S::Error> {
    let mut m = s.serialize_map(Some(o.len()))?;
    for (id, tps) in o {
        m.serialize_entry(id, tps)?;
    }
    m.end()
}

fn findings<S: Serializer>(f: &[LeaderFinding], s: S) -> Result<S::Ok, S::Error> {
    let mut seq = s.serialize_seq(Some(f.len()))?;
    for x in f {
        seq.serialize_element(&x.finding())?;
    }
    seq.end()
}
