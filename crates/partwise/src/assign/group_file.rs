//! A group as its coordinator sees it, read from JSON: the shape
//! `partwise kafka group --format json` prints for a live group, plus the
//! topics with their counts, so a live group can be replayed offline and
//! edited.
//!
//! ```json
//! {"group": "orders-app",
//!  "topics": [{"name": "orders", "partitions": 6}],
//!  "members": [{"id": "c0-1f…", "instance_id": null, "subscription": ["orders"],
//!               "owned_partitions": [["orders", [0, 1, 2]]], "generation": 4,
//!               "rack": null}]}
//! ```
//!
//! Members are in the coordinator's order (the leader's map is filled in
//! it). `leader` may name the member that leads (its id); without it the
//! first member leads. Assignors that deal the leader's own subscription
//! (@platformatic/kafka's) read it. A topic may carry its `id` (Kafka's base64 form of the topic id, as
//! `kafka group` prints it for a consumer-protocol group): when every topic
//! has one, the topics are taken in the order the KIP-848 coordinator walks
//! them, a Java `HashSet` of the ids, which `kip848:uniform` follows;
//! otherwise in file order. A member's claims are `owned_partitions`, or, when it has none, its
//! current `assignment` (a live group's members rejoin with what they
//! hold). Claims of topics not in `topics` are dropped, as every assignor
//! does; claims past a topic's count are kept (see [`super::Member::owned`]).
//! Other fields of `kafka group`'s output (`client_id`, `target_assignment`,
//! ...) are read past.

use super::{Group, Member, Topic, Tp};
use crate::Error;
use serde_json::Value;
use std::collections::HashSet;

/// A group file: the group's name, when given, and the group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupFile {
    /// `group`, the consumer group's id.
    pub name: Option<String>,
    /// Members (with subscriptions, claims, generations) and topics.
    pub group: Group,
    /// Whether two topic ids share a bucket of the coordinator's
    /// `HashSet<Uuid>` ([`super::order::java_uuid_hashset_ties`]): their
    /// order, which the broker-side assignors follow, is then the file's,
    /// and may not be the coordinator's.
    pub topic_order_unknown: bool,
}

fn bad(field: impl Into<String>, reason: impl Into<String>) -> Error {
    Error::Invalid {
        what: field.into(),
        reason: reason.into(),
    }
}

/// Reads a group file's text. An error names the field at fault
/// (`members[2].owned_partitions[0]`) and why.
pub fn parse(text: &str) -> Result<GroupFile, Error> {
    let doc: Value =
        serde_json::from_str(text).map_err(|e| bad("document", format!("not JSON: {e}")))?;
    let obj = doc.as_object().ok_or_else(|| {
        bad(
            "document",
            "expected a JSON object with \"topics\" and \"members\"",
        )
    })?;
    let name = match obj.get("group") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(bad("group", "expected a string")),
    };
    let (topics, topic_order_unknown) = topics(obj.get("topics"))?;
    let list = match obj.get("members") {
        Some(Value::Array(a)) if !a.is_empty() => a,
        Some(Value::Array(_)) => return Err(bad("members", "the group has no members")),
        None => return Err(bad("members", "missing")),
        Some(_) => return Err(bad("members", "expected an array of members")),
    };
    let mut members = Vec::with_capacity(list.len());
    let mut seen = HashSet::new();
    for (i, v) in list.iter().enumerate() {
        let m = member(v, i, &topics)?;
        if !seen.insert(m.id.clone()) {
            return Err(bad(
                format!("members[{i}].id"),
                format!("'{}' given twice", m.id),
            ));
        }
        members.push(m);
    }
    let leader = match obj.get("leader") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) => Some(
            members
                .iter()
                .position(|m| &m.id == id)
                .ok_or_else(|| bad("leader", format!("'{id}' is not the id of a member")))?,
        ),
        Some(_) => return Err(bad("leader", "expected a member id")),
    };
    let mut group = Group::new(members, topics);
    group.leader = leader;
    Ok(GroupFile {
        name,
        group,
        topic_order_unknown,
    })
}

