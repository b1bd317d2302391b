//! Consumer groups as the coordinator describes them (DescribeGroups), with
//! the consumer-protocol payloads decoded: each member's subscription and
//! assignment. A broker may describe members without their payloads (tansu
//! does); that is reported as [`AssignmentData::NotReturned`], never as an
//! empty assignment.

use crate::cluster::{read_only_consumer, unreachable_via};
use crate::connect::Connection;
use crate::error::{Error, Result};
use partwise::assign::{Assignor, BrokerModel};
use partwise::group::described::{analyze, Analysis, DescribedMember, PredictError};
use partwise_wire::consumer::{Assignment, Subscription};

pub use crate::group_ser::{Colocations, GroupJson, GroupTopic, PredictionJson, ServerModelJson};
use rdkafka::consumer::Consumer;

/// A member's assignment, as far as the broker told it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AssignmentData {
    /// The broker returned no assignment bytes for the member.
    NotReturned,
    /// The decoded assignment: topics with their partitions, sorted.
    Assigned(Vec<(String, Vec<u32>)>),
}

/// One member of a group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberDescription {
    /// Member id.
    pub id: String,
    /// `client.id` of the member's client (may be empty).
    pub client_id: String,
    /// Host the member connected from (may be empty).
    pub client_host: String,
    /// Subscribed topics, when the broker returned the member metadata.
    pub subscription: Option<Vec<String>>,
    /// The version of the member's subscription metadata (its first two
    /// bytes), when the broker returned at least those: clients write
    /// different versions, so it is part of what tells them apart.
    pub metadata_version: Option<i16>,
    /// The version whose fields the subscription's body holds, when lower
    /// than [`MemberDescription::metadata_version`]: @platformatic/kafka
    /// declares version 1 and writes a version-0 body. partwise reads it as
    /// that version; Apache Kafka's coordinator cannot read it at all.
    pub subscription_body_version: Option<i16>,
    /// The partitions its subscription claims as owned (subscription v1 and
    /// later), by topic, when the broker returned the metadata; `assign
    /// --group` replays them as the member's claims.
    pub owned_partitions: Option<Vec<(String, Vec<u32>)>>,
    /// The generation its subscription names for those claims (v2 and
    /// later), when it names one.
    pub generation: Option<i32>,
    /// The assignment.
    pub assignment: AssignmentData,
    /// The user data of the subscription (classic groups), when it has any:
    /// a Kafka Streams member's `SubscriptionInfo`.
    pub subscription_user_data: Option<Vec<u8>>,
    /// The user data of the assignment (classic groups), when it has any:
    /// Apache Kafka refuses to upgrade a group online whose members have it.
    pub assignment_user_data: Option<Vec<u8>>,
    /// The broker's target assignment (consumer-protocol groups only).
    pub target: Option<Vec<(String, Vec<u32>)>>,
    /// Why the member's subscription or assignment bytes could not be
    /// decoded (`subscription could not be decoded: ...`), when they could
    /// not: that one member is shown without them, the others as usual.
    pub undecodable: Option<String>,
}

/// A group as described by its coordinator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupDescription {
    /// Group id.
    pub name: String,
    /// `Stable`, `Empty`, `PreparingRebalance`, `Dead` (unknown groups are `Dead`).
    pub state: String,
    /// `consumer` for consumer groups.
    pub protocol_type: String,
    /// The group protocol: `classic` (JoinGroup/SyncGroup, described by
    /// DescribeGroups) or `consumer` (KIP-848, described by ConsumerGroupDescribe).
    pub group_protocol: String,
    /// The chosen assignor (`range`, `roundrobin`, ...), when the broker says.
    pub protocol: String,
    /// Members.
    pub members: Vec<MemberDescription>,
    /// The topic ids (16 bytes) ConsumerGroupDescribe names beside the
    /// assigned topics of a consumer-protocol group, by topic name; empty for
    /// classic groups. The coordinator walks a group's topics in the order of
    /// a Java `HashSet` of these ids.
    pub topic_ids: Vec<(String, [u8; 16])>,
}

