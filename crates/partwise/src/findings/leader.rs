//! What a simulated client's leader would do wrong with a group's claims:
//! kafka-clients' sticky assignors keep claims past a topic's partition
//! count (members that still hold partitions of a topic deleted and
//! recreated with fewer, or a leader with stale metadata), and then assign a
//! partition that does not exist, assign one partition to two members, or
//! throw. partwise's own leader drops such claims; these findings say what
//! the Java leader would do instead.

use super::Finding;
use crate::assign::{AssignError, Assignment, Assignor, Group};
use std::fmt;

/// The kafka-clients release whose sticky assignors these findings
/// reproduce (the known answers in `tests/vectors/assignors/java_group_cases.jsonl`).
pub const KAFKA_CLIENTS: &str = "4.4.0";

/// One thing the Java leader would do with the group.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeaderFinding {
    /// It would assign a partition past the topic's count.
    MissingPartition {
        /// The assignor's spec.
        assignor: Assignor,
        /// The member given it.
        member: String,
        /// The topic.
        topic: String,
        /// The partition that does not exist.
        partition: u32,
        /// The topic's partition count.
        partitions: u32,
    },
    /// It would assign one partition to two or more members.
    AssignedTwice {
        /// The assignor's spec.
        assignor: Assignor,
        /// The topic.
        topic: String,
        /// The partition.
        partition: u32,
        /// The members given it, sorted, each once (one member may be given it twice).
        members: Vec<String>,
    },
    /// It would hand a member a partition of a topic it does not subscribe
    /// to (the Python sticky executors give a partition back to the member
    /// whose older generation claimed it, though it has left the topic).
    Unsubscribed {
        /// The assignor's spec.
        assignor: Assignor,
        /// The member given it.
        member: String,
        /// The topic.
        topic: String,
        /// The partition.
        partition: u32,
    },
    /// It would throw, so the rebalance never completes.
    Throws {
        /// The assignor's spec.
        assignor: Assignor,
        /// The exception's class.
        exception: String,
        /// Its message.
        message: String,
        /// The first claim past a count (`t0-106, but t0 has 106 partitions`), when the group has one.
        stale: Option<String>,
    },
}

fn class(a: Assignor) -> &'static str {
    match a {
        Assignor::JavaSticky => "StickyAssignor",
        Assignor::JavaCooperativeSticky => "CooperativeStickyAssignor",
        Assignor::JavaRange => "RangeAssignor",
        Assignor::JavaRoundRobin => "RoundRobinAssignor",
        Assignor::KafkaPythonRange | Assignor::AiokafkaRange => "RangePartitionAssignor",
        Assignor::KafkaPythonRoundRobin | Assignor::AiokafkaRoundRobin => {
            "RoundRobinPartitionAssignor"
        }
        Assignor::KafkaPythonSticky | Assignor::AiokafkaSticky => "StickyPartitionAssignor",
        Assignor::KafkaPythonCooperativeSticky => "CooperativeStickyAssignor",
        _ => a.spec(),
    }
}

/// Whose leader the finding speaks of: `the Java leader (kafka-clients
/// 4.4.0 StickyAssignor)`, or a Python client's, `the kafka-python leader
/// (kafka-python 3.0.12 RoundRobinPartitionAssignor)`.
fn leader(a: Assignor) -> String {
    match a.python_setting().and(a.library_version()) {
        Some(v) => format!("the {} leader ({v} {})", a.client(), class(a)),
        None => format!(
            "the Java leader (kafka-clients {KAFKA_CLIENTS} {})",
            class(a)
        ),
    }
}

fn assignor_of(f: &LeaderFinding) -> Assignor {
    match f {
        LeaderFinding::MissingPartition { assignor, .. }
        | LeaderFinding::AssignedTwice { assignor, .. }
        | LeaderFinding::Unsubscribed { assignor, .. }
        | LeaderFinding::Throws { assignor, .. } => *assignor,
    }
}

impl LeaderFinding {
    /// The stable id.
    pub fn kind(&self) -> &'static str {
        if assignor_of(self).python_setting().is_some() {
            return match self {
                LeaderFinding::MissingPartition { .. } => "python-leader-assigns-missing-partition",
                LeaderFinding::AssignedTwice { .. } => "python-leader-assigns-partition-twice",
                LeaderFinding::Unsubscribed { .. } => "python-leader-assigns-unsubscribed-topic",
                LeaderFinding::Throws { .. } => "python-leader-raises",
            };
        }
        match self {
            LeaderFinding::MissingPartition { .. } => "java-leader-assigns-missing-partition",
            LeaderFinding::AssignedTwice { .. } => "java-leader-assigns-partition-twice",
            LeaderFinding::Unsubscribed { .. } => "java-leader-assigns-unsubscribed-topic",
            LeaderFinding::Throws { .. } => "java-leader-throws",
        }
    }

    /// The finding, as every command prints it.
    pub fn finding(&self) -> Finding {
        Finding::new(self.kind(), self.to_string(), self.fix())
    }

    /// What to do about it.
    pub fn fix(&self) -> String {
        let a = assignor_of(self);
        if a.python_setting().is_some() {
            let range = if a.client() == "aiokafka" {
                Assignor::AiokafkaRange
            } else {
                Assignor::KafkaPythonRange
            };
            return format!(
                "give every member of the group the same subscription, or switch every member to {} \
                 (it reads no claims and deals each topic alone); stop every member, then start them again \
                 so that no claim outlives the topic it was made on",
                range.python_setting().unwrap_or_default()
            );
        }
        "stop every member of the group, then start them again: a consumer that starts \
         afresh claims no partitions, so no claim outlives the topic it was made on (stop a \
         topic's consumer groups before deleting and recreating it with fewer partitions); or \
         set partition.assignment.strategy to org.apache.kafka.clients.consumer.RangeAssignor \
         or RoundRobinAssignor, which do not read claims"
            .to_string()
    }
}

