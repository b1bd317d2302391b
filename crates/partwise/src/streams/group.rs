//! A Kafka Streams group under the streams rebalance protocol
//! (`group.protocol=streams`) as its coordinator describes it
//! (StreamsGroupDescribe), judged: for each active task `x_p`, the
//! partitions it holds (partition p of each source topic of sub-topology x,
//! as far as the topic has one), and the findings: a group the coordinator
//! keeps `NOT_READY` (every member is given nothing), and a task that holds
//! partition p of one source of its sub-topology and not of another.
//!
//! The description comes in the core's terms from partwise-kafka; the
//! partition counts are the cluster's.

use crate::findings::Finding;
use serde::Serialize;
use std::collections::BTreeMap;

/// The finding of a group the coordinator keeps `NOT_READY`.
pub const NOT_READY: &str = "streams-not-ready";
/// The finding of an active task holding partition p of some of its
/// sub-topology's sources and not of the others.
pub const TASK_SPLIT: &str = "streams-task-split";
/// The finding of an active task of a sub-topology the coordinator does not
/// describe.
pub const UNKNOWN_SUBTOPOLOGY: &str = "streams-unknown-subtopology";
/// The finding of a classic-protocol Streams member whose Streams user data
/// could not be read: its process and tasks are unknown.
pub const MEMBER_UNKNOWN: &str = "streams-member-unknown";

/// A streams group as described.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StreamsGroup {
    /// The group id (the application's `application.id`).
    pub group: String,
    /// `EMPTY`, `NOT_READY`, `ASSIGNING`, `RECONCILING`, `STABLE`, `DEAD`.
    pub state: String,
    /// The group epoch.
    pub group_epoch: i32,
    /// The epoch of the target assignment.
    pub target_assignment_epoch: i32,
    /// The epoch of the topology the coordinator holds, when it holds one.
    pub topology_epoch: Option<i32>,
    /// The configured sub-topologies; `None` when the coordinator has not
    /// configured the topology (not initialized, source topics missing or
    /// not co-partitioned).
    pub subtopologies: Option<Vec<SubTopology>>,
    /// The coordinator's error message for the group, when it gave one.
    pub error_message: Option<String>,
    /// The members.
    pub members: Vec<StreamsMember>,
}

/// One sub-topology.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SubTopology {
    /// Its id: the `x` of its tasks `x_p`.
    pub id: String,
    /// The user topics it reads.
    pub source_topics: Vec<String>,
    /// The repartition topics it reads, with the partition count the
    /// topology gives them (0: not fixed by it).
    pub repartition_source_topics: Vec<(String, i32)>,
    /// The repartition topics it writes.
    pub repartition_sink_topics: Vec<String>,
    /// The changelog topics of its stores.
    pub changelog_topics: Vec<String>,
}

impl SubTopology {
    /// Every topic its tasks read: the user sources, then the repartition
    /// sources.
    pub fn sources(&self) -> impl Iterator<Item = &str> {
        self.source_topics.iter().map(String::as_str).chain(
            self.repartition_source_topics
                .iter()
                .map(|(t, _)| t.as_str()),
        )
    }
}

/// One task: `subtopology_partition`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Task {
    /// The sub-topology id.
    pub subtopology: String,
    /// The partition.
    pub partition: i32,
}

impl std::fmt::Display for Task {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}_{}", self.subtopology, self.partition)
    }
}

impl Serialize for Task {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Tasks by kind.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tasks {
    /// Active tasks.
    pub active: Vec<Task>,
    /// Standby tasks.
    pub standby: Vec<Task>,
    /// Warm-up tasks.
    pub warmup: Vec<Task>,
}

/// One member: a stream thread's consumer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StreamsMember {
    /// The member id.
    pub member_id: String,
    /// The Streams instance it belongs to (its threads share it).
    pub process_id: String,
    /// The client id (`<application.id>-<process>-StreamThread-N-consumer`).
    pub client_id: String,
    /// The host it connected from.
    pub client_host: String,
    /// The static instance id, when set.
    pub instance_id: Option<String>,
    /// The member epoch.
    pub member_epoch: i32,
    /// Its current assignment.
    pub assignment: Tasks,
    /// The coordinator's target assignment for it.
    pub target_assignment: Tasks,
}

