//! The JSON of a described group (`kafka group --format json`, `report -b`'s
//! groups, `kafka group --readiness`'s members): the coordinator's
//! description, the co-location of the live assignment or of a prediction,
//! and the prediction. The analysis' findings are the caller's to add
//! between the description and the prediction.

use crate::group::{AssignmentData, GroupDescription, MemberDescription};
use partwise::assign::{Assignor, BrokerModel, Member};
use partwise::group::described::{Analysis, TopicSet, View};
use serde::ser::{SerializeSeq, Serializer};
use serde::Serialize;
use std::collections::BTreeMap;

/// Topics with their partitions are written as `[topic, [partitions]]` pairs.
type Parts = [(String, Vec<u32>)];

impl Serialize for MemberDescription {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Json<'a> {
            id: &'a str,
            client_id: &'a str,
            client_host: &'a str,
            subscription: &'a Option<Vec<String>>,
            owned_partitions: Option<&'a Parts>,
            generation: Option<i32>,
            assignment: Option<&'a Parts>,
            #[serde(skip_serializing_if = "Option::is_none")]
            target_assignment: Option<&'a Parts>,
            #[serde(skip_serializing_if = "Option::is_none")]
            undecodable: Option<&'a str>,
        }
        Json {
            id: &self.id,
            client_id: &self.client_id,
            client_host: &self.client_host,
            subscription: &self.subscription,
            owned_partitions: self.owned_partitions.as_deref(),
            generation: self.generation,
            assignment: match &self.assignment {
                AssignmentData::NotReturned => None,
                AssignmentData::Assigned(a) => Some(a),
            },
            target_assignment: self.target.as_deref(),
            undecodable: self.undecodable.as_deref(),
        }
        .serialize(s)
    }
}

/// The co-location matrices of a view: each set of topics sharing a count,
/// the member id owning each index of each topic (`null`: nobody), and the
/// split indices.
pub struct Colocations<'a> {
    sets: &'a [TopicSet],
    members: &'a [Member],
}

impl<'a> Colocations<'a> {
    /// The matrices of `view`.
    pub fn of(view: &'a View) -> Colocations<'a> {
        Colocations {
            sets: &view.sets,
            members: &view.group.members,
        }
    }

    /// No matrices: nothing was assigned nor predicted.
    pub fn none() -> Colocations<'a> {
        Colocations {
            sets: &[],
            members: &[],
        }
    }
}

impl Serialize for Colocations<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Set<'a> {
            topics: &'a [String],
            owners: Vec<Vec<Option<&'a str>>>,
            split_indices: &'a [u32],
        }
        let members = self.members;
        let mut seq = s.serialize_seq(Some(self.sets.len()))?;
        for TopicSet { topics, colocation } in self.sets {
            seq.serialize_element(&Set {
                topics,
                owners: colocation
                    .owners
                    .iter()
                    .map(|row| {
                        row.iter()
                            .map(|o| o.map(|o| members[o].id.as_str()))
                            .collect()
                    })
                    .collect(),
                split_indices: &colocation.split,
            })?;
        }
        seq.end()
    }
}

/// A topic of the group with its count, and its id (Kafka's base64 form)
/// when the coordinator named one: `assign --group`'s shape.
#[derive(Serialize)]
pub struct GroupTopic<'a> {
    /// Topic name.
    pub name: &'a str,
    /// Its partition count.
    pub partitions: u32,
    /// Its id, when the coordinator named one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// A group's description and the co-location of its assignment.
#[derive(Serialize)]
pub struct GroupJson<'a> {
    /// Group id.
    pub group: &'a str,
    /// The coordinator's state (`Stable`, ...).
    pub state: &'a str,
    /// `consumer` for consumer groups.
    pub protocol_type: &'a str,
    /// `classic` or `consumer`.
    pub group_protocol: &'a str,
    /// The chosen assignor, when the broker says.
    pub protocol: &'a str,
    /// `returned`, or `not returned by the broker`.
    pub assignment_data: &'static str,
    /// The members as described.
    pub members: &'a [MemberDescription],
    /// The topics of the live assignment, else of the prediction; `null`
    /// when neither was made.
    pub topics: Option<Vec<GroupTopic<'a>>>,
    /// The co-location of the live assignment, else of the prediction.
    pub colocation: Colocations<'a>,
    /// `broker`, or `predicted by SPEC`.
    pub colocation_source: String,
    /// The split indices of the live assignment.
    pub split_count: usize,
}

