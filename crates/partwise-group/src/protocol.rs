//! The consumer protocol's embedded bytes: the subscription a member sends in
//! JoinGroup and the assignment the leader sends in SyncGroup, in the
//! standard `ConsumerProtocolSubscription` / `ConsumerProtocolAssignment`
//! format (an i16 version, then the versioned struct), so Kafka's own tools
//! and other clients decode them.

use crate::error::{Error, Result};
use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::consumer_protocol_assignment::TopicPartition as AssignedTp;
use kafka_protocol::messages::consumer_protocol_subscription::TopicPartition as OwnedTp;
use kafka_protocol::messages::{
    ConsumerProtocolAssignment, ConsumerProtocolSubscription, TopicName,
};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use std::collections::BTreeMap;

/// The version we write. v3 carries owned partitions (v1), their generation
/// (v2) and the rack (v3), which is what the Java client sends.
const VERSION: i16 = 3;

/// What a member tells the leader in JoinGroup.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Subscription {
    /// Subscribed topic names.
    pub topics: Vec<String>,
    /// Partitions owned in the previous generation, (topic, partition).
    pub owned: Vec<(String, i32)>,
    /// Generation of `owned`, `-1` when unknown.
    pub generation: i32,
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

fn read_version(buf: &mut Bytes, what: &str) -> Result<i16> {
    if buf.remaining() < 2 {
        return Err(Error::Decode(format!("{what}: shorter than its version")));
    }
    let v = buf.get_i16();
    if v < 0 {
        return Err(Error::Decode(format!("{what}: version {v}")));
    }
    // Later versions only append fields, so they decode as the newest we know.
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
        let len = self.int(2)?;
        if len >= 0 {
            self.skip(len as usize)?;
        }
        Some(())
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
        Error::Decode(format!(
            "{what} v{v}: truncated, or an array count larger than the bytes that follow"
        ))
    })
}

impl Subscription {
    /// The wire bytes.
    pub fn encode(&self) -> Result<Bytes> {
        let s = ConsumerProtocolSubscription::default()
            .with_topics(
                self.topics
                    .iter()
                    .map(|t| StrBytes::from_string(t.clone()))
                    .collect(),
            )
            .with_owned_partitions(
                by_topic(&self.owned)
                    .into_iter()
                    .map(|(t, ps)| {
                        OwnedTp::default()
                            .with_topic(TopicName(StrBytes::from_string(t.to_string())))
                            .with_partitions(ps)
                    })
                    .collect(),
            )
            .with_generation_id(self.generation);
        let mut buf = BytesMut::new();
        buf.put_i16(VERSION);
        s.encode(&mut buf, VERSION)
            .map_err(|e| Error::Encode(e.to_string()))?;
        Ok(buf.freeze())
    }

    /// Decodes a member's subscription bytes.
    pub fn decode(mut bytes: Bytes) -> Result<Subscription> {
        let v = read_version(&mut bytes, "subscription")?;
        check_counts(&bytes, v, false, "subscription")?;
        let s = ConsumerProtocolSubscription::decode(&mut bytes, v)
            .map_err(|e| Error::Decode(format!("subscription v{v}: {e}")))?;
        Ok(Subscription {
            topics: s.topics.iter().map(|t| t.as_str().to_string()).collect(),
            owned: s
                .owned_partitions
                .iter()
                .flat_map(|tp| tp.partitions.iter().map(|&p| (tp.topic.0.to_string(), p)))
                .collect(),
            generation: if v >= 2 { s.generation_id } else { -1 },
        })
    }
}

/// Encodes an assignment: the partitions a member gets.
pub fn encode_assignment(parts: &[(String, i32)]) -> Result<Bytes> {
    let a = ConsumerProtocolAssignment::default().with_assigned_partitions(
        by_topic(parts)
            .into_iter()
            .map(|(t, ps)| {
                AssignedTp::default()
                    .with_topic(TopicName(StrBytes::from_string(t.to_string())))
                    .with_partitions(ps)
            })
            .collect(),
    );
    let mut buf = BytesMut::new();
    buf.put_i16(VERSION);
    a.encode(&mut buf, VERSION)
        .map_err(|e| Error::Encode(e.to_string()))?;
    Ok(buf.freeze())
}

/// Decodes an assignment; empty bytes (a member that got nothing, as some
/// brokers send it) decode as no partitions.
pub fn decode_assignment(mut bytes: Bytes) -> Result<Vec<(String, i32)>> {
    if bytes.is_empty() {
        return Ok(Vec::new());
    }
    let v = read_version(&mut bytes, "assignment")?;
    check_counts(&bytes, v, true, "assignment")?;
    let a = ConsumerProtocolAssignment::decode(&mut bytes, v)
        .map_err(|e| Error::Decode(format!("assignment v{v}: {e}")))?;
    let mut out: Vec<(String, i32)> = a
        .assigned_partitions
        .iter()
        .flat_map(|tp| tp.partitions.iter().map(|&p| (tp.topic.0.to_string(), p)))
        .collect();
    out.sort();
    Ok(out)
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
        };
        let b = s.encode().unwrap();
        assert_eq!(&b[..2], &[0, 3]);
        let d = Subscription::decode(b).unwrap();
        assert_eq!(d.topics, s.topics);
        assert_eq!(d.generation, 7);
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
    }

    #[test]
    fn version_zero_subscription_from_an_old_client_decodes() {
        let s = ConsumerProtocolSubscription::default()
            .with_topics(vec![StrBytes::from_static_str("t")]);
        let mut buf = BytesMut::new();
        buf.put_i16(0);
        s.encode(&mut buf, 0).unwrap();
        let d = Subscription::decode(buf.freeze()).unwrap();
        assert_eq!(d.topics, vec!["t".to_string()]);
        assert!(d.owned.is_empty());
        assert_eq!(d.generation, -1);
    }

    #[test]
    fn truncated_bytes_are_an_error_not_a_panic() {
        assert!(Subscription::decode(Bytes::from_static(&[0])).is_err());
        assert!(decode_assignment(Bytes::from_static(&[0, 3, 0])).is_err());
        assert_eq!(decode_assignment(Bytes::new()).unwrap(), vec![]);
    }
}