/// An active task and the partitions it holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TaskPartitions {
    /// The task.
    pub task: Task,
    /// The member holding it.
    pub member_id: String,
    /// Partition p of each source topic that has one.
    pub holds: Vec<(String, i32)>,
    /// The source topics without a partition p (or whose count is unknown:
    /// the topic is not in the cluster).
    pub missing: Vec<String>,
}

/// The judged group; its JSON is `kafka group --format json`'s for a
/// streams group.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StreamsReport {
    /// The group as described.
    #[serde(flatten)]
    pub group: StreamsGroup,
    /// Each member's active tasks with their partitions, by member then task.
    pub tasks: Vec<TaskPartitions>,
    /// What is wrong.
    pub findings: Vec<Finding>,
}

/// Judges `group` against the cluster's partition counts (`counts`, by
/// topic) and the topics Streams co-partitions (`joins`: each set the
/// sources of one join, as named on the cluster; from the application's
/// `describe()`, [`crate::streams::Application::copartition_groups`]).
///
/// A task that holds partition p of some sources of its sub-topology and
/// not of others is normal where those sources are merged, not joined (a
/// task per partition of the largest source): it is a finding only when a
/// held and a missing source are in one of `joins`. The description does
/// not say which sources are joined, so with no `joins` the task table
/// shows what each task holds and lacks, and no finding is made of it (a
/// join's sources of different counts keep the group NOT_READY, which is).
pub fn analyze(
    group: StreamsGroup,
    counts: &BTreeMap<String, u32>,
    joins: &[Vec<String>],
) -> StreamsReport {
    let mut findings = Vec::new();
    // Apache Kafka names the state `NotReady` in StreamsGroupDescribe and
    // `NOT_READY` in its documentation and tools.
    if group
        .state
        .replace('_', "")
        .eq_ignore_ascii_case("NOTREADY")
    {
        let reason = match (&group.subtopologies, &group.error_message) {
            (_, Some(m)) if !m.trim().is_empty() => format!("the coordinator says: {m}"),
            (None, _) => "the coordinator holds no configured topology: the application's \
                          source topics are missing, or topics a join reads have different \
                          partition counts"
                .to_string(),
            (Some(subs), _) => {
                let reasons = not_ready_reasons(subs, counts);
                if reasons.is_empty() {
                    "the coordinator gives no reason, and every source topic it names exists \
                     with its sub-topology's count"
                        .to_string()
                } else {
                    reasons.join("; ")
                }
            }
        };
        findings.push(Finding::new(
            NOT_READY,
            format!(
                "streams group {} is NOT_READY ({reason}); every member is given no tasks and \
                 processes nothing",
                group.group
            ),
            "create the missing source topics, and give the topics each join reads the \
                  same partition count (`partwise check --streams` on the application's \
                  describe() text names them and their counts); the group leaves NOT_READY \
                  at its members' next heartbeat"
                .to_string(),
        ));
    }
    let subs: BTreeMap<&str, &SubTopology> = group
        .subtopologies
        .iter()
        .flatten()
        .map(|s| (s.id.as_str(), s))
        .collect();
    let mut tasks = Vec::new();
    for m in &group.members {
        let mut active = m.assignment.active.clone();
        active.sort();
        for t in active {
            let Some(sub) = subs.get(t.subtopology.as_str()) else {
                if group.subtopologies.is_some() {
                    findings.push(Finding::new(
                        UNKNOWN_SUBTOPOLOGY,
                        format!(
                            "member {} holds task {t}, of sub-topology {} the coordinator does \
                             not describe",
                            m.member_id, t.subtopology
                        ),
                        "describe the group again once its members have caught up with \
                              the topology (their member epochs reach the group epoch)"
                            .to_string(),
                    ));
                }
                continue;
            };
            let mut holds = Vec::new();
            let mut missing = Vec::new();
            for topic in sub.sources() {
                match counts.get(topic) {
                    Some(&n) if t.partition >= 0 && (t.partition as u32) < n => {
                        holds.push((topic.to_string(), t.partition))
                    }
                    _ => missing.push(topic.to_string()),
                }
            }
            let joined = joins.iter().any(|j| {
                holds.iter().any(|(h, _)| j.contains(h)) && missing.iter().any(|x| j.contains(x))
            });
            if joined {
                let count = |topic: &str| match counts.get(topic) {
                    Some(n) => format!("{topic} ({n} partitions)"),
                    None => format!("{topic} (not in the cluster)"),
                };
                findings.push(Finding::new(
                    TASK_SPLIT,
                    format!(
                        "task {t} on member {} holds partition {} of {} but not of {}: the \
                         sources of sub-topology {} that it joins are not co-partitioned, so \
                         its join sees only part of a key's records",
                        m.member_id,
                        t.partition,
                        holds
                            .iter()
                            .map(|(x, _)| count(x))
                            .collect::<Vec<_>>()
                            .join(", "),
                        missing
                            .iter()
                            .map(|x| count(x))
                            .collect::<Vec<_>>()
                            .join(", "),
                        sub.id
                    ),
                    "give every source topic of the sub-topology the same partition \
                          count (add partitions to the smaller one, or repartition through a \
                          topic of the larger count), then restart the application"
                        .to_string(),
                ));
            }
            tasks.push(TaskPartitions {
                task: t,
                member_id: m.member_id.clone(),
                holds,
                missing,
            });
        }
    }
    StreamsReport {
        group,
        tasks,
        findings,
    }
}

