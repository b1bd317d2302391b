//! The consumer protocol's embedded bytes: the subscription a member sends
//! in JoinGroup and the assignment the leader sends in SyncGroup, in the
//! standard `ConsumerProtocolSubscription` / `ConsumerProtocolAssignment`
//! format (an i16 version, then the versioned struct), so Kafka's own tools
//! and other clients decode what partwise writes and partwise decodes what
//! they write.
//!
//! Versions 0 to 3 are read (owned partitions from v1, their generation from
//! v2, the rack from v3); later versions only append fields and are read as
//! v3, as the Java client does. Partitions are `i32`, as on the wire.

use crate::error::{Error, Result};
use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::consumer_protocol_assignment::TopicPartition as AssignedTp;
use kafka_protocol::messages::consumer_protocol_subscription::TopicPartition as OwnedTp;
use kafka_protocol::messages::{
    ConsumerProtocolAssignment, ConsumerProtocolSubscription, TopicName,
};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use std::collections::BTreeMap;

/// The version written, and the highest one read as itself. v3 carries owned
/// partitions (v1), their generation (v2) and the rack (v3), which is what
/// the Java client sends.
pub const VERSION: i16 = 3;

/// What a member tells the leader in JoinGroup.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Subscription {
    /// Subscribed topic names.
    pub topics: Vec<String>,
    /// Partitions owned in the previous generation, (topic, partition).
    pub owned: Vec<(String, i32)>,
    /// Generation of `owned`, `-1` when unknown.
    pub generation: i32,
    /// The assignor's user data, when the member sent any.
    pub user_data: Option<Bytes>,
}

/// What the leader gives a member in SyncGroup.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Assignment {
    /// (topic, partition), sorted.
    pub partitions: Vec<(String, i32)>,
    /// The assignor's user data, when the leader sent any.
    pub user_data: Option<Bytes>,
}

/// Partitions by topic, both sorted, as the protocol lists them.
fn by_topic(parts: &[(String, i32)]) -> BTreeMap<&str, Vec<i32>> {
    let mut m: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
    for (t, p) in parts {
        m.entry(t.as_str()).or_default().push(*p);
    }
    for v in m.values_mut() {
        v.sort_unstable();
        v.dedup();
    }
    m
}

fn topic_name(t: &str) -> TopicName {
    TopicName(StrBytes::from_string(t.to_string()))
}

fn read_version(buf: &mut Bytes, what: &str) -> Result<i16> {
    if buf.remaining() < 2 {
        return Err(Error::invalid(what, "shorter than its version"));
    }
    let v = buf.get_i16();
    if v < 0 {
        return Err(Error::invalid(what, format!("version {v}")));
    }
    Ok(v.min(VERSION))
}

/// Walks consumer-protocol bytes (no flexible versions: `i32` array counts,
/// `i16` string and `i32` bytes lengths) and refuses an array count larger
/// than the bytes left. kafka-protocol 0.18 reserves an array's declared
/// count before decoding an element, so 10 bytes claiming 2^31 topics from
/// another member (relayed by the broker) would abort the process on an
/// allocation of tens of GB instead of failing the decode.
struct Walk<'a>(&'a [u8]);

impl Walk<'_> {
    fn skip(&mut self, n: usize) -> Option<()> {
        self.0 = self.0.get(n..)?;
        Some(())
    }
    fn int(&mut self, n: usize) -> Option<i64> {
        let b = self.0.get(..n)?;
        let v = b.iter().fold(0i64, |v, &x| (v << 8) | i64::from(x));
        self.skip(n)?;
        // Sign-extend the n-byte big-endian value.
        let shift = 64 - 8 * n as u32;
        Some((v << shift) >> shift)
    }
    fn string(&mut self) -> Option<()> {
        self.text().map(|_| ())
    }
    /// A string's bytes (`None` inside for a null string).
    fn text(&mut self) -> Option<Option<&[u8]>> {
        let len = self.int(2)?;
        if len < 0 {
            return Some(None);
        }
        let b = self.0.get(..len as usize)?;
        self.skip(len as usize)?;
        Some(Some(b))
    }
    fn bytes(&mut self) -> Option<()> {
        let len = self.int(4)?;
        if len >= 0 {
            self.skip(len as usize)?;
        }
        Some(())
    }
    /// An array count, at most one element per remaining byte.
    fn count(&mut self) -> Option<usize> {
        let n = self.int(4)?.max(0) as usize;
        (n <= self.0.len()).then_some(n)
    }
    fn topic_partitions(&mut self) -> Option<()> {
        for _ in 0..self.count()? {
            self.string()?;
            let n = self.count()?;
            self.skip(n.checked_mul(4)?)?;
        }
        Some(())
    }
}