impl GroupDescription {
    /// The members in the core's terms: each one's subscription, and its
    /// current assignment (or, with `target`, the broker's target
    /// assignment of a consumer-protocol group), as far as it was returned.
    pub fn described(&self, target: bool) -> Vec<DescribedMember> {
        self.members
            .iter()
            .map(|m| DescribedMember {
                id: m.id.clone(),
                subscription: m.subscription.clone(),
                assignment: if target {
                    m.target.clone()
                } else {
                    match &m.assignment {
                        AssignmentData::Assigned(a) => Some(a.clone()),
                        AssignmentData::NotReturned => None,
                    }
                },
                undecodable: m.undecodable.clone(),
            })
            .collect()
    }

    /// Whether the coordinator does not know the group: no members, and
    /// state `Dead` (or none at all).
    pub fn not_found(&self) -> bool {
        self.members.is_empty() && (self.state == "Dead" || self.state.is_empty())
    }
}

/// The report of [`analysis()`].
#[derive(Clone, Debug, PartialEq)]
pub struct GroupReport {
    /// The group as its coordinator describes it.
    pub description: GroupDescription,
    /// The core's analysis of it against the cluster's topics, or why the
    /// prediction asked for could not be made.
    pub analysis: std::result::Result<Analysis, PredictError>,
    /// For a KIP-848 server assignor's prediction, the model the brokers'
    /// release runs (an unreadable answer is the evidence).
    pub server_model: Option<BrokerModel>,
}

/// A prediction to make: the assignor, and the topics every member
/// subscribes to (none: each member's own subscription, as described).
pub type Predict<'a> = Option<(Assignor, &'a [String])>;

/// Group `group` described and analysed: its live co-location and, with
/// `predict` (an assignor, and the topics every member subscribes to, or
/// none for each member's own subscription), what that assignor would give
/// the described members. The topics' partition counts are read only when
/// something needs them: a live assignment returned, or a prediction.
pub fn analysis(conn: &Connection, group: &str, predict: Predict<'_>) -> Result<GroupReport> {
    let description = describe_group(conn, group)?;
    let returned = description
        .members
        .iter()
        .all(|m| m.assignment != AssignmentData::NotReturned);
    let topics = if returned || predict.is_some() {
        crate::cluster::cluster_topics(conn)?
    } else {
        Vec::new()
    };
    let server_model = predict.and_then(|(asg, _)| server_model(conn, asg));
    Ok(GroupReport {
        analysis: analyze(&description.described(false), &topics, predict),
        description,
        server_model,
    })
}