/// A task and the partitions it holds, as a classic-protocol member's
/// assignment says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TaskHolding {
    /// The task.
    pub task: Task,
    /// The partitions it holds, (topic, partition), sorted.
    pub partitions: Vec<(String, i32)>,
}

/// One member of a classic-protocol Kafka Streams group (assignor
/// `stream`), as its Streams user data (`SubscriptionInfo`,
/// `AssignmentInfo`) says.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ClassicStreamsMember {
    /// The member id.
    pub member_id: String,
    /// The client id.
    pub client_id: String,
    /// The Streams instance (process) it belongs to; `None` when unknown.
    pub process_id: Option<String>,
    /// Its active tasks, each with the partitions it holds.
    pub active: Vec<TaskHolding>,
    /// Its standby tasks, each with the partitions whose state it keeps.
    pub standby: Vec<TaskHolding>,
    /// The error code the leader's assignment carries (0: none; Kafka
    /// Streams' `AssignorError`), when its version has one.
    pub assignment_error: Option<i32>,
    /// Why the member's Streams user data could not be read, when it could
    /// not: its process and tasks are then unknown, never guessed.
    pub unknown: Option<String>,
}

/// A classic-protocol Streams group's members and tasks, judged; its JSON
/// is the `streams` field of `kafka group --format json` for such a group.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClassicStreamsReport {
    /// The members, as their user data says.
    pub members: Vec<ClassicStreamsMember>,
    /// Each active task with what it holds: `holds` its partitions,
    /// `missing` the sources of its sub-topology (the topics any task of
    /// that sub-topology holds) of which it holds no partition p.
    pub tasks: Vec<TaskPartitions>,
    /// What is wrong.
    pub findings: Vec<Finding>,
}