/// Checks the array counts of a subscription (`assignment` false) or an
/// assignment of version `v` against the bytes that follow them.
fn check_counts(bytes: &[u8], v: i16, assignment: bool, what: &str) -> Result<()> {
    let mut w = Walk(bytes);
    let ok = if assignment {
        w.topic_partitions().and_then(|()| w.bytes())
    } else {
        (|| {
            for _ in 0..w.count()? {
                w.string()?;
            }
            w.bytes()?;
            if v >= 1 {
                w.topic_partitions()?;
            }
            Some(())
        })()
    };
    ok.ok_or_else(|| {
        Error::invalid(
            format!("{what} v{v}"),
            "truncated, or an array count larger than the bytes that follow",
        )
    })
}

/// The first topic name of a subscription of version `v` (its counts
/// already checked) that is not UTF-8: which list, its place in it, and its
/// bytes in hex. kafka-protocol refuses such a name with a bare UTF-8 error;
/// this names the field, so a leader can say why it left a member out.
fn non_utf8_name(bytes: &[u8], v: i16) -> Option<String> {
    let mut w = Walk(bytes);
    let bad = |b: &[u8]| std::str::from_utf8(b).is_err();
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    for i in 0..w.count()? {
        if let Some(b) = w.text()?.filter(|b| bad(b)) {
            return Some(format!(
                "subscribed topic name {i} is not UTF-8 (bytes {})",
                hex(b)
            ));
        }
    }
    w.bytes()?;
    if v >= 1 {
        for i in 0..w.count()? {
            if let Some(b) = w.text()?.filter(|b| bad(b)) {
                return Some(format!(
                    "owned partitions' topic name {i} is not UTF-8 (bytes {})",
                    hex(b)
                ));
            }
            let n = w.count()?;
            w.skip(n.checked_mul(4)?)?;
        }
    }
    None
}

impl Subscription {
    /// The wire bytes, at [`VERSION`].
    pub fn encode(&self) -> Result<Bytes> {
        let s = ConsumerProtocolSubscription::default()
            .with_topics(
                self.topics
                    .iter()
                    .map(|t| StrBytes::from_string(t.clone()))
                    .collect(),
            )
            .with_user_data(self.user_data.clone())
            .with_owned_partitions(
                by_topic(&self.owned)
                    .into_iter()
                    .map(|(t, ps)| {
                        OwnedTp::default()
                            .with_topic(topic_name(t))
                            .with_partitions(ps)
                    })
                    .collect(),
            )
            .with_generation_id(self.generation);
        let mut buf = BytesMut::new();
        buf.put_i16(VERSION);
        s.encode(&mut buf, VERSION)
            .map_err(|e| Error::encode("", e))?;
        Ok(buf.freeze())
    }

    /// Decodes a member's subscription bytes (member metadata), any version.
    pub fn decode(mut bytes: Bytes) -> Result<Subscription> {
        let v = read_version(&mut bytes, "subscription")?;
        check_counts(&bytes, v, false, "subscription")?;
        if let Some(why) = non_utf8_name(&bytes, v) {
            return Err(Error::invalid(format!("subscription v{v}"), why));
        }
        let s = ConsumerProtocolSubscription::decode(&mut bytes, v)
            .map_err(|e| Error::decode(format!("subscription v{v}"), e))?;
        Ok(Subscription {
            topics: s.topics.iter().map(|t| t.as_str().to_string()).collect(),
            owned: s
                .owned_partitions
                .iter()
                .flat_map(|tp| tp.partitions.iter().map(|&p| (tp.topic.0.to_string(), p)))
                .collect(),
            generation: if v >= 2 { s.generation_id } else { -1 },
            user_data: s.user_data,
        })
    }
}