/// Several groups described and analysed against one reading of the
/// cluster's topics, each with its own prediction, as [`analysis()`] does
/// one; except that a group with no members is shown as it is, with nothing
/// predicted for it, and no server assignor model is read. A cluster that
/// cannot be reached is the error; a group that fails alone is its entry's.
pub fn analyses(
    conn: &Connection,
    groups: &[(&str, Predict<'_>)],
) -> Result<Vec<Result<GroupReport>>> {
    let topics = crate::cluster::cluster_topics(conn)?;
    Ok(groups
        .iter()
        .map(|&(group, predict)| {
            let description = describe_group(conn, group)?;
            let predict = predict.filter(|_| !description.members.is_empty());
            Ok(GroupReport {
                analysis: analyze(&description.described(false), &topics, predict),
                description,
                server_model: None,
            })
        })
        .collect())
}

/// For a KIP-848 assignor, the model the broker's own release runs, read
/// from its API versions (an unreadable answer is the evidence).
fn server_model(conn: &Connection, asg: Assignor) -> Option<BrokerModel> {
    let name = match asg {
        Assignor::Kip848Uniform | Assignor::Kip848Uniform400 => "uniform",
        Assignor::Kip848Range => "range",
        _ => return None,
    };
    Some(
        server_assignor_model(conn, name).unwrap_or_else(|e| BrokerModel {
            line: None,
            assignor: None,
            evidence: format!("the broker's API versions could not be read: {e}"),
        }),
    )
}

/// Partitions by topic, sorted; a negative partition (never sent by a
/// broker) reads as 0, as the description's `u32` partitions cannot hold it.
fn by_topic(parts: impl IntoIterator<Item = (String, i32)>) -> Vec<(String, Vec<u32>)> {
    let mut out: Vec<(String, Vec<u32>)> = Vec::new();
    for (t, p) in parts {
        let p = p.max(0) as u32;
        match out.iter_mut().find(|(n, _)| *n == t) {
            Some((_, ps)) => ps.push(p),
            None => out.push((t, vec![p])),
        }
    }
    for (_, ps) in &mut out {
        ps.sort_unstable();
    }
    out.sort();
    out
}

/// Decodes consumer-protocol assignment bytes (`i16` version, then the
/// assignment, any version): topics with their partitions, sorted.
pub fn decode_assignment(bytes: &[u8]) -> Result<Vec<(String, Vec<u32>)>> {
    Ok(decode_assignment_and_user_data(bytes)?.0)
}

/// Topics with their partitions, sorted.
type ByTopic = Vec<(String, Vec<u32>)>;

/// As [`decode_assignment`], with the assignment's user data when it has any.
fn decode_assignment_and_user_data(bytes: &[u8]) -> Result<(ByTopic, Option<Vec<u8>>)> {
    let a = Assignment::decode(bytes::Bytes::copy_from_slice(bytes))
        .map_err(|e| Error::Decode(format!("member {e}")))?;
    let data = a.user_data.filter(|d| !d.is_empty()).map(|d| d.to_vec());
    Ok((by_topic(a.partitions), data))
}

/// Decodes consumer-protocol subscription bytes (member metadata): the topics.
pub fn decode_subscription(bytes: &[u8]) -> Result<Vec<String>> {
    let s = Subscription::decode(bytes::Bytes::copy_from_slice(bytes))
        .map_err(|e| Error::Decode(format!("member {e}")))?;
    Ok(s.topics)
}

/// Describes group `group`: through librdkafka, or, when its answer leaves
/// the group out, with DescribeGroups sent through partwise-client to the
/// group's coordinator. A group DescribeGroups calls dead with no members
/// may be a KIP-848 group: it is then asked for with ConsumerGroupDescribe.
/// Both go over the connection's own TLS and SASL settings.
pub fn describe_group(conn: &Connection, group: &str) -> Result<GroupDescription> {
    let d = describe_classic(conn, group)?;
    if d.members.is_empty() && (d.state == "Dead" || d.state.is_empty()) {
        // Settings partwise-client cannot honour leave librdkafka's answer as it is.
        if let Ok(target) = conn.client_target() {
            if let Some(c) = describe_kip848(&target, group) {
                return Ok(c);
            }
        }
    }
    Ok(d)
}

/// The model of the KIP-848 server assignor `name` (`uniform`, `range`) the
/// cluster runs, read from a bootstrap broker's API versions (ApiVersions,
/// over the connection's TLS and SASL): the release line, the model when
/// the line decides it, and the evidence.
pub fn server_assignor_model(
    conn: &Connection,
    name: &str,
) -> Result<partwise::assign::BrokerModel> {
    let apis = partwise_client::blocking::api_versions(&conn.client_target()?)
        .map_err(|e| conn.client_error("asking for the API versions", e))?;
    Ok(partwise::assign::kip848_model_for_broker(name, &apis))
}

/// The KIP-848 description of `group`, or `None` when the coordinator has no
/// such consumer group (GROUP_ID_NOT_FOUND, or a broker without the API).
fn describe_kip848(
    target: &partwise_client::blocking::Target,
    group: &str,
) -> Option<GroupDescription> {
    // A broker that does not know the API closes the connection: not a KIP-848 group.
    let resp = partwise_client::blocking::consumer_group_describe(target, group).ok()?;
    let g = resp
        .groups
        .into_iter()
        .find(|g| g.group_id.0.as_str() == group)?;
    if g.error_code != 0 {
        return None;
    }
    let mut topic_ids: Vec<(String, [u8; 16])> = Vec::new();
    let mut parts = |a: kafka_protocol::messages::consumer_group_describe_response::Assignment| {
        for tp in &a.topic_partitions {
            let name = tp.topic_name.0.to_string();
            if !topic_ids.iter().any(|(n, _)| *n == name) {
                topic_ids.push((name, *tp.topic_id.as_bytes()));
            }
        }
        by_topic(a.topic_partitions.into_iter().flat_map(|tp| {
            let topic = tp.topic_name.0.to_string();
            tp.partitions.into_iter().map(move |p| (topic.clone(), p))
        }))
    };
    let members = g
        .members
        .into_iter()
        .map(|m| {
            let a = parts(m.assignment);
            MemberDescription {
                id: m.member_id.to_string(),
                client_id: m.client_id.to_string(),
                client_host: m.client_host.to_string(),
                subscription: Some(
                    m.subscribed_topic_names
                        .iter()
                        .map(|t| t.0.to_string())
                        .collect(),
                ),
                metadata_version: None,
                subscription_body_version: None,
                owned_partitions: None,
                generation: None,
                assignment: AssignmentData::Assigned(a),
                subscription_user_data: None,
                assignment_user_data: None,
                target: Some(parts(m.target_assignment)),
                undecodable: None,
            }
        })
        .collect();
    Some(GroupDescription {
        name: group.to_string(),
        state: g.group_state.to_string(),
        protocol_type: "consumer".to_string(),
        group_protocol: "consumer".to_string(),
        protocol: g.assignor_name.to_string(),
        members,
        topic_ids,
    })
}

fn describe_classic(conn: &Connection, group: &str) -> Result<GroupDescription> {
    let c = read_only_consumer(conn)?;
    let list = c
        .fetch_group_list(Some(group), conn.timeout())
        .map_err(|e| unreachable_via(&c, conn, e))?;
    let Some(g) = list.groups().iter().find(|g| g.name() == group) else {
        return match conn.client_target() {
            Ok(target) => describe_on_the_wire(conn, &target, group),
            // Settings partwise-client cannot honour: librdkafka's answer is all there is.
            Err(_) => Err(Error::kafka(
                format!("describing group {group}"),
                "the broker returned no description",
            )),
        };
    };
    let consumer = g.protocol_type() == "consumer" || g.protocol_type().is_empty();
    let members = g
        .members()
        .iter()
        .map(|m| {
            member(
                consumer,
                m.id(),
                m.client_id(),
                m.client_host(),
                m.metadata(),
                m.assignment(),
            )
        })
        .collect::<Vec<_>>();
    Ok(GroupDescription {
        name: g.name().to_string(),
        state: g.state().to_string(),
        protocol_type: g.protocol_type().to_string(),
        group_protocol: "classic".to_string(),
        protocol: g.protocol().to_string(),
        members,
        topic_ids: Vec::new(),
    })
}

/// One described member. Bytes of it that do not decode mark that member
/// ([`MemberDescription::undecodable`]) instead of failing the description:
/// one member's bytes must not hide the rest of the group. An undecodable
/// assignment reads as holding nothing, which is all the member can process.
fn member(
    consumer: bool,
    id: &str,
    client_id: &str,
    client_host: &str,
    metadata: Option<&[u8]>,
    assignment: Option<&[u8]>,
) -> MemberDescription {
    let mut undecodable = Vec::new();
    let full = match metadata {
        Some(b) if !b.is_empty() && consumer => {
            match Subscription::decode_lenient(bytes::Bytes::copy_from_slice(b)) {
                Ok(s) => Some(s),
                Err(e) => {
                    let e = Error::Decode(format!("member {e}"));
                    undecodable.push(format!("subscription could not be decoded: {}", why(e)));
                    None
                }
            }
        }
        _ => None,
    };
    let subscription_body_version = full.as_ref().and_then(|s| s.body_version);
    let full = full.map(|s| s.subscription);
    let subscription_user_data = full
        .as_ref()
        .and_then(|s| s.user_data.as_ref())
        .filter(|d| !d.is_empty())
        .map(|d| d.to_vec());
    let owned_partitions = full.as_ref().map(|s| by_topic(s.owned.iter().cloned()));
    let generation = full.as_ref().map(|s| s.generation).filter(|&g| g >= 0);
    let subscription = full.map(|s| s.topics);
    let (assignment, assignment_user_data) = match assignment {
        Some(b) if !b.is_empty() && consumer => match decode_assignment_and_user_data(b) {
            Ok((a, data)) => (AssignmentData::Assigned(a), data),
            Err(e) => {
                undecodable.push(format!("assignment could not be decoded: {}", why(e)));
                (AssignmentData::Assigned(Vec::new()), None)
            }
        },
        _ => (AssignmentData::NotReturned, None),
    };
    let metadata_version = match metadata {
        Some([a, b, ..]) if consumer => Some(i16::from_be_bytes([*a, *b])),
        _ => None,
    };
    MemberDescription {
        id: id.to_string(),
        client_id: client_id.to_string(),
        client_host: client_host.to_string(),
        subscription,
        metadata_version,
        subscription_body_version,
        owned_partitions,
        generation,
        assignment,
        subscription_user_data,
        assignment_user_data,
        target: None,
        undecodable: (!undecodable.is_empty()).then(|| undecodable.join("; ")),
    }
}

/// A decode error's words without the "member " prefix the decoders give it.
fn why(e: Error) -> String {
    match e {
        Error::Decode(m) => m.strip_prefix("member ").map(str::to_string).unwrap_or(m),
        e => e.to_string(),
    }
}

fn describe_on_the_wire(
    conn: &Connection,
    target: &partwise_client::blocking::Target,
    group: &str,
) -> Result<GroupDescription> {
    let resp = partwise_client::blocking::describe_groups(target, group)
        .map_err(|e| conn.client_error(format!("describing group {group}"), e))?;
    let g = resp
        .groups
        .into_iter()
        .find(|g| g.group_id.0.as_str() == group)
        .ok_or_else(|| {
            Error::kafka(
                format!("describing group {group}"),
                "not in the broker's answer",
            )
        })?;
    if g.error_code != 0 {
        return Err(Error::kafka(
            format!("describing group {group}"),
            format!("broker error code {}", g.error_code),
        ));
    }
    let consumer = g.protocol_type.as_str() == "consumer" || g.protocol_type.is_empty();
    let members = g
        .members
        .iter()
        .map(|m| {
            member(
                consumer,
                m.member_id.as_str(),
                m.client_id.as_str(),
                m.client_host.as_str(),
                Some(&m.member_metadata),
                Some(&m.member_assignment),
            )
        })
        .collect::<Vec<_>>();
    Ok(GroupDescription {
        name: group.to_string(),
        state: g.group_state.to_string(),
        protocol_type: g.protocol_type.to_string(),
        group_protocol: "classic".to_string(),
        protocol: g.protocol_data.to_string(),
        members,
        topic_ids: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::consumer_protocol_assignment::TopicPartition;
    use kafka_protocol::messages::{ConsumerProtocolAssignment, TopicName};
    use kafka_protocol::protocol::{Encodable, StrBytes};

    fn encode_assignment(v: i16, tps: &[(&str, &[i32])]) -> Vec<u8> {
        let a = ConsumerProtocolAssignment::default().with_assigned_partitions(
            tps.iter()
                .map(|(t, ps)| {
                    TopicPartition::default()
                        .with_topic(TopicName(StrBytes::from_string(t.to_string())))
                        .with_partitions(ps.to_vec())
                })
                .collect(),
        );
        let mut buf = bytes::BytesMut::new();
        buf.extend_from_slice(&v.to_be_bytes());
        a.encode(&mut buf, v).unwrap();
        buf.to_vec()
    }

    #[test]
    fn assignments_round_trip_every_version() {
        for v in 0..=3 {
            let b = encode_assignment(
                v,
                &[("notifications", &[3, 0]), ("market-updates", &[0, 3])],
            );
            assert_eq!(
                decode_assignment(&b).unwrap(),
                vec![
                    ("market-updates".to_string(), vec![0, 3]),
                    ("notifications".to_string(), vec![0, 3])
                ]
            );
        }
    }

    /// A member's claims and their generation, as its subscription carries
    /// them, are part of its description (`kafka group --format json`'s
    /// `owned_partitions` and `generation`, which `assign --group` replays).
    #[test]
    fn the_subscriptions_claims_and_generation_are_described() {
        let sub = Subscription {
            topics: vec!["a".into(), "b".into()],
            owned: vec![("b".into(), 2), ("a".into(), 1), ("a".into(), 0)],
            generation: 7,
            user_data: None,
        }
        .encode()
        .unwrap();
        let m = member(true, "m", "c", "/h", Some(&sub), None);
        assert_eq!(m.subscription, Some(vec!["a".to_string(), "b".to_string()]));
        assert_eq!(
            m.owned_partitions,
            Some(vec![
                ("a".to_string(), vec![0, 1]),
                ("b".to_string(), vec![2])
            ])
        );
        assert_eq!(m.generation, Some(7));
        let fresh = Subscription {
            topics: vec!["a".into()],
            owned: vec![],
            generation: -1,
            user_data: None,
        }
        .encode()
        .unwrap();
        let m = member(true, "m", "c", "/h", Some(&fresh), None);
        assert_eq!((m.owned_partitions, m.generation), (Some(vec![]), None));
        let none = member(true, "m", "c", "/h", None, None);
        assert_eq!((none.owned_partitions, none.generation), (None, None));
    }

    #[test]
    fn bad_bytes_are_errors_not_panics() {
        assert!(decode_assignment(&[]).is_err());
        assert!(decode_assignment(&[0]).is_err());
        assert!(decode_assignment(&[0xff, 0xff]).is_err());
        let b = encode_assignment(0, &[("t", &[1, 2])]);
        for cut in 2..b.len() {
            assert!(decode_assignment(&b[..cut]).is_err(), "cut {cut}");
        }
        assert!(decode_subscription(&[0, 0, 0]).is_err());
    }

    /// A member whose subscription holds a topic name that is not UTF-8, or
    /// whose assignment is cut short, is described and marked; it does not
    /// fail the description.
    #[test]
    fn undecodable_bytes_mark_the_member() {
        // v0: topics ["a", ff fe], no user data.
        let sub = [
            0, 0, 0, 0, 0, 2, 0, 1, b'a', 0, 2, 0xff, 0xfe, 0xff, 0xff, 0xff, 0xff,
        ];
        let good = encode_assignment(0, &[("a", &[1])]);
        let m = member(true, "m", "c", "/h", Some(&sub), Some(&good));
        assert_eq!(m.subscription, None);
        assert_eq!(
            m.assignment,
            AssignmentData::Assigned(vec![("a".to_string(), vec![1])])
        );
        assert_eq!(
            m.undecodable.as_deref(),
            Some(
                "subscription could not be decoded: subscription v0: subscribed topic name 1 \
                 is not UTF-8 (bytes fffe)"
            )
        );
        let m = member(true, "m", "c", "/h", None, Some(&good[..good.len() - 2]));
        assert_eq!(m.assignment, AssignmentData::Assigned(vec![]));
        assert!(
            m.undecodable
                .as_deref()
                .is_some_and(|w| w.starts_with("assignment could not be decoded: assignment v0")),
            "{:?}",
            m.undecodable
        );
        let ok = member(true, "m", "c", "/h", None, Some(&good));
        assert_eq!(ok.undecodable, None);
        assert_eq!(ok.metadata_version, None);
        // The subscription's version is its first two bytes, even when the rest does not decode.
        assert_eq!(
            member(true, "m", "c", "/h", Some(&sub), None).metadata_version,
            Some(0)
        );
        let v3 = [0, 3, 0, 0, 0, 0];
        assert_eq!(
            member(true, "m", "c", "/h", Some(&v3), None).metadata_version,
            Some(3)
        );
    }

    /// @platformatic/kafka's subscription, version 1 declared on a version-0
    /// body: read as version 0, with the shape kept for the readiness check.
    #[test]
    fn a_platformatic_subscription_is_read_and_its_shape_kept() {
        let sub = [0, 1, 0, 0, 0, 1, 0, 1, b'a', 0xff, 0xff, 0xff, 0xff];
        let m = member(true, "m", "orders", "/h", Some(&sub), None);
        assert_eq!(m.subscription, Some(vec!["a".to_string()]));
        assert_eq!(
            (m.metadata_version, m.subscription_body_version),
            (Some(1), Some(0))
        );
        assert_eq!(m.undecodable, None);
        let java = [
            0, 1, 0, 0, 0, 1, 0, 1, b'a', 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0,
        ];
        let m = member(true, "m", "orders", "/h", Some(&java), None);
        assert_eq!(
            (m.metadata_version, m.subscription_body_version),
            (Some(1), None)
        );
    }
}