/// The file's topics, in the coordinator's order when every id is given,
/// and whether two ids tie in that order.
fn topics(v: Option<&Value>) -> Result<(Vec<Topic>, bool), Error> {
    let list = match v {
        Some(Value::Array(a)) if !a.is_empty() => a,
        Some(Value::Array(_)) => return Err(bad("topics", "no topics")),
        None => {
            return Err(bad(
                "topics",
                "missing: give each topic and its count, [{\"name\": \"orders\", \"partitions\": 6}, ...]",
            ))
        }
        Some(_) => return Err(bad("topics", "expected an array of {\"name\", \"partitions\"}")),
    };
    let mut out: Vec<Topic> = Vec::with_capacity(list.len());
    let mut ids: Vec<Option<[u8; 16]>> = Vec::with_capacity(list.len());
    for (i, t) in list.iter().enumerate() {
        let field = format!("topics[{i}]");
        // {"name": N, "partitions": P} or [N, P].
        let (name, count) = match t {
            Value::Object(o) => (o.get("name"), o.get("partitions")),
            Value::Array(a) if a.len() == 2 => (a.first(), a.get(1)),
            _ => return Err(bad(field, "expected {\"name\": TOPIC, \"partitions\": N}")),
        };
        let name = name
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| bad(format!("{field}.name"), "expected a topic name"))?;
        let count = count
            .and_then(Value::as_u64)
            .filter(|&n| (1..=u64::from(i32::MAX as u32)).contains(&n))
            .ok_or_else(|| {
                bad(
                    format!("{field}.partitions"),
                    "expected a partition count from 1 to 2147483647",
                )
            })?;
        if out.iter().any(|x| x.name == name) {
            return Err(bad(
                format!("{field}.name"),
                format!("'{name}' given twice"),
            ));
        }
        ids.push(topic_id(t, &field)?);
        out.push(Topic::new(name, count as u32));
    }
    let known: Option<Vec<[u8; 16]>> = ids.into_iter().collect();
    Ok(match known {
        Some(ids) => (
            super::order::java_uuid_hashset_order(&ids)
                .into_iter()
                .map(|i| out[i].clone())
                .collect(),
            super::order::java_uuid_hashset_ties(&ids),
        ),
        None => (out, false),
    })
}

/// A topic id as Kafka writes it (`Uuid.toString`): URL-safe base64 of
/// its 16 bytes, unpadded; the form a group file's topic `id` takes.
pub fn topic_id_text(id: &[u8; 16]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(id)
}

/// A topic's `id`: Kafka's URL-safe base64 of its 16 bytes, unpadded (22
/// characters); `None` when absent or null.
/// The 16 bytes of a topic id as Kafka writes it (`Uuid.toString`);
/// `None` when `s` is not one.
pub fn topic_id_bytes(s: &str) -> Option<[u8; 16]> {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s.trim_end_matches('='))
        .ok()
        .and_then(|b| <[u8; 16]>::try_from(b.as_slice()).ok())
}

fn topic_id(t: &Value, field: &str) -> Result<Option<[u8; 16]>, Error> {
    let Some(v) = t.as_object().and_then(|o| o.get("id")) else {
        return Ok(None);
    };
    let s = match v {
        Value::Null => return Ok(None),
        Value::String(s) => s,
        _ => {
            return Err(bad(
                format!("{field}.id"),
                "expected a topic id (a string) or null",
            ))
        }
    };
    topic_id_bytes(s).map(Some).ok_or_else(|| {
        bad(
            format!("{field}.id"),
            format!("'{s}' is not a topic id (22 characters of URL-safe base64, 16 bytes)"),
        )
    })
}

fn opt_str(
    o: &serde_json::Map<String, Value>,
    key: &str,
    field: &str,
) -> Result<Option<String>, Error> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(bad(format!("{field}.{key}"), "expected a string or null")),
    }
}

