//! A live consumer group as its coordinator describes it, checked without
//! I/O: the described assignment rebuilt in [`crate::assign`]'s model, what
//! an assignor would give the same members instead, and for every set of
//! assigned topics that share a partition count the co-location of their
//! partition indices (the split ones break a local join). The adapter
//! (partwise-kafka) fetches the description and the topics' partition
//! counts; `partwise kafka group` renders the [`Analysis`].
//!
//! ```
//! use partwise::group::described::{analyze, ClusterTopic, DescribedMember};
//! let topic = |name: &str| ClusterTopic { name: name.into(), partitions: 2, healthy: true };
//! let member = |id: &str, parts: Vec<(String, Vec<u32>)>| DescribedMember {
//!     id: id.into(),
//!     subscription: Some(vec!["a".into(), "b".into()]),
//!     assignment: Some(parts),
//!     undecodable: None,
//! };
//! // Partition 0 of `a` and of `b` on different members: index 0 is split.
//! let members = [
//!     member("m1", vec![("a".into(), vec![0]), ("b".into(), vec![1])]),
//!     member("m2", vec![("a".into(), vec![1]), ("b".into(), vec![0])]),
//! ];
//! let r = analyze(&members, &[topic("a"), topic("b")], Some(("java:range".parse().unwrap(), &[])))?;
//! assert_eq!(r.live.as_ref().unwrap().split_count(), 2);
//! assert_eq!(r.predicted.as_ref().unwrap().1.split_count(), 0);
//! assert_eq!((r.split_count, r.matches_live), (2, Some(false)));
//! # Ok::<(), partwise::group::described::PredictError>(())
//! ```

use crate::assign::{colocation_of, Assignment, Assignor, Colocation, Group, Member, Topic, Tp};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// One member as the coordinator describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DescribedMember {
    /// Its member id.
    pub id: String,
    /// The topics it subscribes to (`None`: not returned).
    pub subscription: Option<Vec<String>>,
    /// Its partitions per topic (`None`: the coordinator returned no
    /// assignment bytes, as Apache Kafka does while the group rebalances).
    pub assignment: Option<Vec<(String, Vec<u32>)>>,
    /// Why its consumer-protocol bytes could not be decoded, when they could
    /// not (`subscription could not be decoded: ...`): the member is shown
    /// and marked, its subscription counted as none (a partwise leader gives
    /// such a member nothing) and an undecodable assignment as holding
    /// nothing, and the others are analysed as usual.
    pub undecodable: Option<String>,
}

/// The finding for a member whose bytes could not be decoded.
pub const UNDECODABLE: &str = "member-undecodable";

/// One finding per member of `members` whose consumer-protocol bytes could
/// not be decoded, naming it and why, with the fix.
pub fn undecodable_findings(members: &[DescribedMember]) -> Vec<crate::findings::Finding> {
    members
        .iter()
        .filter_map(|m| {
            let why = m.undecodable.as_ref()?;
            Some(crate::findings::Finding::new(
                UNDECODABLE,
                format!(
                    "member {}: {why}; it is shown without it and analysed as subscribed to \
                     nothing (a partwise leader gives it nothing), the other members as usual",
                    m.id
                ),
                "find that client by its member and client id and its host: it writes \
                      bytes that are not the consumer protocol's (a topic name that is not \
                      UTF-8, say); fix or stop it"
                    .to_string(),
            ))
        })
        .collect()
}

/// A topic of the cluster, as its metadata says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterTopic {
    /// The topic name.
    pub name: String,
    /// Its partition count.
    pub partitions: u32,
    /// Whether the metadata reports no error for it.
    pub healthy: bool,
}

/// Topics of one partition count, with the co-location of their indices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicSet {
    /// The topics, in the group's topic order.
    pub topics: Vec<String>,
    /// Owners per index, with only the set's topics as columns, in order.
    pub colocation: Colocation,
}

/// One assignment of the group (the live one, or a prediction) in the
/// assign model, with its co-location per set of equally partitioned topics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    /// The members and topics.
    pub group: Group,
    /// Who owns what.
    pub assignment: Assignment,
    /// Every set of two or more assigned topics sharing a partition count.
    pub sets: Vec<TopicSet>,
}