/// A subscription read as leniently as its bytes allow: the declared
/// version, and the version whose fields the body really holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LenientSubscription {
    /// What was read.
    pub subscription: Subscription,
    /// The version its first two bytes declare (as sent, not capped).
    pub declared: i16,
    /// The highest version whose fields the body holds, when lower than
    /// the declared one (capped at [`VERSION`]): @platformatic/kafka
    /// declares version 1 and writes a version-0 body (topics and user data,
    /// no owned partitions). `None` when the body is the declared version's.
    pub body_version: Option<i16>,
}

impl Subscription {
    /// Decodes a member's subscription as [`Subscription::decode`] does and,
    /// when the body is shorter than its declared version's, as the highest
    /// earlier version whose fields end exactly where the bytes end. Apache
    /// Kafka's own `ConsumerProtocol` refuses such bytes ("Malformed consumer
    /// protocol subscription"), and its group coordinator then refuses to
    /// upgrade the group ("the embedded consumer protocol is malformed"), so
    /// [`LenientSubscription::body_version`] says when that is so. Bytes
    /// that fit no version are the strict decoder's error.
    pub fn decode_lenient(bytes: Bytes) -> Result<LenientSubscription> {
        let declared = match bytes.get(..2) {
            Some(&[a, b]) => i16::from_be_bytes([a, b]),
            _ => return Err(Error::invalid("subscription", "shorter than its version")),
        };
        let strict = match Subscription::decode(bytes.clone()) {
            Ok(subscription) => {
                return Ok(LenientSubscription {
                    subscription,
                    declared,
                    body_version: None,
                })
            }
            Err(e) => e,
        };
        let v = declared.min(VERSION);
        for body in (0..v).rev() {
            let mut rest = bytes.slice(2..);
            if check_counts(&rest, body, false, "subscription").is_err()
                || non_utf8_name(&rest, body).is_some()
            {
                continue;
            }
            let Ok(s) = ConsumerProtocolSubscription::decode(&mut rest, body) else {
                continue;
            };
            if rest.has_remaining() {
                continue;
            }
            return Ok(LenientSubscription {
                subscription: Subscription {
                    topics: s.topics.iter().map(|t| t.as_str().to_string()).collect(),
                    owned: s
                        .owned_partitions
                        .iter()
                        .flat_map(|tp| tp.partitions.iter().map(|&p| (tp.topic.0.to_string(), p)))
                        .collect(),
                    generation: if body >= 2 { s.generation_id } else { -1 },
                    user_data: s.user_data,
                },
                declared,
                body_version: Some(body),
            });
        }
        Err(strict)
    }
}

impl Assignment {
    /// The wire bytes, at [`VERSION`].
    pub fn encode(&self) -> Result<Bytes> {
        encode_assignment_by_topic(by_topic(&self.partitions), self.user_data.clone())
    }

    /// Decodes assignment bytes, any version; bytes without a version are
    /// an error (see [`decode_assignment`] for the runtime's reading).
    pub fn decode(mut bytes: Bytes) -> Result<Assignment> {
        let v = read_version(&mut bytes, "assignment")?;
        check_counts(&bytes, v, true, "assignment")?;
        let a = ConsumerProtocolAssignment::decode(&mut bytes, v)
            .map_err(|e| Error::decode(format!("assignment v{v}"), e))?;
        let mut partitions: Vec<(String, i32)> = a
            .assigned_partitions
            .iter()
            .flat_map(|tp| tp.partitions.iter().map(|&p| (tp.topic.0.to_string(), p)))
            .collect();
        partitions.sort();
        Ok(Assignment {
            partitions,
            user_data: a.user_data,
        })
    }
}

/// What partwise's leader puts in an assignment's user data: a marker and
/// version, so user data of another assignor is never taken for it.
const UNITS_MAGIC: &[u8; 4] = b"pwu\x00";