/// Judges a classic-protocol Streams group from its members' decoded user
/// data, with `joins` as [`analyze`] takes them: an active task `x_p` that
/// holds partition p of one source of a join and not of another is a
/// [`TASK_SPLIT`]; a member whose user data did not decode is a
/// [`MEMBER_UNKNOWN`]. A sub-topology's sources are the topics its tasks
/// hold (active or standby): the classic description carries no topology.
pub fn analyze_classic(
    group: &str,
    members: Vec<ClassicStreamsMember>,
    joins: &[Vec<String>],
) -> ClassicStreamsReport {
    let mut findings = Vec::new();
    let mut sources: BTreeMap<&str, std::collections::BTreeSet<&str>> = BTreeMap::new();
    for m in &members {
        for h in m.active.iter().chain(&m.standby) {
            let s = sources.entry(h.task.subtopology.as_str()).or_default();
            s.extend(h.partitions.iter().map(|(t, _)| t.as_str()));
        }
    }
    let mut tasks = Vec::new();
    for m in &members {
        if let Some(why) = &m.unknown {
            findings.push(Finding::new(
                MEMBER_UNKNOWN,
                format!(
                    "member {} ({}) of Kafka Streams group {group}: its Streams user data \
                     could not be read ({why}), so its process and tasks are unknown",
                    m.member_id, m.client_id
                ),
                "run every instance of the application on one Kafka Streams release \
                      (they write the subscription and assignment versions 1 to 11 that are \
                      read here), or move it to group.protocol=streams, which the broker \
                      describes (Kafka Streams and brokers 4.2 or later)"
                    .to_string(),
            ));
            continue;
        }
        for h in &m.active {
            let t = &h.task;
            let holds: Vec<(String, i32)> = h.partitions.clone();
            let missing: Vec<String> = sources
                .get(t.subtopology.as_str())
                .into_iter()
                .flatten()
                .filter(|s| !holds.iter().any(|(x, p)| x == *s && *p == t.partition))
                .map(|s| s.to_string())
                .collect();
            let joined = joins.iter().any(|j| {
                holds.iter().any(|(x, _)| j.contains(x)) && missing.iter().any(|x| j.contains(x))
            });
            if joined {
                findings.push(Finding::new(
                    TASK_SPLIT,
                    format!(
                        "task {t} on member {} holds {} but no partition {} of {}: the \
                         sources it joins are not co-partitioned in its assignment, so its \
                         join sees only part of a key's records",
                        m.member_id,
                        holds
                            .iter()
                            .map(|(x, p)| format!("{x}[{p}]"))
                            .collect::<Vec<_>>()
                            .join(", "),
                        t.partition,
                        missing.join(", "),
                    ),
                    "give every source topic a join reads the same partition count (add \
                          partitions to the smaller one, or repartition through a topic of \
                          the larger count), then restart the application"
                        .to_string(),
                ));
            }
            tasks.push(TaskPartitions {
                task: t.clone(),
                member_id: m.member_id.clone(),
                holds,
                missing,
            });
        }
    }
    tasks.sort_by(|a, b| a.task.cmp(&b.task));
    ClassicStreamsReport {
        members,
        tasks,
        findings,
    }
}