impl View {
    fn new(group: Group, assignment: Assignment) -> View {
        let sets = topic_sets(&group, &assignment);
        View {
            group,
            assignment,
            sets,
        }
    }

    /// Member id -> its (topic, partition) pairs, sorted.
    pub fn owned_by(&self) -> BTreeMap<String, Vec<(String, u32)>> {
        let g = &self.group;
        g.members
            .iter()
            .zip(&self.assignment.partitions)
            .map(|(m, ps)| {
                let mut v: Vec<(String, u32)> = ps
                    .iter()
                    .map(|tp| (g.topics[tp.topic as usize].name.clone(), tp.partition))
                    .collect();
                v.sort();
                (m.id.clone(), v)
            })
            .collect()
    }

    /// Split indices over every set.
    pub fn split_count(&self) -> usize {
        self.sets.iter().map(|s| s.colocation.split_count()).sum()
    }
}

/// What the description says, and what an assignor would say instead.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    /// The live assignment, when every member's was returned.
    pub live: Option<View>,
    /// The prediction, when an assignor was given.
    pub predicted: Option<(Assignor, View)>,
    /// Members whose assignment the coordinator did not return.
    pub not_returned: usize,
    /// Split indices of the live assignment, else of the prediction.
    pub split_count: usize,
    /// Whether the prediction equals the live assignment (when both exist).
    pub matches_live: Option<bool>,
    /// Members whose bytes could not be decoded ([`undecodable_findings`]).
    pub findings: Vec<crate::findings::Finding>,
}

/// Why an assignor's prediction cannot be made.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PredictError {
    /// No topics were named and this member's subscription was not returned.
    NoSubscription {
        /// The member id.
        member: String,
    },
    /// A subscribed topic the cluster does not have (or reports an error for).
    NoTopic {
        /// The topic.
        topic: String,
    },
    /// The assignor refused the group.
    Assign {
        /// The assignor.
        assignor: Assignor,
        /// Its reason.
        error: crate::Error,
    },
}

impl fmt::Display for PredictError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PredictError::NoSubscription { member } => write!(
                f,
                "the broker returned no subscription for member {member}; name the topics"
            ),
            PredictError::NoTopic { topic } => write!(f, "topic {topic} does not exist"),
            PredictError::Assign { assignor, error } => write!(f, "{}: {error}", assignor.spec()),
        }
    }
}