/// The co-partition groups (each a list of topic names) as assignment user
/// data: the leader knows every member's subscription, a member only its
/// own, so the leader says which topics form units. After the marker: an
/// `i32` group count, then per group an `i32` topic count and each name as
/// an `i16`-length UTF-8 string, as the consumer protocol writes strings.
pub fn encode_unit_groups(groups: &[Vec<String>]) -> Bytes {
    let mut buf = BytesMut::new();
    buf.put_slice(UNITS_MAGIC);
    buf.put_i32(groups.len() as i32);
    for g in groups {
        buf.put_i32(g.len() as i32);
        for t in g {
            // Topic names are at most 249 bytes, well inside an i16 length.
            buf.put_i16(t.len() as i16);
            buf.put_slice(t.as_bytes());
        }
    }
    buf.freeze()
}

/// The co-partition groups in assignment user data written by
/// [`encode_unit_groups`]; `None` for anything else (no marker, another
/// assignor's bytes, truncated or trailing bytes, counts larger than the
/// bytes that follow, names that are not UTF-8).
pub fn decode_unit_groups(data: &[u8]) -> Option<Vec<Vec<String>>> {
    let mut w = Walk(data.strip_prefix(UNITS_MAGIC.as_slice())?);
    let mut groups = Vec::new();
    for _ in 0..w.count()? {
        let mut topics = Vec::new();
        for _ in 0..w.count()? {
            let len = usize::try_from(w.int(2)?).ok()?;
            let name = w.0.get(..len)?;
            topics.push(std::str::from_utf8(name).ok()?.to_string());
            w.skip(len)?;
        }
        groups.push(topics);
    }
    w.0.is_empty().then_some(groups)
}

/// Marks what a member owned in its subscription user data.
const OWNED_MAGIC: &[u8; 4] = b"pwo\x00";

/// What a member owned, as subscription user data: an eager member (Java's
/// `CopartitionedAssignor`) revokes everything before it joins, so its
/// standard owned partitions are empty and it says here what it held. After
/// the marker: an `i32` generation, an `i32` topic count, then per topic the
/// name as an `i16` length and UTF-8 bytes, an `i32` partition count and the
/// partitions as `i32`.
pub fn encode_owned(owned: &[(String, i32)], generation: i32) -> Bytes {
    let topics = by_topic(owned);
    let mut buf = BytesMut::new();
    buf.put_slice(OWNED_MAGIC);
    buf.put_i32(generation);
    buf.put_i32(topics.len() as i32);
    for (t, ps) in topics {
        buf.put_i16(t.len() as i16);
        buf.put_slice(t.as_bytes());
        buf.put_i32(ps.len() as i32);
        for p in ps {
            buf.put_i32(p);
        }
    }
    buf.freeze()
}

/// The owned partitions and generation in user data written by
/// [`encode_owned`]; `None` for anything else (no marker, another assignor's
/// bytes, truncated or trailing bytes, names that are not UTF-8).
pub fn decode_owned(data: &[u8]) -> Option<(Vec<(String, i32)>, i32)> {
    let mut w = Walk(data.strip_prefix(OWNED_MAGIC.as_slice())?);
    let generation = i32::try_from(w.int(4)?).ok()?;
    let mut owned = Vec::new();
    for _ in 0..w.count()? {
        let len = usize::try_from(w.int(2)?).ok()?;
        let name = std::str::from_utf8(w.0.get(..len)?).ok()?.to_string();
        w.skip(len)?;
        for _ in 0..w.count()? {
            owned.push((name.clone(), i32::try_from(w.int(4)?).ok()?));
        }
    }
    w.0.is_empty().then_some((owned, generation))
}

/// The wire bytes, at [`VERSION`], of an assignment given as each topic's
/// partitions (topics in name order, each topic's partitions sorted and
/// without repeats, as [`Assignment::encode`] lists them) and user data: a
/// leader with many partitions per member writes this without a `String`
/// per partition.
pub fn encode_assignment_by_topic<'a>(
    by_topic: impl IntoIterator<Item = (&'a str, Vec<i32>)>,
    user_data: Option<Bytes>,
) -> Result<Bytes> {
    let a = ConsumerProtocolAssignment::default()
        .with_assigned_partitions(
            by_topic
                .into_iter()
                .map(|(t, ps)| {
                    AssignedTp::default()
                        .with_topic(topic_name(t))
                        .with_partitions(ps)
                })
                .collect(),
        )
        .with_user_data(user_data);
    let mut buf = BytesMut::new();
    buf.put_i16(VERSION);
    a.encode(&mut buf, VERSION)
        .map_err(|e| Error::encode("", e))?;
    Ok(buf.freeze())
}