fn member(v: &Value, i: usize, topics: &[Topic]) -> Result<Member, Error> {
    let field = format!("members[{i}]");
    let o = v.as_object().ok_or_else(|| {
        bad(
            &field,
            "expected an object with \"id\" and \"subscription\"",
        )
    })?;
    let id = o
        .get("id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| bad(format!("{field}.id"), "expected a member id"))?
        .to_string();
    let instance_id = opt_str(o, "instance_id", &field)?;
    // Racks are read, not used: the file has no replica placement, and
    // without it the Java assignors are not rack-aware either.
    opt_str(o, "rack", &field)?;
    let subscription = match o.get("subscription") {
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(k, t)| {
                t.as_str().map(str::to_string).ok_or_else(|| {
                    bad(
                        format!("{field}.subscription[{k}]"),
                        "expected a topic name",
                    )
                })
            })
            .collect::<Result<Vec<String>, Error>>()?,
        Some(Value::Null) => {
            return Err(bad(
                format!("{field}.subscription"),
                "null (the broker did not return it): give the member's topics",
            ))
        }
        None => return Err(bad(format!("{field}.subscription"), "missing")),
        Some(_) => {
            return Err(bad(
                format!("{field}.subscription"),
                "expected an array of topic names",
            ))
        }
    };
    let claims = match o.get("owned_partitions") {
        Some(Value::Null) | None => o.get("assignment").map(|v| ("assignment", v)),
        Some(v) => Some(("owned_partitions", v)),
    };
    let mut owned = Vec::new();
    if let Some((key, v)) = claims {
        owned = by_topic(v, &format!("{field}.{key}"), topics)?;
    }
    let generation = match o.get("generation") {
        None | Some(Value::Null) => None,
        Some(g) => Some(
            g.as_i64()
                .and_then(|g| i32::try_from(g).ok())
                .filter(|&g| g >= -1)
                .ok_or_else(|| {
                    bad(
                        format!("{field}.generation"),
                        "expected a generation (an integer from -1) or null",
                    )
                })?,
        )
        .filter(|&g| g >= 0),
    };
    let mut m = Member::new(id, subscription);
    m.instance_id = instance_id;
    m.owned = owned;
    m.generation = generation;
    Ok(m)
}