impl std::error::Error for PredictError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PredictError::Assign { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// The group described by `members`, with partition counts from `topics`;
/// with `prediction`, also what that assignor gives the same members, each
/// subscribed to the topics named or, when none are, to its described
/// subscription.
pub fn analyze(
    members: &[DescribedMember],
    topics: &[ClusterTopic],
    prediction: Option<(Assignor, &[String])>,
) -> Result<Analysis, PredictError> {
    let live = live(members, topics);
    let predicted = match prediction {
        Some((asg, subscribe)) => Some((asg, predict(members, topics, asg, subscribe)?)),
        None => None,
    };
    let split_count = live
        .as_ref()
        .or(predicted.as_ref().map(|(_, v)| v))
        .map_or(0, View::split_count);
    let matches_live = match (&live, &predicted) {
        (Some(l), Some((_, p))) => Some(l.owned_by() == p.owned_by()),
        _ => None,
    };
    Ok(Analysis {
        live,
        predicted,
        not_returned: members.iter().filter(|m| m.assignment.is_none()).count(),
        split_count,
        matches_live,
        findings: undecodable_findings(members),
    })
}

/// The live assignment in the assign model; `None` when any member's was
/// not returned. A topic the metadata does not list counts 0 partitions.
fn live(members: &[DescribedMember], cluster: &[ClusterTopic]) -> Option<View> {
    let mut names: BTreeSet<&str> = BTreeSet::new();
    for m in members {
        names.extend(m.assignment.as_ref()?.iter().map(|(t, _)| t.as_str()));
    }
    let topics: Vec<Topic> = names
        .into_iter()
        .map(|t| {
            let n = cluster
                .iter()
                .find(|i| i.name == t)
                .map_or(0, |i| i.partitions);
            Topic::new(t, n)
        })
        .collect();
    let group_members: Vec<Member> = members
        .iter()
        .map(|m| match &m.subscription {
            Some(sub) => Member::new(m.id.clone(), sub.iter().cloned()),
            None if m.undecodable.is_some() => Member::new(m.id.clone(), Vec::<String>::new()),
            None => Member::new(m.id.clone(), topics.iter().map(|t| t.name.clone())),
        })
        .collect();
    let group = Group::new(group_members, topics);
    let partitions: Vec<Vec<Tp>> = members
        .iter()
        .map(|m| {
            m.assignment
                .iter()
                .flatten()
                .flat_map(|(t, ps)| {
                    let ti = group.topic_index(t).unwrap_or(0);
                    ps.iter().map(move |&p| Tp {
                        topic: ti,
                        partition: p,
                    })
                })
                .collect()
        })
        .collect();
    let assignment = Assignment {
        order: (0..members.len()).collect(),
        partitions,
        withheld: Vec::new(),
    };
    Some(View::new(group, assignment))
}

fn predict(
    members: &[DescribedMember],
    cluster: &[ClusterTopic],
    asg: Assignor,
    subscribe: &[String],
) -> Result<View, PredictError> {
    let subs: Vec<Vec<String>> = if subscribe.is_empty() {
        members
            .iter()
            .map(|m| {
                if m.undecodable.is_some() && m.subscription.is_none() {
                    // What a partwise leader does with it: nothing assigned.
                    return Ok(Vec::new());
                }
                m.subscription
                    .clone()
                    .ok_or_else(|| PredictError::NoSubscription {
                        member: m.id.clone(),
                    })
            })
            .collect::<Result<_, _>>()?
    } else {
        vec![subscribe.to_vec(); members.len()]
    };
    let names: BTreeSet<&String> = subs.iter().flatten().collect();
    let mut topics = Vec::new();
    for t in names {
        let info = cluster
            .iter()
            .find(|i| &i.name == t && i.healthy)
            .ok_or_else(|| PredictError::NoTopic { topic: t.clone() })?;
        topics.push(Topic::new(t.clone(), info.partitions));
    }
    let group_members: Vec<Member> = members
        .iter()
        .zip(subs)
        .map(|(m, sub)| Member::new(m.id.clone(), sub))
        .collect();
    let group = Group::new(group_members, topics);
    let assignment = asg.assign(&group).map_err(|error| PredictError::Assign {
        assignor: asg,
        error,
    })?;
    Ok(View::new(group, assignment))
}

/// The co-location of every set of assigned topics that share a partition count.
fn topic_sets(g: &Group, a: &Assignment) -> Vec<TopicSet> {
    let mut by_count: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (i, t) in g.topics.iter().enumerate() {
        by_count.entry(t.partitions).or_default().push(i as u32);
    }
    by_count
        .into_values()
        .filter(|v| v.len() >= 2)
        .map(|set| {
            let co = colocation_of(g, a, &set);
            let topics = set
                .iter()
                .map(|&t| g.topics[t as usize].name.clone())
                .collect();
            // Only the set's columns, in the set's order.
            let owners = co
                .owners
                .iter()
                .map(|row| set.iter().map(|&t| row[t as usize]).collect())
                .collect();
            TopicSet {
                topics,
                colocation: Colocation {
                    owners,
                    split: co.split,
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topic(name: &str, partitions: u32, healthy: bool) -> ClusterTopic {
        ClusterTopic {
            name: name.into(),
            partitions,
            healthy,
        }
    }

    fn member(id: &str, sub: Option<&[&str]>, parts: Option<&[(&str, &[u32])]>) -> DescribedMember {
        DescribedMember {
            id: id.into(),
            subscription: sub.map(|s| s.iter().map(|t| t.to_string()).collect()),
            assignment: parts.map(|ps| {
                ps.iter()
                    .map(|(t, p)| (t.to_string(), p.to_vec()))
                    .collect()
            }),
            undecodable: None,
        }
    }

    #[test]
    fn the_live_assignment_and_a_prediction_agree_when_the_assignor_made_it() {
        let cluster = [
            topic("a", 4, true),
            topic("b", 4, true),
            topic("c", 3, true),
        ];
        let sub: &[&str] = &["a", "b", "c"];
        // What java:range gives two members of a, b (4) and c (3).
        let members = [
            member(
                "x",
                Some(sub),
                Some(&[("a", &[0, 1]), ("b", &[0, 1]), ("c", &[0, 1])]),
            ),
            member(
                "y",
                Some(sub),
                Some(&[("a", &[2, 3]), ("b", &[2, 3]), ("c", &[2])]),
            ),
        ];
        let r = analyze(
            &members,
            &cluster,
            Some(("java:range".parse().unwrap(), &[])),
        )
        .unwrap();
        let live = r.live.as_ref().unwrap();
        assert_eq!(live.sets.len(), 1);
        assert_eq!(live.sets[0].topics, ["a", "b"]);
        assert_eq!(live.sets[0].colocation.owners[3], [Some(1), Some(1)]);
        assert_eq!(
            (r.split_count, r.matches_live, r.not_returned),
            (0, Some(true), 0)
        );
        let pred = &r.predicted.as_ref().unwrap().1;
        assert_eq!(pred.owned_by(), live.owned_by());
    }

    #[test]
    fn missing_data_and_bad_predictions() {
        let cluster = [topic("a", 2, true), topic("bad", 2, false)];
        let members = [
            member("x", None, None),
            member("y", Some(&["a"]), Some(&[("a", &[0, 1])])),
        ];
        let r = analyze(&members, &cluster, None).unwrap();
        assert!(r.live.is_none() && r.predicted.is_none());
        assert_eq!(
            (r.not_returned, r.split_count, r.matches_live),
            (1, 0, None)
        );
        let asg: Assignor = "java:range".parse().unwrap();
        assert_eq!(
            analyze(&members, &cluster, Some((asg, &[]))).unwrap_err(),
            PredictError::NoSubscription { member: "x".into() }
        );
        let named = ["bad".to_string()];
        assert_eq!(
            analyze(&members, &cluster, Some((asg, &named))).unwrap_err(),
            PredictError::NoTopic {
                topic: "bad".into()
            }
        );
        let a = ["a".to_string()];
        let r = analyze(&members, &cluster, Some((asg, &a))).unwrap();
        assert_eq!(
            r.predicted.unwrap().1.owned_by()["x"],
            [("a".to_string(), 0)]
        );
    }

    /// One member whose subscription could not be decoded: the others are
    /// analysed (live and predicted) as if it subscribed to nothing, and it
    /// is a finding naming it.
    #[test]
    fn an_undecodable_member_is_marked_and_the_others_analysed() {
        let cluster = [topic("a", 2, true), topic("b", 2, true)];
        let sub: &[&str] = &["a", "b"];
        let mut bad = member("bad", None, Some(&[]));
        bad.undecodable = Some(
            "subscription could not be decoded: subscription v0: \
                                subscribed topic name 1 is not UTF-8 (bytes fffe)"
                .into(),
        );
        let members = [
            member("x", Some(sub), Some(&[("a", &[0]), ("b", &[0])])),
            bad,
            member("y", Some(sub), Some(&[("a", &[1]), ("b", &[1])])),
        ];
        let asg: Assignor = "java:range".parse().unwrap();
        let r = analyze(&members, &cluster, Some((asg, &[]))).unwrap();
        let live = r.live.as_ref().unwrap();
        assert_eq!(live.split_count(), 0);
        assert_eq!(
            live.sets[0].colocation.owners,
            [[Some(0), Some(0)], [Some(2), Some(2)]]
        );
        let pred = &r.predicted.as_ref().unwrap().1;
        assert!(pred.owned_by()["bad"].is_empty());
        assert_eq!(r.matches_live, Some(true));
        assert_eq!(r.findings.len(), 1);
        assert_eq!(r.findings[0].kind, UNDECODABLE);
        assert!(
            r.findings[0]
                .message
                .starts_with("member bad: subscription could not be decoded: ")
                && r.findings[0].message.contains("not UTF-8"),
            "{}",
            r.findings[0].message
        );
        assert!(!r.findings[0].fix.is_empty());
        let clean = analyze(&[members[0].clone(), members[2].clone()], &cluster, None).unwrap();
        assert!(clean.findings.is_empty());
    }
}