impl<'a> GroupJson<'a> {
    /// The JSON of `d` and its analysis `r`.
    pub fn new(d: &'a GroupDescription, r: &'a Analysis) -> GroupJson<'a> {
        let (colocation, source) = match (&r.live, &r.predicted) {
            (Some(view), _) => (Colocations::of(view), "broker".to_string()),
            (None, Some((asg, view))) => (
                Colocations::of(view),
                format!("predicted by {}", asg.spec()),
            ),
            (None, None) => (Colocations::none(), "broker".to_string()),
        };
        let view = r.live.as_ref().or(r.predicted.as_ref().map(|(_, v)| v));
        GroupJson {
            group: &d.name,
            state: &d.state,
            protocol_type: &d.protocol_type,
            group_protocol: &d.group_protocol,
            protocol: &d.protocol,
            assignment_data: if r.not_returned > 0 {
                "not returned by the broker"
            } else {
                "returned"
            },
            members: &d.members,
            topics: view.map(|v| {
                v.group
                    .topics
                    .iter()
                    .map(|t| GroupTopic {
                        name: &t.name,
                        partitions: t.partitions,
                        id: d
                            .topic_ids
                            .iter()
                            .find(|(n, _)| *n == t.name)
                            .map(|(_, id)| partwise::assign::group_file::topic_id_text(id)),
                    })
                    .collect()
            }),
            colocation,
            colocation_source: source,
            split_count: r.split_count,
        }
    }
}

/// What an assignor would do with the group: its assignment by member and
/// the co-location of it.
#[derive(Serialize)]
pub struct PredictionJson<'a> {
    /// The assignor's spec.
    pub assignor: &'static str,
    /// Whether it gives one outcome (else the one that splits most of several runs).
    pub deterministic: bool,
    /// Each member's partitions.
    pub assignment: BTreeMap<String, Vec<(String, u32)>>,
    /// The co-location of the prediction.
    pub colocation: Colocations<'a>,
    /// Its split indices.
    pub split_count: usize,
    /// Whether it equals the live assignment, when there is one.
    pub matches_live: Option<bool>,
    /// The broker's KIP-848 model, when the prediction is a server assignor's.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerModelJson>,
}

/// The model of a server assignor the brokers' release runs, and how it
/// was read.
#[derive(Serialize)]
pub struct ServerModelJson {
    /// The model's spec, when the release line decides it.
    pub server_assignor_model: Option<&'static str>,
    /// The Kafka releases that run that model.
    pub server_assignor_kafka_versions: Option<&'static str>,
    /// The newest release line the brokers' APIs prove.
    pub broker_release_line: Option<&'static str>,
    /// The API versions the line was read from, and why a model is undecided.
    pub server_assignor_evidence: String,
}

impl ServerModelJson {
    /// The JSON of `m`.
    pub fn of(m: &BrokerModel) -> ServerModelJson {
        ServerModelJson {
            server_assignor_model: m.assignor.map(|x| x.spec()),
            server_assignor_kafka_versions: m.assignor.and_then(|x| x.kafka_versions()),
            broker_release_line: m.line,
            server_assignor_evidence: m.evidence.clone(),
        }
    }
}

impl<'a> PredictionJson<'a> {
    /// The prediction of `r`, when one was made.
    pub fn of(r: &'a Analysis) -> Option<PredictionJson<'a>> {
        let (asg, view): &(Assignor, View) = r.predicted.as_ref()?;
        Some(PredictionJson {
            assignor: asg.spec(),
            deterministic: asg.deterministic(),
            assignment: view.owned_by(),
            colocation: Colocations::of(view),
            split_count: view.split_count(),
            matches_live: r.matches_live,
            server: None,
        })
    }
}