/// `[[topic, [partitions]], ...]` (a topic may appear more than once: the
/// order of the claims is kept, and Java's assignors read it).
fn by_topic(v: &Value, field: &str, topics: &[Topic]) -> Result<Vec<Tp>, Error> {
    if v.is_null() {
        return Ok(Vec::new());
    }
    {
        let list = v
            .as_array()
            .ok_or_else(|| bad(field, "expected [[topic, [partitions]], ...]"))?;
        let mut out = Vec::new();
        for (k, item) in list.iter().enumerate() {
            let f = format!("{field}[{k}]");
            let (t, ps) = match item.as_array().map(Vec::as_slice) {
                Some([Value::String(t), Value::Array(ps)]) => (t, ps),
                _ => return Err(bad(f, "expected [topic, [partitions]]")),
            };
            let topic = topics.iter().position(|x| &x.name == t);
            for (j, p) in ps.iter().enumerate() {
                let p = p
                    .as_u64()
                    .filter(|&p| p <= i32::MAX as u64)
                    .ok_or_else(|| bad(format!("{f}[1][{j}]"), "expected a partition number"))?;
                if let Some(ti) = topic {
                    out.push(Tp {
                        topic: ti as u32,
                        partition: p as u32,
                    });
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_groups_json_reads_back_with_its_claims() {
        let f = parse(
            r#"{"group": "g", "state": "Stable", "topics": [["a", 2], {"name": "b", "partitions": 1}],
                "members": [{"id": "m1", "client_id": "c", "subscription": ["a", "b"],
                             "assignment": [["a", [1, 5]], ["gone", [0]], ["b", [0]]], "generation": 3},
                            {"id": "m0", "instance_id": "i-0", "subscription": ["a"],
                             "owned_partitions": [["a", [0]]], "assignment": [["a", [1]]], "generation": -1}]}"#,
        )
        .unwrap();
        assert_eq!(f.name.as_deref(), Some("g"));
        let g = &f.group;
        assert_eq!(g.topics, [Topic::new("a", 2), Topic::new("b", 1)]);
        assert_eq!(g.members[0].id, "m1");
        // a-5 is past a's count: kept as a stale claim; the unknown topic is dropped.
        let tp = |topic, partition| Tp { topic, partition };
        assert_eq!(g.members[0].owned, [tp(0, 1), tp(0, 5), tp(1, 0)]);
        assert_eq!(g.members[0].generation, Some(3));
        assert_eq!(g.members[1].owned, [tp(0, 0)]);
        assert_eq!(g.members[1].generation, None);
        assert_eq!(g.members[1].instance_id.as_deref(), Some("i-0"));
        assert_eq!(g.stale_claims(), [(0, tp(0, 5))]);
    }

    /// Topics that carry their ids are taken in the order a Java
    /// `HashSet<Uuid>` walks them (these two ids swap places in Kafka
    /// 4.4.0's: tests/vectors/kip848/uuid), and claims follow their names.
    #[test]
    fn topics_with_ids_take_the_coordinators_order() {
        let text = |b_id: &str| {
            format!(
                r#"{{"topics": [{{"name": "a", "partitions": 2, "id": "JD4-Q0KF0NTk-qG-1zMs1A"}},
                               {{"name": "b", "partitions": 1, "id": {b_id}}}],
                    "members": [{{"id": "m", "subscription": ["a", "b"], "owned_partitions": [["a", [1]]]}}]}}"#
            )
        };
        let f = parse(&text(r#""QQIl18MLgyFP5WF1pMeFlQ""#)).unwrap();
        assert!(!f.topic_order_unknown);
        let g = f.group;
        assert_eq!(g.topics, [Topic::new("b", 1), Topic::new("a", 2)]);
        assert_eq!(
            g.members[0].owned,
            [Tp {
                topic: 1,
                partition: 1
            }]
        );
        // Ids in one bucket (hashes 0 and 16 of 16 slots): the file's
        // order, said to be unknown.
        let a = text(r#""AAAAAAAAAAAAAAAAAAAAEA""#)
            .replace("JD4-Q0KF0NTk-qG-1zMs1A", "AAAAAAAAAAAAAAAAAAAAAA");
        let f = parse(&a).unwrap();
        assert!(f.topic_order_unknown);
        assert_eq!(f.group.topics, [Topic::new("a", 2), Topic::new("b", 1)]);
        // One topic without an id: file order.
        let g = parse(&text("null")).unwrap().group;
        assert_eq!(g.topics, [Topic::new("a", 2), Topic::new("b", 1)]);
        let e = parse(&text(r#""not-an-id""#)).unwrap_err().to_string();
        assert!(e.contains("topics[1].id") && e.contains("not-an-id"), "{e}");
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            ("[]", "document"),
            (
                r#"{"members": [{"id": "a", "subscription": []}]}"#,
                "topics",
            ),
            (
                r#"{"topics": [["a", 0]], "members": []}"#,
                "topics[0].partitions",
            ),
            (r#"{"topics": [["a", 1]], "members": []}"#, "members"),
            (
                r#"{"topics": [["a", 1]], "members": [{"subscription": []}]}"#,
                "members[0].id",
            ),
            (
                r#"{"topics": [["a", 1]], "members": [{"id": "x", "subscription": null}]}"#,
                "members[0].subscription",
            ),
            (
                r#"{"topics": [["a", 1]], "members": [{"id": "x", "subscription": [], "owned_partitions": [["a", [-1]]]}]}"#,
                "members[0].owned_partitions[0][1][0]",
            ),
            (
                r#"{"topics": [["a", 1]], "members": [{"id": "x", "subscription": [], "generation": "3"}]}"#,
                "members[0].generation",
            ),
            (
                r#"{"topics": [["a", 1]], "members": [{"id": "x", "subscription": []}, {"id": "x", "subscription": []}]}"#,
                "members[1].id",
            ),
        ];
        for (text, field) in cases {
            match parse(text) {
                Err(Error::Invalid { what, .. }) => assert_eq!(what, field, "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
    }
}