impl fmt::Display for LeaderFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LeaderFinding::MissingPartition {
                assignor,
                member,
                topic,
                partition,
                partitions,
            } => write!(
                f,
                "{} would assign {topic}-{partition} \
                 to {member}, which does not exist ({topic} has {partitions} partitions): members \
                 still claim partitions past its count",
                leader(*assignor)
            ),
            LeaderFinding::AssignedTwice {
                assignor,
                topic,
                partition,
                members,
            } => write!(
                f,
                "{} would assign {topic}-{partition} \
                 to {}: claims past a topic's count throw off its bookkeeping",
                leader(*assignor),
                if members.len() == 1 {
                    format!("{} twice", members[0])
                } else {
                    format!("{} at once", members.join(" and "))
                }
            ),
            LeaderFinding::Unsubscribed {
                assignor,
                member,
                topic,
                partition,
            } => write!(
                f,
                "{} would assign {topic}-{partition} to {member}, which does not subscribe to \
                 {topic}: an older generation's claim of it is handed back to a member that has \
                 left the topic (kafka-python's consumer rejects such an assignment and rejoins, \
                 so the group rebalances again)",
                leader(*assignor)
            ),
            LeaderFinding::Throws {
                assignor,
                exception,
                message,
                stale,
            } => {
                let short = exception.rsplit('.').next().unwrap_or(exception);
                write!(
                    f,
                    "{} {} {short}{}, so the \
                     rebalance fails on every try",
                    leader(*assignor),
                    if assignor.python_setting().is_some() {
                        "raises"
                    } else {
                        "throws"
                    },
                    match message.trim_end_matches('.') {
                        "" => String::new(),
                        m => format!(": {m}"),
                    }
                )?;
                if let Some(s) = stale {
                    write!(f, " (members claim {s})")?;
                }
                Ok(())
            }
        }
    }
}

/// The findings for `assignor`'s `result` on `group`: each partition past
/// its topic's count that it assigns, each partition it assigns twice, or
/// the exception it throws.
pub fn leader_findings(
    assignor: Assignor,
    group: &Group,
    result: Result<&Assignment, &AssignError>,
) -> Vec<LeaderFinding> {
    let mut out = Vec::new();
    match result {
        Err(AssignError::LeaderThrows {
            exception, message, ..
        }) => {
            let stale = group.stale_claims().first().map(|&(_, tp)| {
                let t = &group.topics[tp.topic as usize];
                format!(
                    "{}-{}, but {} has {} partitions",
                    t.name, tp.partition, t.name, t.partitions
                )
            });
            out.push(LeaderFinding::Throws {
                assignor,
                exception: exception.to_string(),
                message: message.clone(),
                stale,
            });
        }
        Err(_) => {}
        Ok(a) => {
            let mut holders: std::collections::BTreeMap<(String, u32), Vec<String>> =
                Default::default();
            for &m in &a.order {
                for tp in &a.partitions[m] {
                    let t = &group.topics[tp.topic as usize];
                    let member = group.members[m].id.clone();
                    if !group.members[m].topics.contains(&t.name) {
                        out.push(LeaderFinding::Unsubscribed {
                            assignor,
                            member: member.clone(),
                            topic: t.name.clone(),
                            partition: tp.partition,
                        });
                    }
                    if tp.partition >= t.partitions {
                        out.push(LeaderFinding::MissingPartition {
                            assignor,
                            member: member.clone(),
                            topic: t.name.clone(),
                            partition: tp.partition,
                            partitions: t.partitions,
                        });
                    }
                    holders
                        .entry((t.name.clone(), tp.partition))
                        .or_default()
                        .push(member);
                }
            }
            for ((topic, partition), mut members) in holders {
                if members.len() > 1 {
                    members.sort();
                    members.dedup();
                    out.push(LeaderFinding::AssignedTwice {
                        assignor,
                        topic,
                        partition,
                        members,
                    });
                }
            }
        }
    }
    out
}