/// Encodes an assignment of `parts` without user data.
pub fn encode_assignment(parts: &[(String, i32)]) -> Result<Bytes> {
    Assignment {
        partitions: parts.to_vec(),
        user_data: None,
    }
    .encode()
}

/// The partitions of an assignment a member received, sorted; empty bytes
/// (a member that got nothing, as some brokers send it) are no partitions.
pub fn decode_assignment(bytes: Bytes) -> Result<Vec<(String, i32)>> {
    if bytes.is_empty() {
        return Ok(Vec::new());
    }
    Ok(Assignment::decode(bytes)?.partitions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subscription_round_trips_with_its_version_prefix() {
        let s = Subscription {
            topics: vec!["market-updates".into(), "notifications".into()],
            owned: vec![("notifications".into(), 3), ("market-updates".into(), 0)],
            generation: 7,
            user_data: Some(Bytes::from_static(b"sticky")),
        };
        let b = s.encode().unwrap();
        assert_eq!(&b[..2], &[0, 3]);
        let d = Subscription::decode(b).unwrap();
        assert_eq!(d.topics, s.topics);
        assert_eq!(d.generation, 7);
        assert_eq!(d.user_data, s.user_data);
        let mut owned = d.owned;
        owned.sort();
        assert_eq!(
            owned,
            vec![("market-updates".into(), 0), ("notifications".into(), 3)]
        );
    }

    #[test]
    fn assignment_round_trips_sorted() {
        let parts = vec![
            ("notifications".to_string(), 3),
            ("market-updates".to_string(), 3),
            ("market-updates".to_string(), 0),
        ];
        let d = decode_assignment(encode_assignment(&parts).unwrap()).unwrap();
        assert_eq!(
            d,
            vec![
                ("market-updates".into(), 0),
                ("market-updates".into(), 3),
                ("notifications".into(), 3)
            ]
        );
        let with = Assignment {
            partitions: d.clone(),
            user_data: Some(Bytes::from_static(&[1, 2])),
        };
        assert_eq!(Assignment::decode(with.encode().unwrap()).unwrap(), with);
    }

    /// Every version another client may write, as kafka-protocol encodes it.
    #[test]
    fn every_version_decodes() {
        for v in 0..=3i16 {
            let a = ConsumerProtocolAssignment::default().with_assigned_partitions(vec![
                AssignedTp::default()
                    .with_topic(topic_name("n"))
                    .with_partitions(vec![3, 0]),
                AssignedTp::default()
                    .with_topic(topic_name("m"))
                    .with_partitions(vec![0, 3]),
            ]);
            let mut buf = BytesMut::new();
            buf.put_i16(v);
            a.encode(&mut buf, v).unwrap();
            assert_eq!(
                decode_assignment(buf.freeze()).unwrap(),
                vec![
                    ("m".to_string(), 0),
                    ("m".to_string(), 3),
                    ("n".to_string(), 0),
                    ("n".to_string(), 3)
                ],
                "v{v}"
            );

            let s = ConsumerProtocolSubscription::default()
                .with_topics(vec![StrBytes::from_static_str("t")])
                .with_owned_partitions(if v >= 1 {
                    vec![OwnedTp::default()
                        .with_topic(topic_name("t"))
                        .with_partitions(vec![2])]
                } else {
                    vec![]
                })
                .with_generation_id(if v >= 2 { 5 } else { -1 });
            let mut buf = BytesMut::new();
            buf.put_i16(v);
            s.encode(&mut buf, v).unwrap();
            let d = Subscription::decode(buf.freeze()).unwrap();
            assert_eq!(d.topics, vec!["t".to_string()], "v{v}");
            assert_eq!(d.owned.len(), usize::from(v >= 1), "v{v}");
            assert_eq!(d.generation, if v >= 2 { 5 } else { -1 }, "v{v}");
        }
    }

    #[test]
    fn owned_round_trips_and_foreign_user_data_is_not_taken_for_it() {
        let owned = vec![
            ("a".to_string(), 0),
            ("a".to_string(), 3),
            ("b".to_string(), 1),
        ];
        let b = encode_owned(&owned, 7);
        assert_eq!(decode_owned(&b), Some((owned, 7)));
        for cut in 0..b.len() {
            assert_eq!(decode_owned(&b[..cut]), None, "cut {cut}");
        }
        assert_eq!(decode_owned(&encode_unit_groups(&[vec!["a".into()]])), None);
        assert_eq!(decode_owned(b"sticky user data"), None);
    }

    #[test]
    fn unit_groups_round_trip_and_foreign_user_data_is_not_taken_for_them() {
        let groups = vec![
            vec!["market-updates".to_string(), "notifications".to_string()],
            vec!["ticks".to_string()],
        ];
        let b = encode_unit_groups(&groups);
        assert_eq!(decode_unit_groups(&b), Some(groups));
        assert_eq!(decode_unit_groups(&encode_unit_groups(&[])), Some(vec![]));
        for cut in 0..b.len() {
            assert_eq!(decode_unit_groups(&b[..cut]), None, "cut {cut}");
        }
        let mut trailing = b.to_vec();
        trailing.push(0);
        assert_eq!(decode_unit_groups(&trailing), None);
        assert_eq!(decode_unit_groups(b"sticky user data"), None);
        let mut huge = UNITS_MAGIC.to_vec();
        huge.extend_from_slice(&i32::MAX.to_be_bytes());
        assert_eq!(decode_unit_groups(&huge), None);
    }

    /// A topic name that is not UTF-8 (the broker relays such a subscription
    /// as it got it) is an error that says which name, in either list.
    #[test]
    fn a_topic_name_that_is_not_utf8_is_named() {
        // v3: topics ["ok", ff fe], no user data, owned [("ok", [0])], generation 1, no rack.
        let mut b = BytesMut::new();
        b.put_i16(3);
        b.put_i32(2);
        b.put_i16(2);
        b.put_slice(b"ok");
        b.put_i16(2);
        b.put_slice(&[0xff, 0xfe]);
        b.put_i32(-1);
        b.put_i32(1);
        b.put_i16(2);
        b.put_slice(b"ok");
        b.put_i32(1);
        b.put_i32(0);
        b.put_i32(1);
        b.put_i16(-1);
        let e = Subscription::decode(b.clone().freeze()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "subscription v3: subscribed topic name 1 is not UTF-8 (bytes fffe)"
        );
        // The same name among the owned partitions only.
        let mut owned = b.to_vec();
        let at = owned.windows(2).position(|w| w == [0xff, 0xfe]).unwrap();
        owned[at..at + 2].copy_from_slice(b"no");
        let last = owned.windows(2).rposition(|w| w == b"ok").unwrap();
        owned[last..last + 2].copy_from_slice(&[0xc3, 0x28]);
        let e = Subscription::decode(Bytes::from(owned)).unwrap_err();
        assert!(
            e.to_string()
                .contains("owned partitions' topic name 0 is not UTF-8 (bytes c328)"),
            "{e}"
        );
    }

    /// @platformatic/kafka's subscription: version 1 declared, the version-0
    /// body (topics, then user data) written, no owned partitions.
    fn platformatic_bytes(topics: &[&str], user_data: Option<&[u8]>) -> Bytes {
        let mut b = BytesMut::new();
        b.put_i16(1);
        b.put_i32(topics.len() as i32);
        for t in topics {
            b.put_i16(t.len() as i16);
            b.put_slice(t.as_bytes());
        }
        match user_data {
            Some(d) => {
                b.put_i32(d.len() as i32);
                b.put_slice(d);
            }
            None => b.put_i32(-1),
        }
        b.freeze()
    }

    #[test]
    fn a_version_1_header_on_a_version_0_body_is_read_leniently() {
        let b = platformatic_bytes(&["market-updates", "notifications"], None);
        // The strict reader (and Apache Kafka's ConsumerProtocol) refuses it.
        assert!(Subscription::decode(b.clone()).is_err());
        let l = Subscription::decode_lenient(b).unwrap();
        assert_eq!(l.subscription.topics, ["market-updates", "notifications"]);
        assert_eq!((l.declared, l.body_version), (1, Some(0)));
        assert_eq!(l.subscription.generation, -1);
        let l = Subscription::decode_lenient(platformatic_bytes(&["a"], Some(b"xy"))).unwrap();
        assert_eq!(l.subscription.user_data.as_deref(), Some(&b"xy"[..]));
        // A well-formed subscription is read as itself, with no body version.
        let full = Subscription {
            topics: vec!["a".into()],
            owned: vec![("a".into(), 1)],
            generation: 4,
            user_data: None,
        };
        let l = Subscription::decode_lenient(full.encode().unwrap()).unwrap();
        assert_eq!(
            (l.subscription, l.declared, l.body_version),
            (full, 3, None)
        );
        // A body that ends mid-field fits no version: the strict error.
        let cut = platformatic_bytes(&["abc"], None).slice(..9);
        assert!(Subscription::decode_lenient(cut).is_err());
    }

    /// Hostile bytes never panic the lenient reader, and whatever it reads
    /// is the strict reader's answer or a body of an earlier version that
    /// ends exactly at the last byte.
    #[test]
    fn hostile_bytes_never_panic_the_lenient_reader() {
        use proptest::prelude::*;
        let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
            cases: 4096,
            ..Default::default()
        });
        let seeds = proptest::collection::vec(any::<u8>(), 0..64);
        runner
            .run(&seeds, |tail| {
                for version in [0i16, 1, 2, 3, 7, -1, i16::MAX] {
                    let mut b = BytesMut::new();
                    b.put_i16(version);
                    b.put_slice(&tail);
                    let b = b.freeze();
                    match Subscription::decode_lenient(b.clone()) {
                        Ok(l) => {
                            prop_assert_eq!(l.declared, version);
                            match l.body_version {
                                None => prop_assert!(Subscription::decode(b).is_ok()),
                                Some(v) => prop_assert!(v < version.min(VERSION)),
                            }
                        }
                        Err(_) => prop_assert!(Subscription::decode(b).is_err()),
                    }
                }
                Ok(())
            })
            .unwrap();
        // Absurd counts at every body version are errors, not allocations.
        for version in 0..=4i16 {
            let mut huge = BytesMut::new();
            huge.put_i16(version);
            huge.put_i32(i32::MAX);
            assert!(Subscription::decode_lenient(huge.freeze()).is_err());
        }
        // Every cut of a platformatic subscription: no panic.
        let b = platformatic_bytes(&["t1", "t2"], Some(b"data"));
        for cut in 0..b.len() {
            let _ = Subscription::decode_lenient(b.slice(..cut));
        }
    }

    #[test]
    fn truncated_and_absurd_bytes_are_errors_not_panics() {
        assert!(Subscription::decode(Bytes::from_static(&[0])).is_err());
        assert!(decode_assignment(Bytes::from_static(&[0, 3, 0])).is_err());
        assert_eq!(decode_assignment(Bytes::new()).unwrap(), vec![]);
        assert!(Assignment::decode(Bytes::new()).is_err());
        let e = Assignment::decode(Bytes::from_static(&[0xff, 0xff])).unwrap_err();
        assert_eq!(e.to_string(), "assignment: version -1");
        let b = encode_assignment(&[("t".to_string(), 1), ("t".to_string(), 2)]).unwrap();
        for cut in 2..b.len() {
            assert!(Assignment::decode(b.slice(..cut)).is_err(), "cut {cut}");
        }
        let mut huge = BytesMut::new();
        huge.put_i16(3);
        huge.put_i32(i32::MAX);
        let e = Subscription::decode(huge.clone().freeze()).unwrap_err();
        assert!(e.to_string().contains("array count larger"), "{e}");
        assert!(decode_assignment(huge.freeze()).is_err());
    }
}