/// Why the coordinator keeps the group NOT_READY, from the cluster's counts:
/// source topics missing from the cluster, and sub-topologies whose sources
/// (a join's, Streams requires them co-partitioned) have different counts.
fn not_ready_reasons(subs: &[SubTopology], counts: &BTreeMap<String, u32>) -> Vec<String> {
    let mut out = Vec::new();
    for s in subs {
        let missing: Vec<&str> = s
            .source_topics
            .iter()
            .map(String::as_str)
            .filter(|t| !counts.contains_key(*t))
            .collect();
        if !missing.is_empty() {
            out.push(format!(
                "sub-topology {} reads {} that the cluster does not have",
                s.id,
                missing.join(", ")
            ));
        }
        let present: Vec<(&str, u32)> = s
            .source_topics
            .iter()
            .filter_map(|t| counts.get(t).map(|&n| (t.as_str(), n)))
            .collect();
        if present.windows(2).any(|w| w[0].1 != w[1].1) {
            out.push(format!(
                "sub-topology {} reads {}: \
                 different partition counts, which Streams refuses for the sources of a join",
                s.id,
                present
                    .iter()
                    .map(|(t, n)| format!("{t} ({n} partitions)"))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(state: &str, subs: Option<Vec<SubTopology>>, active: &[i32]) -> StreamsGroup {
        StreamsGroup {
            group: "app".into(),
            state: state.into(),
            subtopologies: subs,
            members: vec![StreamsMember {
                member_id: "m1".into(),
                assignment: Tasks {
                    active: active
                        .iter()
                        .map(|&p| Task {
                            subtopology: "0".into(),
                            partition: p,
                        })
                        .collect(),
                    ..Default::default()
                },
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn join() -> Option<Vec<SubTopology>> {
        Some(vec![SubTopology {
            id: "0".into(),
            source_topics: vec!["a".into(), "b".into()],
            ..Default::default()
        }])
    }

    #[test]
    fn whole_tasks_hold_partition_p_of_every_source() {
        let counts = BTreeMap::from([("a".to_string(), 2), ("b".to_string(), 2)]);
        let r = analyze(group("STABLE", join(), &[1, 0]), &counts, &ab());
        assert!(r.findings.is_empty(), "{:?}", r.findings);
        assert_eq!(r.tasks[0].task.to_string(), "0_0");
        assert_eq!(
            r.tasks[1].holds,
            vec![("a".to_string(), 1), ("b".to_string(), 1)]
        );
    }

    fn ab() -> Vec<Vec<String>> {
        vec![vec!["a".into(), "b".into()]]
    }

    #[test]
    fn a_task_past_one_joined_sources_count_is_a_finding() {
        let counts = BTreeMap::from([("a".to_string(), 2), ("b".to_string(), 3)]);
        let r = analyze(group("STABLE", join(), &[2]), &counts, &ab());
        assert_eq!(r.findings.len(), 1);
        assert_eq!(r.findings[0].kind, TASK_SPLIT);
        assert!(r.findings[0]
            .message
            .contains("holds partition 2 of b (3 partitions) but not of a (2 partitions)"));
    }

    #[test]
    fn a_task_past_a_merged_sources_count_is_no_finding() {
        let counts = BTreeMap::from([("a".to_string(), 2), ("b".to_string(), 3)]);
        // Not known to be joined, or known to be merged only: shown, no finding.
        for joins in [vec![], vec![vec!["a".to_string(), "c".to_string()]]] {
            let r = analyze(group("STABLE", join(), &[2]), &counts, &joins);
            assert!(r.findings.is_empty(), "{:?}", r.findings);
            assert_eq!(r.tasks[0].holds, vec![("b".to_string(), 2)]);
            assert_eq!(r.tasks[0].missing, vec!["a".to_string()]);
        }
    }

    fn holding(x: &str, p: i32, tps: &[(&str, i32)]) -> TaskHolding {
        TaskHolding {
            task: Task {
                subtopology: x.into(),
                partition: p,
            },
            partitions: tps.iter().map(|(t, p)| (t.to_string(), *p)).collect(),
        }
    }

    #[test]
    fn a_classic_task_without_its_joined_partner_is_a_finding() {
        let m = |id: &str, active: Vec<TaskHolding>| ClassicStreamsMember {
            member_id: id.into(),
            process_id: Some("p".into()),
            active,
            ..Default::default()
        };
        let members = vec![
            m("m1", vec![holding("0", 0, &[("a", 0), ("b", 0)])]),
            m("m2", vec![holding("0", 1, &[("a", 1)])]),
            ClassicStreamsMember {
                member_id: "m3".into(),
                unknown: Some("version 12".into()),
                ..Default::default()
            },
        ];
        // Not known to be joined: shown, no split finding.
        let r = analyze_classic("app", members.clone(), &[]);
        assert_eq!(r.findings.len(), 1);
        assert_eq!(r.findings[0].kind, MEMBER_UNKNOWN);
        assert!(r.findings[0].message.contains("version 12"));
        assert_eq!(r.tasks[1].missing, vec!["b".to_string()]);
        assert!(r.tasks[0].missing.is_empty());
        let r = analyze_classic("app", members, &ab());
        assert_eq!(r.findings.len(), 2);
        assert_eq!(r.findings[0].kind, TASK_SPLIT);
        assert!(
            r.findings[0]
                .message
                .contains("task 0_1 on member m2 holds a[1] but no partition 1 of b"),
            "{}",
            r.findings[0].message
        );
    }

    #[test]
    fn not_ready_is_a_finding_with_its_reason() {
        let r = analyze(group("NOT_READY", None, &[]), &BTreeMap::new(), &[]);
        assert_eq!(r.findings.len(), 1);
        assert_eq!(r.findings[0].kind, NOT_READY);
        assert!(r.findings[0].message.contains("different partition counts"));
        let counts = BTreeMap::from([("a".to_string(), 6), ("b".to_string(), 8)]);
        let r = analyze(group("NotReady", join(), &[]), &counts, &[]);
        assert!(r.findings[0].message.contains(
            "sub-topology 0 reads a (6 partitions) and b (8 partitions): different partition counts"
        ));
        let mut g = group("NOT_READY", None, &[]);
        g.error_message = Some("topics x and y differ".into());
        let r = analyze(g, &BTreeMap::new(), &[]);
        assert!(r.findings[0]
            .message
            .contains("the coordinator says: topics x and y differ"));
    }
}
